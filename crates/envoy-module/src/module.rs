#![forbid(unsafe_code)]
//! One filter configuration (`filter_config` of an
//! `envoy.filters.http.dynamic_modules` stanza): the settings, the counter
//! ids (the gateways' one set, `toolctx_gateway_config::Counters`) and the stores, built once on Envoy's main thread and read by every
//! worker thread.

#[cfg(feature = "aivax")]
use std::sync::Mutex;

#[cfg(feature = "aivax")]
use toolctx_core::aivax::NonceCache;
#[cfg(feature = "bench-profile")]
use toolctx_gateway_config::Floor;
use toolctx_gateway_config::{
    load_for, Counters, Host, Profile, ReplayGuard, Settings, REDIS_TIMEOUT,
};

use crate::redis::{Endpoint, Log, RedisGuard};
use crate::replay::SharedReplay;

/// What a log line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Error,
    Critical,
}

/// A loaded configuration, shared by every worker thread.
#[derive(Debug)]
pub struct Module {
    pub settings: Settings,
    /// Counter ids Envoy handed out for this configuration.
    pub counters: Counters<usize>,
    /// The replay guard's table, when `replay_guard` is `{"slots": ...}`.
    pub replay: Option<SharedReplay>,
    /// The fleet's replay guard in Redis, when `replay_guard` is
    /// `{"redis_url_env": ...}`: the I/O thread its claims go to.
    pub redis: Option<RedisGuard>,
    /// The AIVAX nonces verified in this process (`nonce_cache`).
    #[cfg(feature = "aivax")]
    pub nonces: Option<Mutex<NonceCache>>,
    /// Bench-profile builds only: what the stream does instead of deciding
    /// (from the stanza's `filter_name`).
    #[cfg(feature = "bench-profile")]
    pub floor: Floor,
}

impl Module {
    /// Reads the configuration (the wasm filter's JSON, secrets named by
    /// environment variables of the Envoy process) and defines the
    /// counters. `Err` says what is wrong, never with a secret: Envoy then
    /// refuses the configuration. `log` is also the Redis I/O thread's.
    pub fn load(
        text: &[u8],
        env: &dyn Fn(&str) -> Option<String>,
        define: &mut dyn FnMut(&str) -> Result<usize, String>,
        log: &Log,
    ) -> Result<Module, String> {
        let loaded = load_for(Host::EnvoyModule, text, env)?;
        let counters = Counters::define(define)?;
        for note in &loaded.notes {
            log(Level::Warn, note);
        }
        let settings = loaded.settings;
        log(Level::Info, &format!("configured: {}", settings.summary()));
        let (replay, redis) = match &settings.profile {
            Profile::AgentArea {
                replay: Some(guard @ ReplayGuard::Table { .. }),
                ..
            } => (Some(SharedReplay::new(guard.capacity().unwrap_or(0))), None),
            Profile::AgentArea {
                replay: Some(ReplayGuard::Redis(r)),
                ..
            } => {
                let endpoint = Endpoint::parse(&r.url)
                    .map_err(|e| format!("the Redis URL in {}: {e}", r.url_env))?;
                let guard =
                    RedisGuard::start(endpoint, r.key_prefix.clone(), REDIS_TIMEOUT, log.clone())?;
                (None, Some(guard))
            }
            _ => (None, None),
        };
        #[cfg(feature = "aivax")]
        let nonces = match settings.profile {
            Profile::Aivax { nonce_cache, .. } if nonce_cache > 0 => {
                Some(Mutex::new(NonceCache::new(nonce_cache)))
            }
            _ => None,
        };
        Ok(Module {
            settings,
            counters,
            replay,
            redis,
            #[cfg(feature = "aivax")]
            nonces,
            #[cfg(feature = "bench-profile")]
            floor: Floor::Full,
        })
    }
}
