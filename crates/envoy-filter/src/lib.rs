#![doc = include_str!("../README.md")]

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use proxy_wasm::hostcalls;
use proxy_wasm::traits::{Context, HttpContext, RootContext};
use proxy_wasm::types::{Action, BufferType, Bytes, ContextType, LogLevel, MapType, MetricType};
use toolctx_core::{Checked, HeadersVerdict, Reason, Refusal};

pub mod replay;
/// The plugin configuration (shared with the ext_authz service).
pub use toolctx_gateway_config as settings;

use settings::{header_value, printable, Decision, Profile, Settings};

/// Test builds only: the request header that carries `now` (Unix seconds).
#[cfg(feature = "test-clock")]
const TEST_NOW_HEADER: &str = "x-toolctx-test-now";

/// Test builds only: a request carrying this header makes the filter panic,
/// in `on_http_request_headers` (value `headers`) or in
/// `on_http_request_body` (value `body`).
#[cfg(feature = "test-crash")]
const TEST_CRASH_HEADER: &str = "x-toolctx-test-crash";

/// Longest JSON-RPC id written to a log line.
const MAX_LOGGED_ID: usize = 64;

/// How long a request may wait at its headers, before any body was ever
/// delivered to this VM, until the missing setting is assumed.
const STUCK_AFTER: Duration = Duration::from_secs(3);

proxy_wasm::main! {{
    std::panic::set_hook(Box::new(|info| {
        log(LogLevel::Critical, &format!("panic, the VM stops and requests fail closed: {info}"));
    }));
    proxy_wasm::set_root_context(|_| -> Box<dyn RootContext> { Box::new(Root::default()) });
}}

fn log(level: LogLevel, message: &str) {
    let _ = hostcalls::log(level, message);
}

/// Counter ids, defined once per VM in `on_configure`.
#[derive(Debug, Default)]
struct Metrics {
    passed: u32,
    accepted: u32,
    errors: u32,
    /// One per [`Reason::ALL`], same order.
    refused: Vec<u32>,
}

impl Metrics {
    fn define() -> Result<Metrics, String> {
        let counter = |name: &str| {
            hostcalls::define_metric(MetricType::Counter, name)
                .map_err(|s| format!("define_metric {name}: {s:?}"))
        };
        Ok(Metrics {
            passed: counter("toolctx.passed")?,
            accepted: counter("toolctx.accepted")?,
            errors: counter("toolctx.errors")?,
            refused: Reason::ALL
                .iter()
                .map(|r| counter(&format!("toolctx.refused.{}", r.as_str())))
                .collect::<Result<_, _>>()?,
        })
    }

    fn bump(id: u32) {
        let _ = hostcalls::increment_metric(id, 1);
    }

    fn refused(&self, reason: Reason) {
        let i = Reason::ALL.iter().position(|r| *r == reason);
        if let Some(id) = i.and_then(|i| self.refused.get(i)) {
            Metrics::bump(*id);
        }
    }
}

/// Detects the missing `allow_on_headers_stop_iteration`, which no API
/// reveals: without it Envoy never hands the body to a filter that paused
/// on the headers, so held requests would hang. Until a first body arrives,
/// the root context watches held requests and answers any stuck one with a
/// 500 and a log line that names the setting; after that it stops watching.
#[derive(Debug, Default)]
struct Watch {
    body_seen: bool,
    warned: bool,
    /// Held requests: context id and when they were held.
    held: Vec<(u32, SystemTime)>,
}

type SharedWatch = Rc<RefCell<Watch>>;

#[derive(Default)]
struct Root {
    settings: Option<Rc<Settings>>,
    metrics: Rc<Metrics>,
    watch: SharedWatch,
}

impl Context for Root {}

