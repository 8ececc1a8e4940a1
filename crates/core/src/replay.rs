//! The replay guard (CONTRACT §3 `token_replayed`, `replay_guard_full`),
//! decided here once: what an accepted call claims ([`ReplayClaim`]), what
//! a store may answer ([`ClaimAnswer`]), and what each answer means
//! ([`ClaimAnswer::verdict`], used by [`crate::Verifier::check_body_once`]
//! and [`crate::Verifier::settle`]). Stores only record and answer: a ready
//! one for one process ([`ReplayCache`]), and the Redis command every front
//! end sends ([`redis`]).

use alloc::collections::{BTreeMap, BinaryHeap};
use alloc::string::String;
use core::cmp::Reverse;

use crate::reason::Reason;

/// What a replay store answers when asked to record a token id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClaimAnswer {
    /// The id was unused; it is now recorded until the claim's `until`.
    FirstUse,
    /// The id is recorded already: the token is replayed.
    Used,
    /// The store holds its capacity of live ids and cannot record this
    /// one: not a replay, a retryable refusal.
    Full,
    /// The store could not answer (down, timed out, a bad reply).
    Failed,
}

impl ClaimAnswer {
    /// The answer of a store that says only whether the id was unused
    /// (`true`: first use) and fails by raising.
    pub fn of(first_use: bool) -> ClaimAnswer {
        if first_use {
            ClaimAnswer::FirstUse
        } else {
            ClaimAnswer::Used
        }
    }

    /// The rule: `Ok` to accept, else the refusal's reason.
    pub fn verdict(self) -> Result<(), Reason> {
        match self {
            ClaimAnswer::FirstUse => Ok(()),
            ClaimAnswer::Used => Err(Reason::TokenReplayed),
            ClaimAnswer::Full => Err(Reason::ReplayGuardFull),
            ClaimAnswer::Failed => Err(Reason::InternalError),
        }
    }
}

/// What an accepted call must record in the replay guard: its token id,
/// until the Unix second from which the token is refused as expired
/// (`exp + clock_skew_s`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayClaim {
    pub jti: String,
    pub until: u64,
}

/// The replay guard's store as the synchronous checks take it: records a
/// token id until a Unix second and answers.
pub type FirstUse<'a> = &'a mut dyn FnMut(&str, u64) -> ClaimAnswer;

/// Token ids seen within their lifetime, for one process: bounded, and
/// forgetting each id once its token could no longer be accepted anyway.
/// Expired ids leave through an index ordered by expiry, so a call costs
/// O(log n) plus the ids it expires, never a scan of the whole table.
#[derive(Debug, Clone)]
pub struct ReplayCache {
    /// jti -> Unix second from which the token is expired.
    until: BTreeMap<String, u64>,
    /// `(until, jti)` for every entry of `until`, soonest first: a binary
    /// heap rather than a second B-tree, which costs about 6 KB less wasm.
    expiry: BinaryHeap<Reverse<(u64, String)>>,
    capacity: usize,
}

impl ReplayCache {
    /// A cache for at most `capacity` live token ids (size it for the call
    /// rate times the token lifetime: 1000 calls/s x 330 s is 330,000).
    pub fn new(capacity: usize) -> ReplayCache {
        ReplayCache {
            until: BTreeMap::new(),
            expiry: BinaryHeap::new(),
            capacity,
        }
    }

    /// Records `jti` until `until`, at Unix second `now`. Ids whose `until`
    /// has come are forgotten first; a full cache answers
    /// [`ClaimAnswer::Full`] and records nothing.
    pub fn first_use(&mut self, jti: &str, until: u64, now: u64) -> ClaimAnswer {
        self.expire(now);
        if self.until.contains_key(jti) {
            return ClaimAnswer::Used;
        }
        if self.until.len() >= self.capacity {
            return ClaimAnswer::Full;
        }
        self.until.insert(String::from(jti), until);
        self.expiry.push(Reverse((until, String::from(jti))));
        ClaimAnswer::FirstUse
    }

    /// Forgets every id whose `until` is at or before `now`.
    fn expire(&mut self, now: u64) {
        while let Some(Reverse((until, _))) = self.expiry.peek() {
            if *until > now {
                break;
            }
            if let Some(Reverse((_, jti))) = self.expiry.pop() {
                self.until.remove(&jti);
            }
        }
    }

    /// Live ids recorded (expired ones may still count until the next call).
    pub fn len(&self) -> usize {
        self.until.len()
    }

    pub fn is_empty(&self) -> bool {
        self.until.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

/// The replay guard in Redis, shared by every replica of every front end:
/// one key per token id, set only if absent, expiring with the token.
/// Front ends send exactly [`claim_args`](redis::claim_args) and read the reply with
/// [`answer`](redis::answer); a Redis error or timeout is [`ClaimAnswer::Failed`].
pub mod redis {
    use alloc::format;
    use alloc::string::String;

    use super::{ClaimAnswer, ReplayClaim};

    /// The key prefix when none is configured.
    pub const DEFAULT_KEY_PREFIX: &str = "toolctx:jti:";

    /// The key that records `jti`.
    pub fn key(prefix: &str, jti: &str) -> String {
        format!("{prefix}{jti}")
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
            format!("{}", ttl_ms(claim, now)),
        ]
    }

    /// The answer to `SET ... NX`'s reply: `OK` is a first use, nil
    /// (`ok == false`) a replay.
    pub fn answer(ok: bool) -> ClaimAnswer {
        ClaimAnswer::of(ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_is_not_a_replay_and_expired_ids_leave_by_the_index() {
        let mut c = ReplayCache::new(2);
        assert_eq!(c.first_use("a", 100, 0), ClaimAnswer::FirstUse);
        assert_eq!(c.first_use("a", 100, 1), ClaimAnswer::Used);
        assert_eq!(c.first_use("b", 50, 1), ClaimAnswer::FirstUse);
        assert_eq!(c.first_use("c", 100, 1), ClaimAnswer::Full);
        // `b` expires at 50: room again, and `a` is still a replay.
        assert_eq!(c.first_use("c", 100, 50), ClaimAnswer::FirstUse);
        assert_eq!(c.first_use("a", 100, 50), ClaimAnswer::Used);
        assert_eq!(c.len(), 2);
        // At 100 both are gone.
        assert_eq!(c.first_use("a", 200, 100), ClaimAnswer::FirstUse);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn each_answer_has_one_meaning() {
        assert_eq!(ClaimAnswer::FirstUse.verdict(), Ok(()));
        assert_eq!(ClaimAnswer::Used.verdict(), Err(Reason::TokenReplayed));
        assert_eq!(ClaimAnswer::Full.verdict(), Err(Reason::ReplayGuardFull));
        assert_eq!(ClaimAnswer::Failed.verdict(), Err(Reason::InternalError));
    }

    #[test]
    fn redis_command_is_set_nx_px() {
        let claim = ReplayClaim {
            jti: String::from("j-1"),
            until: 130,
        };
        assert_eq!(
            redis::claim_args("toolctx:jti:", &claim, 100),
            ["SET", "toolctx:jti:j-1", "1", "NX", "PX", "30000"]
        );
        assert_eq!(redis::ttl_ms(&claim, 200), 1000);
    }
}
