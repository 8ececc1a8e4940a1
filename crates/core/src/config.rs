//! Configuration (CONTRACT §1), validated once by [`crate::Verifier::new`].

use alloc::string::String;
use alloc::vec::Vec;

use crate::digits::push_u64;
use crate::forward::{Forward, ForwardError};
use crate::json::{self, Value};
use crate::settings::{has_placeholder, SettingError};

/// An optional static credential: a header and the values it may carry.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    /// Header name, compared case-insensitively.
    pub header: String,
    /// Accepted values (compared in constant time, never trimmed).
    pub values: Vec<String>,
}

impl core::fmt::Debug for Credential {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Credential")
            .field("header", &self.header)
            .field("values", &Redacted(self.values.len()))
            .finish()
    }
}

/// The verifier's settings. Build with [`Config::new`] and adjust fields, or
/// read the JSON form with [`Config::from_json`].
#[derive(Clone, PartialEq, Eq)]
pub struct Config {
    /// The server instance id the token's `aud` must name.
    pub instance_id: String,
    /// HMAC secrets (32..=512 bytes each); several at once for rotation.
    pub secrets: Vec<Vec<u8>>,
    pub credential: Option<Credential>,
    pub require_context: bool,
    pub clock_skew_s: u64,
    pub max_token_age_s: u64,
    pub max_body_bytes: usize,
    pub max_token_bytes: usize,
    pub protocol_majors: Vec<u64>,
    /// What is forwarded upstream with passed and accepted requests.
    pub forward: Forward,
    /// The policy decided after the verdict (CONTRACT §8), when one is
    /// configured.
    #[cfg(feature = "policy")]
    pub policy: Option<crate::policy::Policy>,
}

struct Redacted(usize);

impl core::fmt::Debug for Redacted {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "[{} redacted]", self.0)
    }
}

// Secrets never reach a log through `{:?}`.
impl core::fmt::Debug for Config {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut d = f.debug_struct("Config");
        d.field("instance_id", &self.instance_id)
            .field("secrets", &Redacted(self.secrets.len()))
            .field("credential", &self.credential)
            .field("require_context", &self.require_context)
            .field("clock_skew_s", &self.clock_skew_s)
            .field("max_token_age_s", &self.max_token_age_s)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_token_bytes", &self.max_token_bytes)
            .field("protocol_majors", &self.protocol_majors)
            .field("forward", &self.forward);
        // The rules' names, not their compiled form.
        #[cfg(feature = "policy")]
        if let Some(policy) = &self.policy {
            d.field("policy", &policy.names());
        }
        d.finish()
    }
}

impl Config {
    /// The settings as one line, secrets and credential values redacted as
    /// in `Debug`: what the npm verifier's `toString` shows. Written by
    /// hand rather than through `{:?}`, whose derived formatting machinery
    /// costs the verifier's wasm module some 13 KB.
    pub fn describe(&self, out: &mut String) {
        // Not inlined, nor is `setting`: each is one small copy, not one per use.
        #[inline(never)]
        fn redacted(n: usize, out: &mut String) {
            out.push('[');
            push_u64(n as u64, out);
            out.push_str(" redacted]");
        }
        #[inline(never)]
        fn setting(name: &str, n: u64, out: &mut String) {
            out.push_str(", ");
            out.push_str(name);
            out.push_str(": ");
            push_u64(n, out);
        }
        out.push_str("Config { instance_id: ");
        json::write_str(&self.instance_id, out);
        out.push_str(", secrets: ");
        redacted(self.secrets.len(), out);
        out.push_str(", credential: ");
        match &self.credential {
            Some(c) => {
                out.push_str("{ header: ");
                json::write_str(&c.header, out);
                out.push_str(", values: ");
                redacted(c.values.len(), out);
                out.push_str(" }");
            }
            None => out.push_str("none"),
        }
        out.push_str(", require_context: ");
        out.push_str(if self.require_context {
            "true"
        } else {
            "false"
        });
        setting("clock_skew_s", self.clock_skew_s, out);
        setting("max_token_age_s", self.max_token_age_s, out);
        setting("max_body_bytes", self.max_body_bytes as u64, out);
        setting("max_token_bytes", self.max_token_bytes as u64, out);
        out.push_str(", protocol_majors: [");
        for (i, major) in self.protocol_majors.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            push_u64(*major, out);
        }
        out.push_str("], forward: [");
        for (i, header) in self.forward.removed().iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            json::write_str(header, out);
        }
        out.push_str("] }");
    }
}

