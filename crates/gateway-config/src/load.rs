//! Reading a gateway's configuration: the core's settings with secrets
//! named by environment variable, per profile.

use std::fmt::Write as _;

#[cfg(feature = "aivax")]
use toolctx_core::aivax::{AivaxConfig, AivaxField, AivaxVerifier, DEFAULT_MAX_BCRYPT_COST};
use toolctx_core::json::{self, Value};
use toolctx_core::settings::{self, Raw};
#[cfg(feature = "aivax")]
use toolctx_core::DEFAULT_MAX_BODY_BYTES;
use toolctx_core::{Config, ConfigError, Credential, ForwardField, UnknownSettings, Verifier};

use crate::headers::{forward, MetaHeaders};
use crate::replay::replay_guard;
use crate::settings::{Profile, Settings};
use crate::Host;

/// A loaded configuration and the notes worth a log line.
#[derive(Debug)]
pub struct Loaded {
    pub settings: Settings,
    pub notes: Vec<String>,
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

/// What a loader reads from: the host, its environment, and the notes it
/// leaves for the log.
pub(crate) struct Cx<'e> {
    pub(crate) host: Host,
    env: &'e dyn Fn(&str) -> Option<String>,
    notes: Vec<String>,
}

/// Values of the named environment variables; unset or empty ones are left
/// out and noted (an optional previous secret during rotation).
pub(crate) fn from_env(
    names: &[&str],
    what: &str,
    cx: &mut Cx<'_>,
) -> Result<Vec<(String, String)>, String> {
    let mut found = Vec::new();
    for name in names {
        match (cx.env)(name) {
            Some(v) if !v.is_empty() => found.push(((*name).to_string(), v)),
            _ => cx.notes.push(format!(
                "environment variable {name} (from `{what}`) is unset or empty; skipped"
            )),
        }
    }
    if found.is_empty() {
        return Err(format!(
            "none of the environment variables named in `{what}` ({}) {}",
            names.join(", "),
            cx.host.env_hint()
        ));
    }
    Ok(found)
}

/// `credential`: `{"header": "...", "values_env": ["VAR", ...]}`, the
/// values read from the environment.
fn credential(value: &Value<'_>, cx: &mut Cx<'_>) -> Result<Credential, String> {
    let Value::Object(m) = value else {
        return Err(
            "`credential` must be an object {\"header\": ..., \"values_env\": [...]}".into(),
        );
    };
    if value.get("values").is_some() {
        return Err(format!(
            "inline `credential.values` are refused ({}): name environment variables in \
             `credential.values_env`",
            cx.host.inline_hint()
        ));
    }
    if let Some((k, _)) = m.iter().find(|(k, _)| *k != "header" && *k != "values_env") {
        return Err(format!("unknown setting `credential.{k}`"));
    }
    let header = value
        .get("header")
        .and_then(Value::as_str)
        .ok_or("`credential.header` must be a header name")?;
    let names = strings(
        value.get("values_env").unwrap_or(&Value::Null),
        "credential.values_env",
    )?;
    let found = from_env(&names, "credential.values_env", cx)?;
    Ok(Credential {
        header: header.to_string(),
        values: found.into_iter().map(|(_, v)| v).collect(),
    })
}

fn boolean(value: &Value<'_>, what: &str) -> Result<bool, String> {
    match value {
        Value::Bool(b) => Ok(*b),
        _ => Err(format!("`{what}` must be true or false")),
    }
}

/// A setting of the core's table (`toolctx_core::settings`) from the
/// gateway's JSON value: its default when `null` or not given, its range,
/// the one reading of every other value; `Err` is the core's message.
pub fn setting<'a>(
    row: &settings::Setting,
    value: Option<&'a Value<'_>>,
) -> Result<settings::Value<'a>, String> {
    let raw = match value {
        None | Some(Value::Null) => Raw::Absent,
        Some(Value::Bool(b)) => Raw::Flag(*b),
        Some(Value::Number(n)) => Raw::Number(n.parse().unwrap_or(f64::NAN)),
        Some(Value::String(s)) => Raw::Text(s),
        Some(_) => Raw::Other,
    };
    row.read(raw).map_err(|e| e.to_string())
}

/// Puts where the user wrote a setting (`replay_guard.slots`) in front of
/// the core's message, which names the table's row: an operator finds the
/// key in their configuration.
pub(crate) fn at(place: &'static str) -> impl Fn(String) -> String {
    move |why| format!("`{place}`: {why}")
}

