//! The verdict every profile gives, generic over the context it accepts:
//! [`Verdict`] (`Verdict<Context>`, the AgentArea profile) and
//! [`AivaxVerdict`](crate::aivax::AivaxVerdict) (`Verdict<AivaxContext>`)
//! are one type, so a front end answers both with one function over
//! [`Accepted`].

use alloc::boxed::Box;
use alloc::string::String;

use crate::context::Context;
use crate::refusal::Refusal;

/// The verdict on a request; `C` is the profile's accepted context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict<C = Context> {
    /// Not this contract's business: forward untouched.
    Pass,
    /// A verified `tools/call`.
    Accept(Box<C>),
    /// Refuse with this error; nothing downstream runs.
    Reject(Refusal),
}

mod sealed {
    pub trait Sealed {
        /// Set by the envelope once the call is accepted.
        fn set_request_id(&mut self, id: Option<alloc::string::String>);
    }
}
pub(crate) use sealed::Sealed;

/// What every profile's accepted context gives a front end: its JSON form
/// and the request's id. Implemented by [`Context`] and
/// [`AivaxContext`](crate::aivax::AivaxContext) only.
pub trait Accepted: Sealed {
    /// The context as a JSON object.
    fn to_json(&self) -> String;
    /// The request's JSON-RPC `id` as JSON text (a string literal or a
    /// number as written); `None` when absent or of another type.
    fn request_id(&self) -> Option<&str>;
}

macro_rules! accepted {
    ($context:ty) => {
        impl crate::verdict::Sealed for $context {
            fn set_request_id(&mut self, id: Option<String>) {
                self.request_id = id;
            }
        }

        impl crate::verdict::Accepted for $context {
            fn to_json(&self) -> String {
                <$context>::to_json(self)
            }

            fn request_id(&self) -> Option<&str> {
                self.request_id.as_deref()
            }
        }
    };
}

accepted!(Context);
accepted!(crate::aivax::AivaxContext);
