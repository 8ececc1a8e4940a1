//! WebAssembly bindings over `toolctx-core` for the npm package `toolctx`.
//!
//! Nothing is decided here: the core decides, this crate only carries bytes
//! in and a compact verdict out. The boundary is kept cheap because it runs on
//! every request:
//!
//! - the method and the headers arrive as one `Uint8Array` holding their
//!   bytes back to back, with a `Uint32Array` of lengths (method, then name
//!   and value for each header, in order, duplicates kept);
//! - the body arrives as its own `Uint8Array`;
//! - the verdict leaves as one string whose first character is a tag:
//!   `p` pass, `b` read the body (headers only), `a` + the context as JSON,
//!   `r` + the refusal as JSON (`status`, `code`, `reason`, `message`, `id`,
//!   `body`, every field as the core rendered it).
//!
//! The AIVAX profile ([`AivaxVerifier`]) uses the same inputs and tags. The
//! conventions of CONTRACT §6 and §7 (tool names, RFC 8785, the Tuix key)
//! are plain functions over strings.
//!
//! The npm package's TypeScript layer builds the inputs and reads the tag;
//! see `npm/src/wire.ts`.

use toolctx_core::aivax::{AivaxVerdict, AivaxVerifier as AivaxCore};
use toolctx_core::json::{self, write_str};
use toolctx_core::{
    jcs, names, Config, HeadersVerdict, Refusal, UnknownSettings, Verdict, Verifier as Core,
};
use wasm_bindgen::prelude::*;

/// A validated configuration with the HMAC key state precomputed, held in
/// WebAssembly memory for the life of the JavaScript object.
#[wasm_bindgen]
pub struct Verifier {
    core: Core,
    include_reason: bool,
}

#[wasm_bindgen]
impl Verifier {
    /// Reads the configuration in the core's JSON form (snake_case setting
    /// names; an unknown setting is refused) and validates it.
    ///
    /// Throws a string `"<code>\n<message>"`: the core's stable
    /// `ConfigError::code` and its message, which never contains a secret.
    #[wasm_bindgen(constructor)]
    pub fn new(config_json: &[u8], include_reason: bool) -> Result<Verifier, JsValue> {
        let config = Config::from_json(config_json, UnknownSettings::Refuse);
        match config.and_then(Core::new) {
            Ok(core) => Ok(Verifier {
                core,
                include_reason,
            }),
            Err(e) => Err(config_error(&e)),
        }
    }

    /// The body limit: read at most this many bytes, one more proves the
    /// body too large.
    #[wasm_bindgen(getter, js_name = maxBodyBytes)]
    pub fn max_body_bytes(&self) -> usize {
        self.core.max_body_bytes()
    }

    /// Steps 0 and 1 (method and static credential), before the body is read.
    #[wasm_bindgen(js_name = checkHeaders)]
    pub fn check_headers(&self, heads: &[u8], lens: &[u32]) -> Result<String, JsValue> {
        let (method, headers) = split(heads, lens)?;
        Ok(headers_verdict(
            self.core.check_headers(method, &headers),
            self.include_reason,
        ))
    }

    /// The whole decision. `now` is Unix seconds (the caller checks that it
    /// is a non-negative integer).
    pub fn verify(
        &self,
        heads: &[u8],
        lens: &[u32],
        body: &[u8],
        now: f64,
    ) -> Result<String, JsValue> {
        let (method, headers) = split(heads, lens)?;
        // `as` saturates: negative and NaN become 0; the TS layer refuses both first.
        let now = now as u64;
        Ok(match self.core.check(method, &headers, body, now) {
            Verdict::Pass => "p".into(),
            Verdict::Accept(ctx) => tagged('a', &ctx.to_json()),
            Verdict::Reject(r) => refusal(&r, self.include_reason),
        })
    }

    /// The verifier with its configuration, secrets and credential values
    /// redacted (the core's `Debug`), for `toString` and `util.inspect`.
    pub fn describe(&self) -> String {
        format!("{:?}", self.core)
    }
}

/// The AIVAX profile (CONTRACT §7): the envelope checks, then the `_aiv_*`
/// members of `_meta`, with the nonce verified by bcrypt against the hook key.
#[wasm_bindgen]
pub struct AivaxVerifier {
    core: AivaxCore,
    include_reason: bool,
}

