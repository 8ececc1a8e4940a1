//! The verdict every profile gives, generic over the context it accepts:
//! [`Verdict`] (`Verdict<Context>`, the AgentArea profile) and
//! [`AivaxVerdict`](crate::aivax::AivaxVerdict) (`Verdict<AivaxContext>`)
//! are one type, so a front end answers both with one function over
//! [`Accepted`]. Also the verdict on headers alone, whose [`Checked`]
//! proof lets the body check skip steps 0 and 1.

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

/// The verdict on headers alone (steps 0 and 1), before the body is read.
#[derive(Debug, PartialEq, Eq)]
pub enum HeadersVerdict {
    /// Not a `POST`: forward untouched without reading the body.
    Pass,
    /// Read the body (up to the verifier's `max_body_bytes`) and hand it on
    /// with this proof to the verifier's `check_body`, which runs the
    /// remaining steps without steps 0 and 1.
    ReadBody(Checked),
    Reject(Refusal),
}

impl HeadersVerdict {
    /// `Pass` and `Reject` as they are; `ReadBody` goes on to `body`.
    pub(crate) fn and_then<C>(self, body: impl FnOnce(Checked) -> Verdict<C>) -> Verdict<C> {
        match self {
            HeadersVerdict::Pass => Verdict::Pass,
            HeadersVerdict::ReadBody(checked) => body(checked),
            HeadersVerdict::Reject(r) => Verdict::Reject(r),
        }
    }
}

/// Proof that steps 0 and 1 passed for one request: only `check_headers`
/// makes one, and `check_body` consumes it. Neither `Clone` nor `Copy`, so
/// one header check vouches for one body check. It names the verifier that
/// made it; handed to another, that verifier checks its credential itself.
///
/// ```compile_fail
/// let forged = toolctx_core::Checked { verifier: 0 };
/// ```
///
/// ```compile_fail
/// fn twice(c: toolctx_core::Checked) -> (toolctx_core::Checked, toolctx_core::Checked) {
///     (c.clone(), c)
/// }
/// ```
#[derive(Debug, PartialEq, Eq)]
pub struct Checked {
    /// The identity of the verifier whose steps 0 and 1 passed.
    pub(crate) verifier: usize,
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
    /// The same JSON appended to `out`.
    fn write_json(&self, out: &mut String);
    /// The request's JSON-RPC `id` as JSON text (a string literal or a
    /// number as written); `None` when absent or of another type.
    fn request_id(&self) -> Option<&str>;
    /// The headers to add upstream (see [`crate::Upstream`]).
    fn upstream(&self) -> &[(String, String)];
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

            fn write_json(&self, out: &mut String) {
                <$context>::write_json(self, out)
            }

            fn request_id(&self) -> Option<&str> {
                self.request_id.as_deref()
            }

            fn upstream(&self) -> &[(String, String)] {
                &self.upstream
            }
        }
    };
}

// Each profile's context says it is one where it is defined (AIVAX's in
// `aivax`), so this module names no profile but the default.
pub(crate) use accepted;

accepted!(Context);
