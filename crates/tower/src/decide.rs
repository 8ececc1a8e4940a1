//! The one place the layer asks the core: the verdict on the headers, the
//! verdict on the body, the replay guard's claim and what its store's answer
//! means, and what goes upstream. Everything here hands bytes, headers and
//! `now` in and applies the core's outcome; no rule is decided here.

use std::sync::Arc;

use http::{HeaderMap, HeaderName, HeaderValue};
use toolctx_core::{Checked, Claimed, Context, HeadersVerdict, Reason, Refusal, Verdict, Verifier};

use crate::replay::ReplayStore;

/// What the layer does with a request.
pub(crate) enum Outcome {
    /// Answer with the core's refusal; nothing downstream runs. `close`:
    /// the body was not read to its end, so the connection cannot be reused.
    Refuse { refusal: Refusal, close: bool },
    /// Hand the request on (its headers already as the core said):
    /// `context` for a verified `tools/call`, `None` for one that passes.
    Forward { context: Option<Arc<Context>> },
}

/// The verdict on the headers alone.
pub(crate) enum Head {
    /// Not this contract's business: hand on unread (the headers already
    /// as the core said).
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

pub(crate) fn head(verifier: &Verifier, method: &str, headers: &mut HeaderMap) -> Head {
    match verifier.check_headers(method, &pairs(headers)) {
        HeadersVerdict::Pass => match forward(verifier, &Verdict::Pass, headers) {
            Ok(()) => Head::Pass,
            Err(r) => Head::Refuse(r),
        },
        HeadersVerdict::ReadBody(checked) => Head::ReadBody(checked),
        HeadersVerdict::Reject(r) => Head::Refuse(r),
    }
}

/// Steps 2 to 14 on the body read (at most `max_body_bytes + 1` bytes;
/// `over_limit` when reading stopped there), then the replay guard's claim
/// in `store`, then the headers the core forwards.
pub(crate) async fn body(
    verifier: &Verifier,
    store: Option<&dyn ReplayStore>,
    checked: Checked,
    headers: &mut HeaderMap,
    body: &[u8],
    over_limit: bool,
    now: u64,
) -> Outcome {
    let mut verdict = verifier.check_body(checked, &pairs(headers), body, now);
    if let Some(store) = store {
        verdict = guarded(verifier, store, verdict, now).await;
    }
    if let Err(refusal) = forward(verifier, &verdict, headers) {
        return Outcome::Refuse {
            refusal,
            close: over_limit,
        };
    }
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

/// The core's replay sequence on a body verdict: an accepted call's claim
/// goes to `store` (the only I/O here), the core settles its answer.
async fn guarded(
    verifier: &Verifier,
    store: &dyn ReplayStore,
    verdict: Verdict,
    now: u64,
) -> Verdict {
    match verifier.claim(verdict) {
        Claimed::Decided(verdict) => verdict,
        Claimed::Claim(pending) => {
            let answer = store.claim(pending.claim(), now).await;
            verifier.settle(pending, answer)
        }
    }
}

/// Applies what the core forwards with `verdict`: every copy of each
/// listed header removed, then the listed ones added (values as the core
/// encoded them). A value that is not a valid header refuses the request.
fn forward(verifier: &Verifier, verdict: &Verdict, headers: &mut HeaderMap) -> Result<(), Refusal> {
    let Some(upstream) = verifier.upstream(verdict) else {
        return Ok(());
    };
    for name in upstream.remove {
        // HeaderMap names are lower-case: this removes every copy in any case.
        headers.remove(name.as_str());
    }
    for (name, value) in upstream.set {
        let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) else {
            return Err(internal_error());
        };
        headers.append(name, value);
    }
    Ok(())
}

/// The refusal for a failure inside the layer (the body could not be read):
/// the core's `internal_error`.
pub(crate) fn internal_error() -> Refusal {
    Refusal::new(Reason::InternalError, None)
}
