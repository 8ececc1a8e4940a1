//! The plugin configuration: the core's settings, with secrets and
//! credential values named by environment variable instead of written inline.

use std::fmt::Write as _;

use toolctx_core::json::{self, write_str, Value};
use toolctx_core::{Config, ConfigError, Context, UnknownSettings, Verifier, TOKEN_HEADER};

/// A verified context field that can be forwarded as an upstream header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    TaskId,
    ToolCallId,
    WorkspaceId,
    IdempotencyKey,
    Protocol,
    AgentId,
    EndUserId,
    Metadata,
    Tool,
    Jti,
    Iat,
    Exp,
    SecretIndex,
    /// The whole verified context as JSON.
    Context,
}

const FIELDS: [(&str, Field); 14] = [
    ("task_id", Field::TaskId),
    ("tool_call_id", Field::ToolCallId),
    ("workspace_id", Field::WorkspaceId),
    ("idempotency_key", Field::IdempotencyKey),
    ("protocol", Field::Protocol),
    ("agent_id", Field::AgentId),
    ("end_user_id", Field::EndUserId),
    ("metadata", Field::Metadata),
    ("tool", Field::Tool),
    ("jti", Field::Jti),
    ("iat", Field::Iat),
    ("exp", Field::Exp),
    ("secret_index", Field::SecretIndex),
    ("context", Field::Context),
];

impl Field {
    /// The field's value in `ctx`, as text; `None` when the claim is absent.
    pub fn value(self, ctx: &Context) -> Option<String> {
        let s = |v: &String| Some(v.clone());
        match self {
            Field::TaskId => s(&ctx.task_id),
            Field::ToolCallId => s(&ctx.tool_call_id),
            Field::WorkspaceId => s(&ctx.workspace_id),
            Field::IdempotencyKey => s(&ctx.idempotency_key),
            Field::Protocol => s(&ctx.protocol),
            Field::AgentId => ctx.agent_id.as_ref().and_then(s),
            Field::EndUserId => ctx.end_user_id.as_ref().and_then(s),
            Field::Metadata => ctx.metadata.as_ref().map(Value::to_json),
            Field::Tool => ctx.tool.as_ref().and_then(s),
            Field::Jti => ctx.jti.as_ref().and_then(s),
            Field::Iat => Some(ctx.iat.to_string()),
            Field::Exp => Some(ctx.exp.to_string()),
            Field::SecretIndex => Some(ctx.secret_index.to_string()),
            Field::Context => Some(ctx.to_json()),
        }
    }
}

/// Everything the filter needs, validated once in `on_configure`.
#[derive(Debug)]
pub struct Settings {
    pub verifier: Verifier,
    /// Leave `error.data.reason` in refusal bodies (the default).
    pub include_reason: bool,
    /// Verified fields forwarded upstream, by lower-case header name. Every
    /// request has these headers removed first.
    pub headers: Vec<(Field, String)>,
}

/// A loaded configuration and the notes worth a log line.
#[derive(Debug)]
pub struct Loaded {
    pub settings: Settings,
    pub notes: Vec<String>,
}

/// Header names the filter will not write: pseudo-headers, framing and
/// routing headers, and the headers the verdict itself is read from.
const RESERVED_HEADERS: [&str; 9] = [
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

fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn strings<'v>(v: &'v Value<'_>, what: &str) -> Result<Vec<&'v str>, String> {
    let Value::Array(items) = v else {
        return Err(format!(
            "`{what}` must be an array of environment variable names"
        ));
    };
    items
        .iter()
        .map(|i| match i.as_str() {
            Some(s) if !s.is_empty() => Ok(s),
            _ => Err(format!("`{what}` must hold non-empty strings")),
        })
        .collect()
}

/// Values of the named environment variables; unset or empty ones are left
/// out and noted (an optional previous secret during rotation).
fn from_env(
    names: &[&str],
    what: &str,
    env: &dyn Fn(&str) -> Option<String>,
    notes: &mut Vec<String>,
) -> Result<Vec<(String, String)>, String> {
    let mut found = Vec::new();
    for name in names {
        match env(name) {
            Some(v) if !v.is_empty() => found.push(((*name).to_string(), v)),
            _ => notes.push(format!(
                "environment variable {name} (from `{what}`) is unset or empty; skipped"
            )),
        }
    }
    if found.is_empty() {
        return Err(format!(
            "none of the environment variables named in `{what}` ({}) is set in the VM: list them in \
             vm_config.environment_variables.host_env_keys",
            names.join(", ")
        ));
    }
    Ok(found)
}

fn header_map(v: &Value<'_>) -> Result<Vec<(Field, String)>, String> {
    let Value::Object(members) = v else {
        return Err("`headers` must be an object mapping context fields to header names".into());
    };
    let mut out: Vec<(Field, String)> = Vec::new();
    for (field, header) in members {
        let Some(&(_, f)) = FIELDS.iter().find(|(n, _)| *n == &**field) else {
            let known: Vec<&str> = FIELDS.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "`headers`: unknown context field `{field}` (known: {})",
                known.join(", ")
            ));
        };
        let Some(name) = header.as_str().map(str::to_ascii_lowercase) else {
            return Err(format!("`headers.{field}` must be a header name"));
        };
        if name.is_empty() || !name.bytes().all(is_token_char) {
            return Err(format!(
                "`headers.{field}`: `{name}` is not a valid header name"
            ));
        }
        if RESERVED_HEADERS.contains(&name.as_str()) || name.starts_with("mcp-") {
            return Err(format!("`headers.{field}`: `{name}` is reserved"));
        }
        if out.iter().any(|(_, n)| *n == name) {
            return Err(format!("`headers`: `{name}` is used twice"));
        }
        out.push((f, name));
    }
    Ok(out)
}