// The defaults and bounds of CONTRACT §1: the settings table's.
pub use crate::settings::{
    DEFAULT_CLOCK_SKEW_S, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_TOKEN_AGE_S, DEFAULT_MAX_TOKEN_BYTES,
    MAX_BODY_LIMIT, MAX_CLOCK_SKEW_S, MAX_TOKEN_AGE_LIMIT_S, MAX_TOKEN_LIMIT,
};
pub const MIN_SECRET_BYTES: usize = 32;
pub const MAX_SECRET_BYTES: usize = 512;

/// Why a configuration was refused. Never carries a secret's value.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The configuration text is not a JSON object (or has duplicates).
    Json,
    /// A setting has the wrong type; names the setting.
    Type(&'static str),
    /// A setting this version does not know.
    UnknownSetting(String),
    /// A required setting is absent; names it.
    Missing(&'static str),
    InstanceIdEmpty,
    NoSecrets,
    /// Secret number `index` (0-based) is not 32..=512 bytes.
    SecretLength {
        index: usize,
        len: usize,
    },
    CredentialHeader,
    CredentialNoValues,
    /// A numeric limit is outside its sane range; names it.
    Limit(&'static str),
    NoProtocolMajors,
    /// A setting is outside what it may be; names it.
    Invalid(&'static str),
    /// The `forward` setting is refused (code `config_invalid`).
    Forward(ForwardError),
    /// A text setting holds an unresolved `${NAME}` placeholder (the
    /// settings table's rule); names it.
    Placeholder(&'static str),
    /// The `policy` setting is refused (code `config_invalid`): its shape,
    /// or a rule's expression with the rule's name and the position.
    #[cfg(feature = "policy")]
    Policy(crate::policy::PolicyError),
}

/// A refusal of the settings table's reading as a configuration error
/// (the paths that read a number: the replay capacity, the store timeout).
impl From<SettingError> for ConfigError {
    fn from(e: SettingError) -> ConfigError {
        match e {
            SettingError::Missing(name) => ConfigError::Missing(name),
            SettingError::Type(name) => ConfigError::Type(name),
            SettingError::Limit(name) => ConfigError::Limit(name),
            SettingError::Placeholder(name) => ConfigError::Placeholder(name),
            SettingError::Unknown(name) => ConfigError::UnknownSetting(name),
        }
    }
}

impl ConfigError {
    /// Every [`ConfigError::code`], in the order of the variants: the list
    /// the front ends mirror (the npm package's `ToolctxErrorCode` is checked
    /// against it).
    pub const CODES: [&'static str; 13] = [
        "config_not_json",
        "config_type",
        "config_unknown_setting",
        "config_missing",
        "instance_id_empty",
        "no_secrets",
        "secret_length",
        "credential_header",
        "credential_no_values",
        "limit_out_of_range",
        "no_protocol_majors",
        "config_invalid",
        "config_placeholder",
    ];

    /// A stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            ConfigError::Json => "config_not_json",
            ConfigError::Type(_) => "config_type",
            ConfigError::UnknownSetting(_) => "config_unknown_setting",
            ConfigError::Missing(_) => "config_missing",
            ConfigError::InstanceIdEmpty => "instance_id_empty",
            ConfigError::NoSecrets => "no_secrets",
            ConfigError::SecretLength { .. } => "secret_length",
            ConfigError::CredentialHeader => "credential_header",
            ConfigError::CredentialNoValues => "credential_no_values",
            ConfigError::Limit(_) => "limit_out_of_range",
            ConfigError::NoProtocolMajors => "no_protocol_majors",
            ConfigError::Invalid(_) | ConfigError::Forward(_) => "config_invalid",
            ConfigError::Placeholder(_) => "config_placeholder",
            #[cfg(feature = "policy")]
            ConfigError::Policy(_) => "config_invalid",
        }
    }
}

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ConfigError::Json => {
                f.write_str("configuration is not a JSON object without duplicate members")
            }
            ConfigError::Type(name) => write!(f, "setting `{name}` has the wrong type"),
            ConfigError::UnknownSetting(name) => write!(f, "unknown setting `{name}`"),
            ConfigError::Missing(name) => write!(f, "setting `{name}` is required"),
            ConfigError::InstanceIdEmpty => f.write_str("`instance_id` must not be empty"),
            ConfigError::NoSecrets => f.write_str("at least one secret is required"),
            ConfigError::SecretLength { index, len } => {
                // Integers through `digits`, not `{}`: no integer formatting in the wasm.
                let mut s = String::from("secret #");
                push_u64(*index as u64, &mut s);
                s.push_str(" is ");
                push_u64(*len as u64, &mut s);
                s.push_str(" bytes; secrets must be ");
                push_u64(MIN_SECRET_BYTES as u64, &mut s);
                s.push_str(" to ");
                push_u64(MAX_SECRET_BYTES as u64, &mut s);
                s.push_str(" bytes");
                f.write_str(&s)
            }
            ConfigError::CredentialHeader => {
                f.write_str("credential header name must be a non-empty HTTP token")
            }
            ConfigError::CredentialNoValues => {
                f.write_str("credential needs at least one non-empty accepted value")
            }
            ConfigError::Limit(name) => write!(f, "setting `{name}` is out of range"),
            ConfigError::NoProtocolMajors => f.write_str("`protocol_majors` must not be empty"),
            ConfigError::Invalid(name) => write!(f, "setting `{name}` is invalid"),
            ConfigError::Forward(e) => write!(f, "setting `forward`: {e}"),
            // The table's one message.
            ConfigError::Placeholder(name) => crate::settings::placeholder_message(name, f),
            #[cfg(feature = "policy")]
            ConfigError::Policy(e) => write!(f, "setting `policy`: {e}"),
        }
    }
}

