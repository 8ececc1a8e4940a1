//! The service's metrics: the names every front end shares
//! (`toolctx_core::telemetry`), `toolctx_verdicts_total{outcome,reason}`
//! and the histogram `toolctx_check_duration_seconds{outcome}`, and the
//! counters the service had before them, kept as aliases for dashboards
//! and alerts that use them: the gateways' counters
//! (`toolctx_gateway_config::Counters`) in Prometheus form,
//! `toolctx_passed`, `toolctx_accepted`, `toolctx_errors`,
//! `toolctx_refused_<reason>` (how Envoy's `/stats/prometheus` shows the
//! filter's `toolctx.refused.<reason>`). Served by `endpoint`.

mod endpoint;
mod histogram;

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use toolctx_core::telemetry::{
    DURATION_BUCKETS_S, OUTCOMES, PROMETHEUS_CHECK_DURATION, PROMETHEUS_OUTCOME, PROMETHEUS_REASON,
    PROMETHEUS_VERDICTS,
};
use toolctx_core::Reason;
use toolctx_gateway_config::counters::{self, Counters};

pub use endpoint::{bind, serve};
use histogram::Histogram;

/// A request's verdict as the service counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    Pass,
    Accept,
    Refuse(Reason),
    /// The service could not judge and refused `internal_error`.
    Error,
}

impl Counted {
    /// The index of its outcome in [`OUTCOMES`].
    fn outcome(self) -> usize {
        match self {
            Counted::Accept => 0,
            Counted::Pass => 1,
            Counted::Refuse(_) | Counted::Error => 2,
        }
    }
}

#[derive(Debug)]
pub struct Metrics {
    counts: Counters<AtomicU64>,
    /// One per [`OUTCOMES`], same order.
    durations: Vec<Histogram>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            counts: Counters::new(|_| AtomicU64::new(0)),
            durations: OUTCOMES.iter().map(|_| Histogram::default()).collect(),
        }
    }
}

