//! The gateways' counter names (the filter's and the module's; the
//! ext_authz service writes the same names in Prometheus form, `_` for
//! `.`): calls passed untouched, accepted, answered 500, and one per
//! refusal reason.

use toolctx_core::Reason;

pub const PASSED: &str = "toolctx.passed";
pub const ACCEPTED: &str = "toolctx.accepted";
pub const ERRORS: &str = "toolctx.errors";

/// `toolctx.refused.<reason>`.
pub fn refused(reason: Reason) -> String {
    format!("toolctx.refused.{}", reason.as_str())
}
