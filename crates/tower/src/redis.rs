//! The Redis stores (feature `redis`): the replay guard's, with the core's
//! key and command (`SET <key> 1 NX PX <ms>`, `toolctx_core::replay::redis`),
//! and a connection shared with the idempotency store. Every command is
//! bounded by a timeout: a paused Redis fails calls, it never holds them,
//! and never lets one through unguarded.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use toolctx_core::replay::redis::{answer, claim_args, DEFAULT_KEY_PREFIX};
use toolctx_core::{ClaimAnswer, ReplayClaim};

use crate::replay::{ClaimFuture, ReplayStore};

/// The default bound on a reply (and on connecting).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);

/// A Redis connection (reconnecting) whose every command has a timeout.
#[derive(Clone)]
pub struct Redis {
    conn: ConnectionManager,
    timeout: Duration,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the URL: it may hold a password.
        f.debug_struct("Redis")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Redis {
    /// Connects to `url` (`redis://127.0.0.1:6379`); commands time out after
    /// `timeout`. The error names the problem, never the URL.
    pub async fn connect(url: &str, timeout: Duration) -> Result<Redis, String> {
        let client = redis::Client::open(url)
            .map_err(|e| format!("the Redis URL is invalid ({:?})", e.kind()))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout))
            .set_number_of_retries(1);
        let conn = tokio::time::timeout(timeout, client.get_connection_manager_with_config(config))
            .await
            .map_err(|_| "Redis did not answer in time".to_string())?
            .map_err(|e| format!("cannot reach Redis ({:?})", e.kind()))?;
        Ok(Redis { conn, timeout })
    }

    /// Sends one command (its arguments) and reads the reply as `T`.
    pub async fn query<T: redis::FromRedisValue>(&self, args: &[String]) -> Result<T, String> {
        let mut cmd = redis::Cmd::new();
        for a in args {
            cmd.arg(a);
        }
        let mut conn = self.conn.clone();
        match tokio::time::timeout(self.timeout, cmd.query_async::<T>(&mut conn)).await {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(e)) => Err(format!("Redis failed ({:?})", e.kind())),
            Err(_) => Err(format!(
                "Redis did not answer within {} ms",
                self.timeout.as_millis()
            )),
        }
    }
}

/// The replay guard's store in Redis, for several replicas: one key per
/// token id, set only if absent, expiring with the token.
#[derive(Debug, Clone)]
pub struct RedisReplayStore {
    redis: Redis,
    prefix: String,
}

impl RedisReplayStore {
    /// Keys `toolctx:jti:<jti>`.
    pub fn new(redis: Redis) -> RedisReplayStore {
        RedisReplayStore::with_prefix(redis, DEFAULT_KEY_PREFIX)
    }

    pub fn with_prefix(redis: Redis, prefix: impl Into<String>) -> RedisReplayStore {
        RedisReplayStore {
            redis,
            prefix: prefix.into(),
        }
    }
}

impl ReplayStore for RedisReplayStore {
    fn claim<'a>(&'a self, claim: &'a ReplayClaim, now: u64) -> ClaimFuture<'a> {
        Box::pin(async move {
            match self
                .redis
                .query::<Option<String>>(&claim_args(&self.prefix, claim, now))
                .await
            {
                Ok(reply) => answer(reply.as_deref() == Some("OK")),
                Err(why) => {
                    eprintln!("toolctx: replay guard: {why}");
                    ClaimAnswer::Failed
                }
            }
        })
    }
}