impl Metrics {
    /// Counts one request's verdict, which took `took` from the start of
    /// its check.
    pub fn record(&self, verdict: Counted, took: Duration) {
        let c = &self.counts;
        let counter = match verdict {
            Counted::Pass => Some(&c.passed),
            Counted::Accept => Some(&c.accepted),
            Counted::Error => Some(&c.errors),
            Counted::Refuse(reason) => c.refused(reason),
        };
        if let Some(counter) = counter {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(h) = self.durations.get(verdict.outcome()) {
            h.observe(took);
        }
    }

    fn value(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    /// The Prometheus text format.
    pub fn prometheus(&self) -> String {
        let mut out = String::new();
        self.verdicts(&mut out);
        self.durations(&mut out);
        self.aliases(&mut out);
        out
    }

    /// `toolctx_verdicts_total`: `reason` on refusals only. A request the
    /// service could not judge is a refusal `internal_error`, as answered.
    fn verdicts(&self, out: &mut String) {
        let name = PROMETHEUS_VERDICTS;
        let (o, r) = (PROMETHEUS_OUTCOME, PROMETHEUS_REASON);
        let _ = writeln!(
            out,
            "# HELP {name} Requests answered or handed on, by verdict."
        );
        let _ = writeln!(out, "# TYPE {name} counter");
        let _ = writeln!(
            out,
            "{name}{{{o}=\"accept\"}} {}",
            Self::value(&self.counts.accepted)
        );
        let _ = writeln!(
            out,
            "{name}{{{o}=\"pass\"}} {}",
            Self::value(&self.counts.passed)
        );
        for (reason, value) in self.counts.each_refused() {
            let mut n = Self::value(value);
            if reason == Reason::InternalError {
                n += Self::value(&self.counts.errors);
            }
            let _ = writeln!(
                out,
                "{name}{{{o}=\"reject\",{r}=\"{}\"}} {n}",
                reason.as_str()
            );
        }
    }

    fn durations(&self, out: &mut String) {
        let name = PROMETHEUS_CHECK_DURATION;
        let o = PROMETHEUS_OUTCOME;
        let _ = writeln!(
            out,
            "# HELP {name} From the start of a check to its verdict, in seconds."
        );
        let _ = writeln!(out, "# TYPE {name} histogram");
        for (outcome, h) in OUTCOMES.iter().zip(&self.durations) {
            let mut below = 0;
            for (bound, bucket) in DURATION_BUCKETS_S.iter().zip(&h.buckets) {
                below += Self::value(bucket);
                let _ = writeln!(
                    out,
                    "{name}_bucket{{{o}=\"{outcome}\",le=\"{bound}\"}} {below}"
                );
            }
            let count = Self::value(&h.count);
            let sum = Self::value(&h.sum_ns) as f64 / 1e9;
            let _ = writeln!(
                out,
                "{name}_bucket{{{o}=\"{outcome}\",le=\"+Inf\"}} {count}"
            );
            let _ = writeln!(out, "{name}_sum{{{o}=\"{outcome}\"}} {sum}");
            let _ = writeln!(out, "{name}_count{{{o}=\"{outcome}\"}} {count}");
        }
    }

    /// The counters from before `toolctx_verdicts_total`, same values.
    fn aliases(&self, out: &mut String) {
        let mut counter = |name: &str, help: &str, value: &AtomicU64| {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} counter");
            let _ = writeln!(out, "{name} {}", Self::value(value));
        };
        let c = &self.counts;
        counter(
            &counters::prometheus(counters::PASSED),
            "Alias of toolctx_verdicts_total{outcome=\"pass\"}.",
            &c.passed,
        );
        counter(
            &counters::prometheus(counters::ACCEPTED),
            "Alias of toolctx_verdicts_total{outcome=\"accept\"}.",
            &c.accepted,
        );
        counter(
            &counters::prometheus(counters::ERRORS),
            "Requests the service could not judge, refused with internal_error.",
            &c.errors,
        );
        for (reason, value) in c.each_refused() {
            counter(
                &counters::prometheus(&counters::refused(reason)),
                "Requests refused for this reason (the core's refusals).",
                value,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_filter_and_the_shared_ones() {
        let m = Metrics::default();
        let us = Duration::from_micros(30);
        m.record(Counted::Pass, us);
        m.record(Counted::Refuse(Reason::TokenExpired), us);
        m.record(
            Counted::Refuse(Reason::TokenExpired),
            Duration::from_millis(2),
        );
        m.record(Counted::Error, us);
        let text = m.prometheus();
        assert!(text.contains("\ntoolctx_passed 1\n"), "{text}");
        assert!(
            text.contains("\ntoolctx_refused_token_expired 2\n"),
            "{text}"
        );
        assert!(text.contains("\ntoolctx_errors 1\n"), "{text}");
        assert!(
            text.contains("\ntoolctx_verdicts_total{outcome=\"pass\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("\ntoolctx_verdicts_total{outcome=\"accept\"} 0\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "\ntoolctx_verdicts_total{outcome=\"reject\",reason=\"token_expired\"} 2\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "\ntoolctx_verdicts_total{outcome=\"reject\",reason=\"internal_error\"} 1\n"
            ),
            "{text}"
        );
        // Cumulative buckets: one of three refusals took more than 1 ms.
        assert!(
            text.contains(
                "\ntoolctx_check_duration_seconds_bucket{outcome=\"reject\",le=\"0.001\"} 2\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "\ntoolctx_check_duration_seconds_bucket{outcome=\"reject\",le=\"+Inf\"} 3\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("\ntoolctx_check_duration_seconds_count{outcome=\"pass\"} 1\n"),
            "{text}"
        );
        // No empty reason label anywhere.
        assert!(!text.contains("reason=\"\""), "{text}");
    }
}