/// [`setting`] for a numeric row.
pub(crate) fn setting_number(
    row: &settings::Setting,
    value: Option<&Value<'_>>,
) -> Result<u64, String> {
    match setting(row, value)? {
        settings::Value::Number(n) => Ok(n),
        _ => Err(format!("setting `{}` has the wrong type", row.name)),
    }
}

#[cfg(feature = "aivax")]
pub(crate) fn number(value: &Value<'_>, what: &str) -> Result<u64, String> {
    value
        .as_numeric_date()
        .ok_or_else(|| format!("`{what}` must be a non-negative integer"))
}

/// Settings every profile reads the same way.
struct Common<'v> {
    include_reason: bool,
    meta: MetaHeaders<'v>,
}

/// Reads the filter's plugin configuration ([`load_for`] with
/// [`Host::EnvoyFilter`]).
pub fn load(text: &[u8], env: &dyn Fn(&str) -> Option<String>) -> Result<Loaded, String> {
    load_for(Host::EnvoyFilter, text, env)
}

/// Reads the configuration for `host`. `env` looks up environment variables
/// (the VM's, in Envoy). The message of an `Err` says what is wrong and
/// never contains a secret.
pub fn load_for(
    host: Host,
    text: &[u8],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Loaded, String> {
    let doc =
        json::parse(text).map_err(|e| format!("plugin configuration is not valid JSON ({e})"))?;
    let Value::Object(members) = &doc else {
        return Err("plugin configuration must be a JSON object".into());
    };
    let mut cx = Cx {
        host,
        env,
        notes: Vec::new(),
    };
    let mut common = Common {
        include_reason: settings::INCLUDE_REASON.flag(None),
        meta: MetaHeaders::default(),
    };
    let mut profile_name = "agentarea";
    let mut rest = Vec::new();
    for (name, value) in members {
        match &**name {
            "profile" => {
                profile_name = match value.as_str() {
                    Some(p @ ("agentarea" | "aivax")) => p,
                    _ => return Err("`profile` must be \"agentarea\" or \"aivax\"".into()),
                }
            }
            "include_reason" => {
                common.include_reason = matches!(
                    setting(&settings::INCLUDE_REASON, Some(value))
                        .map_err(at("include_reason"))?,
                    settings::Value::Flag(true)
                )
            }
            "meta_headers" => common.meta.members = Some(value),
            "tuix" => common.meta.tuix = boolean(value, "tuix")?,
            _ => rest.push((&**name, value)),
        }
    }
    let profile = match profile_name {
        #[cfg(feature = "aivax")]
        "aivax" => load_aivax(&rest, &common.meta, &mut cx)?,
        #[cfg(not(feature = "aivax"))]
        "aivax" => {
            return Err(
                "`\"profile\": \"aivax\"` needs the filter built with the `aivax` feature \
                 (toolctx_envoy_aivax.wasm)"
                    .into(),
            )
        }
        _ => load_agentarea(&rest, &common.meta, &mut cx)?,
    };
    let settings = Settings {
        profile,
        include_reason: common.include_reason,
    };
    Ok(Loaded {
        settings,
        notes: cx.notes,
    })
}

fn load_agentarea(
    members: &[(&str, &Value<'_>)],
    meta: &MetaHeaders<'_>,
    cx: &mut Cx<'_>,
) -> Result<Profile, String> {
    let mut headers = None;
    let mut secrets: Option<Vec<(String, String)>> = None;
    let mut cred = None;
    let mut replay = None;
    // The core's own non-secret settings, as parsed, for the core to read.
    let mut core = Vec::new();
    for &(name, value) in members {
        match name {
            "secrets" => {
                return Err(format!(
                    "inline `secrets` are refused ({}): name environment variables in `secret_env`",
                    cx.host.inline_hint()
                ))
            }
            "hook_key" | "hook_key_env" | "require_nonce" | "max_bcrypt_cost" | "nonce_cache" => {
                return Err(format!(
                    "`{name}` belongs to `\"profile\": \"aivax\"`, not to the agentarea profile"
                ))
            }
            "secret_env" => {
                let names = strings(value, "secret_env")?;
                secrets = Some(from_env(&names, "secret_env", cx)?);
            }
            "credential" => cred = Some(credential(value, cx)?),
            "headers" => headers = Some(value),
            "replay_guard" => replay = Some(value),
            // The core's form of `headers`/`meta_headers`/`tuix`: the
            // gateways read theirs only, never one over the other.
            "forward" => {
                return Err(
                    "unknown setting `forward`: the gateways forward with `headers`, \
                     `meta_headers` and `tuix`"
                        .into(),
                )
            }
            // instance_id, require_context, the limits: the core reads and
            // checks them (and refuses names it does not know).
            other => core.push((other, value)),
        }
    }
    let Some(secrets) = secrets else {
        return Err(
            "`secret_env` is required: the environment variables that hold the HMAC secrets".into(),
        );
    };
    let mut config =
        Config::from_members(core, UnknownSettings::Refuse).map_err(|e| explain(&e, &[]))?;
    // An unresolved `${NAME}` left by a template is refused, never used.
    settings::text_value(settings::INSTANCE_ID.name, &config.instance_id)
        .map_err(|e| e.to_string())?;
    for (name, value) in &secrets {
        settings::text_value(settings::SECRET.name, value).map_err(|e| format!("{name}: {e}"))?;
    }
    let secret_names: Vec<String> = secrets.iter().map(|(n, _)| n.clone()).collect();
    config.secrets = secrets.into_iter().map(|(_, v)| v.into_bytes()).collect();
    config.credential = cred;
    config.forward = forward::<ForwardField>(headers, meta, "agentarea")?;
    let replay = replay
        .map(|v| replay_guard(v, &config.instance_id, cx))
        .transpose()?;
    let verifier = Verifier::new(config).map_err(|e| explain(&e, &secret_names))?;
    Ok(Profile::AgentArea { verifier, replay })
}

#[cfg(feature = "aivax")]
fn load_aivax(
    members: &[(&str, &Value<'_>)],
    meta: &MetaHeaders<'_>,
    cx: &mut Cx<'_>,
) -> Result<Profile, String> {
    let mut headers = None;
    let mut hook_key = None;
    let mut aivax = AivaxConfig::new(Vec::new());
    let mut cred = None;
    let mut max_body_bytes = DEFAULT_MAX_BODY_BYTES;
    let mut nonce_cache = setting_number(&settings::NONCE_CACHE, None)? as usize;
    for &(name, value) in members {
        match name {
            "nonce_cache" => {
                nonce_cache = setting_number(&settings::NONCE_CACHE, Some(value))
                    .map_err(at("nonce_cache"))? as usize
            }
            "hook_key" => {
                return Err(format!(
                    "inline `hook_key` is refused ({}): name an environment variable in \
                     `hook_key_env`",
                    cx.host.inline_hint()
                ))
            }
            "hook_key_env" => {
                let var = value
                    .as_str()
                    .filter(|s| !s.is_empty())
                    .ok_or("`hook_key_env` must name an environment variable")?;
                let found = from_env(&[var], "hook_key_env", cx)?;
                hook_key = found.into_iter().next().map(|(_, v)| v.into_bytes());
            }
            "require_nonce" => aivax.require_nonce = boolean(value, "require_nonce")?,
            "max_bcrypt_cost" => {
                aivax.max_bcrypt_cost = u32::try_from(number(value, "max_bcrypt_cost")?)
                    .map_err(|_| "`max_bcrypt_cost` is out of range".to_string())?
            }
            "credential" => cred = Some(credential(value, cx)?),
            "max_body_bytes" => {
                max_body_bytes = usize::try_from(number(value, "max_body_bytes")?)
                    .map_err(|_| "`max_body_bytes` is out of range".to_string())?
            }
            "headers" => headers = Some(value),
            "secrets" | "secret_env" | "instance_id" | "replay_guard" | "require_context"
            | "clock_skew_s" | "max_token_age_s" | "max_token_bytes" | "protocol_majors" => {
                return Err(format!(
                    "`{name}` belongs to the agentarea profile, not to `\"profile\": \"aivax\"`"
                ))
            }
            other => return Err(format!("unknown setting `{other}`")),
        }
    }
    aivax.hook_key = hook_key.ok_or(
        "`hook_key_env` is required: the environment variable that holds the AIVAX hook key",
    )?;
    let verifier = AivaxVerifier::new(aivax, cred, max_body_bytes).map_err(|e| match e {
        ConfigError::Invalid("hook_key") => {
            "the hook key must be 1 to 72 bytes without NUL (bcrypt reads no more)".to_string()
        }
        ConfigError::Limit("max_bcrypt_cost") => format!(
            "`max_bcrypt_cost` must be 4 to 31 (default {DEFAULT_MAX_BCRYPT_COST}; each step doubles the work)"
        ),
        other => explain(&other, &[]),
    })?
    .with_forward(forward::<AivaxField>(headers, meta, "aivax")?);
    Ok(Profile::Aivax {
        verifier,
        nonce_cache,
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
