//! What several commands share: errors and exit codes, secrets, the
//! verifier configuration and the claims of a token to mint.

use std::fmt;
use std::path::PathBuf;

use clap::Args;
use serde_json::{Map, Value as J};
use toolctx_core::{
    json, Config, ContextClaims, TokenClaims, UnknownSettings, Verifier, MAX_SECRET_BYTES,
    MIN_SECRET_BYTES,
};

/// Success: accepted, passed, every case passed, printed what was asked.
pub const EXIT_OK: u8 = 0;
/// A negative answer: refused, a failed case, a failing check, a tool error.
pub const EXIT_NEGATIVE: u8 = 1;
/// Bad usage or input: flags, files, secrets, configuration.
pub const EXIT_USAGE: u8 = 2;
/// The server could not be reached or did not answer as an MCP server.
pub const EXIT_UNREACHABLE: u8 = 3;

/// A command's failure to do its job (not a negative answer, which is an
/// exit code).
#[derive(Debug)]
pub enum Error {
    Usage(String),
    Unreachable(String),
}

impl Error {
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => EXIT_USAGE,
            Error::Unreachable(_) => EXIT_UNREACHABLE,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) | Error::Unreachable(m) => f.write_str(m),
        }
    }
}

pub fn usage(msg: impl Into<String>) -> Error {
    Error::Usage(msg.into())
}

/// A command's result: its exit code, or why it could not run.
pub type Outcome = Result<u8, Error>;

/// Unix seconds from the system clock.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `n` random bytes as lower-case hex.
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    if getrandom::fill(&mut bytes).is_err() {
        // Not expected on any platform this runs on; std seeds RandomState
        // from the OS as well, so ids stay unpredictable.
        use std::hash::{BuildHasher as _, Hasher as _};
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_usize(i);
            for (b, r) in chunk.iter_mut().zip(h.finish().to_le_bytes()) {
                *b = r;
            }
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A random UUID v4, the usual `jti`.
pub fn uuid_v4() -> String {
    let mut hex: Vec<char> = random_hex(16).chars().collect();
    if let Some(c) = hex.get_mut(12) {
        *c = '4';
    }
    if let Some(c) = hex.get_mut(16) {
        let v = c.to_digit(16).unwrap_or(0);
        *c = char::from_digit(8 | (v & 3), 16).unwrap_or('8');
    }
    let s: String = hex.into_iter().collect();
    let part = |a: usize, b: usize| s.get(a..b).unwrap_or_default();
    format!(
        "{}-{}-{}-{}-{}",
        part(0, 8),
        part(8, 12),
        part(12, 16),
        part(16, 20),
        part(20, 32)
    )
}

/// A secret's bytes. Never printed: `Debug` says only its length.
#[derive(Clone)]
pub struct Secret(Vec<u8>);

impl Secret {
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret([{} bytes redacted])", self.0.len())
    }
}

/// Where secrets come from. Never from a plain argument, which would land
/// in shell history and in `ps`.
#[derive(Args, Debug, Clone, Default)]
pub struct SecretArgs {
    /// Read an HMAC secret from this environment variable; repeat for
    /// rotation (the first one signs, all verify). Default: TOOLCTX_SECRET
    #[arg(long = "secret-env", value_name = "NAME")]
    pub secret_env: Vec<String>,
    /// Read an HMAC secret from this file (one trailing newline is dropped);
    /// repeatable, after the --secret-env ones
    #[arg(long = "secret-file", value_name = "PATH")]
    pub secret_file: Vec<PathBuf>,
}

/// The variable read when no secret flag is given.
pub const DEFAULT_SECRET_ENV: &str = "TOOLCTX_SECRET";

fn checked(secret: Vec<u8>, origin: &str) -> Result<Secret, Error> {
    if std::str::from_utf8(&secret).is_err() {
        return Err(usage(format!("the secret from {origin} is not UTF-8")));
    }
    if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&secret.len()) {
        return Err(usage(format!(
            "the secret from {origin} is {} bytes; secrets must be {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes",
            secret.len()
        )));
    }
    Ok(Secret(secret))
}

fn from_env(name: &str) -> Result<Secret, Error> {
    match std::env::var_os(name) {
        None => Err(usage(format!("environment variable {name} is not set"))),
        Some(v) if v.is_empty() => Err(usage(format!("environment variable {name} is empty"))),
        Some(v) => match v.into_string() {
            Ok(s) => checked(s.into_bytes(), &format!("${name}")),
            Err(_) => Err(usage(format!("the secret in ${name} is not UTF-8"))),
        },
    }
}

