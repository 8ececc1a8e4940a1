//! What goes upstream with a request the core let through (CONTRACT §7):
//! the headers every front end removes and the ones it adds, decided here
//! once so that a server sees the same headers behind any front end.
//!
//! A [`Forward`] maps verified context fields and `_meta` members to header
//! names. For each request that passes or is accepted, a front end removes
//! every header named in [`Forward::removed`] (every copy, any letter case:
//! a caller cannot spoof them) and then adds the accepted call's
//! [`Upstream::set`] pairs, whose values the core has already encoded with
//! [`header_value`]. Front ends never encode or pick values themselves.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use crate::context::Context;
use crate::digits::{push_hex, push_u64};
use crate::headers::TOKEN_HEADER;
use crate::jcs;
use crate::json::{self, Value};
use crate::verdict::{Accepted, Verdict};

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

/// A verified context field that a profile can forward as a header.
pub trait Field: Copy + PartialEq + 'static {
    /// The accepted context the field is read from.
    type Context;
    /// Every field, by its configuration name.
    const TABLE: &'static [(&'static str, Self)];
    /// Appends the field's text to `out` (before encoding); `false` when
    /// the context does not have it.
    fn write(self, ctx: &Self::Context, out: &mut String) -> bool;
}

/// A field of the AgentArea context ([`Context`]) that can be forwarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardField {
    TaskId,
    ToolCallId,
    WorkspaceId,
    IdempotencyKey,
    Protocol,
    AgentId,
    EndUserId,
    /// The `metadata` claim, as canonical JSON.
    Metadata,
    Tool,
    Jti,
    Iat,
    Exp,
    SecretIndex,
    /// The whole verified context, as [`Context::to_json`] writes it
    /// (numbers exactly as the token has them).
    Context,
}

/// Every [`ForwardField`] by the name configurations use.
pub const FORWARD_FIELDS: [(&str, ForwardField); 14] = [
    ("task_id", ForwardField::TaskId),
    ("tool_call_id", ForwardField::ToolCallId),
    ("workspace_id", ForwardField::WorkspaceId),
    ("idempotency_key", ForwardField::IdempotencyKey),
    ("protocol", ForwardField::Protocol),
    ("agent_id", ForwardField::AgentId),
    ("end_user_id", ForwardField::EndUserId),
    ("metadata", ForwardField::Metadata),
    ("tool", ForwardField::Tool),
    ("jti", ForwardField::Jti),
    ("iat", ForwardField::Iat),
    ("exp", ForwardField::Exp),
    ("secret_index", ForwardField::SecretIndex),
    ("context", ForwardField::Context),
];

impl Field for ForwardField {
    type Context = Context;
    const TABLE: &'static [(&'static str, Self)] = &FORWARD_FIELDS;

    fn write(self, ctx: &Context, out: &mut String) -> bool {
        let text = |v: &Option<String>, out: &mut String| match v {
            Some(v) => {
                out.push_str(v);
                true
            }
            None => false,
        };
        match self {
            ForwardField::TaskId => out.push_str(&ctx.task_id),
            ForwardField::ToolCallId => out.push_str(&ctx.tool_call_id),
            ForwardField::WorkspaceId => out.push_str(&ctx.workspace_id),
            ForwardField::IdempotencyKey => out.push_str(&ctx.idempotency_key),
            ForwardField::Protocol => out.push_str(&ctx.protocol),
            ForwardField::AgentId => return text(&ctx.agent_id, out),
            ForwardField::EndUserId => return text(&ctx.end_user_id, out),
            ForwardField::Metadata => {
                return ctx
                    .metadata
                    .as_ref()
                    .is_some_and(|m| canonical_text(m.as_str(), out))
            }
            ForwardField::Tool => return text(&ctx.tool, out),
            ForwardField::Jti => return text(&ctx.jti, out),
            ForwardField::Iat => push_u64(ctx.iat, out),
            ForwardField::Exp => push_u64(ctx.exp, out),
            ForwardField::SecretIndex => push_u64(ctx.secret_index as u64, out),
            ForwardField::Context => ctx.write_json(out),
        }
        true
    }
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
fn canonical_or_compact(v: &Value<'_>, out: &mut String) -> bool {
    let start = out.len();
    if jcs::canonicalize_into(v, out).is_err() {
        out.truncate(start);
        v.write(out);
    }
    true
}

