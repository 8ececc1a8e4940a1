//! Cancellation (CONTRACT §5): after `tool_timeout_seconds` the platform
//! sends `notifications/cancelled`, naming the call by its JSON-RPC id
//! (`params.requestId`). A stateless server gets the notice in another
//! request than the call, so a front end tracks its calls in flight under
//! [`call_key`] and looks a notice up under the key of its id and its own
//! token header: the key holds the exact token the call was sent with, so
//! only a holder of that token can cancel the call.

use alloc::string::String;

use crate::jcs;
use crate::json::{self, Value};

/// The header whose exact value a call is matched by: the context token's.
pub use crate::TOKEN_HEADER;

/// The key a call in flight is tracked under, and that a
/// `notifications/cancelled` sent with the same token finds it by: the
/// RFC 8785 form of the id, a newline, the token. `id_json` is the id's
/// JSON text (the call's `id`, or the notice's `params.requestId`);
/// `token` the value of [`TOKEN_HEADER`] the request came with.
///
/// The id keeps its type (`1` and `"1"` are two ids) and a number is read
/// as a number (`1`, `1.0` and `1e0` are one). `None`, the call cannot be
/// cancelled this way: an id that is not a string or a number (`null`,
/// absent, not JSON, a number out of the double range), or no token or an
/// empty one.
pub fn call_key(id_json: &[u8], token: Option<&str>) -> Option<String> {
    let token = token.filter(|t| !t.is_empty())?;
    let id = json::parse(id_json).ok()?;
    if !matches!(id, Value::String(_) | Value::Number(_)) {
        return None;
    }
    // The canonical form has no raw newline: the key reads one way only.
    let mut key = jcs::canonicalize(&id).ok()?;
    key.push('\n');
    key.push_str(token);
    Some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str, token: Option<&str>) -> Option<String> {
        call_key(id.as_bytes(), token)
    }

    #[test]
    fn the_id_keeps_its_type_and_the_token_is_exact() {
        assert_eq!(key("7", Some("t")).as_deref(), Some("7\nt"));
        assert_eq!(key("\"7\"", Some("t")).as_deref(), Some("\"7\"\nt"));
        assert_eq!(key("7.0", Some("t")), key("7", Some("t")));
        assert_ne!(key("7", Some("t")), key("7", Some("t ")));
    }

    #[test]
    fn no_key_without_a_string_or_number_id_or_a_token() {
        for id in ["null", "true", "{}", "[1]", "", "x", "1e400"] {
            assert_eq!(key(id, Some("t")), None, "{id}");
        }
        assert_eq!(key("1", None), None);
        assert_eq!(key("1", Some("")), None);
    }
}
