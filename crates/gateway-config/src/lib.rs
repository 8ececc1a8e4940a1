#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod headers;
mod host;
mod load;
mod replay;
mod settings;

pub use host::Host;
pub use load::{load, load_for, Loaded};
pub use replay::{
    RedisReplay, ReplayGuard, DEFAULT_REDIS_KEY_PREFIX, DEFAULT_REPLAY_WAYS, MAX_REPLAY_SLOTS,
    MAX_REPLAY_WAYS,
};
pub use settings::{ClaimJti, Decision, Profile, Settings, Stores, MAX_NONCE_CACHE};

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

#[cfg(test)]
mod tests;