/// Why a forward configuration was refused; its `Display` names the
/// offending entry and never a value from a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForwardError {
    /// A context field this profile does not have.
    UnknownField(String),
    /// A header name that is not an HTTP token.
    BadName(String),
    /// A header name toolctx may not write ([`RESERVED_HEADERS`], `mcp-*`).
    Reserved(String),
    /// Two entries write the same header.
    Twice(String),
    /// An empty `_meta` member name.
    EmptyMember,
    /// A part of the configuration that must be an object (a map to header
    /// names) is not one.
    NotAnObject,
    /// An entry whose header name is not a string.
    NotAName,
}

impl core::fmt::Display for ForwardError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ForwardError::UnknownField(name) => write!(f, "unknown context field `{name}`"),
            ForwardError::BadName(name) => write!(f, "`{name}` is not a valid header name"),
            ForwardError::Reserved(name) => write!(f, "header `{name}` is reserved"),
            ForwardError::Twice(name) => write!(f, "header `{name}` is written twice"),
            ForwardError::EmptyMember => f.write_str("a `_meta` member name must not be empty"),
            ForwardError::NotAnObject => {
                f.write_str("must be an object mapping names to header names")
            }
            ForwardError::NotAName => f.write_str("must be a header name"),
        }
    }
}

impl core::error::Error for ForwardError {}

/// The part of a forward configuration an entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardPart {
    /// Context fields to header names.
    Headers,
    /// `_meta` members to header names.
    Meta,
    /// The Tuix headers.
    Tuix,
}

/// A refused forward configuration, located: the part, the entry's key (a
/// context field or `_meta` member; `None` for the part itself or `tuix`)
/// and why, so that each reader can name the setting in its own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardEntryError {
    pub part: ForwardPart,
    pub key: Option<String>,
    pub error: ForwardError,
}

/// What a profile forwards upstream: context fields and `_meta` members,
/// each to a lower-case header name. Empty by default: nothing is
/// removed or added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forward<F: Field = ForwardField> {
    fields: Vec<(F, String)>,
    meta: Vec<(String, String)>,
    removed: Vec<String>,
}

impl<F: Field> Default for Forward<F> {
    fn default() -> Self {
        Forward {
            fields: Vec::new(),
            meta: Vec::new(),
            removed: Vec::new(),
        }
    }
}

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

impl<F: Field> Forward<F> {
    /// Nothing forwarded.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forwards the context field called `field` (see [`Field::TABLE`]) as
    /// `header`.
    pub fn field(mut self, field: &str, header: &str) -> Result<Self, ForwardError> {
        let f = F::TABLE
            .iter()
            .find(|(n, _)| *n == field)
            .map(|&(_, f)| f)
            .ok_or_else(|| ForwardError::UnknownField(String::from(field)))?;
        let header = self.claim_name(header)?;
        self.fields.push((f, header));
        Ok(self)
    }

    /// Forwards the `_meta` member `member` as `header`.
    pub fn meta(mut self, member: &str, header: &str) -> Result<Self, ForwardError> {
        if member.is_empty() {
            return Err(ForwardError::EmptyMember);
        }
        let header = self.claim_name(header)?;
        self.meta.push((String::from(member), header));
        Ok(self)
    }

    /// Forwards the Tuix headers ([`TUIX_HEADERS`]).
    pub fn tuix(self) -> Result<Self, ForwardError> {
        TUIX_HEADERS
            .iter()
            .try_fold(self, |fw, (member, header)| fw.meta(member, header))
    }

    fn claim_name(&mut self, header: &str) -> Result<String, ForwardError> {
        let name = header_name(header)?;
        if self.removed.contains(&name) {
            return Err(ForwardError::Twice(name));
        }
        self.removed.push(name.clone());
        Ok(name)
    }

