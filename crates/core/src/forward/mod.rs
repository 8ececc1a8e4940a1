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

use alloc::string::String;
use alloc::vec::Vec;

use crate::json::{Item, Value};
use crate::verdict::{Accepted, Verdict};

// One file a job: the fields, the refusals, the header names and values.
mod error;
mod field;
mod header;

pub use error::{ForwardEntryError, ForwardError, ForwardPart};
pub use field::{Field, ForwardField, FORWARD_FIELDS};
use header::canonical_or_compact;
pub(crate) use header::canonical_text;
pub use header::{header_name, header_value, RESERVED_HEADERS, TUIX_HEADERS};

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
    /// `ctx`, then the configured `_meta` members found in the call's
    /// `_meta` object `meta`, each encoded with [`header_value`]. A field the
    /// context lacks, a member that is absent or `null`, or an empty value
    /// forwards nothing (CONTRACT §7); its name is still in
    /// [`Forward::removed`], so a caller's copy never survives.
    pub(crate) fn set_headers(
        &self,
        ctx: &F::Context,
        meta: Option<Item<'_, '_>>,
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
            let found = match meta.and_then(|o| o.get(member)).map(|v| v.to_value()) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

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
