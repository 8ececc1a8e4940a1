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
//! The npm package's TypeScript layer builds the inputs and reads the tag;
//! see `npm/src/core.ts`.

use toolctx_core::json::write_str;
use toolctx_core::{Config, HeadersVerdict, Refusal, UnknownSettings, Verdict, Verifier as Core};
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
            Err(e) => Err(JsValue::from_str(&format!("{}\n{}", e.code(), e))),
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
        Ok(match self.core.check_headers(method, &headers) {
            HeadersVerdict::Pass => "p".into(),
            HeadersVerdict::ReadBody => "b".into(),
            HeadersVerdict::Reject(r) => self.refusal(&r),
        })
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
            Verdict::Accept(ctx) => {
                let json = ctx.to_json();
                let mut out = String::with_capacity(json.len() + 1);
                out.push('a');
                out.push_str(&json);
                out
            }
            Verdict::Reject(r) => self.refusal(&r),
        })
    }

    /// The verifier with its configuration, secrets and credential values
    /// redacted (the core's `Debug`), for `toString` and `util.inspect`.
    pub fn describe(&self) -> String {
        format!("{:?}", self.core)
    }
}

impl Verifier {
    /// `r` + `{"status":..,"code":..,"reason":"..","message":"..","id":..,"body":".."}`.
    fn refusal(&self, r: &Refusal) -> String {
        let body = r.body(self.include_reason);
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
