//! Local replies: the core's refusal sent by Envoy instead of the upstream.

use proxy_wasm::hostcalls;
use toolctx_core::{Reason, Refusal};

/// The refusal when the filter itself cannot decide: fail closed, with the
/// core's status, code and message.
pub fn internal_error() -> Refusal {
    Refusal::new(Reason::InternalError, None)
}

/// Answers the current request with `refusal`; a request that cannot be
/// answered is reset, never forwarded.
pub fn send_refusal(refusal: &Refusal, include_reason: bool) {
    let body = refusal.body(include_reason);
    let reply = vec![("content-type", "application/json")];
    if crate::host::reply(refusal.status(), reply, body.as_bytes()).is_err() {
        let _ = hostcalls::reset_http_request();
    }
}
