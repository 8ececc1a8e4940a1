//! What an accepted AIVAX call carries, typed, and its JSON form.

use alloc::string::String;
use alloc::vec::Vec;

use super::moment::Moment;

/// What an AIVAX call carries, parsed and typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AivaxContext {
    /// Whether `_aiv_nonce` was present and verified against the hook key.
    pub nonce_verified: bool,
    pub external_user_id: Option<String>,
    /// Kept as sent: consumers tolerate future values.
    pub call_source: Option<String>,
    pub conversation_token: Option<String>,
    pub moment: Option<Moment>,
    /// The application's flat string metadata (every other string member
    /// of `_meta`), in document order.
    pub metadata: Vec<(String, String)>,
    /// The request's JSON-RPC `id` as JSON text (see `Context::request_id`).
    pub request_id: Option<String>,
    /// The headers to add upstream (see [`AivaxVerifier::upstream`](super::AivaxVerifier::upstream)).
    pub upstream: Vec<(String, String)>,
}

impl AivaxContext {
    /// The flat metadata as a JSON object, members in document order.
    pub fn metadata_json(&self) -> String {
        let mut out = String::new();
        self.write_metadata(&mut out);
        out
    }

    fn write_metadata(&self, out: &mut String) {
        use crate::json::write_str;
        out.push('{');
        for (i, (k, v)) in self.metadata.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_str(k, out);
            out.push(':');
            write_str(v, out);
        }
        out.push('}');
    }

    /// The context as a JSON object.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    /// [`AivaxContext::to_json`] appended to `out`.
    pub fn write_json(&self, out: &mut String) {
        use crate::json::write_str;
        out.push_str("{\"nonce_verified\":");
        out.push_str(if self.nonce_verified { "true" } else { "false" });
        for (name, value) in [
            ("external_user_id", &self.external_user_id),
            ("call_source", &self.call_source),
            ("conversation_token", &self.conversation_token),
        ] {
            if let Some(v) = value {
                out.push_str(",\"");
                out.push_str(name);
                out.push_str("\":");
                write_str(v, out);
            }
        }
        if let Some(m) = &self.moment {
            out.push_str(",\"moment\":");
            write_str(&m.text, out);
            out.push_str(",\"moment_unix\":");
            out.push_str(itoa(m.unix_seconds).as_str());
            out.push_str(",\"moment_offset_minutes\":");
            out.push_str(itoa(i64::from(m.offset_minutes)).as_str());
        }
        out.push_str(",\"metadata\":");
        self.write_metadata(out);
        if let Some(id) = &self.request_id {
            out.push_str(",\"request_id\":");
            out.push_str(id);
        }
        out.push('}');
    }
}

fn itoa(v: i64) -> String {
    use core::fmt::Write as _;
    let mut s = String::new();
    let _ = write!(s, "{v}");
    s
}

crate::verdict::accepted!(AivaxContext);
