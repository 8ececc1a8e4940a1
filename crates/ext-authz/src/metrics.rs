//! The service's metrics and a small HTTP endpoint for Prometheus: the
//! names every front end shares (`toolctx_core::telemetry`),
//! `toolctx_verdicts_total{outcome,reason}` and the histogram
//! `toolctx_check_duration_seconds{outcome}`, and the counters the service
//! had before them, kept as aliases for dashboards and alerts that use
//! them: `toolctx_passed`, `toolctx_accepted`, `toolctx_errors`,
//! `toolctx_refused_<reason>` (how Envoy's `/stats/prometheus` shows the
//! filter's `toolctx.refused.<reason>`).

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use toolctx_core::telemetry::{
    DURATION_BUCKETS_S, OUTCOMES, PROMETHEUS_CHECK_DURATION, PROMETHEUS_OUTCOME, PROMETHEUS_REASON,
    PROMETHEUS_VERDICTS,
};
use toolctx_core::Reason;

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

/// A Prometheus histogram over [`DURATION_BUCKETS_S`].
#[derive(Debug)]
struct Histogram {
    /// Observations at most each bound (not cumulative; summed on render).
    buckets: Vec<AtomicU64>,
    count: AtomicU64,
    sum_ns: AtomicU64,
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
    fn observe(&self, took: Duration) {
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

#[derive(Debug)]
pub struct Metrics {
    passed: AtomicU64,
    accepted: AtomicU64,
    errors: AtomicU64,
    /// One per [`Reason::ALL`], same order.
    refused: Vec<AtomicU64>,
    /// One per [`OUTCOMES`], same order.
    durations: Vec<Histogram>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            passed: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            refused: Reason::ALL.iter().map(|_| AtomicU64::new(0)).collect(),
            durations: OUTCOMES.iter().map(|_| Histogram::default()).collect(),
        }
    }
}

impl Metrics {
    /// Counts one request's verdict, which took `took` from the start of
    /// its check.
    pub fn record(&self, verdict: Counted, took: Duration) {
        match verdict {
            Counted::Pass => self.passed.fetch_add(1, Ordering::Relaxed),
            Counted::Accept => self.accepted.fetch_add(1, Ordering::Relaxed),
            Counted::Error => self.errors.fetch_add(1, Ordering::Relaxed),
            Counted::Refuse(reason) => {
                let i = Reason::ALL.iter().position(|r| *r == reason);
                match i.and_then(|i| self.refused.get(i)) {
                    Some(c) => c.fetch_add(1, Ordering::Relaxed),
                    None => 0,
                }
            }
        };
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
            Self::value(&self.accepted)
        );
        let _ = writeln!(out, "{name}{{{o}=\"pass\"}} {}", Self::value(&self.passed));
        for (reason, value) in Reason::ALL.iter().zip(&self.refused) {
            let mut n = Self::value(value);
            if *reason == Reason::InternalError {
                n += Self::value(&self.errors);
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
        counter(
            "toolctx_passed",
            "Alias of toolctx_verdicts_total{outcome=\"pass\"}.",
            &self.passed,
        );
        counter(
            "toolctx_accepted",
            "Alias of toolctx_verdicts_total{outcome=\"accept\"}.",
            &self.accepted,
        );
        counter(
            "toolctx_errors",
            "Requests the service could not judge, refused with internal_error.",
            &self.errors,
        );
        for (reason, value) in Reason::ALL.iter().zip(&self.refused) {
            counter(
                &format!("toolctx_refused_{}", reason.as_str()),
                "Requests refused for this reason (the core's refusals).",
                value,
            );
        }
    }
}

/// Serves `GET /metrics` on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, metrics: Arc<Metrics>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors, say: try again shortly rather than spin.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let metrics = Arc::clone(&metrics);
        tokio::spawn(async move {
            let _ = tokio::time::timeout(Duration::from_secs(5), answer(stream, &metrics)).await;
        });
    }
}

/// Binds the metrics endpoint.
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr} for metrics: {e}"))
}

async fn answer(mut stream: TcpStream, metrics: &Metrics) -> std::io::Result<()> {
    // The request head only, bounded; no body is expected.
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(buf.get(..n).unwrap_or_default());
    }
    let line = head.split(|&b| b == b'\r').next().unwrap_or_default();
    let (status, body) = if line.starts_with(b"GET /metrics ") || line == b"GET /metrics" {
        ("200 OK", metrics.prometheus())
    } else {
        ("404 Not Found", "not found: GET /metrics\n".to_string())
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; version=0.0.4\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(reply.as_bytes()).await?;
    stream.shutdown().await
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
