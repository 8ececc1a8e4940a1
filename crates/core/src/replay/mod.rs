//! The replay guard (CONTRACT §3 `token_replayed`, `replay_guard_full`),
//! decided here once: what an accepted call claims ([`ReplayClaim`]), what
//! a store may answer ([`ClaimAnswer`]), what each answer means
//! ([`ClaimAnswer::verdict`]), and the one sequence every front end runs:
//! [`crate::Verifier::claim`] turns an accepted verdict into a
//! [`PendingClaim`], the front end hands [`PendingClaim::claim`] to its
//! store (the only I/O it does) and gives the answer to
//! [`crate::Verifier::settle`]; a synchronous store does all three inside
//! [`crate::Verifier::check_body_once`]. Stores only record and answer: a
//! ready one for one process ([`ReplayCache`], sized by [`capacity`]),
//! and Redis ([`redis`]: the command every front end sends and the one
//! reading of its reply).

use alloc::boxed::Box;
use alloc::collections::BinaryHeap;
use alloc::string::String;
use core::cmp::Reverse;

use crate::config::ConfigError;
use crate::context::Context;

mod claim;
mod ids;
pub mod redis;

pub use claim::{ClaimAnswer, ReplayClaim};
pub(crate) use ids::hash as key_hash;
use ids::IdSet;

/// How many live token ids an in-process store holds unless told
/// otherwise, and the most a front end may ask for (the settings table's
/// `replay_capacity`).
pub use crate::settings::{DEFAULT_REPLAY_CAPACITY, MAX_REPLAY_CAPACITY};

/// The in-memory replay guard's capacity from the number a user gave a
/// front end, unchanged, by the settings table's one rule
/// (`replay_capacity`: 0 the default, else its range, or
/// `limit_out_of_range`). Every front end asks this; none checks the
/// number itself.
pub fn capacity(raw: i64) -> Result<usize, ConfigError> {
    // Exact up to 2^53; anything past it is past the range too.
    capacity_of_f64(raw as f64)
}

/// [`capacity`] for a host whose numbers are doubles (JavaScript): a
/// number that is not a whole one is refused as one out of range.
pub fn capacity_of_f64(raw: f64) -> Result<usize, ConfigError> {
    // Every target toolctx builds for has a usize of 32 bits or more.
    let row = crate::settings::REPLAY_CAPACITY;
    row.number(raw)
        .map(|n| n as usize)
        .ok_or(ConfigError::Limit(row.name))
}

/// The replay guard's store as the synchronous checks take it: records a
/// token id until a Unix second and answers.
pub type FirstUse<'a> = &'a mut dyn FnMut(&str, u64) -> ClaimAnswer;

/// What [`crate::Verifier::claim`] leaves to do with a verdict.
#[derive(Debug)]
pub enum Claimed {
    /// Decided without the store (a pass, a refusal, or a token without
    /// `jti`, which cannot be guarded: `claim_invalid`): apply it.
    Decided(crate::Verdict),
    /// An accepted call whose token id must be claimed first: send
    /// [`PendingClaim::claim`] to the store, then hand its answer to
    /// [`crate::Verifier::settle`].
    Claim(PendingClaim),
}

/// An accepted call waiting for the replay store's answer: the core's
/// context (with the headers it forwards) and what to claim.
pub struct PendingClaim {
    pub(crate) ctx: Box<Context>,
    pub(crate) claim: ReplayClaim,
}

impl PendingClaim {
    pub fn claim(&self) -> &ReplayClaim {
        &self.claim
    }

    /// The Redis command that records this claim at Unix second `now`
    /// under `prefix` ([`redis::claim_args`]).
    pub fn redis_args(&self, prefix: &str, now: u64) -> [String; 6] {
        redis::claim_args(prefix, &self.claim, now)
    }
}

impl core::fmt::Debug for PendingClaim {
    // The context holds the caller's claims: not for a dump.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PendingClaim").finish_non_exhaustive()
    }
}