impl Root {
    fn answer_stuck(&self) {
        let now = hostcalls::get_current_time().unwrap_or(UNIX_EPOCH);
        let stuck: Vec<u32> = {
            let mut w = self.watch.borrow_mut();
            let (old, young) = w.held.drain(..).partition::<Vec<_>, _>(|(_, since)| {
                now.duration_since(*since).is_ok_and(|d| d >= STUCK_AFTER)
            });
            w.held = young;
            old.into_iter().map(|(id, _)| id).collect()
        };
        if stuck.is_empty() {
            return;
        }
        if !std::mem::replace(&mut self.watch.borrow_mut().warned, true) {
            log(
                LogLevel::Critical,
                "request bodies never reach the filter: the plugin configuration needs \
                 `allow_on_headers_stop_iteration: true`; held requests are refused with 500",
            );
        }
        for id in stuck {
            Metrics::bump(self.metrics.errors);
            if hostcalls::set_effective_context(id).is_ok() {
                let include_reason = self.settings.as_ref().is_none_or(|s| s.include_reason);
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
        self.settings = Some(Rc::new(s));
        if !self.watch.borrow().body_seen {
            let _ = hostcalls::set_tick_period(Duration::from_secs(1));
        }
        true
    }

    fn on_tick(&mut self) {
        if self.watch.borrow().body_seen {
            let _ = hostcalls::set_tick_period(Duration::ZERO);
            return;
        }
        self.answer_stuck();
    }

    fn create_http_context(&self, context_id: u32) -> Option<Box<dyn HttpContext>> {
        Some(Box::new(Filter {
            id: context_id,
            settings: self.settings.clone(),
            metrics: Rc::clone(&self.metrics),
            watch: Rc::clone(&self.watch),
            state: State::Headers,
        }))
    }

    fn get_type(&self) -> Option<ContextType> {
        Some(ContextType::HttpContext)
    }
}

enum State {
    /// Waiting for the request headers.
    Headers,
    /// A `POST` held at its headers while the body is buffered, with the
    /// core's proof that its steps 0 and 1 passed.
    Body {
        checked: Checked,
        headers: Vec<(String, Bytes)>,
    },
    /// Decided: forwarded or answered.
    Done,
}

struct Filter {
    id: u32,
    settings: Option<Rc<Settings>>,
    metrics: Rc<Metrics>,
    watch: SharedWatch,
    state: State,
}

impl Context for Filter {
    fn on_done(&mut self) -> bool {
        let mut w = self.watch.borrow_mut();
        if !w.body_seen {
            w.held.retain(|(id, _)| *id != self.id);
        }
        true
    }
}

fn find<'h>(headers: &'h [(String, Bytes)], name: &str) -> Option<&'h [u8]> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_slice())
}

/// The refusal when the filter itself cannot decide: fail closed, with the
/// core's status, code and message.
fn internal_error() -> Refusal {
    Refusal::new(Reason::InternalError, None)
}

/// Answers the current request with `refusal`; a request that cannot be
/// answered is reset, never forwarded.
fn send_refusal(refusal: &Refusal, include_reason: bool) {
    let body = refusal.body(include_reason);
    let reply = vec![("content-type", "application/json")];
    if hostcalls::send_http_response(u32::from(refusal.status()), reply, Some(body.as_bytes()))
        .is_err()
    {
        let _ = hostcalls::reset_http_request();
    }
}

/// Test builds only: panics when the request asks for it in `callback`
/// (`headers` or `body`), so the tests can watch a VM crash inside Envoy.
#[cfg(feature = "test-crash")]
// The one deliberate panic of the crate, only in the test-crash build.
#[allow(clippy::panic)]
fn crash_if_asked(headers: &[(String, Bytes)], callback: &str) {
    if find(headers, TEST_CRASH_HEADER) == Some(callback.as_bytes()) {
        panic!("test crash in on_http_request_{callback} ({TEST_CRASH_HEADER})");
    }
}

impl Filter {
    /// A held request's body reached the filter: the setting is there, stop
    /// watching. (Bodies of requests that were not held prove nothing.)
    fn body_seen(&self) {
        let mut w = self.watch.borrow_mut();
        if !w.body_seen {
            w.body_seen = true;
            w.held = Vec::new();
        }
    }

