//! The boundary both wasm crates of the npm package share
//! (`toolctx-wasm`, `toolctx-wasm-conventions`): the method and headers cut
//! out of one buffer by their lengths; the verdict strings (`p`, `b` +
//! ticket, `u`, `a` + JSON [+ newline + request id [+ the headers to set
//! upstream]], `c` + a replay claim, `r` + JSON) and the errors
//! (`"<code>\n<message>"`) the npm package's TypeScript layer reads; and
//! what waits under a ticket ([`Tickets`]): the header checks waiting for
//! their body, which [`Boundary`] keeps for either verifier ([`Profile`]),
//! and the accepted calls waiting for a shared replay store's answer.
//!
//! Its TypeScript mirror is `npm/src/boundary.ts`, which builds these inputs
//! and reads these outputs: the two files describe one format, and a change
//! to it changes both.

use toolctx_core::json::write_str;
use toolctx_core::{Accepted, Checked, HeadersVerdict, Reason, Refusal, Verdict};
use wasm_bindgen::JsValue;

pub fn js_error(code: &str, e: impl core::fmt::Display) -> JsValue {
    JsValue::from_str(&format!("{code}\n{e}"))
}

pub fn config_error(e: &toolctx_core::ConfigError) -> JsValue {
    js_error(e.code(), e)
}

/// `a` + the context as JSON; then, when the request had an id or there are
/// headers to set upstream, a newline and the id's JSON text as the core
/// holds it (`request_id`: a number as written, a string as the core writes
/// it; empty when the request had none); then, for each header the core
/// decided to set upstream ([`Accepted::upstream`]), a newline, its
/// lower-case name, a newline and its value. So
/// `a{ctx}`, `a{ctx}\n7`, `a{ctx}\n\nx-session-id\ns%201`.
///
/// The context's own `request_id` is the same id, but `JSON.parse` rounds a
/// number beyond 2^53 and rewrites one like `1.50`. No part holds a raw
/// newline: the core escapes control characters in the JSON it writes, a
/// number has none, a header name is an HTTP token and the core's encoded
/// values are bytes `!`..`~` only.
pub fn accepted<C: Accepted + ?Sized>(ctx: &C) -> String {
    let mut out = String::from("a");
    ctx.write_json(&mut out);
    let set = ctx.upstream();
    if ctx.request_id().is_some() || !set.is_empty() {
        out.push('\n');
        out.push_str(ctx.request_id().unwrap_or(""));
    }
    for (name, value) in set {
        out.push('\n');
        out.push_str(name);
        out.push('\n');
        out.push_str(value);
    }
    out
}

/// The core's [`telemetry::describe`](toolctx_core::telemetry::describe)
/// of a request, for the TypeScript layer's spans and verdict events (it
/// asks only when one will use it): `[]`, `[method]` or `[method, tool]`.
/// `reason` is the refusal's machine code, empty when the verdict was not
/// a refusal.
pub fn described(method: &str, body: &[u8], reason: &str) -> Vec<String> {
    // The empty string is no reason's code.
    let d = toolctx_core::telemetry::describe(method, body, Reason::from_code(reason));
    d.method.into_iter().chain(d.tool).collect()
}

/// Lines joined by newlines (header names, which hold none).
pub fn lines(names: &[String]) -> String {
    let mut out = String::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(name);
    }
    out
}

/// Any profile's verdict: `p`, `a` + context (see [`accepted`]) or `r` + refusal.
pub fn verdict<C: Accepted>(v: Verdict<C>, include_reason: bool) -> String {
    match v {
        Verdict::Pass => "p".into(),
        Verdict::Accept(ctx) => accepted(&*ctx),
        Verdict::Reject(r) => refusal(&r, include_reason),
    }
}

/// What a wasm verifier object asks of its profile's core: the header
/// check, and every check after it.
pub trait Profile {
    type Context: Accepted;
    /// Steps 0 and 1.
    fn check_headers(&self, method: &str, headers: &[(&[u8], &[u8])]) -> HeadersVerdict;
    /// Every check after steps 0 and 1; `now` is Unix seconds (a profile
    /// without a clock ignores it).
    fn check_body(
        &mut self,
        proof: Checked,
        headers: &[(&[u8], &[u8])],
        body: &[u8],
        now: f64,
    ) -> Verdict<Self::Context>;
    /// The verdict string of `v`; a profile that completes an accepted
    /// verdict outside the core (a shared replay store) answers otherwise.
    fn answer(&mut self, v: Verdict<Self::Context>, include_reason: bool) -> String {
        verdict(v, include_reason)
    }
}

/// A wasm verifier object's state around its profile: how refusals are
/// rendered, and the header checks waiting for their body. Its methods are
/// the object's `checkHeaders`, `verify` and `verifyBody`.
pub struct Boundary<P> {
    pub profile: P,
    pub include_reason: bool,
    held: Tickets<HeldRequest>,
}