impl core::error::Error for ConfigError {}

/// Whether [`Config::from_json`] refuses settings it does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownSettings {
    Refuse,
    Ignore,
}

fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

impl Config {
    /// The defaults of CONTRACT §1 with the two required settings.
    pub fn new(instance_id: impl Into<String>, secrets: Vec<Vec<u8>>) -> Config {
        Config {
            instance_id: instance_id.into(),
            secrets,
            credential: None,
            require_context: true,
            clock_skew_s: DEFAULT_CLOCK_SKEW_S,
            max_token_age_s: DEFAULT_MAX_TOKEN_AGE_S,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_token_bytes: DEFAULT_MAX_TOKEN_BYTES,
            protocol_majors: alloc::vec![1],
            forward: Forward::new(),
            #[cfg(feature = "policy")]
            policy: None,
        }
    }

    /// Checks every rule of CONTRACT §1.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.instance_id.is_empty() {
            return Err(ConfigError::InstanceIdEmpty);
        }
        if has_placeholder(self.instance_id.as_bytes()) {
            return Err(ConfigError::Placeholder("instance_id"));
        }
        if self.secrets.is_empty() {
            return Err(ConfigError::NoSecrets);
        }
        // Before the lengths: `${TOOLCTX_SECRET}` left as the secret is
        // the variable unset, not a secret of the wrong length.
        if self.secrets.iter().any(|s| has_placeholder(s)) {
            return Err(ConfigError::Placeholder("secrets"));
        }
        for (index, s) in self.secrets.iter().enumerate() {
            if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&s.len()) {
                return Err(ConfigError::SecretLength {
                    index,
                    len: s.len(),
                });
            }
        }
        if let Some(c) = &self.credential {
            c.validate()?;
        }
        if self.clock_skew_s > MAX_CLOCK_SKEW_S {
            return Err(ConfigError::Limit("clock_skew_s"));
        }
        if self.max_token_age_s > MAX_TOKEN_AGE_LIMIT_S {
            return Err(ConfigError::Limit("max_token_age_s"));
        }
        if !(1..=MAX_BODY_LIMIT).contains(&self.max_body_bytes) {
            return Err(ConfigError::Limit("max_body_bytes"));
        }
        if !(1..=MAX_TOKEN_LIMIT).contains(&self.max_token_bytes) {
            return Err(ConfigError::Limit("max_token_bytes"));
        }
        if self.protocol_majors.is_empty() {
            return Err(ConfigError::NoProtocolMajors);
        }
        Ok(())
    }

    /// Reads the JSON form used by conformance vectors and front ends:
    /// `{"instance_id": "...", "secrets": ["..."], "credential": {"header":
    /// "...", "values": ["..."]}, "require_context": true, ...}` with the
    /// setting names of CONTRACT §1. Absent settings take the defaults;
    /// `secrets` may be left out and set afterwards, so that secrets need
    /// not pass through configuration text. The result is not yet
    /// validated: [`crate::Verifier::new`] does that.
    pub fn from_json(text: &[u8], unknown: UnknownSettings) -> Result<Config, ConfigError> {
        let doc = json::parse(text).map_err(|_| ConfigError::Json)?;
        let Value::Object(members) = &doc else {
            return Err(ConfigError::Json);
        };
        Self::from_members(members.iter().map(|(n, v)| (&**n, v)), unknown)
    }

    /// [`Config::from_json`] on settings already parsed, `(name, value)`
    /// in document order: a front end that reads its own settings from the
    /// same document (the gateways) hands the core the rest as they are.
    pub fn from_members<'a, 'v: 'a>(
        members: impl IntoIterator<Item = (&'a str, &'a Value<'v>)>,
        unknown: UnknownSettings,
    ) -> Result<Config, ConfigError> {
        let mut instance_id = None;
        let mut secrets = None;
        let mut config = Config::new(String::new(), Vec::new());
        for (name, value) in members {
            match name {
                "instance_id" => instance_id = Some(string(value, "instance_id")?),
                "secrets" => {
                    secrets = Some(
                        strings(value, "secrets")?
                            .into_iter()
                            .map(String::into_bytes)
                            .collect(),
                    )
                }
                "credential" => config.credential = credential(value)?,
                "require_context" => {
                    config.require_context = match value {
                        Value::Bool(b) => *b,
                        _ => return Err(ConfigError::Type("require_context")),
                    }
                }
                "clock_skew_s" => config.clock_skew_s = integer(value, "clock_skew_s")?,
                "max_token_age_s" => config.max_token_age_s = integer(value, "max_token_age_s")?,
                "max_body_bytes" => config.max_body_bytes = size(value, "max_body_bytes")?,
                "max_token_bytes" => config.max_token_bytes = size(value, "max_token_bytes")?,
                "protocol_majors" => {
                    let Value::Array(items) = value else {
                        return Err(ConfigError::Type("protocol_majors"));
                    };
                    config.protocol_majors = items
                        .iter()
                        .map(|v| integer(v, "protocol_majors"))
                        .collect::<Result<_, _>>()?;
                }
                "forward" => {
                    config.forward = Forward::from_value(value).map_err(ConfigError::Forward)?
                }
                #[cfg(feature = "policy")]
                "policy" => {
                    config.policy = match value {
                        Value::Null => None,
                        v => Some(
                            crate::policy::Policy::from_value(v).map_err(ConfigError::Policy)?,
                        ),
                    }
                }
                other => {
                    if unknown == UnknownSettings::Refuse {
                        return Err(ConfigError::UnknownSetting(other.into()));
                    }
                }
            }
        }
        config.instance_id = instance_id.ok_or(ConfigError::Missing("instance_id"))?;
        // Absent secrets stay empty for the caller to fill from where it
        // keeps them (Envoy: environment variables); `Verifier::new`
        // refuses a configuration that still has none.
        config.secrets = secrets.unwrap_or_default();
        Ok(config)
    }
}