    /// The request time: Envoy's clock, or in test builds the test header.
    fn now(&self, headers: &[(String, Bytes)]) -> Option<u64> {
        #[cfg(feature = "test-clock")]
        if let Some(v) = find(headers, TEST_NOW_HEADER) {
            return std::str::from_utf8(v).ok().and_then(|s| s.parse().ok());
        }
        let _ = headers;
        let t = hostcalls::get_current_time().ok()?;
        t.duration_since(UNIX_EPOCH)
            .ok()
            .as_ref()
            .map(Duration::as_secs)
    }

    /// Answers the request with the core's `internal_error` (500) and
    /// counts an error: fail closed.
    fn fail(&mut self, why: &str) -> Action {
        self.state = State::Done;
        Metrics::bump(self.metrics.errors);
        log(LogLevel::Error, &format!("request refused with 500: {why}"));
        let include_reason = self.settings.as_ref().is_none_or(|s| s.include_reason);
        send_refusal(&internal_error(), include_reason);
        Action::Pause
    }

    /// Sends the core's refusal as a local reply; the request goes no further.
    fn refuse(
        &mut self,
        settings: &Settings,
        refusal: &Refusal,
        headers: &[(String, Bytes)],
    ) -> Action {
        self.state = State::Done;
        self.metrics.refused(refusal.reason());
        let request_id =
            find(headers, "x-request-id").map_or_else(|| "-".into(), |v| printable(v, 64));
        log(
            LogLevel::Info,
            &format!(
                "refused {} status={} request_id={} rpc_id={}",
                refusal.reason().as_str(),
                refusal.status(),
                request_id,
                printable(refusal.id_json().as_bytes(), MAX_LOGGED_ID)
            ),
        );
        send_refusal(refusal, settings.include_reason);
        Action::Pause
    }

    /// Forwards an accepted call with its mapped headers set.
    fn forward(&mut self, mapped: Vec<(String, String)>) -> Action {
        for (name, value) in &mapped {
            let v = header_value(value);
            if hostcalls::set_map_value(MapType::HttpRequestHeaders, name, Some(&v)).is_err() {
                return self.fail("cannot set a mapped header");
            }
        }
        self.state = State::Done;
        Metrics::bump(self.metrics.accepted);
        Action::Continue
    }

    fn pass(&mut self) -> Action {
        self.state = State::Done;
        Metrics::bump(self.metrics.passed);
        Action::Continue
    }

    /// Runs the checks after the headers' on a complete (or over-limit) body.
    fn decide(
        &mut self,
        settings: &Settings,
        checked: Checked,
        headers: &[(String, Bytes)],
        body: &[u8],
    ) -> Action {
        let Some(now) = self.now(headers) else {
            return self.fail("no clock");
        };
        let guard = match &settings.profile {
            Profile::AgentArea { replay, .. } => replay.as_ref(),
            #[cfg(feature = "aivax")]
            Profile::Aivax { .. } => None,
        };
        let mut store_error = None;
        // The core calls this only once every other check passed.
        let mut first_use = |jti: &str, until: u64| match guard {
            Some(g) => {
                replay::first_use(&mut replay::Host, g, jti, until, now).unwrap_or_else(|e| {
                    store_error = Some(e);
                    false
                })
            }
            None => false,
        };
        let decision = settings.check_body(
            checked,
            headers,
            body,
            now,
            guard.is_some().then_some(&mut first_use as _),
        );
        if let Some(e) = store_error {
            // The store failed, not the token: no `token_replayed`.
            return self.fail(&e);
        }
        match decision {
            Ok(Decision::Pass) => self.pass(),
            Ok(Decision::Accept(mapped)) => self.forward(mapped),
            Ok(Decision::Reject(r)) => self.refuse(settings, &r, headers),
            Err(e) => self.fail(&e),
        }
    }

