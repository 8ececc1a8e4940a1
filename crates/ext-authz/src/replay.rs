//! The replay guard's stores: in process (one replica), or Redis shared by
//! every replica (`toolctx_tower::RedisReplayStore`: the core's command,
//! the one every front end sends, and the core's reading of its reply).
//! They only record and answer; the core says what an answer means (a
//! store that cannot answer: `internal_error`, never let through; a full
//! one: `replay_guard_full`).

use std::sync::Mutex;

use tokio::runtime::Handle;
use toolctx_core::{ClaimAnswer, ReplayCache, ReplayClaim};
// How long one Redis command may take before the call is refused: the
// core's one store timeout (the module's limit too).
use toolctx_gateway_config::{RedisReplay, ReplayGuard, REDIS_TIMEOUT};
// The Rust front ends' one Redis replay store: the core's command, sent
// once, its reply read by the core.
use toolctx_tower::{Redis, RedisReplayStore, ReplayStore};

pub enum Store {
    /// One process: at most `slots x ways` live token ids (the filter's
    /// setting); full of live ids, it answers `Full`.
    Memory(Mutex<ReplayCache>),
    Redis {
        store: RedisReplayStore,
        handle: Handle,
    },
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Store::Memory(_) => f.write_str("Store::Memory"),
            Store::Redis { store, .. } => write!(f, "Store::Redis({store:?})"),
        }
    }
}

impl Store {
    /// The store `guard` names; connects to Redis when it names one.
    pub async fn open(guard: &ReplayGuard) -> Result<Store, String> {
        match guard {
            ReplayGuard::Table { .. } => Ok(Store::Memory(Mutex::new(ReplayCache::new(
                guard.capacity().unwrap_or(usize::MAX),
            )))),
            ReplayGuard::Redis(r) => Store::redis(r).await,
        }
    }

    async fn redis(r: &RedisReplay) -> Result<Store, String> {
        // Never the URL in a message: it may hold a password.
        let redis = Redis::connect(&r.url, REDIS_TIMEOUT)
            .await
            .map_err(|why| format!("{why}: the Redis named in {}", r.url_env))?;
        Ok(Store::Redis {
            store: RedisReplayStore::with_prefix(redis, r.key_prefix.clone()),
            handle: Handle::current(),
        })
    }

    /// Records `jti` as used until `until` and answers; a store that
    /// cannot answer says why in the log and answers `Failed`. Blocks: call
    /// it from a blocking thread (the service decides on one).
    pub fn first_use(&self, jti: &str, until: u64, now: u64) -> ClaimAnswer {
        match self {
            Store::Memory(cache) => cache.lock().map_or_else(
                |_| {
                    eprintln!("toolctx: replay guard: the in-process table is poisoned");
                    ClaimAnswer::Failed
                },
                |mut c| c.first_use(jti, until, now),
            ),
            Store::Redis { store, handle } => {
                let claim = ReplayClaim {
                    jti: jti.to_string(),
                    until,
                };
                handle.block_on(store.claim(&claim, now))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_store_is_once_per_jti_and_bounded() {
        let guard = ReplayGuard::Table {
            slots: 1,
            ways: 2,
            prefix: "p/".into(),
        };
        let store = Store::open(&guard).await.unwrap();
        assert_eq!(store.first_use("a", 100, 0), ClaimAnswer::FirstUse);
        assert_eq!(store.first_use("a", 100, 1), ClaimAnswer::Used);
        assert_eq!(store.first_use("b", 100, 1), ClaimAnswer::FirstUse);
        // Full of live ids: `Full` (the core refuses replay_guard_full).
        assert_eq!(store.first_use("c", 100, 1), ClaimAnswer::Full);
    }
}
