//! One HTTP context per request: reads the headers, holds a `POST` while its
//! body is buffered, hands both to the core and acts on its verdict
//! (forward, forward with the verified headers, or answer with the refusal).

use std::rc::Rc;
use std::time::{Duration, UNIX_EPOCH};

use proxy_wasm::traits::{Context, HttpContext};
use proxy_wasm::types::{Action, LogLevel};
use toolctx_core::settings::INCLUDE_REASON;
use toolctx_core::{Checked, ClaimAnswer, HeadersVerdict, Refusal};

use crate::metrics::Metrics;
use crate::profile::{self, Phase};
use crate::reply::{internal_error, send_refusal};
#[cfg(feature = "test-crash")]
use crate::request_headers::crash_if_asked;
use crate::request_headers::{take_headers, visible};
use crate::settings::request::{self, header};
use crate::settings::{error_line, refusal_line, Decision, Profile, Settings, Stores};
use crate::watch::SharedWatch;
use crate::{host, log, replay};

enum State {
    /// Waiting for the request headers.
    Headers,
    /// A `POST` held at its headers while the body is buffered, with the
    /// core's proof that its steps 0 and 1 passed.
    Body {
        checked: Checked,
        /// The header block as Envoy gave it (see [`host::pairs`]).
        headers: Vec<u8>,
    },
    /// Bench-profile builds only (`Floor::Hold`): held without a check.
    #[cfg(feature = "bench-profile")]
    Hold,
    /// Decided: forwarded or answered.
    Done,
}

/// The AIVAX nonces this VM has verified (`nonce_cache` in the settings).
#[cfg(feature = "aivax")]
pub type SharedNonces = Rc<std::cell::RefCell<toolctx_core::aivax::NonceCache>>;

pub struct Filter {
    id: u32,
    settings: Option<Rc<Settings>>,
    metrics: Rc<Metrics>,
    watch: SharedWatch,
    #[cfg(feature = "aivax")]
    nonces: Option<SharedNonces>,
    state: State,
}

impl Context for Filter {}

impl Drop for Filter {
    /// Envoy deletes the context when the request is over.
    fn drop(&mut self) {
        self.watch.borrow_mut().done(self.id);
        profile::request_done();
    }
}

impl Filter {
    pub fn new(
        id: u32,
        settings: Option<Rc<Settings>>,
        metrics: Rc<Metrics>,
        watch: SharedWatch,
        #[cfg(feature = "aivax")] nonces: Option<SharedNonces>,
    ) -> Filter {
        Filter {
            id,
            settings,
            metrics,
            watch,
            #[cfg(feature = "aivax")]
            nonces,
            state: State::Headers,
        }
    }

    /// The request time: Envoy's clock, or in test builds the test header.
    fn now(&self, headers: &[(&[u8], &[u8])]) -> Option<u64> {
        request::now(
            |name| header(headers, name),
            || {
                let t = host::now().ok()?;
                t.duration_since(UNIX_EPOCH)
                    .ok()
                    .as_ref()
                    .map(Duration::as_secs)
            },
        )
    }

    /// Answers the request with the core's `internal_error` (500) and
    /// counts an error: fail closed.
    fn fail(&mut self, why: &str) -> Action {
        self.state = State::Done;
        Metrics::bump(self.metrics.errors);
        log(LogLevel::Error, &error_line(why));
        let include_reason = INCLUDE_REASON.flag(self.settings.as_ref().map(|s| s.include_reason));
        send_refusal(&internal_error(), include_reason);
        Action::Pause
    }

    /// Sends the core's refusal as a local reply; the request goes no further.
    fn refuse(
        &mut self,
        settings: &Settings,
        refusal: &Refusal,
        headers: &[(&[u8], &[u8])],
    ) -> Action {
        self.state = State::Done;
        self.metrics.bump_refused(refusal.reason());
        profile::time(Phase::Logging, || Filter::log_refusal(refusal, headers));
        profile::time(Phase::Refusal, || {
            send_refusal(refusal, settings.include_reason);
        });
        Action::Pause
    }

    /// The refusal's log line: reason, status, request and JSON-RPC ids.
    fn log_refusal(refusal: &Refusal, headers: &[(&[u8], &[u8])]) {
        log(
            LogLevel::Info,
            &refusal_line(refusal, header(headers, "x-request-id")),
        );
    }

