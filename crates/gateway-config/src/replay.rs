//! The optional replay guard's settings (`replay_guard`). What a store's
//! answer means is the core's rule (`toolctx_core::ClaimAnswer`); this only
//! says where the records live.

use toolctx_core::json::Value;
pub use toolctx_core::replay::redis::DEFAULT_KEY_PREFIX as DEFAULT_REDIS_KEY_PREFIX;
use toolctx_core::settings;
#[cfg(feature = "redis")]
use toolctx_core::store::StoreAddress;

#[cfg(feature = "redis")]
use crate::load::from_env;
#[cfg(feature = "redis")]
use crate::load::setting;
use crate::load::{at, setting_number, Cx};
use crate::Host;

/// Where the replay guard (CONTRACT §3 `token_replayed`) keeps its records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayGuard {
    /// A bounded table: in the filter, `slots` buckets of Envoy's shared
    /// data (every worker of the VM sees them), chosen by a hash of the
    /// jti, each holding at most `ways` token ids under `prefix` (one space
    /// per instance id); in the module and the service, one in-process
    /// table of `slots x ways` ids.
    Table {
        slots: u32,
        ways: u32,
        prefix: String,
    },
    /// The ext_authz service and the dynamic module: Redis, shared by
    /// every replica (never the filter, which cannot open a connection).
    Redis(RedisReplay),
}

impl ReplayGuard {
    /// How many live token ids a table holds (`None` for Redis).
    pub fn capacity(&self) -> Option<usize> {
        match self {
            ReplayGuard::Table { slots, ways, .. } => {
                usize::try_from(u64::from(*slots) * u64::from(*ways)).ok()
            }
            ReplayGuard::Redis(_) => None,
        }
    }

    /// For the log line.
    pub(crate) fn summary(&self) -> String {
        match self {
            ReplayGuard::Table { slots, ways, .. } => format!("{slots} slots x {ways} ways"),
            ReplayGuard::Redis(redis) => format!("redis (url from {})", redis.url_env),
        }
    }
}

/// The replay guard in Redis (the service's and the module's): one key per
/// token id, written with the core's command
/// (`toolctx_core::replay::redis::claim_args`).
#[derive(Clone, PartialEq, Eq)]
pub struct RedisReplay {
    /// The variable the URL came from (it may hold a password).
    pub url_env: String,
    /// The store address (docs/CONTRACT.md §5.4), from the environment.
    pub url: String,
    /// Prefixed to every token id (default [`DEFAULT_REDIS_KEY_PREFIX`]).
    pub key_prefix: String,
}

impl std::fmt::Debug for RedisReplay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisReplay")
            .field("url_env", &self.url_env)
            .field("key_prefix", &self.key_prefix)
            .finish_non_exhaustive()
    }
}

/// How long a call waits for Redis to answer its claim before it is
/// refused (`ClaimAnswer::Failed`, the core's `internal_error`): the core's
/// one store timeout (`toolctx_core::redis::TIMEOUT_MS`), as a `Duration`.
#[cfg(feature = "redis")]
pub const REDIS_TIMEOUT: std::time::Duration =
    std::time::Duration::from_millis(toolctx_core::redis::TIMEOUT_MS);

/// The replay table's bounds: the settings table's (`replay_slots`,
/// `replay_ways`).
pub use toolctx_core::settings::{DEFAULT_REPLAY_WAYS, MAX_REPLAY_SLOTS, MAX_REPLAY_WAYS};

/// `replay_guard`: `{"slots": N, "ways": M}`, or for the service and the
/// module `{"redis_url_env": "VAR", "redis_key_prefix": "..."}`.
pub(crate) fn replay_guard(
    value: &Value<'_>,
    instance_id: &str,
    cx: &mut Cx<'_>,
) -> Result<ReplayGuard, String> {
    let Value::Object(m) = value else {
        return Err("`replay_guard` must be an object {\"slots\": N}".into());
    };
    let redis_host = match cx.host {
        Host::EnvoyFilter => false,
        Host::EnvoyModule => true,
        #[cfg(feature = "service")]
        Host::Service => true,
    };
    if redis_host && value.get("redis_url_env").is_some() {
        #[cfg(feature = "redis")]
        return redis_guard(value, m, cx);
        #[cfg(not(feature = "redis"))]
        return Err(
            "`replay_guard.redis_url_env`: this build has no Redis replay guard (the `redis` \
             feature of toolctx-gateway-config)"
                .into(),
        );
    }
    if let Some((k, _)) = m.iter().find(|(k, _)| *k != "slots" && *k != "ways") {
        if cx.host == Host::EnvoyFilter && k.starts_with("redis") {
            return Err(format!(
                "`replay_guard.{k}`: Redis is for the ext_authz service and the dynamic module; \
                 the filter keeps its records in Envoy's shared data (`slots`, `ways`)"
            ));
        }
        if k.starts_with("redis") {
            return Err(format!(
                "`replay_guard.{k}` needs `replay_guard.redis_url_env` (the variable that holds \
                 the Redis URL)"
            ));
        }
        return Err(format!("unknown setting `replay_guard.{k}`"));
    }
    // The settings table's rows: their ranges fit a `u32`.
    let slots = setting_number(&settings::REPLAY_SLOTS, value.get("slots"))
        .map_err(at("replay_guard.slots"))?;
    let ways = setting_number(&settings::REPLAY_WAYS, value.get("ways"))
        .map_err(at("replay_guard.ways"))?;
    Ok(ReplayGuard::Table {
        slots: slots as u32,
        ways: ways as u32,
        prefix: format!("toolctx/replay/{instance_id}/"),
    })
}

#[cfg(feature = "redis")]
fn redis_guard(
    value: &Value<'_>,
    members: &[(std::borrow::Cow<'_, str>, Value<'_>)],
    cx: &mut Cx<'_>,
) -> Result<ReplayGuard, String> {
    if let Some((k, _)) = members
        .iter()
        .find(|(k, _)| *k != "redis_url_env" && *k != "redis_key_prefix")
    {
        return Err(format!(
            "unknown setting `replay_guard.{k}` (with `redis_url_env` the records live in Redis: \
             no `slots` or `ways`)"
        ));
    }
    let var = value
        .get("redis_url_env")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or("`replay_guard.redis_url_env` must name an environment variable")?;
    let (url_env, url) = from_env(&[var], "replay_guard.redis_url_env", cx)?
        .into_iter()
        .next()
        .ok_or("`replay_guard.redis_url_env` names no variable")?;
    settings::text_value(settings::REDIS_URL.name, &url).map_err(|e| format!("{url_env}: {e}"))?;
    // The core reads the address (docs/CONTRACT.md §5.4) and refuses what
    // this host's client cannot reach, with the reason (the module's plain
    // RESP client: TLS, Cluster, Sentinel and WAIT).
    StoreAddress::parse(&url)
        .and_then(|a| a.check(cx.host.store_supports()))
        .map_err(|e| format!("the Redis URL in {url_env}: {e}"))?;
    let key_prefix = match setting(&settings::REPLAY_PREFIX, value.get("redis_key_prefix"))
        .map_err(at("replay_guard.redis_key_prefix"))?
    {
        settings::Value::Text(p) => p.to_string(),
        _ => DEFAULT_REDIS_KEY_PREFIX.to_string(),
    };
    Ok(ReplayGuard::Redis(RedisReplay {
        url_env,
        url,
        key_prefix,
    }))
}
