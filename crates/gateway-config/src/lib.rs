#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub mod counters;
#[cfg(feature = "bench-profile")]
mod floor;
mod headers;
mod host;
mod load;
mod replay;
pub mod request;
mod settings;

pub use counters::Counters;
#[cfg(feature = "bench-profile")]
pub use floor::{Floor, FLOOR_ENV};
pub use host::Host;
pub use load::{load, load_for, Loaded};
#[cfg(feature = "redis")]
pub use replay::REDIS_TIMEOUT;
pub use replay::{
    RedisReplay, ReplayGuard, DEFAULT_REDIS_KEY_PREFIX, DEFAULT_REPLAY_WAYS, MAX_REPLAY_SLOTS,
    MAX_REPLAY_WAYS,
};
pub use settings::{
    ClaimJti, Decision, Deferred, PendingClaim, Profile, Settings, Stores, MAX_NONCE_CACHE,
};

/// Printable, bounded text for a log line (never a token or a secret):
/// the first `max` bytes, anything outside printable ASCII as `?`.
pub fn printable(bytes: &[u8], max: usize) -> String {
    bytes
        .iter()
        .take(max)
        .map(|&b| {
            if (0x20..0x7f).contains(&b) {
                char::from(b)
            } else {
                '?'
            }
        })
        .collect()
}

/// Longest JSON-RPC id or request id written to a log line.
pub const MAX_LOGGED_ID: usize = 64;

/// The log line of a refusal: reason, status, the request id (Envoy's
/// `x-request-id`, `-` when there is none) and the JSON-RPC id; never a
/// token, credential or secret.
pub fn refusal_line(refusal: &toolctx_core::Refusal, request_id: Option<&[u8]>) -> String {
    format!(
        "refused {} status={} request_id={} rpc_id={}",
        refusal.reason().as_str(),
        refusal.status(),
        request_id.map_or_else(|| "-".into(), |v| printable(v, MAX_LOGGED_ID)),
        printable(refusal.id_json().as_bytes(), MAX_LOGGED_ID)
    )
}

/// The log line of a call the gateway could not decide (answered 500).
pub fn error_line(why: &str) -> String {
    format!("request refused with 500: {why}")
}

/// The Envoy front ends' panic hook's log line: what happens next and
/// where it panicked, never the panic's message (it may quote the request).
pub fn panic_line(what: &str, info: &std::panic::PanicHookInfo<'_>) -> String {
    match info.location() {
        Some(at) => format!("panic, {what} (at {}:{})", at.file(), at.line()),
        None => format!("panic, {what}"),
    }
}

#[cfg(test)]
mod tests;