impl<P: Profile> Boundary<P> {
    pub fn new(profile: P, include_reason: bool) -> Boundary<P> {
        Boundary {
            profile,
            include_reason,
            held: Tickets::new(HELD_REQUESTS),
        }
    }

    /// `checkHeaders`: `p`, `r` + refusal, or `b` + a ticket for
    /// [`Boundary::verify_body`], which keeps the core's proof with the
    /// method and headers as checked.
    pub fn check_headers(&mut self, heads: &[u8], lens: &[u32]) -> Result<String, JsValue> {
        let (method, headers) = split(heads, lens)?;
        Ok(match self.read_body(method, &headers) {
            Ok(proof) => {
                let request = HeldRequest {
                    proof,
                    heads: heads.to_vec(),
                    lens: lens.to_vec(),
                };
                format!("b{}", self.held.hold(request))
            }
            Err(answer) => answer,
        })
    }

    /// `verify`: the whole decision on one request.
    pub fn verify(
        &mut self,
        heads: &[u8],
        lens: &[u32],
        body: &[u8],
        now: f64,
    ) -> Result<String, JsValue> {
        let (method, headers) = split(heads, lens)?;
        Ok(match self.read_body(method, &headers) {
            Ok(proof) => {
                let v = self.profile.check_body(proof, &headers, body, now);
                self.profile.answer(v, self.include_reason)
            }
            Err(answer) => answer,
        })
    }

    /// `verifyBody`: `verify`'s verdict for the request that
    /// `checkHeaders` gave `ticket` for, on the method and headers it
    /// checked then, without steps 0 and 1; `u` when the ticket holds
    /// nothing.
    pub fn verify_body(&mut self, ticket: f64, body: &[u8], now: f64) -> Result<String, JsValue> {
        let Some(held) = self.held.take(ticket) else {
            return Ok(UNCHECKED.into());
        };
        let (_, headers) = split(&held.heads, &held.lens)?;
        let v = self.profile.check_body(held.proof, &headers, body, now);
        Ok(self.profile.answer(v, self.include_reason))
    }

    /// Steps 0 and 1 settled: `Ok` with the core's proof when the body is
    /// to be read, `Err` with the answer (`p`, or `r` + refusal) when not.
    fn read_body(&self, method: &str, headers: &[(&[u8], &[u8])]) -> Result<Checked, String> {
        match self.profile.check_headers(method, headers) {
            HeadersVerdict::Pass => Err("p".into()),
            HeadersVerdict::ReadBody(proof) => Ok(proof),
            HeadersVerdict::Reject(r) => Err(refusal(&r, self.include_reason)),
        }
    }
}

/// The body check's answer for a ticket that holds nothing (never issued,
/// already used, or pushed out by newer ones): run the whole check instead.
const UNCHECKED: &str = "u";

/// How many header checks wait for their body at once per verifier; an
/// older one is forgotten and its body check runs the whole check.
const HELD_REQUESTS: usize = 64;

/// A request whose headers passed steps 0 and 1: the core's proof, and the
/// method and headers (`heads`, `lens`, as [`split`] reads them) as they
/// were checked.
pub struct HeldRequest {
    proof: Checked,
    heads: Vec<u8>,
    lens: Vec<u32>,
}

/// What waits under a ticket, oldest first: one that is never taken waits
/// only until `capacity` newer ones push it out. A ticket is taken once,
/// with what it was issued for, which stays here: a body check cannot be
/// handed other headers, a settled claim another context.
pub struct Tickets<T> {
    waiting: Vec<(u32, T)>,
    capacity: usize,
    next: u32,
}

impl<T> Tickets<T> {
    pub fn new(capacity: usize) -> Tickets<T> {
        Tickets {
            waiting: Vec::new(),
            capacity: capacity.max(1),
            next: 0,
        }
    }

    /// Keeps `item`: the ticket that [`Tickets::take`] gives it back for.
    pub fn hold(&mut self, item: T) -> u32 {
        let ticket = self.next;
        self.next = self.next.wrapping_add(1);
        if self.waiting.len() >= self.capacity {
            self.waiting.remove(0);
        }
        self.waiting.push((ticket, item));
        ticket
    }

    /// What `ticket` holds, once; `None` when it holds nothing (never
    /// issued, taken already, pushed out, or not an issued number at all).
    pub fn take(&mut self, ticket: f64) -> Option<T> {
        let i = self
            .waiting
            .iter()
            .position(|(t, _)| f64::from(*t) == ticket)?;
        Some(self.waiting.remove(i).1)
    }
}

