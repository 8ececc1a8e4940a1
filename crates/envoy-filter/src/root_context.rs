//! The root context: loads the configuration and defines the counters once
//! per VM, creates one HTTP context per request, and runs the stuck-request
//! watch on its tick.

use std::rc::Rc;
use std::time::{Duration, UNIX_EPOCH};

use proxy_wasm::hostcalls;
use proxy_wasm::traits::{Context, HttpContext, RootContext};
use proxy_wasm::types::{BufferType, ContextType, LogLevel};

use crate::http_context::Filter;
#[cfg(feature = "aivax")]
use crate::http_context::SharedNonces;
use crate::log;
use crate::metrics::Metrics;
use crate::reply::{internal_error, send_refusal};
#[cfg(feature = "aivax")]
use crate::settings::Profile;
use crate::settings::{self, Settings};
use crate::watch::{SharedWatch, TICK};
#[cfg(feature = "aivax")]
use toolctx_core::aivax::NonceCache;
use toolctx_core::settings::INCLUDE_REASON;

#[derive(Default)]
pub struct Root {
    settings: Option<Rc<Settings>>,
    metrics: Rc<Metrics>,
    watch: SharedWatch,
    /// One nonce cache per VM, when configured.
    #[cfg(feature = "aivax")]
    nonces: Option<SharedNonces>,
}

impl Context for Root {}

impl Root {
    /// Answers every request held too long with a 500 (see [`crate::watch`]).
    fn answer_stuck(&self) {
        let now = hostcalls::get_current_time().unwrap_or(UNIX_EPOCH);
        let (stuck, first) = self.watch.borrow_mut().take_stuck(now);
        if first {
            log(
                LogLevel::Critical,
                "request bodies never reach the filter: the plugin configuration needs \
                 `allow_on_headers_stop_iteration: true`; held requests are refused with 500",
            );
        }
        for id in stuck {
            Metrics::bump(self.metrics.errors);
            if hostcalls::set_effective_context(id).is_ok() {
                let include_reason =
                    INCLUDE_REASON.flag(self.settings.as_ref().map(|s| s.include_reason));
                send_refusal(&internal_error(), include_reason);
            }
        }
    }
}

impl RootContext for Root {
    fn on_configure(&mut self, _plugin_configuration_size: usize) -> bool {
        let text = match hostcalls::get_buffer(BufferType::PluginConfiguration, 0, usize::MAX) {
            Ok(Some(bytes)) => bytes,
            _ => Vec::new(),
        };
        let loaded = match settings::load(&text, &|name| std::env::var(name).ok()) {
            Ok(l) => l,
            Err(e) => {
                // Envoy refuses the filter when this returns false: fail closed.
                log(LogLevel::Critical, &format!("configuration refused: {e}"));
                self.settings = None;
                return false;
            }
        };
        match Metrics::define() {
            Ok(m) => self.metrics = Rc::new(m),
            Err(e) => {
                log(LogLevel::Critical, &format!("cannot define counters: {e}"));
                return false;
            }
        }
        for note in &loaded.notes {
            log(LogLevel::Warn, note);
        }
        let s = loaded.settings;
        log(LogLevel::Info, &format!("configured: {}", s.summary()));
        crate::profile::configure_floor();
        #[cfg(feature = "aivax")]
        {
            self.nonces = match s.profile {
                Profile::Aivax { nonce_cache, .. } if nonce_cache > 0 => Some(Rc::new(
                    std::cell::RefCell::new(NonceCache::new(nonce_cache)),
                )),
                _ => None,
            };
        }
        self.settings = Some(Rc::new(s));
        if !self.watch.borrow().body_seen() {
            let _ = hostcalls::set_tick_period(TICK);
        }
        true
    }

    fn on_tick(&mut self) {
        if self.watch.borrow().body_seen() {
            let _ = hostcalls::set_tick_period(Duration::ZERO);
            return;
        }
        self.answer_stuck();
    }

    fn create_http_context(&self, context_id: u32) -> Option<Box<dyn HttpContext>> {
        Some(Box::new(Filter::new(
            context_id,
            self.settings.clone(),
            Rc::clone(&self.metrics),
            Rc::clone(&self.watch),
            #[cfg(feature = "aivax")]
            self.nonces.clone(),
        )))
    }

    fn get_type(&self) -> Option<ContextType> {
        Some(ContextType::HttpContext)
    }
}
