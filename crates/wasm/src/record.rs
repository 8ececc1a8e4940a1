//! The npm module's own form of an accepted call (the raw module keeps the
//! shared `a` + JSON, `toolctx-wasm-boundary`'s `accepted`): `A`, then each
//! field of the context in the order of the core's JSON
//! (`Context::write_json`), then the headers to set upstream. Measured with
//! `npm/bench`, `JSON.parse` of the context was the largest cost on the
//! JavaScript side of a verification; this record is read by slicing
//! (`npm/src/boundary/record.ts`, `readRecord`).
//!
//! A field is `<length>:<text>` (the length in UTF-8 bytes, which the
//! reader turns into UTF-16 code units when the answer is not ASCII) or
//! `~` when the context has none. In order:
//! `protocol`, `task_id`, `tool_call_id`, `workspace_id`,
//! `idempotency_key`, `agent_id`, `end_user_id`, `metadata` (its JSON text,
//! as the core holds it), `tool`, `jti`, `iat`, `exp`, `secret_index` (in
//! decimal), `request_id` (its JSON text, as the core holds it). Then each
//! header to set upstream as two fields, its lower-case name and its value.

use toolctx_core::digits::push_u64;
use toolctx_core::Context;

/// `A` + the record of `ctx`.
pub fn record(ctx: &Context) -> String {
    let mut out = String::with_capacity(512);
    out.push('A');
    for text in [
        &ctx.protocol,
        &ctx.task_id,
        &ctx.tool_call_id,
        &ctx.workspace_id,
        &ctx.idempotency_key,
    ] {
        field(Some(text), &mut out);
    }
    field(ctx.agent_id.as_deref(), &mut out);
    field(ctx.end_user_id.as_deref(), &mut out);
    field(ctx.metadata.as_ref().map(|m| m.as_str()), &mut out);
    field(ctx.tool.as_deref(), &mut out);
    field(ctx.jti.as_deref(), &mut out);
    let mut digits = String::new();
    for n in [ctx.iat, ctx.exp, ctx.secret_index as u64] {
        digits.clear();
        push_u64(n, &mut digits);
        field(Some(&digits), &mut out);
    }
    field(ctx.request_id.as_deref(), &mut out);
    for (name, value) in &ctx.upstream {
        field(Some(name), &mut out);
        field(Some(value), &mut out);
    }
    out
}

/// `<length>:<text>`, or `~` for none. Never inlined: one copy serves
/// every field (the module's size is budgeted).
#[inline(never)]
fn field(text: Option<&str>, out: &mut String) {
    let Some(text) = text else {
        out.push('~');
        return;
    };
    push_u64(text.len() as u64, out);
    out.push(':');
    out.push_str(text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::needless_update)] // the core's policy feature adds a field
    fn context() -> Context {
        Context {
            protocol: "p1".into(),
            task_id: "t1".into(),
            tool_call_id: "c1".into(),
            workspace_id: "w1".into(),
            idempotency_key: "k1".into(),
            agent_id: Some("a1".into()),
            end_user_id: Some("u1".into()),
            metadata: None,
            tool: Some("o1".into()),
            jti: Some("j1".into()),
            iat: 111,
            exp: 222,
            secret_index: 3,
            request_id: Some("\"r1\"".into()),
            upstream: Vec::new(),
            // and whatever a feature of the core adds (the policy's audit).
            ..Default::default()
        }
    }

    /// The record's values, without their lengths; `None` for `~`.
    fn values(record: &str) -> Vec<Option<String>> {
        let mut rest = record.strip_prefix('A').unwrap_or_default();
        let mut out = Vec::new();
        while !rest.is_empty() {
            if let Some(tail) = rest.strip_prefix('~') {
                out.push(None);
                rest = tail;
                continue;
            }
            let Some((len, tail)) = rest.split_once(':') else {
                unreachable!("a field without its length")
            };
            let cut: usize = len.parse().unwrap_or_default();
            out.push(Some(tail.get(..cut).unwrap_or_default().to_owned()));
            rest = tail.get(cut..).unwrap_or_default();
        }
        out
    }

    #[test]
    fn fields_come_in_the_order_of_the_cores_json() {
        let ctx = context();
        let json = ctx.to_json();
        let found: Vec<String> = values(&record(&ctx)).into_iter().flatten().collect();
        assert_eq!(found.len(), 13);
        // Each value is unique: its place in the JSON gives the order.
        let places: Vec<usize> = found.iter().filter_map(|v| json.find(v.as_str())).collect();
        assert_eq!(places.len(), found.len(), "{json}");
        assert!(places.windows(2).all(|w| w.first() < w.last()), "{json}");
    }

    #[test]
    fn lengths_count_bytes_and_absent_fields_are_marked() {
        let mut ctx = context();
        ctx.task_id = "é😀\u{0}\n:~".into();
        ctx.agent_id = None;
        ctx.request_id = None;
        ctx.upstream = vec![("x-session-id".into(), "s%201".into())];
        let r = record(&ctx);
        assert!(r.starts_with("A2:p110:é😀\u{0}\n:~2:c1"), "{r}");
        let v = values(&r);
        assert_eq!(v.get(1), Some(&Some("é😀\u{0}\n:~".to_owned())));
        assert_eq!(v.get(5), Some(&None));
        assert_eq!(v.get(7), Some(&None));
        assert_eq!(v.get(13), Some(&None));
        assert_eq!(v.get(14), Some(&Some("x-session-id".to_owned())));
        assert_eq!(v.get(15), Some(&Some("s%201".to_owned())));
        assert_eq!(v.len(), 16);
    }
}
