//! The upstream header settings (`headers`, `meta_headers`, `tuix`), read
//! into the core's [`Forward`]: which names are allowed, what is removed and
//! how values are written is the core's rule, said here in the gateway's
//! words.

use toolctx_core::forward::{Field, Forward, ForwardError};
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
    let mut out = Forward::<F>::new();
    if let Some(headers) = headers {
        let Value::Object(members) = headers else {
            return Err(
                "`headers` must be an object mapping context fields to header names".into(),
            );
        };
        for (field, header) in members {
            let header = header
                .as_str()
                .ok_or_else(|| format!("`headers.{field}` must be a header name"))?;
            out = out
                .field(field, header)
                .map_err(|e| explain(e, &format!("headers.{field}"), profile, F::TABLE))?;
        }
    }
    if let Some(members) = meta.members {
        let Value::Object(members) = members else {
            return Err(
                "`meta_headers` must be an object mapping `_meta` member names to header names"
                    .into(),
            );
        };
        for (member, header) in members {
            let header = header
                .as_str()
                .ok_or_else(|| format!("`meta_headers.{member}` must be a header name"))?;
            out = out
                .meta(member, header)
                .map_err(|e| explain(e, &format!("meta_headers.{member}"), profile, F::TABLE))?;
        }
    }
    if meta.tuix {
        out = out
            .tuix()
            .map_err(|e| explain(e, "tuix", profile, F::TABLE))?;
    }
    Ok(out)
}

fn explain<F>(e: ForwardError, what: &str, profile: &str, table: &[(&str, F)]) -> String {
    match e {
        ForwardError::UnknownField(field) => {
            let known: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
            format!(
                "`headers`: unknown {profile} context field `{field}` (known: {})",
                known.join(", ")
            )
        }
        ForwardError::Twice(name) => {
            format!("`headers`/`meta_headers`/`tuix`: `{name}` is used twice")
        }
        ForwardError::EmptyMember => {
            "`meta_headers`: a `_meta` member name must not be empty".into()
        }
        other => format!("`{what}`: {other}"),
    }
}
