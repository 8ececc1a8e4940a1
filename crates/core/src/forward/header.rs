//! Header names toolctx may write and how a value becomes a header value:
//! the encoding every forwarded header goes through.

use alloc::borrow::Cow;
use alloc::string::String;

use super::error::ForwardError;
use crate::digits::push_hex;
use crate::headers::TOKEN_HEADER;
use crate::jcs;
use crate::json::{self, Value};

/// The Tuix upstream headers (CONTRACT §7): `_meta` member, lower-case
/// header name.
pub const TUIX_HEADERS: [(&str, &str); 2] = [
    ("sessionId", "x-session-id"),
    ("idempotencyKey", "x-idempotency-key"),
];

/// Header names no front end may be told to write: framing and routing
/// headers, and the headers the verdict itself is read from. Any `mcp-*`
/// name is reserved too.
pub const RESERVED_HEADERS: [&str; 9] = [
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
    "connection",
    "te",
    "upgrade",
    TOKEN_HEADER,
    "mcp-method",
];

/// A header name toolctx may write, lower-cased.
pub fn header_name(name: &str) -> Result<String, ForwardError> {
    let lower = name.to_ascii_lowercase();
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if lower.is_empty() || !lower.bytes().all(token) {
        return Err(ForwardError::BadName(lower));
    }
    if RESERVED_HEADERS.contains(&lower.as_str()) || lower.starts_with("mcp-") {
        return Err(ForwardError::Reserved(lower));
    }
    Ok(lower)
}

/// Makes a forwarded value safe as a header value (CONTRACT §7): UTF-8
/// bytes `!`..`~` except `%` are kept, every other byte (space, controls,
/// non-ASCII, `%`) becomes `%XX` in upper-case hex, so `decodeURIComponent`
/// gives back the exact value and no value can break a header.
pub fn header_value(value: &str) -> Cow<'_, str> {
    let kept = |b: u8| (0x21..=0x7e).contains(&b) && b != b'%';
    if value.bytes().all(kept) {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len() * 3);
    for b in value.bytes() {
        if kept(b) {
            out.push(char::from(b));
        } else {
            out.push('%');
            push_hex(u32::from(b), 2, true, &mut out);
        }
    }
    Cow::Owned(out)
}

/// Appends the canonical form (RFC 8785) of the JSON `text`, or the text
/// itself when it has none (a number no IEEE 754 double can hold): a value
/// is never dropped or rounded on its way upstream.
pub(crate) fn canonical_text(text: &str, out: &mut String) -> bool {
    match json::parse(text.as_bytes()) {
        Ok(v) => canonical_or_compact(&v, out),
        Err(_) => false,
    }
}

/// Appends the canonical form of `v`, or its compact text when it has none.
pub(super) fn canonical_or_compact(v: &Value<'_>, out: &mut String) -> bool {
    let start = out.len();
    if jcs::canonicalize_into(v, out).is_err() {
        out.truncate(start);
        v.write(out);
    }
    true
}
