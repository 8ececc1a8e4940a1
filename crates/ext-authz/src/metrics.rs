//! The service's counters, named as the filter's (`toolctx_passed`,
//! `toolctx_accepted`, `toolctx_errors`, `toolctx_refused_<reason>`, which
//! is how Envoy's `/stats/prometheus` shows the filter's
//! `toolctx.refused.<reason>`), and a small HTTP endpoint for Prometheus.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use toolctx_core::Reason;

#[derive(Debug)]
pub struct Metrics {
    passed: AtomicU64,
    accepted: AtomicU64,
    errors: AtomicU64,
    /// One per [`Reason::ALL`], same order.
    refused: Vec<AtomicU64>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            passed: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            refused: Reason::ALL.iter().map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl Metrics {
    pub fn passed(&self) {
        self.passed.fetch_add(1, Ordering::Relaxed);
    }
    pub fn accepted(&self) {
        self.accepted.fetch_add(1, Ordering::Relaxed);
    }
    /// A request the service could not judge, refused with `internal_error`.
    pub fn error(&self) {
        self.errors.fetch_add(1, Ordering::Relaxed);
    }
    pub fn refused(&self, reason: Reason) {
        let i = Reason::ALL.iter().position(|r| *r == reason);
        if let Some(c) = i.and_then(|i| self.refused.get(i)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The Prometheus text format.
    pub fn prometheus(&self) -> String {
        let mut out = String::new();
        let mut counter = |name: &str, help: &str, value: &AtomicU64| {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} counter");
            let _ = writeln!(out, "{name} {}", value.load(Ordering::Relaxed));
        };
        counter(
            "toolctx_passed",
            "Requests let through untouched (not POST, or not a tools/call).",
            &self.passed,
        );
        counter(
            "toolctx_accepted",
            "Verified tools/call requests.",
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
                "Requests refused for this reason.",
                value,
            );
        }
        out
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
    fn names_match_the_filter() {
        let m = Metrics::default();
        m.passed();
        m.refused(Reason::TokenExpired);
        m.refused(Reason::TokenExpired);
        let text = m.prometheus();
        assert!(text.contains("\ntoolctx_passed 1\n"), "{text}");
        assert!(
            text.contains("\ntoolctx_refused_token_expired 2\n"),
            "{text}"
        );
        assert!(text.contains("\ntoolctx_errors 0\n"), "{text}");
    }
}
