//! The Redis stores (feature `redis`): the replay guard's, with the core's
//! key, command and reading of the reply (`SET <key> 1 NX PX <ms>`,
//! `toolctx_core::replay::redis`), and a connection shared with the
//! idempotency store, opened from a store address the core reads
//! (`toolctx_core::store`, docs/CONTRACT.md §5.4): one node, TLS with an
//! ACL user, a Redis Cluster or a Sentinel-watched primary (`open.rs`,
//! `sentinel.rs`). Every command is sent once and bounded by a timeout
//! (the core's, `toolctx_core::redis`; on a cluster, a command the node
//! redirected goes to the node named, within the same bound): a paused
//! Redis fails calls, it never holds them, and never lets one through
//! unguarded. With durable claims (`wait_replicas` in the address), each
//! write that counts is followed on its connection by the core's `WAIT`
//! and counts only as the core reads the reply
//! (`toolctx_core::store::durable`).

mod open;
mod sentinel;

use std::sync::Arc;
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::cluster_async::ClusterConnection;
use toolctx_core::redis::Reply;
use toolctx_core::replay::redis::{claim_answer, claim_args, DEFAULT_KEY_PREFIX};
use toolctx_core::store::durable::{self, Durability};
use toolctx_core::store::{StoreAddress, Supports, Wait};
use toolctx_core::{ClaimAnswer, ReplayClaim};

use crate::replay::{ClaimFuture, ReplayStore};

/// The default bound on a reply (and on connecting): the core's one store
/// timeout (`toolctx_core::redis::TIMEOUT_MS`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(toolctx_core::redis::TIMEOUT_MS);

/// What these stores' client reaches: TLS, a cluster, a Sentinel set and
/// durable claims (an address needing more is refused by the core).
pub const SUPPORTS: Supports = Supports::ALL;

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

/// How the nodes are reached.
#[derive(Clone)]
enum Conn {
    /// One node, reconnecting.
    Single(ConnectionManager),
    /// A Redis Cluster: each command goes to its key's node.
    Cluster(ClusterConnection),
    /// The primary the Sentinels name, re-found after a failover.
    Sentinel(Arc<sentinel::Primary>),
}

/// A Redis connection whose every command has a timeout.
#[derive(Clone)]
pub struct Redis {
    conn: Conn,
    timeout: Duration,
    wait: Option<Wait>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the URL: it may hold a password.
        let topology = match self.conn {
            Conn::Single(_) => "single",
            Conn::Cluster(_) => "cluster",
            Conn::Sentinel(_) => "sentinel",
        };
        f.debug_struct("Redis")
            .field("topology", &topology)
            .field("timeout", &self.timeout)
            .field("wait", &self.wait)
            .finish_non_exhaustive()
    }
}

/// Sends `cmds` as one pipeline on `conn` (one command: alone).
async fn exec<C: redis::aio::ConnectionLike>(
    conn: &mut C,
    cmds: &[redis::Cmd],
) -> redis::RedisResult<Vec<redis::Value>> {
    match cmds {
        [one] => one.query_async::<redis::Value>(conn).await.map(|v| vec![v]),
        _ => {
            let mut pipe = redis::pipe();
            for c in cmds {
                pipe.add_command(c.clone());
            }
            pipe.query_async::<Vec<redis::Value>>(conn).await
        }
    }
}

fn command(args: &[String]) -> redis::Cmd {
    let mut cmd = redis::Cmd::new();
    for a in args {
        cmd.arg(a);
    }
    cmd
}

impl Redis {
    /// Connects to the store address `url` (docs/CONTRACT.md §5.4:
    /// `redis://127.0.0.1:6379`, `rediss://user:pw@host:6380?ca=ca.pem`,
    /// `redis-cluster://h1:7000,h2:7001`,
    /// `redis-sentinel://h1:26379,h2:26379#primary`, `?wait_replicas=1`),
    /// read by the core; commands time out after `timeout` as the core's
    /// settings table reads it (`store_timeout_ms`, docs/CONTRACT.md §5.3:
    /// zero is its default; anything else is rounded to whole milliseconds
    /// and must be in its range, or connecting fails with the core's
    /// message). The error names the problem, never the URL.
    pub async fn connect(url: &str, timeout: Duration) -> Result<Redis, String> {
        let address = StoreAddress::parse(url).map_err(|e| e.to_string())?;
        Redis::open(&address, timeout).await
    }

    /// Connects to an address the core has read.
    pub async fn open(address: &StoreAddress, timeout: Duration) -> Result<Redis, String> {
        let timeout = crate::settings::duration(&toolctx_core::settings::STORE_TIMEOUT, timeout)
            .map_err(|e| e.to_string())?;
        address.check(SUPPORTS).map_err(|e| e.to_string())?;
        let conn = open::open(address, timeout).await?;
        Ok(Redis {
            conn,
            timeout,
            wait: address.wait,
        })
    }

    /// Durable claims, as the address set them (`None`: a write counts
    /// once the primary has it).
    pub fn durable(&self) -> Option<Wait> {
        self.wait
    }

