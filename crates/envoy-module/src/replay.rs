#![forbid(unsafe_code)]
//! The replay guard's table for the whole Envoy process: every worker
//! thread claims token ids in the same table, so a token is accepted once
//! per process whichever worker gets it.
//!
//! Sharded to keep workers from queueing on one lock: a token id's shard
//! comes from a hash keyed at random per process (a caller cannot aim at
//! one shard). Each shard is the core's [`ReplayCache`] for its share of
//! `slots x ways` live ids (the filter's setting). The core decides until
//! when an id is kept (the token's `exp` plus the clock skew) and what an
//! answer means: a shard full of live ids answers `Full`
//! (`replay_guard_full`), one that cannot be used `Failed`
//! (`internal_error`).

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::Mutex;

use toolctx_core::{ClaimAnswer, ReplayCache};

/// Shards of the table (a power of two above the worker count of a
/// typical sidecar).
pub const SHARDS: usize = 16;

#[derive(Debug)]
pub struct SharedReplay {
    hasher: RandomState,
    shards: Vec<Mutex<ReplayCache>>,
}

impl SharedReplay {
    /// A table for `live` token ids in all (at least one): the shards'
    /// capacities add up to exactly `live`, with fewer shards when `live`
    /// is below [`SHARDS`].
    pub fn new(live: usize) -> SharedReplay {
        let live = live.max(1);
        let n = SHARDS.min(live);
        SharedReplay {
            hasher: RandomState::new(),
            shards: (0..n)
                .map(|i| Mutex::new(ReplayCache::new(live / n + usize::from(i < live % n))))
                .collect(),
        }
    }

    /// Records `jti` as used until `until`, at Unix second `now`. `Failed`
    /// when its shard cannot be used (a panic while it was held).
    pub fn first_use(&self, jti: &str, until: u64, now: u64) -> ClaimAnswer {
        let n = self.shards.len().max(1) as u64;
        let i = usize::try_from(self.hasher.hash_one(jti) % n).unwrap_or(0);
        match self.shards.get(i).map(|s| s.lock()) {
            Some(Ok(mut cache)) => cache.first_use(jti, until, now),
            _ => ClaimAnswer::Failed,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const FIRST: ClaimAnswer = ClaimAnswer::FirstUse;

    #[test]
    fn once_per_jti_until_it_expires() {
        let r = SharedReplay::new(256);
        assert_eq!(r.first_use("a", 100, 10), FIRST);
        assert_eq!(r.first_use("a", 100, 11), ClaimAnswer::Used);
        assert_eq!(r.first_use("b", 100, 11), FIRST);
        assert_eq!(r.first_use("a", 200, 100), FIRST);
    }

    #[test]
    fn shared_by_threads() {
        let r = std::sync::Arc::new(SharedReplay::new(4096));
        let wins: usize = (0..4)
            .map(|_| {
                let r = r.clone();
                std::thread::spawn(move || {
                    (0..200)
                        .filter(|i| r.first_use(&format!("j{i}"), 100, 0) == FIRST)
                        .count()
                })
            })
            .map(|t| t.join().unwrap())
            .sum();
        // Each id is accepted once in the whole process.
        assert_eq!(wins, 200);
    }

    #[test]
    fn holds_exactly_its_capacity_and_says_when_full() {
        // One live id: one shard of one.
        let r = SharedReplay::new(1);
        assert_eq!(r.first_use("a", 50, 0), FIRST);
        assert_eq!(r.first_use("b", 50, 0), ClaimAnswer::Full);
        assert_eq!(r.first_use("b", 100, 60), FIRST);
        // 100 live ids over 16 shards: 100 in all, then every shard is full.
        let r = SharedReplay::new(100);
        let answers: Vec<ClaimAnswer> = (0..3000)
            .map(|i| r.first_use(&format!("k{i}"), 50, 0))
            .collect();
        assert_eq!(answers.iter().filter(|a| **a == FIRST).count(), 100);
        assert!(answers
            .iter()
            .all(|a| *a == FIRST || *a == ClaimAnswer::Full));
    }
}
