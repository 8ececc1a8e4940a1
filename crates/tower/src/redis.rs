//! The Redis stores (feature `redis`): the replay guard's, with the core's
//! key, command and reading of the reply (`SET <key> 1 NX PX <ms>`,
//! `toolctx_core::replay::redis`), and a connection shared with the
//! idempotency store. Every command is sent once and bounded by a timeout
//! (the core's, `toolctx_core::redis`): a paused Redis fails calls, it
//! never holds them, and never lets one through unguarded.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use toolctx_core::redis::Reply;
use toolctx_core::replay::redis::{claim_answer, claim_args, DEFAULT_KEY_PREFIX};
use toolctx_core::{ClaimAnswer, ReplayClaim};

use crate::replay::{ClaimFuture, ReplayStore};

/// The default bound on a reply (and on connecting): the core's one store
/// timeout (`toolctx_core::redis::TIMEOUT_MS`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(toolctx_core::redis::TIMEOUT_MS);

/// A reply of the `redis` crate as the core reads replies. Its server
/// errors arrive as `Err` from `query`, which is the store failing too.
pub fn reply(value: &redis::Value) -> Reply<'_> {
    match value {
        redis::Value::Nil => Reply::Nil,
        redis::Value::Okay => Reply::Status("OK"),
        redis::Value::SimpleString(s) => Reply::Status(s),
        redis::Value::BulkString(b) => Reply::Bulk(b),
        redis::Value::Int(i) => Reply::Integer(*i),
        redis::Value::ServerError(e) => Reply::Error(e.code()),
        _ => Reply::Other,
    }
}

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
    /// `timeout` as the core's settings table reads it (`store_timeout_ms`,
    /// docs/CONTRACT.md §5.3: zero is its default; anything else is rounded
    /// to whole milliseconds and must be in its range, or connecting fails
    /// with the core's message). The error names the problem, never the URL.
    pub async fn connect(url: &str, timeout: Duration) -> Result<Redis, String> {
        let timeout = crate::settings::duration(&toolctx_core::settings::STORE_TIMEOUT, timeout)
            .map_err(|e| e.to_string())?;
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
                .query::<redis::Value>(&claim_args(&self.prefix, claim, now))
                .await
            {
                Ok(value) => claim_answer(reply(&value)),
                Err(why) => {
                    eprintln!("toolctx: replay guard: {why}");
                    ClaimAnswer::Failed
                }
            }
        })
    }
}

#[cfg(feature = "rmcp")]
mod idempotency {
    use std::time::Duration;

    use toolctx_core::helpers::idempotency::redis::{
        claim_args, complete_args, meaning, read_args, release_args, Command, Meaning,
    };
    use toolctx_core::helpers::idempotency::{redis_key, CLAIM_ROUNDS, DEFAULT_KEY_PREFIX};

    use crate::helpers::{Entry, IdempotencyStore, StoreError, StoreFuture};

    use super::{reply, Redis};

    /// The idempotency store in Redis, for several replicas, with the
    /// core's keys, commands and reply meanings (shared with the npm and
    /// Python packages' stores): the claim is one `SET key value NX PX
    /// lease`, the result a `SET key value PX ttl`, the release the core's
    /// compare-and-delete script. A command that fails, times out or
    /// answers something the core does not recognise fails the call (it
    /// never runs unguarded).
    #[derive(Debug, Clone)]
    pub struct RedisStore {
        redis: Redis,
        prefix: String,
    }

    impl RedisStore {
        /// Keys `toolctx:idem:<store key>` (the core's default prefix).
        pub fn new(redis: Redis) -> RedisStore {
            RedisStore::with_prefix(redis, DEFAULT_KEY_PREFIX)
        }

        pub fn with_prefix(redis: Redis, prefix: impl Into<String>) -> RedisStore {
            RedisStore {
                redis,
                prefix: prefix.into(),
            }
        }