impl Credential {
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if self.header.is_empty() || !self.header.bytes().all(is_token_char) {
            return Err(ConfigError::CredentialHeader);
        }
        if self.values.is_empty() || self.values.iter().any(String::is_empty) {
            return Err(ConfigError::CredentialNoValues);
        }
        Ok(())
    }
}

/// The `credential` setting: `null` or `{"header": "...", "values": [...]}`.
pub(crate) fn credential(value: &Value<'_>) -> Result<Option<Credential>, ConfigError> {
    match value {
        Value::Null => Ok(None),
        Value::Object(_) => Ok(Some(Credential {
            header: string(
                value.get("header").unwrap_or(&Value::Null),
                "credential.header",
            )?,
            values: strings(
                value.get("values").unwrap_or(&Value::Null),
                "credential.values",
            )?,
        })),
        _ => Err(ConfigError::Type("credential")),
    }
}

pub(crate) fn string(v: &Value<'_>, name: &'static str) -> Result<String, ConfigError> {
    v.as_str().map(String::from).ok_or(ConfigError::Type(name))
}

pub(crate) fn strings(v: &Value<'_>, name: &'static str) -> Result<Vec<String>, ConfigError> {
    let Value::Array(items) = v else {
        return Err(ConfigError::Type(name));
    };
    items.iter().map(|i| string(i, name)).collect()
}

