#![forbid(unsafe_code)]
//! One HTTP stream: reads the request headers, holds a `POST` while its
//! body is buffered, hands both to the shared decision
//! (`Settings::check_headers`, `Settings::check_body`) and applies its
//! outcome: forward, forward with the verified headers, or answer with the
//! core's refusal. With the Redis replay guard, an accepted call stays held
//! while its claim is in flight (`Settings::check_body_deferred`), and the
//! store's answer is settled by the core (`Settings::settle`) when Envoy's
//! scheduler brings the stream back to its worker thread. Written against
//! [`Stream`], so the tests drive it without Envoy.

use std::sync::{Arc, OnceLock};

use toolctx_core::{Checked, ClaimAnswer, HeadersVerdict, Reason, Refusal};
#[cfg(feature = "test-crash")]
use toolctx_gateway_config::request;
use toolctx_gateway_config::request::header;
use toolctx_gateway_config::{error_line, refusal_line, Decision, PendingClaim};

use crate::decide::{decide, line_for, Decided};
use crate::module::{Level, Module};
use crate::stream::{BodyStatus, HeadersStatus, Stream};

/// What a request does once its checks came to something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Continue,
    /// Answered locally.
    Stop,
    /// Held until the replay store answers.
    Wait,
}

#[derive(Debug)]
enum State {
    /// Waiting for the request headers.
    Headers,
    /// A call held at its headers while its body is buffered, with the
    /// core's proof that its steps 0 and 1 passed.
    Body(Checked),
    /// An accepted call held while Redis answers its claim (`answer` is
    /// set, on the I/O thread, before the stream is resumed).
    Claiming {
        pending: PendingClaim,
        answer: Arc<OnceLock<ClaimAnswer>>,
    },
    /// Decided: forwarded or answered.
    Done,
    /// Bench-profile builds only (`Floor::Hold`): held without a check.
    #[cfg(feature = "bench-profile")]
    Held,
}

#[derive(Debug)]
pub struct Filter {
    state: State,
}

impl Default for Filter {
    fn default() -> Filter {
        Filter {
            state: State::Headers,
        }
    }
}

/// Test builds only: panics when the request asks for it in `hook`.
#[cfg(feature = "test-crash")]
// The one deliberate panic of the crate, only in the test-crash build.
#[allow(clippy::panic)]
fn crash_if_asked(headers: &[(&[u8], &[u8])], hook: &str) {
    if request::crash_asked(headers, hook) {
        // The message stands for a request's data: the tests check that
        // the panic hook never logs it.
        panic!(
            "test crash in the request {hook} hook ({}): toolctx-panic-payload-5f1c",
            request::TEST_CRASH_HEADER
        );
    }
}

impl Filter {
    /// Answers with the core's `internal_error` (500) and counts an error:
    /// fail closed. Also what a hook that panicked does.
    pub fn fail(&mut self, module: &Module, s: &mut (impl Stream + ?Sized), why: &str) {
        self.state = State::Done;
        s.bump(module.counters.errors);
        s.log(Level::Error, &error_line(why));
        let refusal = Refusal::new(Reason::InternalError, None);
        s.send_response(
            refusal.status(),
            refusal.body(module.settings.include_reason).as_bytes(),
        );
    }

    fn refuse(
        &mut self,
        module: &Module,
        s: &mut (impl Stream + ?Sized),
        refusal: &Refusal,
        line: &str,
    ) {
        self.state = State::Done;
        if let Some(id) = module.counters.refused(refusal.reason()) {
            s.bump(*id);
        }
        s.log(Level::Info, line);
        s.send_response(
            refusal.status(),
            refusal.body(module.settings.include_reason).as_bytes(),
        );
    }

    fn pass(&mut self, module: &Module, s: &mut (impl Stream + ?Sized)) {
        self.state = State::Done;
        s.bump(module.counters.passed);
    }