        /// Sends `args` and reads the reply as the core means it for `command`.
        async fn send<R>(
            &self,
            command: Command,
            args: &[String],
            then: impl FnOnce(Meaning<'_>) -> Option<R>,
        ) -> Result<R, StoreError> {
            let value: redis::Value = self.redis.query(args).await.map_err(StoreError::new)?;
            let means = meaning(command, reply(&value));
            let name = means.as_str();
            then(means).ok_or_else(|| {
                StoreError::new(format!(
                    "Redis answered {} with a reply that means {name}",
                    command.as_str()
                ))
            })
        }
    }

    fn ms(d: Duration) -> u64 {
        u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
    }

    impl IdempotencyStore for RedisStore {
        fn claim<'a>(
            &'a self,
            key: &'a str,
            entry: &'a Entry,
            lease: Duration,
        ) -> StoreFuture<'a, Option<Entry>> {
            Box::pin(async move {
                let k = redis_key(&self.prefix, key);
                let value = entry.encode()?;
                // The held value can expire between the SET and the GET: try again.
                for _ in 0..CLAIM_ROUNDS {
                    let claimed = self
                        .send(
                            Command::Claim,
                            &claim_args(&k, &value, ms(lease)),
                            |m| match m {
                                Meaning::Claimed => Some(true),
                                Meaning::Taken => Some(false),
                                _ => None,
                            },
                        )
                        .await?;
                    if claimed {
                        return Ok(None);
                    }
                    let held = self
                        .send(Command::Read, &read_args(&k), |m| match m {
                            Meaning::Held(bytes) => Some(Some(bytes.to_vec())),
                            Meaning::Gone => Some(None),
                            _ => None,
                        })
                        .await?;
                    if let Some(held) = held {
                        return Entry::decode(&held).map(Some);
                    }
                }
                Err(StoreError::new("could not claim or read the key"))
            })
        }

        fn complete<'a>(
            &'a self,
            key: &'a str,
            entry: &'a Entry,
            ttl: Duration,
        ) -> StoreFuture<'a, ()> {
            Box::pin(async move {
                let args = complete_args(&redis_key(&self.prefix, key), &entry.encode()?, ms(ttl));
                self.send(Command::Complete, &args, |m| {
                    (m == Meaning::Stored).then_some(())
                })
                .await
            })
        }

        fn release<'a>(&'a self, key: &'a str, entry: &'a Entry) -> StoreFuture<'a, ()> {
            Box::pin(async move {
                let args = release_args(&redis_key(&self.prefix, key), &entry.encode()?);
                self.send(Command::Release, &args, |m| {
                    matches!(m, Meaning::Released | Meaning::NotHeld).then_some(())
                })
                .await
            })
        }
    }
}

#[cfg(feature = "rmcp")]
pub use idempotency::RedisStore;

#[cfg(test)]
mod tests {
    use toolctx_core::replay::redis::claim_answer;
    use toolctx_core::ClaimAnswer;

    use super::{reply, Reply};

    #[test]
    fn each_value_is_handed_to_the_core_as_what_it_is() {
        use redis::Value;
        let cases = [
            (Value::Okay, Reply::Status("OK"), ClaimAnswer::FirstUse),
            (Value::Nil, Reply::Nil, ClaimAnswer::Used),
            (
                Value::SimpleString("QUEUED".into()),
                Reply::Status("QUEUED"),
                ClaimAnswer::Failed,
            ),
            (
                Value::BulkString(b"1".to_vec()),
                Reply::Bulk(b"1"),
                ClaimAnswer::Failed,
            ),
            (Value::Int(1), Reply::Integer(1), ClaimAnswer::Failed),
            (Value::Boolean(true), Reply::Other, ClaimAnswer::Failed),
            (Value::Array(vec![]), Reply::Other, ClaimAnswer::Failed),
        ];
        for (value, core, answer) in &cases {
            assert_eq!(reply(value), *core, "{value:?}");
            assert_eq!(claim_answer(reply(value)), *answer, "{value:?}");
        }
    }
}
