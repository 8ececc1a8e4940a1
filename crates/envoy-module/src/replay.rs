#![forbid(unsafe_code)]
//! The replay guard's table for the whole Envoy process: every worker
//! thread claims token ids in the same table, so a token is accepted once
//! per process whichever worker gets it.
//!
//! Sharded to keep workers from queueing on one lock: a token id's shard
//! comes from a hash keyed at random per process (a caller cannot aim at
//! one shard). Each shard is the core's [`ReplayCache`] for its share of
//! `slots x ways` live ids (the filter's setting); the core decides until
//! when an id is kept (the token's `exp` plus the clock skew), and a shard
//! full of live ids refuses new tokens (fail closed).

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::Mutex;

use toolctx_core::ReplayCache;
use toolctx_gateway_config::ReplayGuard;

/// Shards of the table (a power of two above the worker count of a
/// typical sidecar).
pub const SHARDS: usize = 16;

#[derive(Debug)]
pub struct SharedReplay {
    hasher: RandomState,
    shards: Vec<Mutex<ReplayCache>>,
}

impl SharedReplay {
    pub fn new(guard: &ReplayGuard) -> SharedReplay {
        let live = (guard.slots as usize).saturating_mul(guard.ways as usize);
        let each = live.div_ceil(SHARDS).max(1);
        SharedReplay {
            hasher: RandomState::new(),
            shards: (0..SHARDS)
                .map(|_| Mutex::new(ReplayCache::new(each)))
                .collect(),
        }
    }

    /// Records `jti` as used until `until`; whether it was unused. `Err`
    /// when its shard cannot be used (a panic while it was held): the call
    /// is then refused with `internal_error`.
    pub fn first_use(&self, jti: &str, until: u64, now: u64) -> Result<bool, String> {
        let i = usize::try_from(self.hasher.hash_one(jti) % SHARDS as u64).unwrap_or(0);
        let shard = self.shards.get(i).ok_or("replay guard: no such shard")?;
        let mut cache = shard
            .lock()
            .map_err(|_| "replay guard: a shard is poisoned".to_string())?;
        Ok(cache.first_use(jti, until, now))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn guard(slots: u32, ways: u32) -> ReplayGuard {
        ReplayGuard {
            slots,
            ways,
            prefix: "t/".into(),
            redis: None,
        }
    }

    #[test]
    fn once_per_jti_until_it_expires() {
        let r = SharedReplay::new(&guard(64, 4));
        assert!(r.first_use("a", 100, 10).unwrap());
        assert!(!r.first_use("a", 100, 11).unwrap());
        assert!(r.first_use("b", 100, 11).unwrap());
        assert!(r.first_use("a", 200, 100).unwrap());
    }

    #[test]
    fn shared_by_threads() {
        let r = std::sync::Arc::new(SharedReplay::new(&guard(1024, 4)));
        let wins: usize = (0..4)
            .map(|_| {
                let r = r.clone();
                std::thread::spawn(move || {
                    (0..200)
                        .filter(|i| r.first_use(&format!("j{i}"), 100, 0).unwrap())
                        .count()
                })
            })
            .map(|t| t.join().unwrap())
            .sum();
        // Each id is accepted once in the whole process.
        assert_eq!(wins, 200);
    }

    #[test]
    fn a_full_shard_fails_closed() {
        // 16 live ids at most, one per shard: the 17th distinct id lands
        // in a full shard and is refused until the others expire.
        let r = SharedReplay::new(&guard(1, 1));
        let firsts = (0..1000)
            .filter(|i| r.first_use(&format!("k{i}"), 50, 0).unwrap())
            .count();
        assert_eq!(firsts, SHARDS);
        assert!(r.first_use("k0", 100, 60).unwrap());
    }
}