    pub fn on_request_headers(
        &mut self,
        module: &Module,
        s: &mut (impl Stream + ?Sized),
        end_of_stream: bool,
    ) -> HeadersStatus {
        if !matches!(self.state, State::Headers) {
            return HeadersStatus::Continue;
        }
        #[cfg(feature = "bench-profile")]
        if let Some(status) = self.floor_headers(module, s, end_of_stream) {
            return status;
        }
        let settings = &module.settings;
        let (verdict, line) = {
            let Some(first) = s.request_headers() else {
                return self.failed(module, s, "cannot read the request headers");
            };
            // Headers this gateway writes never come from the caller: every
            // copy goes before the core looks (one Envoy call per name
            // present, and the headers read again only then).
            let present: Vec<&str> = settings
                .removed_headers()
                .iter()
                .filter(|name| header(&first, name).is_some())
                .map(String::as_str)
                .collect();
            let headers = if present.is_empty() {
                first
            } else {
                drop(first);
                for name in present {
                    if !s.remove_request_header(name) {
                        return self.failed(module, s, "cannot remove a mapped header");
                    }
                }
                let Some(again) = s.request_headers() else {
                    return self.failed(module, s, "cannot read the request headers");
                };
                again
            };
            #[cfg(feature = "test-crash")]
            crash_if_asked(&headers, "headers");
            let method = header(&headers, ":method")
                .and_then(|m| std::str::from_utf8(m).ok())
                .unwrap_or_default();
            match settings.check_headers(method, &headers) {
                HeadersVerdict::ReadBody(checked) if end_of_stream => {
                    let decided = decide(module, checked, &headers, &[]);
                    let line = line_for(&decided, &headers);
                    (Verdict::Decided(decided), line)
                }
                HeadersVerdict::ReadBody(checked) => (Verdict::Hold(checked), None),
                HeadersVerdict::Pass => (Verdict::Pass, None),
                HeadersVerdict::Reject(r) => {
                    let line = refusal_line(&r, header(&headers, "x-request-id"));
                    (
                        Verdict::Decided(Decided::Now(Ok(Decision::Reject(r)))),
                        Some(line),
                    )
                }
            }
        };
        match verdict {
            Verdict::Pass => {
                self.pass(module, s);
                HeadersStatus::Continue
            }
            Verdict::Hold(checked) => {
                self.state = State::Body(checked);
                HeadersStatus::Stop
            }
            Verdict::Decided(d) => match self.conclude(module, s, d, line) {
                Next::Continue => HeadersStatus::Continue,
                Next::Stop | Next::Wait => HeadersStatus::Stop,
            },
        }
    }

    fn failed(
        &mut self,
        module: &Module,
        s: &mut (impl Stream + ?Sized),
        why: &str,
    ) -> HeadersStatus {
        self.fail(module, s, why);
        HeadersStatus::Stop
    }

    pub fn on_request_body(
        &mut self,
        module: &Module,
        s: &mut (impl Stream + ?Sized),
        end_of_stream: bool,
    ) -> BodyStatus {
        match self.state {
            State::Body(_) => {}
            State::Headers => {
                self.fail(module, s, "body before headers");
                return BodyStatus::Stop;
            }
            State::Done => return BodyStatus::Continue,
            // More body while the claim is in flight (a body that ends
            // with trailers): buffered with the rest.
            State::Claiming { .. } => return BodyStatus::Wait,
            #[cfg(feature = "bench-profile")]
            State::Held if end_of_stream => {
                self.state = State::Done;
                let read = s.request_body(usize::MAX).is_some();
                return if read {
                    BodyStatus::Continue
                } else {
                    BodyStatus::Stop
                };
            }
            #[cfg(feature = "bench-profile")]
            State::Held => return BodyStatus::Buffer,
        }
        #[cfg(feature = "test-crash")]
        crash_if_asked(&s.request_headers().unwrap_or_default(), "body");
        let limit = module.settings.max_body_bytes();
        if !end_of_stream && s.body_size() <= limit {
            return BodyStatus::Buffer;
        }
        match self.decide_on_body(module, s) {
            Next::Continue => BodyStatus::Continue,
            Next::Stop => BodyStatus::Stop,
            Next::Wait => BodyStatus::Wait,
        }
    }

    /// The request ended with trailers: the whole body is buffered.
    pub fn on_request_trailers(
        &mut self,
        module: &Module,
        s: &mut (impl Stream + ?Sized),
    ) -> HeadersStatus {
        if !matches!(self.state, State::Body(_)) {
            return HeadersStatus::Continue;
        }
        match self.decide_on_body(module, s) {
            Next::Continue => HeadersStatus::Continue,
            Next::Stop | Next::Wait => HeadersStatus::Stop,
        }
    }

    /// The body is complete or over the limit: decide.
    fn decide_on_body(&mut self, module: &Module, s: &mut (impl Stream + ?Sized)) -> Next {
        let State::Body(checked) = std::mem::replace(&mut self.state, State::Done) else {
            return Next::Continue;
        };
        // One byte past the limit is enough for the core to refuse it.
        let take = s
            .body_size()
            .min(module.settings.max_body_bytes().saturating_add(1));
        let (decision, line) = {
            let Some(body) = s.request_body(take) else {
                self.fail(module, s, "cannot read the request body");
                return Next::Stop;
            };
            if body.len() != take {
                drop(body);
                self.fail(module, s, "request body shorter than announced");
                return Next::Stop;
            }
            // The caller's copies of the headers this gateway writes were
            // removed at the headers.
            let Some(headers) = s.request_headers() else {
                drop(body);
                self.fail(module, s, "cannot read the request headers");
                return Next::Stop;
            };
            let decided = decide(module, checked, &headers, &body);
            let line = line_for(&decided, &headers);
            (decided, line)
        };
        self.conclude(module, s, decision, line)
    }

    /// Applies what the checks came to, or sends the replay claim.
    fn conclude(
        &mut self,
        module: &Module,
        s: &mut (impl Stream + ?Sized),
        decided: Decided,
        line: Option<String>,
    ) -> Next {
        match decided {
            Decided::Now(decision) => match self.apply(module, s, decision, line) {
                true => Next::Continue,
                false => Next::Stop,
            },
            Decided::Claim(pending, now) => self.claim(module, s, pending, now),
        }
    }