/// Reads the plugin configuration. `env` looks up environment variables
/// (the VM's, in Envoy). The message of an `Err` says what is wrong and
/// never contains a secret.
pub fn load(text: &[u8], env: &dyn Fn(&str) -> Option<String>) -> Result<Loaded, String> {
    let doc =
        json::parse(text).map_err(|e| format!("plugin configuration is not valid JSON ({e})"))?;
    let Value::Object(members) = &doc else {
        return Err("plugin configuration must be a JSON object".into());
    };
    let mut notes = Vec::new();
    let mut include_reason = true;
    let mut headers = Vec::new();
    let mut secret_names: Vec<String> = Vec::new();
    // The core's own settings, rebuilt as the JSON the core reads.
    let mut core = String::from("{");
    let mut push = |name: &str, value: &dyn Fn(&mut String)| {
        if core.len() > 1 {
            core.push(',');
        }
        write_str(name, &mut core);
        core.push(':');
        value(&mut core);
    };
    for (name, value) in members {
        match &**name {
            "secrets" => {
                return Err("inline `secrets` are refused (Envoy's /config_dump would show them): name environment \
                            variables in `secret_env`"
                    .into())
            }
            "secret_env" => {
                let names = strings(value, "secret_env")?;
                let found = from_env(&names, "secret_env", env, &mut notes)?;
                secret_names = found.iter().map(|(n, _)| n.clone()).collect();
                push("secrets", &|out| {
                    out.push('[');
                    for (i, (_, v)) in found.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        write_str(v, out);
                    }
                    out.push(']');
                });
            }
            "credential" => {
                let Value::Object(_) = value else {
                    return Err("`credential` must be an object {\"header\": ..., \"values_env\": [...]}".into());
                };
                if value.get("values").is_some() {
                    return Err("inline `credential.values` are refused (Envoy's /config_dump would show them): name \
                                environment variables in `credential.values_env`"
                        .into());
                }
                if let Value::Object(m) = value {
                    if let Some((k, _)) = m.iter().find(|(k, _)| *k != "header" && *k != "values_env") {
                        return Err(format!("unknown setting `credential.{k}`"));
                    }
                }
                let header = value
                    .get("header")
                    .and_then(Value::as_str)
                    .ok_or("`credential.header` must be a header name")?;
                let names = strings(value.get("values_env").unwrap_or(&Value::Null), "credential.values_env")?;
                let found = from_env(&names, "credential.values_env", env, &mut notes)?;
                push("credential", &|out| {
                    out.push_str("{\"header\":");
                    write_str(header, out);
                    out.push_str(",\"values\":[");
                    for (i, (_, v)) in found.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        write_str(v, out);
                    }
                    out.push_str("]}");
                });
            }
            "include_reason" => {
                include_reason = match value {
                    Value::Bool(b) => *b,
                    _ => return Err("`include_reason` must be true or false".into()),
                }
            }
            "headers" => headers = header_map(value)?,
            // instance_id, require_context, the limits: the core reads and
            // checks them (and refuses names it does not know).
            other => push(other, &|out| value.write(out)),
        }
    }
    core.push('}');
    if secret_names.is_empty() {
        return Err(
            "`secret_env` is required: the environment variables that hold the HMAC secrets".into(),
        );
    }
    let config = Config::from_json(core.as_bytes(), UnknownSettings::Refuse)
        .map_err(|e| explain(&e, &secret_names))?;
    let verifier = Verifier::new(config).map_err(|e| explain(&e, &secret_names))?;
    Ok(Loaded {
        settings: Settings {
            verifier,
            include_reason,
            headers,
        },
        notes,
    })
}