fn from_file(path: &PathBuf) -> Result<Secret, Error> {
    let mut bytes = std::fs::read(path)
        .map_err(|e| usage(format!("cannot read secret file {}: {e}", path.display())))?;
    if bytes.ends_with(b"\n") {
        bytes.pop();
        if bytes.ends_with(b"\r") {
            bytes.pop();
        }
    }
    checked(bytes, &path.display().to_string())
}

impl SecretArgs {
    pub fn given(&self) -> bool {
        !self.secret_env.is_empty() || !self.secret_file.is_empty()
    }

    /// The secrets asked for, in order; the secrets of `$TOOLCTX_SECRET`
    /// when no flag is given and the variable is set.
    pub fn load(&self) -> Result<Vec<Secret>, Error> {
        if !self.given() {
            if std::env::var_os(DEFAULT_SECRET_ENV).is_some() {
                return Ok(vec![from_env(DEFAULT_SECRET_ENV)?]);
            }
            return Err(usage(format!(
                "no secret: pass --secret-env NAME or --secret-file PATH, or set {DEFAULT_SECRET_ENV} \
                 (a secret is never taken as a plain argument)"
            )));
        }
        let mut out = Vec::new();
        for name in &self.secret_env {
            out.push(from_env(name)?);
        }
        for path in &self.secret_file {
            out.push(from_file(path)?);
        }
        Ok(out)
    }

    /// Like [`SecretArgs::load`], but no flag means no secret.
    pub fn load_if_given(&self) -> Result<Vec<Secret>, Error> {
        if self.given() {
            self.load()
        } else {
            Ok(Vec::new())
        }
    }
}

/// Converts a serde_json value into the core's JSON value.
pub fn core_value(v: &J) -> Result<json::Value<'static>, Error> {
    let text = v.to_string();
    json::parse(text.as_bytes())
        .map(json::Value::into_owned)
        .map_err(|e| usage(format!("not acceptable JSON: {e}")))
}

/// Parses JSON text that the core wrote (always valid).
pub fn parse_core_json(text: &str) -> J {
    serde_json::from_str(text).unwrap_or(J::Null)
}

/// `$TOOLCTX_INSTANCE_ID` when set and not empty.
pub fn instance_from_env() -> Option<String> {
    std::env::var("TOOLCTX_INSTANCE_ID")
        .ok()
        .filter(|v| !v.is_empty())
}

/// The verifier configuration for `verify` and `inspect`.
#[derive(Args, Debug, Clone, Default)]
pub struct VerifierArgs {
    /// Verifier configuration as JSON, the vector files' `config` form
    /// (instance_id, secrets, credential, require_context, clock_skew_s, ...)
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// The server instance id that `aud` must name (default: the config
    /// file's, else $TOOLCTX_INSTANCE_ID)
    #[arg(long, value_name = "ID")]
    pub instance_id: Option<String>,
    #[command(flatten)]
    pub secrets: SecretArgs,
    /// Decide at this Unix time instead of now
    #[arg(long, value_name = "UNIX_SECONDS")]
    pub now: Option<u64>,
}

impl VerifierArgs {
    /// The configuration from the file, with the flags over it.
    /// `fallback_instance` is used when neither gives an instance id.
    pub fn config(
        &self,
        secrets: Vec<Secret>,
        fallback_instance: Option<&str>,
    ) -> Result<Config, Error> {
        // A config file holds `instance_id` and `secrets` (`[]` when the
        // secrets come from flags); the flags override it.
        let mut config = match &self.config {
            Some(path) => {
                let text = std::fs::read(path)
                    .map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
                Config::from_json(&text, UnknownSettings::Refuse)
                    .map_err(|e| usage(format!("{}: {e}", path.display())))?
            }
            None => Config::new(String::new(), Vec::new()),
        };
        if let Some(id) = &self.instance_id {
            config.instance_id = id.clone();
        }
        if config.instance_id.is_empty() {
            config.instance_id = instance_from_env().unwrap_or_default();
        }
        if config.instance_id.is_empty() {
            match fallback_instance {
                Some(id) => config.instance_id = id.to_string(),
                None => return Err(usage(
                    "no instance id: pass --instance-id, set TOOLCTX_INSTANCE_ID, or give --config",
                )),
            }
        }
        if !secrets.is_empty() {
            config.secrets = secrets.into_iter().map(|s| s.0).collect();
        }
        Ok(config)
    }

