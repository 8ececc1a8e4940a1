//! The filter's counters (`toolctx.passed`, `toolctx.accepted`,
//! `toolctx.errors`, `toolctx.refused.<reason>`), defined once per VM.

use proxy_wasm::hostcalls;
use proxy_wasm::types::MetricType;
use toolctx_core::Reason;

use crate::settings::counters;

/// Counter ids, defined once per VM in `on_configure`.
#[derive(Debug, Default)]
pub struct Metrics {
    pub passed: u32,
    pub accepted: u32,
    pub errors: u32,
    /// One per [`Reason::ALL`], same order.
    refused: Vec<u32>,
}

impl Metrics {
    pub fn define() -> Result<Metrics, String> {
        let counter = |name: &str| {
            hostcalls::define_metric(MetricType::Counter, name)
                .map_err(|s| format!("define_metric {name}: {s:?}"))
        };
        Ok(Metrics {
            passed: counter(counters::PASSED)?,
            accepted: counter(counters::ACCEPTED)?,
            errors: counter(counters::ERRORS)?,
            refused: Reason::ALL
                .iter()
                .map(|r| counter(&counters::refused(*r)))
                .collect::<Result<_, _>>()?,
        })
    }

    pub fn bump(id: u32) {
        crate::profile::time(crate::profile::Phase::Counters, || crate::host::bump(id));
    }

    pub fn refused(&self, reason: Reason) {
        let i = Reason::ALL.iter().position(|r| *r == reason);
        if let Some(id) = i.and_then(|i| self.refused.get(i)) {
            Metrics::bump(*id);
        }
    }
}
