#![forbid(unsafe_code)]
//! One filter configuration (`filter_config` of an
//! `envoy.filters.http.dynamic_modules` stanza): the settings, the counter
//! ids and the stores, built once on Envoy's main thread and read by every
//! worker thread.

#[cfg(feature = "aivax")]
use std::sync::Mutex;

#[cfg(feature = "aivax")]
use toolctx_core::aivax::NonceCache;
use toolctx_core::Reason;
use toolctx_gateway_config::{
    counters, load_for, Host, Profile, ReplayGuard, Settings, REDIS_TIMEOUT,
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

/// Counter ids Envoy handed out for this configuration.
#[derive(Debug)]
pub struct Counters {
    pub passed: usize,
    pub accepted: usize,
    pub errors: usize,
    /// One per [`Reason::ALL`], same order.
    refused: Vec<usize>,
}

impl Counters {
    /// Defines every counter with `define` (Envoy's `define_counter`).
    pub fn define(
        define: &mut dyn FnMut(&str) -> Result<usize, String>,
    ) -> Result<Counters, String> {
        Ok(Counters {
            passed: define(counters::PASSED)?,
            accepted: define(counters::ACCEPTED)?,
            errors: define(counters::ERRORS)?,
            refused: Reason::ALL
                .iter()
                .map(|r| define(&counters::refused(*r)))
                .collect::<Result<_, _>>()?,
        })
    }

    pub fn refused(&self, reason: Reason) -> Option<usize> {
        let i = Reason::ALL.iter().position(|r| *r == reason)?;
        self.refused.get(i).copied()
    }
}

/// Bench-profile builds only: what the stream does instead of deciding.
#[cfg(feature = "bench-profile")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Floor {
    /// Decide (the module as it ships).
    Full,
    /// Continue at the headers, touching nothing.
    Noop,
    /// Read the headers, hold the request, read the whole body, continue.
    Hold,
}

#[cfg(feature = "bench-profile")]
impl Floor {
    /// From the stanza's `filter_name`.
    pub fn named(filter_name: &[u8]) -> Floor {
        match filter_name {
            b"toolctx-floor-noop" => Floor::Noop,
            b"toolctx-floor-hold" => Floor::Hold,
            _ => Floor::Full,
        }
    }
}

/// A loaded configuration, shared by every worker thread.
#[derive(Debug)]
pub struct Module {
    pub settings: Settings,
    pub counters: Counters,
    /// The replay guard's table, when `replay_guard` is `{"slots": ...}`.
    pub replay: Option<SharedReplay>,
    /// The fleet's replay guard in Redis, when `replay_guard` is
    /// `{"redis_url_env": ...}`: the I/O thread its claims go to.
    pub redis: Option<RedisGuard>,
    /// The AIVAX nonces verified in this process (`nonce_cache`).
    #[cfg(feature = "aivax")]
    pub nonces: Option<Mutex<NonceCache>>,
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