    /// Whether an instance id was given (flag, config file or environment).
    pub fn instance_given(&self) -> bool {
        self.instance_id.is_some() || self.config.is_some() || instance_from_env().is_some()
    }

    /// The secrets of the flags; without flags, none when a config file
    /// gives them, else `$TOOLCTX_SECRET`.
    pub fn secrets(&self) -> Result<Vec<Secret>, Error> {
        if self.secrets.given() || self.config.is_none() {
            self.secrets.load()
        } else {
            Ok(Vec::new())
        }
    }

    pub fn verifier(&self, config: Config) -> Result<Verifier, Error> {
        Verifier::new(config).map_err(|e| usage(format!("configuration refused: {e}")))
    }

    pub fn now(&self) -> u64 {
        self.now.unwrap_or_else(unix_now)
    }
}

/// The claims of a token to mint: flags, over an optional JSON file.
#[derive(Args, Debug, Clone, Default)]
pub struct ClaimArgs {
    /// Claims as a JSON object (instance_id or aud, tool, task_id,
    /// tool_call_id, workspace_id, agent_id, end_user_id, metadata,
    /// protocol, jti, iat); the flags below override it
    #[arg(long, value_name = "PATH")]
    pub claims: Option<PathBuf>,
    /// task_id (default: task- and 8 random hex digits)
    #[arg(long, value_name = "ID")]
    pub task_id: Option<String>,
    /// tool_call_id (default: call- and 8 random hex digits)
    #[arg(long, value_name = "ID")]
    pub tool_call_id: Option<String>,
    /// workspace_id (default: workspace-local)
    #[arg(long, value_name = "ID")]
    pub workspace_id: Option<String>,
    /// agent_id (optional claim)
    #[arg(long, value_name = "ID")]
    pub agent_id: Option<String>,
    /// end_user_id (optional claim)
    #[arg(long, value_name = "ID")]
    pub end_user_id: Option<String>,
    /// metadata: a JSON object (optional claim)
    #[arg(long, value_name = "JSON")]
    pub metadata: Option<String>,
    /// Contract version the platform speaks (default: 1)
    #[arg(long, value_name = "VERSION")]
    pub protocol: Option<String>,
    /// jti (default: a random UUID v4)
    #[arg(long, value_name = "ID")]
    pub jti: Option<String>,
    /// iat, Unix seconds (default: now); exp is iat + 300
    #[arg(long, value_name = "UNIX_SECONDS")]
    pub iat: Option<u64>,
}

const CLAIM_FILE_KEYS: [&str; 12] = [
    "instance_id",
    "aud",
    "tool",
    "task_id",
    "tool_call_id",
    "workspace_id",
    "agent_id",
    "end_user_id",
    "metadata",
    "protocol",
    "jti",
    "iat",
];

