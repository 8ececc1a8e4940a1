#![forbid(unsafe_code)]
//! The one place where the module reads the shared decision
//! (`toolctx_gateway_config`): which headers it strips from every request,
//! and what it applies for a decision. Nothing here decides; it only
//! translates.

use toolctx_core::Refusal;
use toolctx_gateway_config::{header_value, Decision, Settings};

/// What the module does with a request whose body was checked.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome<'s> {
    /// Forward untouched.
    Pass,
    /// Forward with these headers added, `(lower-case name, value ready to
    /// send)`.
    Forward(Vec<(&'s str, String)>),
    /// Answer with the core's refusal; nothing goes upstream.
    Refuse(Refusal),
}

/// Every header name the gateway writes: each is stripped (every copy, any
/// letter case) from every request before the core looks at it.
pub fn removed_headers(settings: &Settings) -> &[String] {
    settings.written_headers()
}

pub fn from_decision(decision: Decision<'_>) -> Outcome<'_> {
    match decision {
        Decision::Pass => Outcome::Pass,
        Decision::Accept(mapped) => Outcome::Forward(
            mapped
                .into_iter()
                .map(|(name, value)| (name, header_value(&value).into_owned()))
                .collect(),
        ),
        Decision::Reject(r) => Outcome::Refuse(r),
    }
}
