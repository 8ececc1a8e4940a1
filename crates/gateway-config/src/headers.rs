//! The upstream header settings (`headers`, `meta_headers`, `tuix`), read
//! by the core's one reader ([`Forward::read`]): which names are allowed,
//! what is removed and how values are written is the core's rule; only its
//! refusals are said here in the gateway's words.

use toolctx_core::forward::{Field, Forward, ForwardEntryError, ForwardError, ForwardPart};
use toolctx_core::json::Value;

/// `meta_headers` (`{"<_meta member>": "<header name>", ...}`) and `tuix`
/// (the Tuix headers on), which both profiles read the same way.
#[derive(Default)]
pub(crate) struct MetaHeaders<'v> {
    pub(crate) members: Option<&'v Value<'v>>,
    pub(crate) tuix: bool,
}

/// The profile's [`Forward`]: the context fields in `headers` first, then
/// the `_meta` members, then the Tuix headers.
pub(crate) fn forward<F: Field>(
    headers: Option<&Value<'_>>,
    meta: &MetaHeaders<'_>,
    profile: &str,
) -> Result<Forward<F>, String> {
    Forward::<F>::read(headers, meta.members, meta.tuix).map_err(|e| explain(e, profile, F::TABLE))
}

fn explain<F>(e: ForwardEntryError, profile: &str, table: &[(&str, F)]) -> String {
    let setting = match e.part {
        ForwardPart::Headers => "headers",
        ForwardPart::Meta => "meta_headers",
        ForwardPart::Tuix => "tuix",
    };
    let key = e.key.unwrap_or_default();
    match (e.error, e.part) {
        (ForwardError::NotAnObject, ForwardPart::Meta) => {
            "`meta_headers` must be an object mapping `_meta` member names to header names".into()
        }
        (ForwardError::NotAnObject, _) => {
            "`headers` must be an object mapping context fields to header names".into()
        }
        (ForwardError::NotAName, _) => format!("`{setting}.{key}` must be a header name"),
        (ForwardError::UnknownField(field), _) => {
            let known: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
            format!(
                "`headers`: unknown {profile} context field `{field}` (known: {})",
                known.join(", ")
            )
        }
        (ForwardError::Twice(name), _) => {
            format!("`headers`/`meta_headers`/`tuix`: `{name}` is used twice")
        }
        (ForwardError::EmptyMember, _) => {
            "`meta_headers`: a `_meta` member name must not be empty".into()
        }
        (other, ForwardPart::Tuix) => format!("`tuix`: {other}"),
        (other, _) => format!("`{setting}.{key}`: {other}"),
    }
}