    /// Every header this configuration writes, lower-case, in configured
    /// order: removed from every request that passes or is accepted before
    /// anything is added.
    pub fn removed(&self) -> &[String] {
        &self.removed
    }

    /// The configured context fields, with their header names.
    pub fn fields(&self) -> &[(F, String)] {
        &self.fields
    }

    /// The configured `_meta` members, with their header names.
    pub fn meta_members(&self) -> &[(String, String)] {
        &self.meta
    }

    pub fn is_empty(&self) -> bool {
        self.removed.is_empty()
    }

    /// The headers to add for an accepted call: the configured fields of
    /// `ctx`, then the configured `_meta` members found by `meta` (its
    /// value's JSON), each encoded with [`header_value`]. A field the
    /// context lacks, a member that is absent or `null`, or an empty value
    /// forwards nothing (CONTRACT §7); its name is still in
    /// [`Forward::removed`], so a caller's copy never survives.
    pub(crate) fn set_headers<'m>(
        &self,
        ctx: &F::Context,
        meta: impl Fn(&str) -> Option<Value<'m>>,
    ) -> Vec<(String, String)> {
        if self.removed.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(self.removed.len());
        // The one place a forwarded value becomes a header: an empty value
        // carries nothing, and some hosts cannot set one.
        let mut push = |header: &String, text: &str| {
            if !text.is_empty() {
                out.push((header.clone(), header_value(text).into_owned()));
            }
        };
        let mut text = String::new();
        for (field, header) in &self.fields {
            text.clear();
            if field.write(ctx, &mut text) {
                push(header, &text);
            }
        }
        for (member, header) in &self.meta {
            text.clear();
            let found = match meta(member) {
                None | Some(Value::Null) => false,
                Some(Value::String(s)) => {
                    text.push_str(&s);
                    true
                }
                Some(other) => canonical_or_compact(&other, &mut text),
            };
            if found {
                push(header, &text);
            }
        }
        out
    }

    /// Reads `{"headers": {"<field>": "<header>", ...}, "meta": {"<member>":
    /// "<header>", ...}, "tuix": true}` (every member optional) through
    /// [`Forward::read`].
    pub(crate) fn from_value(v: &Value<'_>) -> Result<Self, ForwardError> {
        let Value::Object(members) = v else {
            return Err(ForwardError::NotAnObject);
        };
        let (mut headers, mut meta, mut tuix) = (None, None, false);
        for (name, value) in members {
            match &**name {
                "headers" => headers = Some(value),
                "meta" => meta = Some(value),
                "tuix" => match value {
                    Value::Bool(on) => tuix = *on,
                    _ => return Err(ForwardError::BadName(String::from("tuix"))),
                },
                other => return Err(ForwardError::UnknownField(String::from(other))),
            }
        }
        Self::read(headers, meta, tuix).map_err(|e| e.error)
    }

    /// The one reader of a forward configuration, whatever wraps it (the
    /// core's `forward`, the gateways' `headers` / `meta_headers` / `tuix`):
    /// `headers` maps context fields to header names, `meta` maps `_meta`
    /// members to header names, `tuix` adds the Tuix headers; read in that
    /// order.
    pub fn read(
        headers: Option<&Value<'_>>,
        meta: Option<&Value<'_>>,
        tuix: bool,
    ) -> Result<Self, ForwardEntryError> {
        let mut out = Self::new();
        let at = |part, key: Option<&str>| {
            let key = key.map(String::from);
            move |error| ForwardEntryError { part, key, error }
        };
        for (part, value) in [(ForwardPart::Headers, headers), (ForwardPart::Meta, meta)] {
            let Some(value) = value else { continue };
            let Value::Object(items) = value else {
                return Err(at(part, None)(ForwardError::NotAnObject));
            };
            for (key, header) in items {
                let key: &str = key;
                let header = header
                    .as_str()
                    .ok_or_else(|| at(part, Some(key))(ForwardError::NotAName))?;
                out = match part {
                    ForwardPart::Headers => out.field(key, header),
                    _ => out.meta(key, header),
                }
                .map_err(at(part, Some(key)))?;
            }
        }
        if tuix {
            out = out.tuix().map_err(at(ForwardPart::Tuix, None))?;
        }
        Ok(out)
    }
}

