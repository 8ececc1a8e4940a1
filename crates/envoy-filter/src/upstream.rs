//! What an accepted call carries upstream: the configured fields of its
//! verified context and the named `params._meta` members, as
//! `(header, value)` pairs, for every profile alike.

use toolctx_core::json::{self, Value};

use crate::settings::{self, ContextField, Settings};

/// The headers to set on an accepted call: `fields` of `ctx`, then the
/// `meta_headers` members of the body the core has just accepted. `Err`
/// only when that body cannot be read again (it was just accepted, so
/// never in practice: the filter then fails closed).
pub fn accepted_headers<'s, F: ContextField>(
    settings: &'s Settings,
    fields: &'s [(F, String)],
    ctx: &F::Context,
    body: &[u8],
) -> Result<Vec<(&'s str, String)>, ()> {
    let mut out = settings::mapped(fields, ctx);
    out.extend(meta_values(settings, body)?);
    Ok(out)
}

/// The `params._meta` members named in `meta_headers`, read with the core's
/// JSON reader from the body the core has just accepted: `(header, value)`
/// for each member present and not `null` (strings as they are, other
/// values as JSON).
fn meta_values<'s>(settings: &'s Settings, body: &[u8]) -> Result<Vec<(&'s str, String)>, ()> {
    if settings.meta_headers.is_empty() {
        return Ok(Vec::new());
    }
    let doc = json::parse(body).map_err(|_| ())?;
    let meta = doc.get("params").and_then(|p| p.get("_meta"));
    let mut out = Vec::new();
    for (member, header) in &settings.meta_headers {
        match meta.and_then(|m| m.get(member)) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => out.push((header.as_str(), s.to_string())),
            Some(other) => out.push((header.as_str(), other.to_json())),
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn meta_values_come_from_the_accepted_body() {
        let env =
            |name: &str| (name == "S").then(|| "0123456789abcdef0123456789abcdef".to_string());
        let config = br#"{"instance_id":"i","secret_env":["S"],
            "meta_headers":{"sessionId":"x-session-id","idempotencyKey":"x-idempotency-key","n":"x-n","z":"x-z"}}"#;
        let settings = settings::load(config, &env).unwrap().settings;
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t",
            "_meta":{"sessionId":"s-1","n":{"a":[1,2.50]},"z":null}}}"#;
        assert_eq!(
            meta_values(&settings, body).unwrap(),
            vec![
                ("x-session-id", "s-1".to_string()),
                ("x-n", r#"{"a":[1,2.50]}"#.to_string())
            ]
        );
        let no_meta = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#;
        assert_eq!(meta_values(&settings, no_meta).unwrap(), vec![]);
    }
}
