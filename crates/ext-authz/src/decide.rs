//! One request through the core: the outcome the service answers Envoy
//! with. Every verdict is the core's; the service only adds its own
//! `internal_error` when it cannot judge (fail closed).

use toolctx_core::{HeadersVerdict, Refusal};
use toolctx_gateway_config::{Decision, Settings, Stores};

use crate::replay::Store;
use crate::request::Request;

#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Forward untouched (the mapped headers still removed).
    Pass,
    /// Forward with these `(header, value as verified)` set.
    Accept(Vec<(String, String)>),
    /// The core's refusal.
    Refuse(Refusal),
    /// The service cannot judge (why, for the log): `internal_error`.
    Error(String),
}

/// Decides on `req` at `now` (Unix seconds). Blocks when the replay guard
/// lives in Redis: call it from a blocking thread.
pub fn decide(settings: &Settings, store: Option<&Store>, req: &Request, now: u64) -> Outcome {
    let checked = match settings.check_headers(&req.method, &req.headers) {
        HeadersVerdict::Pass => return Outcome::Pass,
        HeadersVerdict::Reject(r) => return Outcome::Refuse(r),
        HeadersVerdict::ReadBody(checked) => checked,
    };
    if req.partial && req.body.len() <= settings.max_body_bytes() {
        // The body arrived cut (or not at all) below the core's own limit:
        // the core cannot see what the upstream would get.
        return Outcome::Error(
            "the body reached the service cut or not at all: the ext_authz filter must send \
             the whole body (Envoy: with_request_body with max_request_bytes of max_body_bytes \
             + 1 or more; agentgateway: includeRequestBody with maxRequestBytes likewise)"
                .into(),
        );
    }
    let mut claim = store.map(|s| move |jti: &str, until: u64| s.first_use(jti, until, now));
    let decision = settings.check_body(
        checked,
        &req.headers,
        &req.body,
        now,
        Stores {
            first_use: claim.as_mut().map(|c| c as _),
            ..Stores::default()
        },
    );
    match decision {
        Err(e) => Outcome::Error(e),
        Ok(Decision::Reject(r)) => Outcome::Refuse(r),
        // Never pass or accept a body Envoy cut (the core refuses one over
        // its limit before reading it, so this does not happen).
        Ok(_) if req.partial => Outcome::Error("a cut body was not refused".into()),
        Ok(Decision::Pass) => Outcome::Pass,
        Ok(Decision::Accept(headers)) => Outcome::Accept(headers),
    }
}
