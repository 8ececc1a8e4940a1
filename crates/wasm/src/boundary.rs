//! The boundary both wasm crates share (`toolctx-wasm` and, through
//! `#[path]`, `toolctx-wasm-conventions`): the method and headers cut out of
//! one buffer by their lengths, the verdict strings (`p`, `b`, `a` + JSON
//! [+ newline + request id], `r` + JSON) and the errors (`"<code>\n<message>"`) the npm package's
//! TypeScript layer reads.
//!
//! Its TypeScript mirror is `npm/src/boundary.ts`, which builds these inputs
//! and reads these outputs: the two files describe one format, and a change
//! to it changes both.

use toolctx_core::json::write_str;
use toolctx_core::{Accepted, HeadersVerdict, Refusal, Verdict};
use wasm_bindgen::JsValue;

pub fn js_error(code: &str, e: impl core::fmt::Display) -> JsValue {
    JsValue::from_str(&format!("{code}\n{e}"))
}

pub fn config_error(e: &toolctx_core::ConfigError) -> JsValue {
    js_error(e.code(), e)
}

/// `a` + the context as JSON, then, when the request had an id, a newline
/// and the id's JSON text as the core holds it (`request_id`: a number as
/// written, a string as the core writes it). The context's own `request_id`
/// is the same id, but `JSON.parse` rounds a number beyond 2^53 and rewrites
/// one like `1.50`; a refusal rendered after the verdict (`Verifier::refuse`,
/// for the replay guard's shared store) answers with this text instead.
/// Neither part holds a raw newline: the core escapes control characters in
/// the JSON it writes, and a number has none.
pub fn accepted(context_json: &str, request_id: Option<&str>) -> String {
    let id = request_id.unwrap_or("");
    let mut out = String::with_capacity(context_json.len() + id.len() + 2);
    out.push('a');
    out.push_str(context_json);
    if request_id.is_some() {
        out.push('\n');
        out.push_str(id);
    }
    out
}

/// Any profile's verdict: `p`, `a` + context (see [`accepted`]) or `r` + refusal.
pub fn verdict<C: Accepted>(v: Verdict<C>, include_reason: bool) -> String {
    match v {
        Verdict::Pass => "p".into(),
        Verdict::Accept(ctx) => accepted(&ctx.to_json(), ctx.request_id()),
        Verdict::Reject(r) => refusal(&r, include_reason),
    }
}

pub fn headers_verdict(v: HeadersVerdict, include_reason: bool) -> String {
    match v {
        HeadersVerdict::Pass => "p".into(),
        HeadersVerdict::ReadBody => "b".into(),
        HeadersVerdict::Reject(r) => refusal(&r, include_reason),
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

    #[test]
    fn accepted_ends_with_the_request_id_as_the_core_holds_it() {
        assert_eq!(accepted("{}", None), "a{}");
        assert_eq!(
            accepted(
                "{\"request_id\":12345678901234567890}",
                Some("12345678901234567890")
            ),
            "a{\"request_id\":12345678901234567890}\n12345678901234567890"
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
