//! The replay guard in Redis, shared by every replica of every front end:
//! one key per token id, set only if absent, expiring with the token.
//! Front ends send exactly [`claim_args`] and read the reply, converted to
//! the core's [`Reply`], with [`claim_answer`]; a timeout or a connection
//! error is [`ClaimAnswer::Failed`] (see [`crate::redis`]: a command is
//! sent once, bounded by [`crate::redis::TIMEOUT_MS`]).

use alloc::string::String;

use super::claim::{ClaimAnswer, ReplayClaim};
use crate::redis::Reply;

/// The key prefix when none is configured.
pub use crate::settings::REPLAY_KEY_PREFIX as DEFAULT_KEY_PREFIX;

/// The key that records `jti`.
pub fn key(prefix: &str, jti: &str) -> String {
    [prefix, jti].concat()
}

/// Milliseconds until the claim expires, at least one second's worth.
pub fn ttl_ms(claim: &ReplayClaim, now: u64) -> u64 {
    claim.until.saturating_sub(now).max(1).saturating_mul(1000)
}

/// `SET <key> 1 NX PX <ms>`: records the id atomically, so one replica
/// wins a race.
pub fn claim_args(prefix: &str, claim: &ReplayClaim, now: u64) -> [String; 6] {
    [
        String::from("SET"),
        key(prefix, &claim.jti),
        String::from("1"),
        String::from("NX"),
        String::from("PX"),
        crate::digits::u64_text(ttl_ms(claim, now)),
    ]
}

/// What Redis's reply to [`claim_args`] means: `OK` (the key was set) a
/// first use, nil (it was there) a replay; anything else (an error, a
/// reply `SET ... NX` never gives) is no answer, [`ClaimAnswer::Failed`]
/// (`internal_error`), never a first use. `OK` counts as a status or as
/// bulk bytes: clients that hand strings over as bytes (redis-py without
/// `decode_responses`, node-redis with a Buffer type mapping) cannot say
/// which one Redis sent, and `SET ... NX` answers no other text.
pub fn claim_answer(reply: Reply<'_>) -> ClaimAnswer {
    match reply {
        r if r.is_ok() => ClaimAnswer::FirstUse,
        Reply::Nil => ClaimAnswer::Used,
        _ => ClaimAnswer::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_set_nx_px() {
        let claim = ReplayClaim {
            jti: String::from("j-1"),
            until: 130,
        };
        assert_eq!(
            claim_args(DEFAULT_KEY_PREFIX, &claim, 100),
            ["SET", "toolctx:jti:j-1", "1", "NX", "PX", "30000"]
        );
        // At or past `until`: still one second, never 0 (which Redis refuses).
        assert_eq!(ttl_ms(&claim, 130), 1000);
        assert_eq!(ttl_ms(&claim, 200), 1000);
    }

    #[test]
    fn every_reply_shape_has_one_answer() {
        let cases: [(Reply<'_>, ClaimAnswer); 14] = [
            (Reply::Status("OK"), ClaimAnswer::FirstUse),
            (Reply::Bulk(b"OK"), ClaimAnswer::FirstUse),
            (Reply::Nil, ClaimAnswer::Used),
            (Reply::Status("ok"), ClaimAnswer::Failed),
            (Reply::Status("OK "), ClaimAnswer::Failed),
            (Reply::Status("QUEUED"), ClaimAnswer::Failed),
            (Reply::Status(""), ClaimAnswer::Failed),
            (Reply::Bulk(b""), ClaimAnswer::Failed),
            (Reply::Bulk(b"1"), ClaimAnswer::Failed),
            (Reply::Integer(1), ClaimAnswer::Failed),
            (Reply::Integer(0), ClaimAnswer::Failed),
            (Reply::Error("OK"), ClaimAnswer::Failed),
            (Reply::Error("OOM command not allowed"), ClaimAnswer::Failed),
            (Reply::Other, ClaimAnswer::Failed),
        ];
        for (reply, want) in cases {
            assert_eq!(claim_answer(reply), want, "{reply:?}");
        }
    }
}
