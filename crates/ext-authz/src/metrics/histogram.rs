//! A Prometheus histogram over the core's duration buckets.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use toolctx_core::telemetry::DURATION_BUCKETS_S;

/// A Prometheus histogram over [`DURATION_BUCKETS_S`].
#[derive(Debug)]
pub struct Histogram {
    /// Observations at most each bound (not cumulative; summed on render).
    pub buckets: Vec<AtomicU64>,
    pub count: AtomicU64,
    pub sum_ns: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram {
            buckets: DURATION_BUCKETS_S
                .iter()
                .map(|_| AtomicU64::new(0))
                .collect(),
            count: AtomicU64::new(0),
            sum_ns: AtomicU64::new(0),
        }
    }
}

impl Histogram {
    pub fn observe(&self, took: Duration) {
        let seconds = took.as_secs_f64();
        let i = DURATION_BUCKETS_S.iter().position(|b| seconds <= *b);
        if let Some(b) = i.and_then(|i| self.buckets.get(i)) {
            b.fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
    }
}
