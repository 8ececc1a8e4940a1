//! The filter's counters (`toolctx.passed`, `toolctx.accepted`,
//! `toolctx.errors`, `toolctx.refused.<reason>`: the gateways' one set,
//! `toolctx_gateway_config::Counters`), defined once per VM.

use std::ops::Deref;

use proxy_wasm::hostcalls;
use proxy_wasm::types::MetricType;
use toolctx_core::Reason;

use crate::settings::Counters;

/// Counter ids, defined once per VM in `on_configure` (all 0, and no
/// refusal counter, before).
#[derive(Debug, Default)]
pub struct Metrics(Counters<u32>);

impl Deref for Metrics {
    type Target = Counters<u32>;

    fn deref(&self) -> &Counters<u32> {
        &self.0
    }
}

impl Metrics {
    pub fn define() -> Result<Metrics, String> {
        Counters::define(|name| {
            hostcalls::define_metric(MetricType::Counter, name)
                .map_err(|s| format!("define_metric {name}: {s:?}"))
        })
        .map(Metrics)
    }

    pub fn bump(id: u32) {
        crate::profile::time(crate::profile::Phase::Counters, || crate::host::bump(id));
    }

    /// Counts a refusal for `reason`.
    pub fn bump_refused(&self, reason: Reason) {
        if let Some(id) = self.0.refused(reason) {
            Metrics::bump(*id);
        }
    }
}