#[wasm_bindgen]
impl AivaxVerifier {
    /// Reads `{"hook_key", "require_nonce", "max_bcrypt_cost", "credential",
    /// "max_body_bytes"}` (an unknown setting is refused). Throws as
    /// [`Verifier::new`] does; the message never contains the hook key.
    #[wasm_bindgen(constructor)]
    pub fn new(config_json: &[u8], include_reason: bool) -> Result<AivaxVerifier, JsValue> {
        match AivaxCore::from_json(config_json, UnknownSettings::Refuse) {
            Ok(core) => Ok(AivaxVerifier {
                core,
                include_reason,
            }),
            Err(e) => Err(config_error(&e)),
        }
    }

    #[wasm_bindgen(getter, js_name = maxBodyBytes)]
    pub fn max_body_bytes(&self) -> usize {
        self.core.max_body_bytes()
    }

    /// Steps 0 and 1 (method and static credential), before the body is read.
    #[wasm_bindgen(js_name = checkHeaders)]
    pub fn check_headers(&self, heads: &[u8], lens: &[u32]) -> Result<String, JsValue> {
        let (method, headers) = split(heads, lens)?;
        Ok(headers_verdict(
            self.core.check_headers(method, &headers),
            self.include_reason,
        ))
    }

    /// The whole decision (no clock: nothing in the profile expires).
    pub fn verify(&self, heads: &[u8], lens: &[u32], body: &[u8]) -> Result<String, JsValue> {
        let (method, headers) = split(heads, lens)?;
        Ok(match self.core.check(method, &headers, body) {
            AivaxVerdict::Pass => "p".into(),
            AivaxVerdict::Accept(ctx) => tagged('a', &ctx.to_json()),
            AivaxVerdict::Reject(r) => refusal(&r, self.include_reason),
        })
    }

    /// The verifier with the hook key and credential values redacted.
    pub fn describe(&self) -> String {
        format!("{:?}", self.core)
    }
}

/// `mcp__<server>__<tool>`, the name a model sees (CONTRACT §6).
#[wasm_bindgen(js_name = qualifiedToolName)]
pub fn qualified_tool_name(instance_name: &str, tool: &str) -> String {
    names::qualified_tool_name(instance_name, tool)
}

/// `<server>` for an instance name (CONTRACT §6).
#[wasm_bindgen(js_name = serverLabel)]
pub fn server_label(instance_name: &str) -> String {
    names::server_label(instance_name)
}

/// The RFC 8785 canonical form of a JSON text. Throws `"<code>\n<message>"`
/// (`not_json` or `not_canonicalizable`).
#[wasm_bindgen(js_name = canonicalJson)]
pub fn canonical_json(text: &str) -> Result<String, JsValue> {
    let value = json::parse(text.as_bytes()).map_err(|e| js_error("not_json", e))?;
    jcs::canonicalize(&value).map_err(|e| js_error("not_canonicalizable", e))
}

/// The Tuix idempotency key (CONTRACT §7) over `arguments_json`, a JSON text.
#[wasm_bindgen(js_name = tuixIdempotencyKey)]
pub fn tuix_idempotency_key(
    session_id: &str,
    turn: &str,
    tool: &str,
    arguments_json: &str,
) -> Result<String, JsValue> {
    let value = json::parse(arguments_json.as_bytes()).map_err(|e| js_error("not_json", e))?;
    jcs::tuix_idempotency_key(session_id, turn, tool, &value)
        .map_err(|e| js_error("not_canonicalizable", e))
}

fn js_error(code: &str, e: impl core::fmt::Display) -> JsValue {
    JsValue::from_str(&format!("{code}\n{e}"))
}

fn config_error(e: &toolctx_core::ConfigError) -> JsValue {
    js_error(e.code(), e)
}

fn tagged(tag: char, json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 1);
    out.push(tag);
    out.push_str(json);
    out
}

fn headers_verdict(v: HeadersVerdict, include_reason: bool) -> String {
    match v {
        HeadersVerdict::Pass => "p".into(),
        HeadersVerdict::ReadBody => "b".into(),
        HeadersVerdict::Reject(r) => refusal(&r, include_reason),
    }
}

/// `r` + `{"status":..,"code":..,"reason":"..","message":"..","id":..,"body":".."}`.
fn refusal(r: &Refusal, include_reason: bool) -> String {
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
fn split<'a>(
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