pub(crate) fn integer(v: &Value<'_>, name: &'static str) -> Result<u64, ConfigError> {
    v.as_numeric_date().ok_or(ConfigError::Type(name))
}

pub(crate) fn size(v: &Value<'_>, name: &'static str) -> Result<usize, ConfigError> {
    usize::try_from(integer(v, name)?).map_err(|_| ConfigError::Limit(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_lists_every_variant_code_in_order() {
        let every = [
            ConfigError::Json,
            ConfigError::Type("x"),
            ConfigError::UnknownSetting(String::from("x")),
            ConfigError::Missing("x"),
            ConfigError::InstanceIdEmpty,
            ConfigError::NoSecrets,
            ConfigError::SecretLength { index: 0, len: 0 },
            ConfigError::CredentialHeader,
            ConfigError::CredentialNoValues,
            ConfigError::Limit("x"),
            ConfigError::NoProtocolMajors,
            ConfigError::Invalid("x"),
            ConfigError::Forward(crate::ForwardError::EmptyMember),
            ConfigError::Placeholder("x"),
        ];
        // Exhaustive: a new variant stops this compiling until it is added
        // to `every` above and its code to `CODES`.
        for e in &every {
            match e {
                ConfigError::Json
                | ConfigError::Type(_)
                | ConfigError::UnknownSetting(_)
                | ConfigError::Missing(_)
                | ConfigError::InstanceIdEmpty
                | ConfigError::NoSecrets
                | ConfigError::SecretLength { .. }
                | ConfigError::CredentialHeader
                | ConfigError::CredentialNoValues
                | ConfigError::Limit(_)
                | ConfigError::NoProtocolMajors
                | ConfigError::Invalid(_)
                | ConfigError::Forward(_)
                | ConfigError::Placeholder(_) => {}
                // Shares `Invalid`'s code too.
                #[cfg(feature = "policy")]
                ConfigError::Policy(_) => {}
            }
        }
        let mut codes: Vec<&str> = every.iter().map(ConfigError::code).collect();
        // `Forward` shares `Invalid`'s code.
        codes.dedup();
        assert_eq!(codes, ConfigError::CODES);
    }

    #[test]
    fn reads_json_and_redacts_debug() {
        let c = Config::from_json(
            br#"{"instance_id":"i","secrets":["0123456789abcdef0123456789abcdef"],"credential":{"header":"authorization","values":["Bearer x"]},"clock_skew_s":5,"protocol_majors":[1,2]}"#,
            UnknownSettings::Refuse,
        );
        let Ok(c) = c else { unreachable!() };
        assert_eq!(c.clock_skew_s, 5);
        assert_eq!(c.protocol_majors, alloc::vec![1, 2]);
        assert!(c.validate().is_ok());
        let dbg = alloc::format!("{c:?}");
        assert!(
            !dbg.contains("0123456789abcdef") && !dbg.contains("Bearer x"),
            "{dbg}"
        );
        let mut shown = String::new();
        c.describe(&mut shown);
        assert_eq!(
            shown,
            r#"Config { instance_id: "i", secrets: [1 redacted], credential: { header: "authorization", values: [1 redacted] }, require_context: true, clock_skew_s: 5, max_token_age_s: 600, max_body_bytes: 1048576, max_token_bytes: 8192, protocol_majors: [1, 2], forward: [] }"#
        );
    }

    #[test]
    fn refuses_bad_settings() {
        let short = Config::new("i", alloc::vec![b"short".to_vec()]);
        assert_eq!(
            short.validate(),
            Err(ConfigError::SecretLength { index: 0, len: 5 })
        );
        assert_eq!(
            Config::from_json(
                br#"{"instance_id":"i","secrets":[],"x":1}"#,
                UnknownSettings::Refuse
            ),
            Err(ConfigError::UnknownSetting("x".into()))
        );
        assert!(Config::from_json(
            br#"{"instance_id":"i","secrets":[],"x":1}"#,
            UnknownSettings::Ignore
        )
        .is_ok());
        assert_eq!(
            Config::from_json(br#"{"secrets":[]}"#, UnknownSettings::Refuse),
            Err(ConfigError::Missing("instance_id"))
        );
        let no_secrets = Config::from_json(br#"{"instance_id":"i"}"#, UnknownSettings::Refuse);
        assert_eq!(
            no_secrets.map(|c| c.validate()),
            Ok(Err(ConfigError::NoSecrets))
        );
    }
}
