//! Bench builds only (feature `bench-profile`): where a request's time goes
//! inside the filter. Each phase's nanoseconds (WASI's monotonic clock) and
//! each host call are summed per VM and published every
//! 256 requests as counters `toolctx.profile.*`, which
//! `bench/envoy.sh profile` reads. Outside that feature every function here
//! is empty and inlined away.

/// What the filter does with a request in a bench-profile build, from the
/// VM's environment variable `TOOLCTX_BENCH_FLOOR` (read at configuration):
/// the gateways' one `Floor`.
#[cfg(feature = "bench-profile")]
pub use toolctx_gateway_config::Floor;

/// The parts of a request timed apart.
#[derive(Debug, Clone, Copy)]
pub enum Phase {
    /// The whole `on_http_request_headers` callback.
    HeadersCallback,
    /// The whole `on_http_request_body` (or trailers) callback.
    BodyCallback,
    /// Reading the request headers from Envoy (and removing spoofed ones).
    Headers,
    /// The core's steps 0 and 1.
    CoreHeaders,
    /// Reading the buffered body from Envoy.
    Body,
    /// The core's steps 2 to 14.
    Core,
    /// Building and setting the accepted call's headers.
    Mutation,
    /// Counters.
    Counters,
    /// A refusal's log line.
    Logging,
    /// A refusal's local reply.
    Refusal,
}

/// Host calls, by kind.
#[derive(Debug, Clone, Copy)]
pub enum Call {
    GetHeaders,
    RemoveHeader,
    GetBody,
    Clock,
    SetHeader,
    Metric,
    Log,
    Reply,
}

#[cfg(feature = "bench-profile")]
mod on {
    use super::{Call, Phase};
    use std::cell::RefCell;
    use std::time::Instant;

    use proxy_wasm::hostcalls;
    use proxy_wasm::types::MetricType;

    pub const FLUSH_EVERY: u64 = 256;
    const PHASES: [&str; 10] = [
        "headers_callback",
        "body_callback",
        "headers",
        "core_headers",
        "body",
        "core",
        "mutation",
        "counters",
        "logging",
        "refusal",
    ];
    const CALLS: [&str; 8] = [
        "get_headers",
        "remove_header",
        "get_body",
        "clock",
        "set_header",
        "metric",
        "log",
        "reply",
    ];

    thread_local! {
        static FLOOR: std::cell::Cell<super::Floor> = const { std::cell::Cell::new(super::Floor::Full) };
    }

    pub fn configure_floor() {
        let floor = std::env::var(toolctx_gateway_config::FLOOR_ENV)
            .map_or(super::Floor::Full, |v| super::Floor::named(v.as_bytes()));
        FLOOR.with(|f| f.set(floor));
    }

    pub fn floor() -> super::Floor {
        FLOOR.with(std::cell::Cell::get)
    }

    #[derive(Default)]
    struct Sums {
        requests: u64,
        ns: [u64; 10],
        calls: [u64; 8],
        /// Counter ids: requests, then phases, then calls.
        ids: Vec<u32>,
    }

    thread_local! {
        static SUMS: RefCell<Sums> = RefCell::new(Sums::default());
    }

    pub fn time<T>(phase: Phase, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
        SUMS.with(|s| {
            if let Some(v) = s.borrow_mut().ns.get_mut(phase as usize) {
                *v = v.saturating_add(ns);
            }
        });
        out
    }

    pub fn call(kind: Call) {
        SUMS.with(|s| {
            if let Some(v) = s.borrow_mut().calls.get_mut(kind as usize) {
                *v += 1;
            }
        });
    }

    /// One request is over; every FLUSH_EVERY requests the sums go to the
    /// counters (their own host calls are not counted).
    pub fn request_done() {
        SUMS.with(|s| {
            let mut s = s.borrow_mut();
            s.requests += 1;
            if s.requests < FLUSH_EVERY {
                return;
            }
            if s.ids.is_empty() {
                let mut names = vec!["toolctx.profile.requests".to_string()];
                names.extend(PHASES.iter().map(|p| format!("toolctx.profile.ns.{p}")));
                names.extend(CALLS.iter().map(|c| format!("toolctx.profile.calls.{c}")));
                s.ids = names
                    .iter()
                    .filter_map(|n| hostcalls::define_metric(MetricType::Counter, n).ok())
                    .collect();
            }
            let values: Vec<u64> = std::iter::once(s.requests)
                .chain(s.ns.iter().copied())
                .chain(s.calls.iter().copied())
                .collect();
            for (id, v) in s.ids.iter().zip(values) {
                let _ = hostcalls::increment_metric(*id, i64::try_from(v).unwrap_or(i64::MAX));
            }
            *s = Sums {
                ids: std::mem::take(&mut s.ids),
                ..Sums::default()
            };
        });
    }
}

#[cfg(feature = "bench-profile")]
pub use on::{call, configure_floor, floor, request_done, time};

#[cfg(not(feature = "bench-profile"))]
#[inline(always)]
pub fn configure_floor() {}

#[cfg(not(feature = "bench-profile"))]
#[inline(always)]
pub fn time<T>(_phase: Phase, f: impl FnOnce() -> T) -> T {
    f()
}

#[cfg(not(feature = "bench-profile"))]
#[inline(always)]
pub fn call(_kind: Call) {}

#[cfg(not(feature = "bench-profile"))]
#[inline(always)]
pub fn request_done() {}
