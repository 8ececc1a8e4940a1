//! The context claims (CONTRACT §2 step 11) in one table, read by the
//! verifier (steps 11 and 14), the signing side (the token payload and
//! `_meta`) and the verified context's JSON. A new claim is one row here;
//! the exhaustive matches over [`Claim`] then name every place that must
//! carry its value.

use alloc::string::String;

use crate::json::{write_str, Item, Kind as JsonKind, Value};

const MAX_END_USER_ID_CHARS: usize = 256;

/// What a claim's value must be.
#[derive(Clone, Copy)]
enum Kind {
    /// Any string.
    Text,
    /// `"<major>"` or `"<major>.<minor>"` in ASCII digits.
    Protocol,
    /// A string of 1..=256 characters.
    EndUserId,
    /// An object.
    Object,
}

struct Rule {
    name: &'static str,
    required: bool,
    kind: Kind,
}

const fn required(name: &'static str, kind: Kind) -> Rule {
    Rule {
        name,
        required: true,
        kind,
    }
}

const fn optional(name: &'static str, kind: Kind) -> Rule {
    Rule {
        name,
        required: false,
        kind,
    }
}

table_enum! {
    /// A context claim, checked in this order, required ones first; `_meta`
    /// carries each as `agentarea/<name>`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum Claim: Rule {
        Protocol => required("protocol", Kind::Protocol),
        TaskId => required("task_id", Kind::Text),
        ToolCallId => required("tool_call_id", Kind::Text),
        WorkspaceId => required("workspace_id", Kind::Text),
        IdempotencyKey => required("idempotency_key", Kind::Text),
        AgentId => optional("agent_id", Kind::Text),
        EndUserId => optional("end_user_id", Kind::EndUserId),
        Metadata => optional("metadata", Kind::Object),
    }
}

impl Claim {
    /// The claim's name in the token, and after `agentarea/` in `_meta`.
    pub const fn name(self) -> &'static str {
        self.row().name
    }

    /// Whether a token without this claim is `context_malformed`.
    pub const fn required(self) -> bool {
        self.row().required
    }

    /// Whether `value` has this claim's type and format.
    pub fn accepts(self, value: Item<'_, '_>) -> bool {
        match (self.row().kind, value.as_str()) {
            (Kind::Text, Some(_)) => true,
            (Kind::Protocol, Some(s)) => protocol_major(s).is_some(),
            (Kind::EndUserId, Some(s)) => (1..=MAX_END_USER_ID_CHARS).contains(&s.chars().count()),
            (Kind::Object, _) => value.kind() == JsonKind::Object,
            _ => false,
        }
    }
}

/// The context claims' names (CONTRACT §2 step 11), required ones first,
/// in the order the checks, the token payload, `_meta` and the verified
/// context's JSON use: for front ends and tests that must name them.
pub const CONTEXT_CLAIMS: [&str; Claim::ALL.len()] = {
    let mut names = [""; Claim::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        // In range: the loop stops at the length both arrays share.
        #[allow(clippy::indexing_slicing)]
        {
            names[i] = Claim::ALL[i].name();
        }
        i += 1;
    }
    names
};

/// Every claim's name, in table order, as bytes.
pub(crate) const NAMES: [&[u8]; Claim::ALL.len()] = {
    let mut names: [&[u8]; Claim::ALL.len()] = [b""; Claim::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        // In range: as above.
        #[allow(clippy::indexing_slicing)]
        {
            names[i] = CONTEXT_CLAIMS[i].as_bytes();
        }
        i += 1;
    }
    names
};

/// The major of a `"<major>"` or `"<major>.<minor>"` protocol in ASCII
/// digits; `None` for any other form.
pub(crate) fn protocol_major(p: &str) -> Option<&str> {
    let (major, minor) = match p.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (p, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(major) && minor.is_none_or(digits)).then_some(major)
}

/// A context claim's value, borrowed from the struct that holds it.
pub(crate) enum ClaimValue<'a> {
    Text(&'a str),
    Json(&'a Value<'a>),
    /// JSON text, written as it is.
    Raw(&'a str),
}

/// Writes a member for each claim `value_of` has, in the order of
/// [`Claim::ALL`], each name prefixed.
pub(crate) fn write_claims<'a>(
    prefix: &str,
    value_of: impl Fn(Claim) -> Option<ClaimValue<'a>>,
    out: &mut String,
) {
    for claim in Claim::ALL {
        match value_of(claim) {
            None => continue,
            Some(ClaimValue::Text(s)) => {
                member(prefix, claim.name(), out);
                write_str(s, out);
            }
            Some(ClaimValue::Json(v)) => {
                member(prefix, claim.name(), out);
                v.write(out);
            }
            Some(ClaimValue::Raw(text)) => {
                member(prefix, claim.name(), out);
                out.push_str(text);
            }
        }
    }
}

/// `"<prefix><name>":`, after a comma unless it is the first member.
pub(crate) fn member(prefix: &str, name: &str, out: &mut String) {
    // The object's first member follows its `{`; no value ends with one.
    if !out.ends_with('{') {
        out.push(',');
    }
    out.push('"');
    out.push_str(prefix);
    out.push_str(name);
    out.push_str("\":");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{json, ContextClaims, META_PREFIX};

    #[test]
    fn names_are_unique_and_required_claims_come_first() {
        for (i, c) in Claim::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
            assert!(Claim::ALL.iter().skip(i + 1).all(|o| o.name() != c.name()));
        }
        let required = Claim::ALL.iter().filter(|c| c.required()).count();
        assert!(Claim::ALL.iter().take(required).all(|c| c.required()));
    }

    /// The signing side writes every claim of the table, in its order, with
    /// a value the verifier's rule accepts.
    #[test]
    fn minted_meta_carries_every_claim_in_table_order() {
        let context = ContextClaims {
            protocol: "1.2".into(),
            task_id: "t".into(),
            tool_call_id: "c".into(),
            workspace_id: "w".into(),
            agent_id: Some("a".into()),
            end_user_id: Some("u".into()),
            metadata: Some(json::parse(b"{\"k\":1}").unwrap().to_owned_value()),
        };
        let text = context.meta_json();
        let doc = json::read(text.as_bytes(), json::Keep::All).unwrap();
        let members: alloc::vec::Vec<_> = doc.root().unwrap().members().collect();
        assert_eq!(members.len(), Claim::ALL.len(), "{text}");
        for ((key, value), claim) in members.into_iter().zip(Claim::ALL) {
            let key = key.as_str().unwrap();
            assert_eq!(key.strip_prefix(META_PREFIX), Some(claim.name()));
            assert!(claim.accepts(value), "{key}");
        }
    }
}
