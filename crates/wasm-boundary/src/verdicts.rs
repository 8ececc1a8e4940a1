//! The verdict strings every host reads: `p`, `a` + context, `r` + refusal
//! (the tags `b`, `u` and `c` are the [`Boundary`](crate::Boundary)'s and
//! the [`AgentArea`](crate::AgentArea) profile's), and the request's
//! description for telemetry.

use toolctx_core::digits::{push_i64, push_u64};
use toolctx_core::json::write_str;
use toolctx_core::{Accepted, Reason, Refusal, Verdict};

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
    verdict_in(v, include_reason, accepted)
}

/// [`verdict`] with an accepted call in `form` (a module's own form of it,
/// as the npm module's record) rather than [`accepted`]'s.
pub fn verdict_in<C: Accepted>(
    v: Verdict<C>,
    include_reason: bool,
    form: fn(&C) -> String,
) -> String {
    match v {
        Verdict::Pass => "p".into(),
        Verdict::Accept(ctx) => form(&ctx),
        Verdict::Reject(r) => refusal(&r, include_reason),
    }
}

/// `r` + `{"status":..,"code":..,"reason":"..","message":"..","id":..,"body":".."}`.
pub fn refusal(r: &Refusal, include_reason: bool) -> String {
    let body = r.body(include_reason);
    let mut out = String::with_capacity(body.len() + 160);
    out.push_str("r{\"status\":");
    push_u64(r.status().into(), &mut out);
    out.push_str(",\"code\":");
    push_i64(r.code().into(), &mut out);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::needless_update)] // the core's policy feature adds a field
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
            // and whatever a feature of the core adds (the policy's audit).
            ..Default::default()
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
}