/// What goes upstream with a request that passed or was accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Upstream<'a> {
    /// Lower-case header names to remove first, every copy in any case.
    pub remove: &'a [String],
    /// `(lower-case name, value)` to add after that, values encoded.
    pub set: &'a [(String, String)],
}

/// [`Upstream`] of `verdict` under `forward`, for any profile.
pub(crate) fn upstream<'a, C: Accepted>(
    forward: &'a Forward<impl Field>,
    verdict: &'a Verdict<C>,
) -> Option<Upstream<'a>> {
    match verdict {
        Verdict::Reject(_) => None,
        Verdict::Pass => Some(Upstream {
            remove: forward.removed(),
            set: &[],
        }),
        Verdict::Accept(ctx) => Some(Upstream {
            remove: forward.removed(),
            set: ctx.upstream(),
        }),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_every_byte_outside_visible_ascii_and_percent() {
        assert_eq!(header_value("a-b_c.1"), "a-b_c.1");
        assert_eq!(header_value("a b"), "a%20b");
        assert_eq!(header_value("100%"), "100%25");
        assert_eq!(header_value("ü"), "%C3%BC");
        assert_eq!(header_value(" x\t"), "%20x%09");
        assert_eq!(header_value(""), "");
        assert_eq!(header_value("a\r\nb"), "a%0D%0Ab");
    }

    #[test]
    fn refuses_bad_and_reserved_names_and_duplicates() {
        let fw = Forward::<ForwardField>::new();
        assert!(matches!(
            fw.clone().field("task_id", "bad name"),
            Err(ForwardError::BadName(_))
        ));
        assert!(matches!(
            fw.clone().field("task_id", "Content-Length"),
            Err(ForwardError::Reserved(_))
        ));
        assert!(matches!(
            fw.clone().field("task_id", "mcp-name"),
            Err(ForwardError::Reserved(_))
        ));
        assert!(matches!(
            fw.clone().field("nope", "x-a"),
            Err(ForwardError::UnknownField(_))
        ));
        let fw = fw.field("task_id", "X-Session-Id").unwrap();
        assert!(matches!(fw.tuix(), Err(ForwardError::Twice(_))));
    }

    #[test]
    fn reads_the_vector_form() {
        let doc =
            json::parse(br#"{"headers":{"task_id":"X-Task","exp":"x-exp"},"tuix":true}"#).unwrap();
        let fw = Forward::<ForwardField>::from_value(&doc).unwrap();
        assert_eq!(
            fw.removed(),
            ["x-task", "x-exp", "x-session-id", "x-idempotency-key"]
        );
    }

    #[test]
    fn a_refused_entry_is_located() {
        let read = |h: &[u8], m: &[u8]| {
            let (h, m) = (json::parse(h).unwrap(), json::parse(m).unwrap());
            Forward::<ForwardField>::read(Some(&h), Some(&m), true).unwrap_err()
        };
        let at = |part, key: Option<&str>, error| ForwardEntryError {
            part,
            key: key.map(String::from),
            error,
        };
        assert_eq!(
            read(br#"{"task_id":5}"#, b"{}"),
            at(
                ForwardPart::Headers,
                Some("task_id"),
                ForwardError::NotAName
            )
        );
        assert_eq!(
            read(b"{}", b"[]"),
            at(ForwardPart::Meta, None, ForwardError::NotAnObject)
        );
        assert_eq!(
            read(b"{}", br#"{"s":"x a"}"#),
            at(
                ForwardPart::Meta,
                Some("s"),
                ForwardError::BadName(String::from("x a"))
            )
        );
        assert_eq!(
            read(b"{}", br#"{"s":"X-Session-Id"}"#),
            at(
                ForwardPart::Tuix,
                None,
                ForwardError::Twice(String::from("x-session-id"))
            )
        );
    }
}