/// Token ids seen within their lifetime, for one process: bounded, and
/// forgetting each id once its token could no longer be accepted anyway.
/// Expired ids leave through an index ordered by expiry, so a call costs
/// O(log n) plus the ids it expires, never a scan of the whole table.
#[derive(Debug, Clone)]
pub struct ReplayCache {
    /// The live token ids (a hash table: no B-tree in the wasm).
    ids: IdSet,
    /// `(until, jti)` for every id, `until` the Unix second from which its
    /// token is expired, soonest first: a binary heap rather than a second
    /// B-tree, which costs about 6 KB less wasm.
    expiry: BinaryHeap<Reverse<(u64, String)>>,
    capacity: usize,
}

impl ReplayCache {
    /// A cache for at most `capacity` live token ids (size it for the call
    /// rate times the token lifetime: 1000 calls/s x 330 s is 330,000).
    /// A number from a user goes through [`capacity`] first
    /// ([`ReplayCache::with_capacity`]).
    pub fn new(capacity: usize) -> ReplayCache {
        ReplayCache {
            ids: IdSet::default(),
            expiry: BinaryHeap::new(),
            capacity,
        }
    }

    /// A cache sized by [`capacity`] from the number a user gave.
    pub fn with_capacity(raw: i64) -> Result<ReplayCache, ConfigError> {
        capacity(raw).map(ReplayCache::new)
    }

    /// Records `jti` until `until`, at Unix second `now`. Ids whose `until`
    /// has come are forgotten first; a full cache answers
    /// [`ClaimAnswer::Full`] and records nothing.
    pub fn first_use(&mut self, jti: &str, until: u64, now: u64) -> ClaimAnswer {
        self.expire(now);
        if self.ids.contains(jti) {
            return ClaimAnswer::Used;
        }
        if self.ids.len() >= self.capacity {
            return ClaimAnswer::Full;
        }
        self.ids.insert(jti);
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
                self.ids.remove(&jti);
            }
        }
    }

    /// Live ids recorded (expired ones may still count until the next call).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.len() == 0
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reason::Reason;

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
    fn answers_by_name_and_by_bool() {
        for a in ClaimAnswer::ALL {
            assert_eq!(ClaimAnswer::from_name(a.as_str()), a);
        }
        for unknown in ["", "FIRST_USE", "first-use", "true", "ok"] {
            assert_eq!(ClaimAnswer::from_name(unknown), ClaimAnswer::Failed);
        }
        assert_eq!(ClaimAnswer::of(true), ClaimAnswer::FirstUse);
        assert_eq!(ClaimAnswer::of(false), ClaimAnswer::Used);
    }

    #[test]
    fn capacity_zero_is_the_default_and_the_range_is_a_u32s() {
        assert_eq!(capacity(0), Ok(DEFAULT_REPLAY_CAPACITY));
        assert_eq!(capacity(1), Ok(1));
        assert_eq!(capacity(4_294_967_295), Ok(4_294_967_295));
        assert_eq!(MAX_REPLAY_CAPACITY, 4_294_967_295);
        for refused in [-1, i64::MIN, 4_294_967_296, i64::MAX] {
            let e = capacity(refused).err();
            assert_eq!(e, Some(ConfigError::Limit("replay_capacity")), "{refused}");
            let e = e.map(|e| (e.code(), alloc::format!("{e}")));
            assert_eq!(
                e,
                Some((
                    "limit_out_of_range",
                    String::from("setting `replay_capacity` is out of range")
                ))
            );
        }
        assert_eq!(capacity_of_f64(0.0), Ok(DEFAULT_REPLAY_CAPACITY));
        assert_eq!(capacity_of_f64(-0.0), Ok(DEFAULT_REPLAY_CAPACITY));
        assert_eq!(capacity_of_f64(4_294_967_295.0), Ok(4_294_967_295));
        for refused in [1.5, -1.0, 4_294_967_296.0, f64::NAN, f64::INFINITY, 1e300] {
            assert!(capacity_of_f64(refused).is_err(), "{refused}");
        }
        assert_eq!(
            ReplayCache::with_capacity(0).map(|c| c.capacity()),
            Ok(DEFAULT_REPLAY_CAPACITY)
        );
        assert!(ReplayCache::with_capacity(-1).is_err());
    }

    #[test]
    fn the_defaults_are_the_cores() {
        assert_eq!(DEFAULT_REPLAY_CAPACITY, 100_000);
        assert_eq!(crate::redis::TIMEOUT_MS, 500);
        assert_eq!(redis::DEFAULT_KEY_PREFIX, "toolctx:jti:");
    }
}
