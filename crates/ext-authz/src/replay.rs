//! The replay guard's stores: in process (one replica), or Redis shared by
//! every replica with the core's command (`toolctx_core::replay::redis`,
//! the one every front end sends). They only record and answer; the core
//! says what an answer means (a store that cannot answer: `internal_error`,
//! never let through; a full one: `replay_guard_full`).

use std::sync::Mutex;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::runtime::Handle;
use toolctx_core::replay::redis::{answer, claim_args};
use toolctx_core::{ClaimAnswer, ReplayCache, ReplayClaim};
// How long one Redis command may take before the call is refused (the
// module's limit too).
use toolctx_gateway_config::{RedisReplay, ReplayGuard, REDIS_TIMEOUT};

pub enum Store {
    /// One process: at most `slots x ways` live token ids (the filter's
    /// setting); full of live ids, it answers `Full`.
    Memory(Mutex<ReplayCache>),
    Redis {
        conn: ConnectionManager,
        key_prefix: String,
        handle: Handle,
    },
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Store::Memory(_) => f.write_str("Store::Memory"),
            Store::Redis { key_prefix, .. } => {
                write!(f, "Store::Redis {{ key_prefix: {key_prefix:?} }}")
            }
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
        let client = redis::Client::open(r.url.as_str())
            .map_err(|e| format!("the Redis URL in {} is invalid ({:?})", r.url_env, e.kind()))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(REDIS_TIMEOUT))
            .set_response_timeout(Some(REDIS_TIMEOUT))
            .set_number_of_retries(2);
        let conn = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(|e| {
                format!(
                    "cannot reach the Redis named in {} ({:?})",
                    r.url_env,
                    e.kind()
                )
            })?;
        Ok(Store::Redis {
            conn,
            key_prefix: r.key_prefix.clone(),
            handle: Handle::current(),
        })
    }

    /// Records `jti` as used until `until` and answers; a store that
    /// cannot answer says why in the log and answers `Failed`. Blocks: call
    /// it from a blocking thread (the service decides on one).
    pub fn first_use(&self, jti: &str, until: u64, now: u64) -> ClaimAnswer {
        self.claim(jti, until, now).unwrap_or_else(|why| {
            eprintln!("toolctx: {why}");
            ClaimAnswer::Failed
        })
    }

    fn claim(&self, jti: &str, until: u64, now: u64) -> Result<ClaimAnswer, String> {
        match self {
            Store::Memory(cache) => cache
                .lock()
                .map(|mut c| c.first_use(jti, until, now))
                .map_err(|_| "replay guard: the in-process table is poisoned".to_string()),
            Store::Redis {
                conn,
                key_prefix,
                handle,
            } => {
                let mut conn = conn.clone();
                let claim = ReplayClaim {
                    jti: jti.to_string(),
                    until,
                };
                let mut cmd = redis::Cmd::new();
                for arg in claim_args(key_prefix, &claim, now) {
                    cmd.arg(arg);
                }
                let set = async move { cmd.query_async::<Option<String>>(&mut conn).await };
                match handle.block_on(async { tokio::time::timeout(REDIS_TIMEOUT, set).await }) {
                    Ok(Ok(reply)) => Ok(answer(reply.as_deref() == Some("OK"))),
                    Ok(Err(e)) => Err(format!("replay guard: Redis failed ({:?})", e.kind())),
                    Err(_) => Err("replay guard: Redis did not answer in time".into()),
                }
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