fn file_string(file: &Map<String, J>, key: &str) -> Result<Option<String>, Error> {
    match file.get(key) {
        None | Some(J::Null) => Ok(None),
        Some(J::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(usage(format!("claims file: `{key}` must be a string"))),
    }
}

impl ClaimArgs {
    /// The claims to mint. `instance_id` and `tool` come from the caller's
    /// flags and win over the file; `now` is the default `iat`.
    pub fn build(
        &self,
        instance_id: Option<&str>,
        tool: Option<&str>,
        now: u64,
    ) -> Result<TokenClaims, Error> {
        let file = match &self.claims {
            None => Map::new(),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
                match serde_json::from_str::<J>(&text) {
                    Ok(J::Object(m)) => m,
                    Ok(_) => return Err(usage(format!("{}: not a JSON object", path.display()))),
                    Err(e) => return Err(usage(format!("{}: {e}", path.display()))),
                }
            }
        };
        if let Some(k) = file.keys().find(|k| !CLAIM_FILE_KEYS.contains(&k.as_str())) {
            return Err(usage(format!(
                "claims file: unknown claim `{k}` (known: {})",
                CLAIM_FILE_KEYS.join(", ")
            )));
        }
        let pick = |flag: &Option<String>, key: &str| -> Result<Option<String>, Error> {
            match flag {
                Some(v) => Ok(Some(v.clone())),
                None => file_string(&file, key),
            }
        };
        let instance_id = match instance_id {
            Some(id) => id.to_string(),
            None => match file_string(&file, "instance_id")? {
                Some(id) => id,
                None => file_string(&file, "aud")?.ok_or_else(|| {
                    usage("no instance id: pass --instance-id or set TOOLCTX_INSTANCE_ID")
                })?,
            },
        };
        let metadata = match (&self.metadata, file.get("metadata")) {
            (Some(text), _) => Some(
                serde_json::from_str::<J>(text).map_err(|e| usage(format!("--metadata: {e}")))?,
            ),
            (None, Some(J::Null) | None) => None,
            (None, Some(v)) => Some(v.clone()),
        };
        let metadata = match metadata {
            None => None,
            Some(v @ J::Object(_)) => Some(core_value(&v)?),
            Some(_) => return Err(usage("metadata must be a JSON object")),
        };
        let iat = match (self.iat, file.get("iat")) {
            (Some(t), _) => t,
            (None, None | Some(J::Null)) => now,
            (None, Some(v)) => v
                .as_u64()
                .ok_or_else(|| usage("claims file: `iat` must be a non-negative integer"))?,
        };
        let tool = match tool {
            Some(t) => Some(t.to_string()),
            None => file_string(&file, "tool")?,
        };
        Ok(TokenClaims {
            instance_id,
            tool,
            jti: pick(&self.jti, "jti")?.unwrap_or_else(uuid_v4),
            iat,
            context: ContextClaims {
                protocol: pick(&self.protocol, "protocol")?.unwrap_or_else(|| "1".into()),
                task_id: pick(&self.task_id, "task_id")?
                    .unwrap_or_else(|| format!("task-{}", random_hex(4))),
                tool_call_id: pick(&self.tool_call_id, "tool_call_id")?
                    .unwrap_or_else(|| format!("call-{}", random_hex(4))),
                workspace_id: pick(&self.workspace_id, "workspace_id")?
                    .unwrap_or_else(|| "workspace-local".into()),
                agent_id: pick(&self.agent_id, "agent_id")?,
                end_user_id: pick(&self.end_user_id, "end_user_id")?,
                metadata,
            },
        })
    }
}

/// `(name, value)` from `Name: value`.
pub fn parse_header(text: &str) -> Result<(String, String), Error> {
    match text.split_once(':') {
        Some((n, v)) if !n.trim().is_empty() => Ok((n.trim().to_string(), v.trim().to_string())),
        _ => Err(usage(format!("--header `{text}`: expected `Name: value`"))),
    }
}

/// A static credential for the servers that require one.
#[derive(Args, Debug, Clone, Default)]
pub struct CredentialArgs {
    /// Send a static credential read from this environment variable
    #[arg(long, value_name = "NAME")]
    pub credential_env: Option<String>,
    /// The credential's header
    #[arg(long, value_name = "NAME", default_value = "authorization")]
    pub credential_header: String,
}

impl CredentialArgs {
    pub fn load(&self) -> Result<Option<(String, String)>, Error> {
        let Some(name) = &self.credential_env else {
            return Ok(None);
        };
        match std::env::var(name) {
            Ok(v) if !v.is_empty() => Ok(Some((self.credential_header.clone(), v))),
            _ => Err(usage(format!(
                "environment variable {name} (--credential-env) is not set"
            ))),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn uuid_v4_shape() {
        let u = uuid_v4();
        let parts: Vec<&str> = u.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'));
        assert!("89ab".contains(&parts[3][..1]));
        assert_ne!(uuid_v4(), u);
    }

    #[test]
    fn secret_debug_is_redacted() {
        let s = Secret(b"super-secret-value-that-is-long-enough".to_vec());
        assert_eq!(format!("{s:?}"), "Secret([38 bytes redacted])");
    }

    #[test]
    fn short_secret_error_does_not_echo_it() {
        let e = checked(b"tiny-secret".to_vec(), "$X").err().unwrap();
        assert!(!e.to_string().contains("tiny-secret"));
        assert!(e.to_string().contains("11 bytes"));
    }

    #[test]
    fn header_parsing() {
        assert_eq!(
            parse_header("Authorization: Bearer x").unwrap(),
            ("Authorization".into(), "Bearer x".into())
        );
        assert!(parse_header("nocolon").is_err());
    }
}
