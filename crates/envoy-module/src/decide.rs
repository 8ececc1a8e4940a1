#![forbid(unsafe_code)]
//! The checks after the headers' for one configuration: the shared
//! decision (`Settings::check_body`, or `Settings::check_body_deferred`
//! with the Redis guard) with this process's replay table and nonce cache,
//! at the request's time.

use toolctx_core::Checked;
use toolctx_gateway_config::request::{self, header};
use toolctx_gateway_config::{refusal_line, Decision, Deferred, PendingClaim, Profile, Stores};

use crate::module::Module;

/// The request time: the system clock, or in test builds the test header.
fn now(headers: &[(&[u8], &[u8])]) -> Option<u64> {
    request::now(|name| header(headers, name), request::system_now)
}

/// What the checks after the headers' came to.
pub enum Decided {
    Now(Result<Decision, String>),
    /// An accepted call to claim in Redis first, checked at Unix second `now`.
    Claim(PendingClaim, u64),
}

/// The log line of a refusal (it names the request id, which is read
/// while the headers are borrowed).
pub fn line_for(decided: &Decided, headers: &[(&[u8], &[u8])]) -> Option<String> {
    match decided {
        Decided::Now(Ok(Decision::Reject(r))) => {
            Some(refusal_line(r, header(headers, "x-request-id")))
        }
        _ => None,
    }
}

/// The checks after the headers' on a complete (or over-limit) body, with
/// this process's replay table and nonce cache, or with the claim for Redis
/// left to send.
pub fn decide(
    module: &Module,
    checked: Checked,
    headers: &[(&[u8], &[u8])],
    body: &[u8],
) -> Decided {
    let Some(now) = now(headers) else {
        return Decided::Now(Err("no clock".into()));
    };
    if module.redis.is_some() {
        return match module
            .settings
            .check_body_deferred(checked, headers, body, now)
        {
            Ok(Deferred::Claim(pending)) => Decided::Claim(pending, now),
            Ok(Deferred::Decided(d)) => Decided::Now(Ok(d)),
            Err(why) => Decided::Now(Err(why)),
        };
    }
    Decided::Now(decide_now(module, checked, headers, body, now))
}

fn decide_now(
    module: &Module,
    checked: Checked,
    headers: &[(&[u8], &[u8])],
    body: &[u8],
    now: u64,
) -> Result<Decision, String> {
    let settings = &module.settings;
    let guarded = match &settings.profile {
        Profile::AgentArea { replay, .. } => replay.is_some(),
        #[cfg(feature = "aivax")]
        Profile::Aivax { .. } => false,
    };
    // The table answers; what its answer means is the core's rule.
    let mut claim = match (guarded, &module.replay) {
        (true, Some(table)) => Some(move |jti: &str, until: u64| table.first_use(jti, until, now)),
        _ => None,
    };
    #[cfg(feature = "aivax")]
    let mut nonces = match module.nonces.as_ref().map(|n| n.lock()) {
        None => None,
        Some(Ok(guard)) => Some(guard),
        Some(Err(_)) => return Err("the nonce cache is poisoned".into()),
    };
    let stores = Stores {
        first_use: claim.as_mut().map(|c| c as _),
        #[cfg(feature = "aivax")]
        nonces: nonces.as_deref_mut(),
    };
    settings.check_body(checked, headers, body, now, stores)
}