    /// Sends an accepted call's claim to the Redis I/O thread and holds the
    /// call; the thread's answer resumes it on this worker thread.
    fn claim(
        &mut self,
        module: &Module,
        s: &mut (impl Stream + ?Sized),
        pending: PendingClaim,
        now: u64,
    ) -> Next {
        let Some(redis) = &module.redis else {
            self.fail(module, s, "the replay guard has no store");
            return Next::Stop;
        };
        let Some(resume) = s.resumer() else {
            self.fail(module, s, "Envoy gave no scheduler to resume the call");
            return Next::Stop;
        };
        let answer = Arc::new(OnceLock::new());
        let slot = answer.clone();
        let args = pending.redis_args(redis.key_prefix(), now);
        let sent = redis.claim(
            &args,
            Box::new(move |a| {
                let _ = slot.set(a);
                resume.resume();
            }),
        );
        match sent {
            Ok(()) => {
                self.state = State::Claiming { pending, answer };
                Next::Wait
            }
            Err(why) => {
                s.log(Level::Error, &format!("replay guard: {why}"));
                match self.settled(module, s, pending, ClaimAnswer::Failed) {
                    true => Next::Continue,
                    false => Next::Stop,
                }
            }
        }
    }

    /// The scheduled hook: the replay store answered this stream's claim.
    /// Applies the core's settled outcome and lets an accepted call go on.
    pub fn on_claim_answered(&mut self, module: &Module, s: &mut (impl Stream + ?Sized)) {
        if !matches!(self.state, State::Claiming { .. }) {
            return;
        }
        let State::Claiming { pending, answer } = std::mem::replace(&mut self.state, State::Done)
        else {
            return;
        };
        #[cfg(feature = "test-crash")]
        crash_if_asked(&s.request_headers().unwrap_or_default(), "scheduled");
        // Set before the stream is resumed; unset only if no answer came.
        let answer = answer.get().copied().unwrap_or(ClaimAnswer::Failed);
        if self.settled(module, s, pending, answer) {
            s.continue_request();
        }
    }

    /// The core's decision on a claim the store answered, applied; whether
    /// the request goes on.
    fn settled(
        &mut self,
        module: &Module,
        s: &mut (impl Stream + ?Sized),
        pending: PendingClaim,
        answer: ClaimAnswer,
    ) -> bool {
        let decision = module.settings.settle(pending, answer);
        let line = match &decision {
            Ok(Decision::Reject(r)) => {
                let headers = s.request_headers();
                let id = headers.as_deref().and_then(|h| header(h, "x-request-id"));
                Some(refusal_line(r, id))
            }
            _ => None,
        };
        self.apply(module, s, decision, line)
    }

    /// Applies the outcome; whether the request goes on.
    fn apply(
        &mut self,
        module: &Module,
        s: &mut (impl Stream + ?Sized),
        decision: Result<Decision, String>,
        line: Option<String>,
    ) -> bool {
        match decision {
            Ok(Decision::Pass) => {
                self.pass(module, s);
                true
            }
            Ok(Decision::Accept(set)) => {
                for (name, value) in &set {
                    if !s.add_request_header(name, value) {
                        // The core never sets an empty value (CONTRACT §7), so
                        // Envoy refusing one is unexpected: refuse rather than
                        // hand the call on without the core's header.
                        self.fail(module, s, "Envoy refused to add a forwarded header");
                        return false;
                    }
                }
                self.state = State::Done;
                s.bump(module.counters.accepted);
                true
            }
            Ok(Decision::Reject(r)) => {
                let line = line.unwrap_or_else(|| refusal_line(&r, None));
                self.refuse(module, s, &r, &line);
                false
            }
            Err(why) => {
                self.fail(module, s, &why);
                false
            }
        }
    }
}

/// Bench-profile builds only: the floors under the module's cost.
#[cfg(feature = "bench-profile")]
impl Filter {
    fn floor_headers(
        &mut self,
        module: &Module,
        s: &mut (impl Stream + ?Sized),
        end_of_stream: bool,
    ) -> Option<HeadersStatus> {
        use toolctx_gateway_config::Floor;
        match module.floor {
            Floor::Full => None,
            Floor::Noop => {
                self.state = State::Done;
                Some(HeadersStatus::Continue)
            }
            Floor::Hold => {
                let _ = s.request_headers().map(|h| h.len());
                // Whether Envoy ever hands the body in with the headers
                // (then the decision could be made here): said once.
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    let line = format!(
                        "bench floor: {} body bytes at the request headers hook (end_of_stream {end_of_stream})",
                        s.body_size()
                    );
                    s.log(Level::Info, &line);
                });
                if end_of_stream {
                    self.state = State::Done;
                    return Some(HeadersStatus::Continue);
                }
                self.state = State::Held;
                Some(HeadersStatus::Stop)
            }
        }
    }
}

/// What the headers hook found.
enum Verdict {
    Pass,
    Hold(Checked),
    Decided(Decided),
}