    /// The buffered body (up to `limit` bytes) is complete or over the limit.
    fn decide_on_body(&mut self, size: usize) -> Action {
        let State::Body { checked, headers } = std::mem::replace(&mut self.state, State::Done)
        else {
            return Action::Continue;
        };
        let Some(settings) = self.settings.clone() else {
            return self.fail("not configured");
        };
        // One byte past the limit is enough for the core to refuse it.
        let take = size.min(settings.max_body_bytes().saturating_add(1));
        let body = match hostcalls::get_buffer(BufferType::HttpRequestBody, 0, take) {
            Ok(b) => b.unwrap_or_default(),
            Err(_) => return self.fail("cannot read the request body"),
        };
        if body.len() != take {
            return self.fail("request body shorter than announced");
        }
        self.decide(&settings, checked, &headers, &body)
    }
}

impl HttpContext for Filter {
    fn on_http_request_headers(&mut self, _num_headers: usize, end_of_stream: bool) -> Action {
        if !matches!(self.state, State::Headers) {
            return Action::Continue;
        }
        let Some(settings) = self.settings.clone() else {
            return self.fail("not configured");
        };
        let mut headers = match hostcalls::get_map_bytes(MapType::HttpRequestHeaders) {
            Ok(h) => h,
            Err(_) => return self.fail("cannot read the request headers"),
        };
        #[cfg(feature = "test-crash")]
        crash_if_asked(&headers, "headers");
        // Mapped headers are written only by this filter, never by a caller:
        // any the caller sent are removed (one host call per name present).
        for name in settings.written_headers() {
            if find(&headers, name).is_some() {
                if hostcalls::remove_map_value(MapType::HttpRequestHeaders, name).is_err() {
                    return self.fail("cannot remove a mapped header");
                }
                headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            }
        }
        let method = find(&headers, ":method")
            .and_then(|m| std::str::from_utf8(m).ok())
            .unwrap_or_default();
        match settings.check_headers(method, &headers) {
            HeadersVerdict::Pass => self.pass(),
            HeadersVerdict::Reject(r) => self.refuse(&settings, &r, &headers),
            HeadersVerdict::ReadBody(checked) if end_of_stream => {
                self.decide(&settings, checked, &headers, &[])
            }
            HeadersVerdict::ReadBody(checked) => {
                // Held here: with allow_on_headers_stop_iteration the headers
                // do not go upstream until the body has been judged.
                self.state = State::Body { checked, headers };
                let mut w = self.watch.borrow_mut();
                if !w.body_seen {
                    w.held
                        .push((self.id, hostcalls::get_current_time().unwrap_or(UNIX_EPOCH)));
                }
                Action::Pause
            }
        }
    }

    fn on_http_request_body(&mut self, body_size: usize, end_of_stream: bool) -> Action {
        match &self.state {
            #[cfg(feature = "test-crash")]
            State::Body { headers, .. } => {
                crash_if_asked(headers, "body");
                self.body_seen();
            }
            #[cfg(not(feature = "test-crash"))]
            State::Body { .. } => self.body_seen(),
            State::Headers => return self.fail("body before headers"),
            State::Done => return Action::Continue,
        }
        let limit = self.settings.as_ref().map_or(0, |s| s.max_body_bytes());
        if end_of_stream || body_size > limit {
            return self.decide_on_body(body_size);
        }
        Action::Pause
    }

    fn on_http_request_trailers(&mut self, _num_trailers: usize) -> Action {
        if !matches!(self.state, State::Body { .. }) {
            return Action::Continue;
        }
        self.body_seen();
        // The body ended with trailers: it is all buffered now.
        let size = match hostcalls::get_buffer(BufferType::HttpRequestBody, 0, usize::MAX) {
            Ok(b) => b.map_or(0, |b| b.len()),
            Err(_) => return self.fail("cannot read the request body"),
        };
        self.decide_on_body(size)
    }
}
