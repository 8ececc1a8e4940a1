//! The one place the layer asks the core: the verdict on the headers, the
//! verdict on the body (with the replay guard's store), and what is
//! forwarded. Everything here hands bytes, headers and `now` in and gives
//! the core's outcome back; no rule is decided here.

use std::sync::Arc;

use http::HeaderMap;
use toolctx_core::{Checked, Context, HeadersVerdict, Reason, Refusal, Verdict, Verifier};

use crate::replay::Guard;

/// What the layer does with a request.
pub(crate) enum Outcome {
    /// Answer with the core's refusal; nothing downstream runs. `close`:
    /// the body was not read to its end, so the connection cannot be reused.
    Refuse { refusal: Refusal, close: bool },
    /// Hand the request on: `context` for a verified `tools/call`, `None`
    /// for a request that passes.
    Forward { context: Option<Arc<Context>> },
}

/// The verdict on the headers alone.
pub(crate) enum Head {
    /// Not this contract's business: hand on unread.
    Pass,
    /// Read the body up to `max_body_bytes` and call [`body`].
    ReadBody(Checked),
    Refuse(Refusal),
}

/// The request's headers as the core reads them (every copy, in order).
fn pairs(headers: &HeaderMap) -> Vec<(&[u8], &[u8])> {
    headers
        .iter()
        .map(|(n, v)| (n.as_str().as_bytes(), v.as_bytes()))
        .collect()
}

pub(crate) fn head(verifier: &Verifier, method: &str, headers: &HeaderMap) -> Head {
    match verifier.check_headers(method, &pairs(headers)) {
        HeadersVerdict::Pass => Head::Pass,
        HeadersVerdict::ReadBody(checked) => Head::ReadBody(checked),
        HeadersVerdict::Reject(r) => Head::Refuse(r),
    }
}

/// Steps 2 to 14 on the body read (at most `max_body_bytes + 1` bytes;
/// `over_limit` when reading stopped there), then the replay guard.
pub(crate) async fn body(
    verifier: &Verifier,
    guard: Option<&Guard>,
    checked: Checked,
    headers: &HeaderMap,
    body: &[u8],
    over_limit: bool,
    now: u64,
) -> Outcome {
    let verdict = {
        let headers = pairs(headers);
        match guard {
            None => verifier.check_body(checked, &headers, body, now),
            Some(guard) => guard.check_body_once(verifier, checked, &headers, body, now),
        }
    };
    match verdict {
        Verdict::Pass => Outcome::Forward { context: None },
        Verdict::Accept(ctx) => Outcome::Forward {
            context: Some(Arc::from(ctx)),
        },
        Verdict::Reject(refusal) => Outcome::Refuse {
            refusal,
            close: over_limit,
        },
    }
}

/// The refusal for a failure inside the layer (the body could not be read,
/// a header could not be written): the core's `internal_error`.
pub(crate) fn internal_error() -> Refusal {
    Refusal::new(Reason::InternalError, None)
}