    /// Forwards an accepted call with the headers the core computed set.
    fn forward(&mut self, set: &[(String, String)]) -> Action {
        let set = profile::time(Phase::Mutation, || {
            set.iter()
                .try_for_each(|(name, value)| host::add_request_header(name, value))
        });
        if set.is_err() {
            return self.fail("cannot set a mapped header");
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

    /// Runs the checks after the headers' on a complete (or over-limit)
    /// body: the shared [`Settings::check_body`] (as the ext_authz service
    /// runs it), with this VM's replay guard and nonce cache.
    fn decide(
        &mut self,
        settings: &Settings,
        checked: Checked,
        headers: &[(&[u8], &[u8])],
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
        let mut claim = guard.map(|g| {
            move |jti: &str, until: u64| {
                replay::first_use(&mut replay::Host, g, jti, until, now).unwrap_or_else(|e| {
                    log(LogLevel::Error, &e);
                    ClaimAnswer::Failed
                })
            }
        });
        let decision = {
            #[cfg(feature = "aivax")]
            let mut nonces = self.nonces.as_ref().map(|c| c.borrow_mut());
            let stores = Stores {
                first_use: claim.as_mut().map(|c| c as _),
                #[cfg(feature = "aivax")]
                nonces: nonces.as_deref_mut(),
            };
            profile::time(Phase::Core, || {
                settings.check_body(checked, headers, body, now, stores)
            })
        };
        match decision {
            Ok(Decision::Pass) => self.pass(),
            Ok(Decision::Accept(set)) => self.forward(&set),
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
        let body = match profile::time(Phase::Body, || host::request_body(0, take)) {
            Ok(b) => b.unwrap_or_default(),
            Err(_) => return self.fail("cannot read the request body"),
        };
        if body.len() != take {
            return self.fail("request body shorter than announced");
        }
        let Some(headers) = visible(&settings, &headers) else {
            return self.fail("cannot read the request headers");
        };
        self.decide(&settings, checked, &headers, &body)
    }
}

/// Bench-profile builds only: the floors under the filter's cost that
/// `bench/envoy.sh profile` measures (see [`profile::Floor`]).
#[cfg(feature = "bench-profile")]
impl Filter {
    fn floor_headers(&mut self, end_of_stream: bool) -> Option<Action> {
        match profile::floor() {
            profile::Floor::Full => None,
            profile::Floor::Noop => {
                self.state = State::Done;
                Some(Action::Continue)
            }
            profile::Floor::Hold => {
                if host::request_headers().is_err() {
                    return Some(self.fail("cannot read the request headers"));
                }
                if end_of_stream {
                    self.state = State::Done;
                    return Some(Action::Continue);
                }
                self.watch.borrow_mut().saw_body();
                self.state = State::Hold;
                Some(Action::Pause)
            }
        }
    }
}

impl HttpContext for Filter {
    fn on_http_request_headers(&mut self, _num_headers: usize, end_of_stream: bool) -> Action {
        profile::time(Phase::HeadersCallback, || self.headers(end_of_stream))
    }

    fn on_http_request_body(&mut self, body_size: usize, end_of_stream: bool) -> Action {
        profile::time(Phase::BodyCallback, || self.body(body_size, end_of_stream))
    }

    fn on_http_request_trailers(&mut self, _num_trailers: usize) -> Action {
        profile::time(Phase::BodyCallback, || self.trailers())
    }
}

impl Filter {
    fn headers(&mut self, end_of_stream: bool) -> Action {
        if !matches!(self.state, State::Headers) {
            return Action::Continue;
        }
        #[cfg(feature = "bench-profile")]
        if let Some(action) = self.floor_headers(end_of_stream) {
            return action;
        }
        let Some(settings) = self.settings.clone() else {
            return self.fail("not configured");
        };
        let Ok(block) = profile::time(Phase::Headers, host::request_headers) else {
            return self.fail("cannot read the request headers");
        };
        let headers = match profile::time(Phase::Headers, || take_headers(&settings, &block)) {
            Ok(h) => h,
            Err(why) => return self.fail(why),
        };
        let method = header(&headers, ":method")
            .and_then(|m| std::str::from_utf8(m).ok())
            .unwrap_or_default();
        match profile::time(Phase::CoreHeaders, || {
            settings.check_headers(method, &headers)
        }) {
            HeadersVerdict::Pass => self.pass(),
            HeadersVerdict::Reject(r) => self.refuse(&settings, &r, &headers),
            HeadersVerdict::ReadBody(checked) if end_of_stream => {
                self.decide(&settings, checked, &headers, &[])
            }
            HeadersVerdict::ReadBody(checked) => {
                // Held here: with allow_on_headers_stop_iteration the headers
                // do not go upstream until the body has been judged.
                drop(headers);
                self.state = State::Body {
                    checked,
                    headers: block,
                };
                self.watch.borrow_mut().hold(self.id);
                Action::Pause
            }
        }
    }

    fn body(&mut self, body_size: usize, end_of_stream: bool) -> Action {
        match &self.state {
            #[cfg(feature = "test-crash")]
            State::Body { headers, .. } => {
                crash_if_asked(&host::pairs(headers).unwrap_or_default(), "body");
                self.watch.borrow_mut().saw_body();
            }
            #[cfg(not(feature = "test-crash"))]
            State::Body { .. } => self.watch.borrow_mut().saw_body(),
            State::Headers => return self.fail("body before headers"),
            State::Done => return Action::Continue,
            #[cfg(feature = "bench-profile")]
            State::Hold if end_of_stream => {
                self.state = State::Done;
                return match host::request_body(0, body_size) {
                    Ok(_) => Action::Continue,
                    Err(_) => self.fail("cannot read the request body"),
                };
            }
            #[cfg(feature = "bench-profile")]
            State::Hold => return Action::Pause,
        }
        let limit = self.settings.as_ref().map_or(0, |s| s.max_body_bytes());
        if end_of_stream || body_size > limit {
            return self.decide_on_body(body_size);
        }
        Action::Pause
    }

    fn trailers(&mut self) -> Action {
        if !matches!(self.state, State::Body { .. }) {
            return Action::Continue;
        }
        self.watch.borrow_mut().saw_body();
        // The body ended with trailers: it is all buffered now.
        let size = match host::request_body(0, usize::MAX) {
            Ok(b) => b.map_or(0, |b| b.len()),
            Err(_) => return self.fail("cannot read the request body"),
        };
        self.decide_on_body(size)
    }
}