    /// Sends `cmds` once, in one pipeline on one connection, within the
    /// timeout.
    async fn send(&self, cmds: &[redis::Cmd]) -> Result<Vec<redis::Value>, String> {
        let sent = async {
            match &self.conn {
                Conn::Single(c) => exec(&mut c.clone(), cmds).await.map_err(|e| e.kind()),
                Conn::Cluster(c) => loop {
                    // A redirection the client could not complete (another
                    // command took its one-shot ASKING): the node said it
                    // did not run the command, so it goes again, within
                    // the same timeout.
                    match exec(&mut c.clone(), cmds).await.map_err(|e| e.kind()) {
                        Err(redis::ErrorKind::Server(
                            redis::ServerErrorKind::Ask | redis::ServerErrorKind::Moved,
                        )) => tokio::time::sleep(Duration::from_millis(2)).await,
                        other => break other,
                    }
                },
                Conn::Sentinel(p) => {
                    let mut c = p.connection().await.map_err(|_| redis::ErrorKind::Io)?;
                    exec(&mut c, cmds).await.map_err(|e| e.kind())
                }
            }
        };
        let answer = match tokio::time::timeout(self.timeout, sent).await {
            Ok(Ok(values)) => Ok(values),
            Ok(Err(kind)) => Err(format!("Redis failed ({kind:?})")),
            Err(_) => Err(format!(
                "Redis did not answer within {} ms",
                self.timeout.as_millis()
            )),
        };
        if let (Err(_), Conn::Sentinel(p)) = (&answer, &self.conn) {
            p.forget();
        }
        answer
    }

    /// Sends one command (its arguments) and reads the reply as `T`.
    pub async fn query<T: redis::FromRedisValue>(&self, args: &[String]) -> Result<T, String> {
        let value = self
            .send(&[command(args)])
            .await?
            .into_iter()
            .next()
            .ok_or("Redis sent no reply")?;
        T::from_redis_value(value).map_err(|_| "Redis answered with a reply of another type".into())
    }

    /// Sends a write that counts (a claim, a stored result) and, with
    /// durable claims, the core's `WAIT` right behind it on the same
    /// connection: the write's reply, and what `WAIT`'s means (`None`
    /// without durable claims).
    pub async fn write(
        &self,
        args: &[String],
    ) -> Result<(redis::Value, Option<Durability>), String> {
        let Some(wait) = self.wait else {
            return Ok((self.query(args).await?, None));
        };
        let mut replies = self
            .send(&[command(args), command(&durable::wait_args(wait))])
            .await?
            .into_iter();
        match (replies.next(), replies.next()) {
            (Some(value), Some(waited)) => {
                let durability = durable::meaning(wait, reply(&waited));
                Ok((value, Some(durability)))
            }
            _ => Err("Redis sent fewer replies than commands".into()),
        }
    }
}

/// Whether a write counts, or why not (for the log and the error).
fn counted(durability: Option<Durability>, wait: Option<Wait>) -> Result<(), String> {
    match (durability, wait) {
        (Some(d), Some(w)) if !d.counts() => Err(format!(
            "the write did not reach {} replicas within {} ms (WAIT: {})",
            w.replicas,
            w.timeout_ms,
            d.as_str()
        )),
        _ => Ok(()),
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
                .write(&claim_args(&self.prefix, claim, now))
                .await
            {
                // A first use counts only once durable, when asked: else
                // the token is refused (fail closed), its key stays.
                Ok((value, durability)) => match claim_answer(reply(&value)) {
                    ClaimAnswer::FirstUse => match counted(durability, self.redis.wait) {
                        Ok(()) => ClaimAnswer::FirstUse,
                        Err(why) => {
                            eprintln!("toolctx: replay guard: {why}");
                            ClaimAnswer::Failed
                        }
                    },
                    answer => answer,
                },
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

    use super::{counted, reply, Redis};

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

        /// Sends `args` and reads the reply as the core means it for
        /// `command`; a claim and a result are writes that count
        /// (`Redis::write`: with durable claims, followed by `WAIT`).
        async fn send<R>(
            &self,
            command: Command,
            args: &[String],
            then: impl FnOnce(Meaning<'_>) -> Option<R>,
        ) -> Result<R, StoreError> {
            let (value, durability) = match command {
                Command::Claim | Command::Complete => {
                    self.redis.write(args).await.map_err(StoreError::new)?
                }
                Command::Read | Command::Release => {
                    (self.redis.query(args).await.map_err(StoreError::new)?, None)
                }
            };
            let means = meaning(command, reply(&value));
            let name = means.as_str();
            let durable = match means {
                Meaning::Claimed | Meaning::Stored => counted(durability, self.redis.wait),
                _ => Ok(()),
            };
            let answer = then(means).ok_or_else(|| {
                StoreError::new(format!(
                    "Redis answered {} with a reply that means {name}",
                    command.as_str()
                ))
            })?;
            durable.map_err(|why| StoreError::new(format!("{}: {why}", command.as_str())))?;
            Ok(answer)
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
                        .await;
                    let claimed = match claimed {
                        Ok(c) => c,
                        Err(e) => {
                            // A claim that is not durable is dropped (only
                            // while it is still this call's): the call
                            // fails and the tool does not run.
                            if self.redis.durable().is_some() {
                                let _ = self
                                    .send(Command::Release, &release_args(&k, &value), |_| Some(()))
                                    .await;
                            }
                            return Err(e);
                        }
                    };
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