/// The core's message, with a secret's index turned into its variable name.
fn explain(e: &ConfigError, secret_names: &[String]) -> String {
    let mut out = String::new();
    match e {
        ConfigError::SecretLength { index, len } => {
            let name = secret_names.get(*index).map_or("?", String::as_str);
            let _ = write!(
                out,
                "the secret in {name} is {len} bytes; secrets must be {} to {} bytes",
                toolctx_core::MIN_SECRET_BYTES,
                toolctx_core::MAX_SECRET_BYTES
            );
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
    out
}

/// Makes a verified value safe as a header value: bytes `!`..`~` except
/// `%` are kept, every other byte (space, controls, non-ASCII UTF-8, `%`)
/// becomes `%XX`, so `decodeURIComponent` gives back the exact value and a
/// claim can never inject a line break or lose its edge whitespace.
pub fn header_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if (0x21..=0x7e).contains(&b) && b != b'%' {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod tests {
    use super::*;

    const S1: &str = "0123456789abcdef0123456789abcdef-one";
    const S2: &str = "0123456789abcdef0123456789abcdef-two";

    fn env(name: &str) -> Option<String> {
        match name {
            "S1" => Some(S1.into()),
            "S2" => Some(S2.into()),
            "SHORT" => Some("short".into()),
            "EMPTY" => Some(String::new()),
            "CRED" => Some("Bearer abc".into()),
            _ => None,
        }
    }

    fn load_str(s: &str) -> Result<Loaded, String> {
        load(s.as_bytes(), &env)
    }

    #[test]
    fn loads_secrets_from_env_for_rotation() {
        let l = load_str(
            r#"{"instance_id":"i","secret_env":["S1","S2","UNSET"],"max_body_bytes":100}"#,
        )
        .unwrap();
        assert_eq!(
            l.settings.verifier.config().secrets,
            vec![S1.as_bytes().to_vec(), S2.as_bytes().to_vec()]
        );
        assert_eq!(l.settings.verifier.max_body_bytes(), 100);
        assert!(l.settings.include_reason);
        assert_eq!(l.notes.len(), 1);
    }

    #[test]
    fn refuses_inline_secrets_and_credentials() {
        let e = load_str(r#"{"instance_id":"i","secrets":["0123456789abcdef0123456789abcdef"]}"#)
            .unwrap_err();
        assert!(e.contains("inline `secrets`"), "{e}");
        let e = load_str(r#"{"instance_id":"i","secret_env":["S1"],"credential":{"header":"authorization","values":["x"]}}"#)
            .unwrap_err();
        assert!(e.contains("inline `credential.values`"), "{e}");
    }

    #[test]
    fn says_what_is_wrong_without_the_secret() {
        let e = load_str(r#"{"instance_id":"i","secret_env":["SHORT"]}"#).unwrap_err();
        assert!(
            e.contains("SHORT") && e.contains("5 bytes") && !e.contains("short"),
            "{e}"
        );
        let e = load_str(r#"{"instance_id":"i","secret_env":["UNSET","EMPTY"]}"#).unwrap_err();
        assert!(e.contains("host_env_keys"), "{e}");
        let e = load_str(r#"{"instance_id":"i"}"#).unwrap_err();
        assert!(e.contains("secret_env"), "{e}");
        let e = load_str(r#"{"instance_id":"i","secret_env":["S1"],"clock_skew":3}"#).unwrap_err();
        assert!(e.contains("clock_skew"), "{e}");
        let e =
            load_str(r#"{"instance_id":"i","secret_env":["S1"],"max_body_bytes":0}"#).unwrap_err();
        assert!(e.contains("max_body_bytes"), "{e}");
        assert!(load_str("[]").is_err() && load_str("{").is_err());
    }

    #[test]
    fn reads_credential_and_header_map() {
        let l = load_str(
            r#"{"instance_id":"i","secret_env":["S1"],"include_reason":false,
                "credential":{"header":"authorization","values_env":["CRED"]},
                "headers":{"task_id":"X-Toolctx-Task-Id","context":"x-toolctx-context"}}"#,
        )
        .unwrap();
        let c = l.settings.verifier.config().credential.clone().unwrap();
        assert_eq!(c.values, vec!["Bearer abc".to_string()]);
        assert!(!l.settings.include_reason);
        assert_eq!(
            l.settings.headers,
            vec![
                (Field::TaskId, "x-toolctx-task-id".into()),
                (Field::Context, "x-toolctx-context".into())
            ]
        );
        for bad in [
            r#"{"nope":"x-a"}"#,
            r#"{"task_id":"x a"}"#,
            r#"{"task_id":"x-agentarea-context"}"#,
            r#"{"task_id":"x-a","jti":"X-A"}"#,
        ] {
            let text = format!(r#"{{"instance_id":"i","secret_env":["S1"],"headers":{bad}}}"#);
            assert!(load_str(&text).is_err(), "{bad}");
        }
    }

    #[test]
    fn header_values_cannot_break_lines() {
        assert_eq!(header_value("task-1:call_2"), "task-1:call_2");
        assert_eq!(header_value(" a\r\nb%ü"), "%20a%0D%0Ab%25%C3%BC");
    }
}