/// `r` + `{"status":..,"code":..,"reason":"..","message":"..","id":..,"body":".."}`.
pub fn refusal(r: &Refusal, include_reason: bool) -> String {
    let body = r.body(include_reason);
    let mut out = String::with_capacity(body.len() + 160);
    out.push_str("r{\"status\":");
    out.push_str(&r.status().to_string());
    out.push_str(",\"code\":");
    out.push_str(&r.code().to_string());
    out.push_str(",\"reason\":");
    write_str(r.reason().as_str(), &mut out);
    out.push_str(",\"message\":");
    write_str(r.message(), &mut out);
    out.push_str(",\"id\":");
    out.push_str(r.id_json());
    out.push_str(",\"body\":");
    write_str(&body, &mut out);
    out.push('}');
    out
}

/// Cuts `heads` by `lens`: the method, then name/value pairs.
#[allow(clippy::type_complexity)]
pub fn split<'a>(
    heads: &'a [u8],
    lens: &[u32],
) -> Result<(&'a str, Vec<(&'a [u8], &'a [u8])>), JsValue> {
    let bad = || JsValue::from_str("internal\nheaders buffer does not match its lengths");
    let mut rest = heads;
    let mut take = |len: u32| -> Result<&'a [u8], JsValue> {
        let len = usize::try_from(len).map_err(|_| bad())?;
        if len > rest.len() {
            return Err(bad());
        }
        let (head, tail) = rest.split_at(len);
        rest = tail;
        Ok(head)
    };
    let (first, pairs) = lens.split_first().ok_or_else(bad)?;
    // The method comes from a JavaScript string, so it is always UTF-8.
    let method = core::str::from_utf8(take(*first)?).map_err(|_| bad())?;
    let mut headers = Vec::with_capacity(pairs.len() / 2);
    for pair in pairs.chunks(2) {
        let [name, value] = pair else {
            return Err(bad());
        };
        headers.push((take(*name)?, take(*value)?));
    }
    Ok((method, headers))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> toolctx_core::Context {
        toolctx_core::Context {
            task_id: "t".into(),
            tool_call_id: "c".into(),
            workspace_id: "w".into(),
            idempotency_key: "t:c".into(),
            protocol: "1".into(),
            agent_id: None,
            end_user_id: None,
            metadata: None,
            tool: None,
            jti: None,
            iat: 1,
            exp: 2,
            secret_index: 0,
            request_id: None,
            upstream: Vec::new(),
        }
    }

    #[test]
    fn accepted_ends_with_the_request_id_as_the_core_holds_it() {
        let mut ctx = context();
        let json = ctx.to_json();
        assert_eq!(accepted(&ctx), format!("a{json}"));
        ctx.request_id = Some("12345678901234567890".into());
        let json = ctx.to_json();
        assert!(json.ends_with(",\"request_id\":12345678901234567890}"));
        assert_eq!(accepted(&ctx), format!("a{json}\n12345678901234567890"));
    }

    #[test]
    fn a_ticket_gives_back_what_it_was_issued_for_once() {
        let mut held = Tickets::new(2);
        assert_eq!(held.hold("a"), 0);
        assert_eq!(held.hold("b"), 1);
        assert_eq!(held.take(0.0), Some("a"));
        assert!(held.take(0.0).is_none(), "used once");
        for never in [2.0, 7.0, -1.0, 0.5, f64::NAN, f64::INFINITY, 1e300] {
            assert!(held.take(never).is_none(), "{never}");
        }
        // The ring: a third hold pushes out the oldest waiting one.
        assert_eq!(held.hold("c"), 2);
        assert_eq!(held.hold("d"), 3);
        assert!(held.take(1.0).is_none(), "pushed out");
        assert_eq!((held.take(2.0), held.take(3.0)), (Some("c"), Some("d")));
    }

    #[test]
    fn accepted_carries_the_headers_to_set_after_the_id_line() {
        let mut ctx = context();
        ctx.upstream = vec![
            ("x-session-id".into(), "s%201".into()),
            ("x-empty".into(), String::new()),
        ];
        let json = ctx.to_json();
        assert_eq!(
            accepted(&ctx),
            format!("a{json}\n\nx-session-id\ns%201\nx-empty\n")
        );
        ctx.request_id = Some("7".into());
        let json = ctx.to_json();
        assert_eq!(
            accepted(&ctx),
            format!("a{json}\n7\nx-session-id\ns%201\nx-empty\n")
        );
    }

    #[test]
    fn split_cuts_by_lengths() {
        let buf = b"POSTx-aby-c";
        let Ok((m, h)) = split(buf, &[4, 3, 1, 1, 2]) else {
            unreachable!()
        };
        assert_eq!(m, "POST");
        assert_eq!(h, vec![(&b"x-a"[..], &b"b"[..]), (&b"y"[..], &b"-c"[..])]);
    }
}
