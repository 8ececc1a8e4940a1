//! The boundary both wasm crates share (`toolctx-wasm` and, through
//! `#[path]`, `toolctx-wasm-conventions`): the method and headers cut out of
//! one buffer by their lengths, the verdict strings (`p`, `b`, `a` + JSON,
//! `r` + JSON) and the errors (`"<code>\n<message>"`) the npm package's
//! TypeScript layer reads.
//!
//! Its TypeScript mirror is `npm/src/boundary.ts`, which builds these inputs
//! and reads these outputs: the two files describe one format, and a change
//! to it changes both.

use toolctx_core::json::write_str;
use toolctx_core::{HeadersVerdict, Refusal};
use wasm_bindgen::JsValue;

pub fn js_error(code: &str, e: impl core::fmt::Display) -> JsValue {
    JsValue::from_str(&format!("{code}\n{e}"))
}

pub fn config_error(e: &toolctx_core::ConfigError) -> JsValue {
    js_error(e.code(), e)
}

pub fn tagged(tag: char, json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 1);
    out.push(tag);
    out.push_str(json);
    out
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
    fn split_cuts_by_lengths() {
        let buf = b"POSTx-aby-c";
        let Ok((m, h)) = split(buf, &[4, 3, 1, 1, 2]) else {
            unreachable!()
        };
        assert_eq!(m, "POST");
        assert_eq!(h, vec![(&b"x-a"[..], &b"b"[..]), (&b"y"[..], &b"-c"[..])]);
    }
}
