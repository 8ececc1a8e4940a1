#![doc = include_str!("../README.md")]

use std::borrow::Cow;
use std::fmt::Write as _;

#[cfg(feature = "aivax")]
use toolctx_core::aivax::{
    AivaxConfig, AivaxContext, AivaxVerifier, NonceCache, DEFAULT_MAX_BCRYPT_COST,
};
use toolctx_core::json::{self, write_str, Value};
#[cfg(feature = "aivax")]
use toolctx_core::DEFAULT_MAX_BODY_BYTES;
use toolctx_core::{
    Checked, Config, ConfigError, Context, Credential, HeadersVerdict, Refusal, UnknownSettings,
    Verdict, Verifier, TOKEN_HEADER,
};

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

/// A field of a profile's accepted context that can be forwarded as an
/// upstream header.
pub trait ContextField: Copy {
    type Context;
    /// The field's value in `ctx`, as text; `None` when it is absent.
    fn value(self, ctx: &Self::Context) -> Option<String>;
}

/// `(header, value)` for each of `fields` that `ctx` has.
pub fn mapped<'f, F: ContextField>(
    fields: &'f [(F, String)],
    ctx: &F::Context,
) -> Vec<(&'f str, String)> {
    fields
        .iter()
        .filter_map(|(f, name)| Some((name.as_str(), f.value(ctx)?)))
        .collect()
}

impl ContextField for Field {
    type Context = Context;

    fn value(self, ctx: &Context) -> Option<String> {
        let s = |v: &String| Some(v.clone());
        match self {
            Field::TaskId => s(&ctx.task_id),
            Field::ToolCallId => s(&ctx.tool_call_id),
            Field::WorkspaceId => s(&ctx.workspace_id),
            Field::IdempotencyKey => s(&ctx.idempotency_key),
            Field::Protocol => s(&ctx.protocol),
            Field::AgentId => ctx.agent_id.as_ref().and_then(s),
            Field::EndUserId => ctx.end_user_id.as_ref().and_then(s),
            Field::Metadata => ctx.metadata.as_ref().map(|m| m.as_str().to_owned()),
            Field::Tool => ctx.tool.as_ref().and_then(s),
            Field::Jti => ctx.jti.as_ref().and_then(s),
            Field::Iat => Some(ctx.iat.to_string()),
            Field::Exp => Some(ctx.exp.to_string()),
            Field::SecretIndex => Some(ctx.secret_index.to_string()),
            Field::Context => Some(ctx.to_json()),
        }
    }
}

/// A field of an accepted AIVAX call that can be forwarded as a header.
#[cfg(feature = "aivax")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AivaxField {
    NonceVerified,
    ExternalUserId,
    CallSource,
    ConversationToken,
    /// `_aiv_moment` as sent.
    Moment,
    /// The moment in Unix seconds.
    MomentUnix,
    MomentOffsetMinutes,
    /// The flat string metadata as a JSON object.
    Metadata,
    /// The whole typed context as JSON.
    Context,
}

#[cfg(feature = "aivax")]
const AIVAX_FIELDS: [(&str, AivaxField); 9] = [
    ("nonce_verified", AivaxField::NonceVerified),
    ("external_user_id", AivaxField::ExternalUserId),
    ("call_source", AivaxField::CallSource),
    ("conversation_token", AivaxField::ConversationToken),
    ("moment", AivaxField::Moment),
    ("moment_unix", AivaxField::MomentUnix),
    ("moment_offset_minutes", AivaxField::MomentOffsetMinutes),
    ("metadata", AivaxField::Metadata),
    ("context", AivaxField::Context),
];

#[cfg(feature = "aivax")]
impl ContextField for AivaxField {
    type Context = AivaxContext;

    fn value(self, ctx: &AivaxContext) -> Option<String> {
        match self {
            AivaxField::NonceVerified => Some(ctx.nonce_verified.to_string()),
            AivaxField::ExternalUserId => ctx.external_user_id.clone(),
            AivaxField::CallSource => ctx.call_source.clone(),
            AivaxField::ConversationToken => ctx.conversation_token.clone(),
            AivaxField::Moment => ctx.moment.as_ref().map(|m| m.text.clone()),
            AivaxField::MomentUnix => ctx.moment.as_ref().map(|m| m.unix_seconds.to_string()),
            AivaxField::MomentOffsetMinutes => {
                ctx.moment.as_ref().map(|m| m.offset_minutes.to_string())
            }
            AivaxField::Metadata => Some(ctx.metadata_json()),
            AivaxField::Context => Some(ctx.to_json()),
        }
    }
}

/// Which front end reads the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// The proxy-wasm filter: environment variables reach it through
    /// `vm_config.environment_variables.host_env_keys`; its replay guard
    /// lives in Envoy's shared data.
    EnvoyFilter,
    /// The native Envoy module (`crates/envoy-module`): a library inside
    /// the Envoy process, reading Envoy's own environment; its replay guard
    /// is a table in the process, shared by every worker thread.
    EnvoyModule,
    /// The ext_authz service: a process of its own, reading its own
    /// environment; its replay guard is in process or in Redis. Only with
    /// the `service` feature, which keeps its code out of the filter's wasm.
    #[cfg(feature = "service")]
    Service,
}

impl Host {
    /// Where a missing environment variable must be set.
    fn env_hint(self) -> &'static str {
        match self {
            Host::EnvoyFilter => {
                "is set in the VM: list them in vm_config.environment_variables.host_env_keys"
            }
            Host::EnvoyModule => "is set in the environment of the Envoy process",
            #[cfg(feature = "service")]
            Host::Service => "is set in the service's environment",
        }
    }

    /// Why a secret may not be written inline.
    fn inline_hint(self) -> &'static str {
        match self {
            Host::EnvoyFilter | Host::EnvoyModule => "Envoy's /config_dump would show them",
            #[cfg(feature = "service")]
            Host::Service => "configuration files are read by more people than secrets should be",
        }
    }
}

/// The optional replay guard (CONTRACT §3 `token_replayed`). In the filter,
/// token ids kept in Envoy's shared data, which every worker thread of the
/// VM sees; in the service, a table in process or, with [`RedisReplay`],
/// Redis shared by every replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayGuard {
    /// Number of buckets (the filter's shared-data entries), chosen by a
    /// hash of the jti; 0 when the records live in Redis.
    pub slots: u32,
    /// Token ids each bucket holds at most; 0 when the records live in Redis.
    pub ways: u32,
    /// Shared-data key prefix: one space per instance id.
    pub prefix: String,
    /// Service only: the records live in Redis.
    pub redis: Option<RedisReplay>,
}

/// The service's replay guard in Redis: one key per token id, written with
/// `SET key 1 NX PX ms` (what the npm package's `redisReplayStore` does).
#[derive(Clone, PartialEq, Eq)]
pub struct RedisReplay {
    /// The variable the URL came from (it may hold a password).
    pub url_env: String,
    /// `redis://[user:password@]host:port[/db]`, from the environment.
    pub url: String,
    /// Prefixed to every token id (default `toolctx:jti:`, as in npm).
    pub key_prefix: String,
}

impl std::fmt::Debug for RedisReplay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisReplay")
            .field("url_env", &self.url_env)
            .field("key_prefix", &self.key_prefix)
            .finish_non_exhaustive()
    }
}

pub const DEFAULT_REDIS_KEY_PREFIX: &str = "toolctx:jti:";

pub const MAX_REPLAY_SLOTS: u32 = 1 << 20;
pub const DEFAULT_REPLAY_WAYS: u32 = 4;
pub const MAX_REPLAY_WAYS: u32 = 16;

/// Which contract the filter verifies, with its verifier and header map.
#[derive(Debug)]
pub enum Profile {
    /// AgentArea's signed context token (CONTRACT §2).
    AgentArea {
        verifier: Verifier,
        /// Verified fields forwarded upstream, by lower-case header name.
        headers: Vec<(Field, String)>,
        replay: Option<ReplayGuard>,
    },
    /// AIVAX's `_aiv_*` members (CONTRACT §7).
    #[cfg(feature = "aivax")]
    Aivax {
        verifier: AivaxVerifier,
        headers: Vec<(AivaxField, String)>,
        /// Verified nonces each VM remembers (0: no cache).
        nonce_cache: usize,
    },
}

/// Most nonces a VM's cache holds (it is searched linearly, and each entry
/// costs its nonce's 60 bytes).
pub const MAX_NONCE_CACHE: usize = 4096;

/// Everything the filter needs, validated once in `on_configure`.
#[derive(Debug)]
pub struct Settings {
    pub profile: Profile,
    /// Leave `error.data.reason` in refusal bodies (the default).
    pub include_reason: bool,
    /// `params._meta` members of accepted calls forwarded upstream: member
    /// name, lower-case header name.
    pub meta_headers: Vec<(String, String)>,
    /// Every header name in `headers` and `meta_headers`.
    written: Vec<String>,
}

impl Settings {
    /// Every header name this filter writes; each is removed from every
    /// incoming request first, so a caller cannot spoof it.
    /// (Listed once at load time: the filter reads it for every request.)
    pub fn written_headers(&self) -> &[String] {
        &self.written
    }

    fn list_written_headers(&self) -> Vec<String> {
        let mut out: Vec<String> = match &self.profile {
            Profile::AgentArea { headers, .. } => headers.iter().map(|(_, n)| n.clone()).collect(),
            #[cfg(feature = "aivax")]
            Profile::Aivax { headers, .. } => headers.iter().map(|(_, n)| n.clone()).collect(),
        };
        out.extend(self.meta_headers.iter().map(|(_, n)| n.clone()));
        out
    }

    pub fn max_body_bytes(&self) -> usize {
        match &self.profile {
            Profile::AgentArea { verifier, .. } => verifier.max_body_bytes(),
            #[cfg(feature = "aivax")]
            Profile::Aivax { verifier, .. } => verifier.max_body_bytes(),
        }
    }

    /// Steps 0 and 1 of whichever profile is configured.
    pub fn check_headers<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        method: &str,
        headers: &[(N, V)],
    ) -> HeadersVerdict {
        match &self.profile {
            Profile::AgentArea { verifier, .. } => verifier.check_headers(method, headers),
            #[cfg(feature = "aivax")]
            Profile::Aivax { verifier, .. } => verifier.check_headers(method, headers),
        }
    }

    /// The `params._meta` members named in `meta_headers`, read with the
    /// core's JSON reader from the body the core has just accepted:
    /// `(header, value)` for each member present and not `null` (strings as
    /// they are, other values as JSON). `None` when the body is not JSON.
    pub fn meta_values(&self, body: &[u8]) -> Option<Vec<(&str, String)>> {
        if self.meta_headers.is_empty() {
            return Some(Vec::new());
        }
        let doc = json::parse(body).ok()?;
        let meta = doc.get("params").and_then(|p| p.get("_meta"));
        let mut out = Vec::new();
        for (member, header) in &self.meta_headers {
            match meta.and_then(|m| m.get(member)) {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) => out.push((header.as_str(), s.to_string())),
                Some(other) => out.push((header.as_str(), other.to_json())),
            }
        }
        Some(out)
    }

    /// The checks after the headers' on the complete body, for whichever
    /// profile is configured, as what the gateway does next. `stores.first_use`
    /// is the replay guard's store, required when one is configured (the core
    /// calls it only once every other check passed); `stores.nonces` the
    /// AIVAX nonces the gateway remembers, if it keeps them. `Err` when the
    /// gateway cannot decide, the replay store failing among them: refuse
    /// with `internal_error`.
    pub fn check_body<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        checked: Checked,
        headers: &[(N, V)],
        body: &[u8],
        now: u64,
        stores: Stores<'_>,
    ) -> Result<Decision<'_>, String> {
        match &self.profile {
            Profile::AgentArea {
                verifier,
                headers: fields,
                replay,
            } => {
                let verdict = match (replay, stores.first_use) {
                    (None, _) => verifier.check_body(checked, headers, body, now),
                    (Some(_), Some(store)) => {
                        let mut failed = None;
                        let verdict = verifier.check_body_once(
                            checked,
                            headers,
                            body,
                            now,
                            &mut |jti, until| {
                                store(jti, until).unwrap_or_else(|e| {
                                    failed = Some(e);
                                    false
                                })
                            },
                        );
                        if let Some(e) = failed {
                            // The store failed, not the token: no `token_replayed`.
                            return Err(e);
                        }
                        verdict
                    }
                    (Some(_), None) => return Err("the replay guard has no store".into()),
                };
                self.decision(verdict, fields, body)
            }
            #[cfg(feature = "aivax")]
            Profile::Aivax {
                verifier,
                headers: fields,
                ..
            } => {
                let verdict = match stores.nonces {
                    Some(cache) => verifier.check_body_cached(checked, headers, body, cache),
                    None => verifier.check_body(checked, headers, body),
                };
                self.decision(verdict, fields, body)
            }
        }
    }

    fn decision<'s, F: ContextField>(
        &'s self,
        verdict: Verdict<F::Context>,
        fields: &'s [(F, String)],
        body: &[u8],
    ) -> Result<Decision<'s>, String> {
        Ok(match verdict {
            Verdict::Pass => Decision::Pass,
            Verdict::Reject(r) => Decision::Reject(r),
            Verdict::Accept(ctx) => {
                let mut out = mapped(fields, &ctx);
                out.extend(
                    self.meta_values(body)
                        .ok_or("cannot read _meta from the accepted body")?,
                );
                Decision::Accept(out)
            }
        })
    }

    /// One line for the log: what is configured, never a secret.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        match &self.profile {
            Profile::AgentArea {
                verifier,
                headers,
                replay,
            } => {
                let c = verifier.config();
                let _ = write!(
                    out,
                    "profile agentarea for instance {} with {} secret(s), credential {}, max_body_bytes {}, \
                     {} mapped header(s), replay guard {}",
                    c.instance_id,
                    c.secrets.len(),
                    if c.credential.is_some() { "on" } else { "off" },
                    c.max_body_bytes,
                    headers.len(),
                    replay.as_ref().map_or_else(
                        || "off".to_string(),
                        |r| match &r.redis {
                            Some(redis) => format!("redis (url from {})", redis.url_env),
                            None => format!("{} slots x {} ways", r.slots, r.ways),
                        }
                    )
                );
            }
            #[cfg(feature = "aivax")]
            Profile::Aivax {
                verifier,
                headers,
                nonce_cache,
            } => {
                let _ = write!(
                    out,
                    "profile aivax, max_body_bytes {}, {} mapped header(s), nonce cache {}",
                    verifier.max_body_bytes(),
                    headers.len(),
                    if *nonce_cache == 0 {
                        "off".to_string()
                    } else {
                        format!("{nonce_cache} entries")
                    }
                );
            }
        }
        let _ = write!(out, ", {} _meta header(s)", self.meta_headers.len());
        out
    }
}

/// What the gateway does with a request whose body was checked.
#[derive(Debug, PartialEq, Eq)]
pub enum Decision<'s> {
    /// Forward untouched: not a `tools/call` (or one let through without
    /// context, `require_context: false`).
    Pass,
    /// A verified call: forward it with these headers set, `(lower-case
    /// name, value as verified)`; write each value with [`header_value`].
    Accept(Vec<(&'s str, String)>),
    /// Answer with the core's refusal; nothing goes upstream.
    Reject(Refusal),
}

/// The replay guard's shared store: records a token id until a Unix
/// second and answers whether it was unused; `Err` when it cannot answer.
pub type ClaimJti<'a> = &'a mut dyn FnMut(&str, u64) -> Result<bool, String>;

/// The stores a body check may use (see [`Settings::check_body`]).
#[derive(Default)]
pub struct Stores<'a> {
    /// The replay guard's store: required with `replay_guard`.
    pub first_use: Option<ClaimJti<'a>>,
    /// The AIVAX nonces already verified (`nonce_cache`), when kept.
    #[cfg(feature = "aivax")]
    pub nonces: Option<&'a mut NonceCache>,
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

/// What a loader reads from: the host, its environment, and the notes it
/// leaves for the log.
struct Cx<'e> {
    host: Host,
    env: &'e dyn Fn(&str) -> Option<String>,
    notes: Vec<String>,
}

/// Values of the named environment variables; unset or empty ones are left
/// out and noted (an optional previous secret during rotation).
fn from_env(names: &[&str], what: &str, cx: &mut Cx<'_>) -> Result<Vec<(String, String)>, String> {
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

/// A header name the filter may write, lower-cased.
fn header_name(header: &Value<'_>, what: &str) -> Result<String, String> {
    let Some(name) = header.as_str().map(str::to_ascii_lowercase) else {
        return Err(format!("`{what}` must be a header name"));
    };
    if name.is_empty() || !name.bytes().all(is_token_char) {
        return Err(format!("`{what}`: `{name}` is not a valid header name"));
    }
    if RESERVED_HEADERS.contains(&name.as_str()) || name.starts_with("mcp-") {
        return Err(format!("`{what}`: `{name}` is reserved"));
    }
    Ok(name)
}

fn header_map<F: Copy>(
    v: &Value<'_>,
    table: &[(&str, F)],
    profile: &str,
) -> Result<Vec<(F, String)>, String> {
    let Value::Object(members) = v else {
        return Err("`headers` must be an object mapping context fields to header names".into());
    };
    let mut out: Vec<(F, String)> = Vec::new();
    for (field, header) in members {
        let Some(&(_, f)) = table.iter().find(|(n, _)| *n == &**field) else {
            let known: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "`headers`: unknown {profile} context field `{field}` (known: {})",
                known.join(", ")
            ));
        };
        out.push((f, header_name(header, &format!("headers.{field}"))?));
    }
    Ok(out)
}

/// `meta_headers`: `{"<_meta member>": "<header name>", ...}`.
fn meta_header_map(v: &Value<'_>) -> Result<Vec<(String, String)>, String> {
    let Value::Object(members) = v else {
        return Err(
            "`meta_headers` must be an object mapping `_meta` member names to header names".into(),
        );
    };
    members
        .iter()
        .map(|(member, header)| {
            if member.is_empty() {
                return Err("`meta_headers`: a `_meta` member name must not be empty".to_string());
            }
            Ok((
                member.to_string(),
                header_name(header, &format!("meta_headers.{member}"))?,
            ))
        })
        .collect()
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

fn number(value: &Value<'_>, what: &str) -> Result<u64, String> {
    value
        .as_numeric_date()
        .ok_or_else(|| format!("`{what}` must be a non-negative integer"))
}

fn replay_guard(
    value: &Value<'_>,
    instance_id: &str,
    cx: &mut Cx<'_>,
) -> Result<ReplayGuard, String> {
    let Value::Object(m) = value else {
        return Err("`replay_guard` must be an object {\"slots\": N}".into());
    };
    let prefix = format!("toolctx/replay/{instance_id}/");
    #[cfg(feature = "service")]
    if cx.host == Host::Service && value.get("redis_url_env").is_some() {
        return redis_guard(value, m, prefix, cx);
    }
    if let Some((k, _)) = m.iter().find(|(k, _)| *k != "slots" && *k != "ways") {
        if cx.host == Host::EnvoyFilter && k.starts_with("redis") {
            return Err(format!(
                "`replay_guard.{k}`: Redis is for the ext_authz service; the filter keeps its \
                 records in Envoy's shared data (`slots`, `ways`)"
            ));
        }
        if cx.host == Host::EnvoyModule && k.starts_with("redis") {
            return Err(format!(
                "`replay_guard.{k}`: Redis is for the ext_authz service; the module keeps its \
                 records in the Envoy process (`slots`, `ways`)"
            ));
        }
        return Err(format!("unknown setting `replay_guard.{k}`"));
    }
    let slots = number(
        value.get("slots").unwrap_or(&Value::Null),
        "replay_guard.slots",
    )?;
    let ways = match value.get("ways") {
        None => u64::from(DEFAULT_REPLAY_WAYS),
        Some(w) => number(w, "replay_guard.ways")?,
    };
    let slots = u32::try_from(slots)
        .ok()
        .filter(|s| (1..=MAX_REPLAY_SLOTS).contains(s))
        .ok_or_else(|| format!("`replay_guard.slots` must be 1 to {MAX_REPLAY_SLOTS}"))?;
    let ways = u32::try_from(ways)
        .ok()
        .filter(|w| (1..=MAX_REPLAY_WAYS).contains(w))
        .ok_or_else(|| format!("`replay_guard.ways` must be 1 to {MAX_REPLAY_WAYS}"))?;
    Ok(ReplayGuard {
        slots,
        ways,
        prefix,
        redis: None,
    })
}

/// The service's `replay_guard: {"redis_url_env": "VAR", "redis_key_prefix": "..."}`.
#[cfg(feature = "service")]
fn redis_guard(
    value: &Value<'_>,
    members: &[(std::borrow::Cow<'_, str>, Value<'_>)],
    prefix: String,
    cx: &mut Cx<'_>,
) -> Result<ReplayGuard, String> {
    if let Some((k, _)) = members
        .iter()
        .find(|(k, _)| *k != "redis_url_env" && *k != "redis_key_prefix")
    {
        return Err(format!(
            "unknown setting `replay_guard.{k}` (with `redis_url_env` the records live in Redis: \
             no `slots` or `ways`)"
        ));
    }
    let var = value
        .get("redis_url_env")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or("`replay_guard.redis_url_env` must name an environment variable")?;
    let (url_env, url) = from_env(&[var], "replay_guard.redis_url_env", cx)?
        .into_iter()
        .next()
        .ok_or("`replay_guard.redis_url_env` names no variable")?;
    if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
        return Err(format!(
            "the Redis URL in {url_env} must start with redis:// or rediss://"
        ));
    }
    let key_prefix = match value.get("redis_key_prefix") {
        None => DEFAULT_REDIS_KEY_PREFIX.to_string(),
        Some(p) => p
            .as_str()
            .ok_or("`replay_guard.redis_key_prefix` must be a string")?
            .to_string(),
    };
    Ok(ReplayGuard {
        slots: 0,
        ways: 0,
        prefix,
        redis: Some(RedisReplay {
            url_env,
            url,
            key_prefix,
        }),
    })
}

/// Settings every profile reads the same way.
struct Common {
    include_reason: bool,
    meta_headers: Vec<(String, String)>,
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
        include_reason: true,
        meta_headers: Vec::new(),
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
            "include_reason" => common.include_reason = boolean(value, "include_reason")?,
            "meta_headers" => common.meta_headers = meta_header_map(value)?,
            _ => rest.push((&**name, value)),
        }
    }
    let profile = match profile_name {
        #[cfg(feature = "aivax")]
        "aivax" => load_aivax(&rest, &mut cx)?,
        #[cfg(not(feature = "aivax"))]
        "aivax" => {
            return Err(
                "`\"profile\": \"aivax\"` needs the filter built with the `aivax` feature \
                 (toolctx_envoy_aivax.wasm)"
                    .into(),
            )
        }
        _ => load_agentarea(&rest, &mut cx)?,
    };
    let mut settings = Settings {
        profile,
        include_reason: common.include_reason,
        meta_headers: common.meta_headers,
        written: Vec::new(),
    };
    settings.written = settings.list_written_headers();
    let names = settings.written_headers();
    for (i, name) in names.iter().enumerate() {
        if names.iter().skip(i + 1).any(|n| n == name) {
            return Err(format!("`headers`/`meta_headers`: `{name}` is used twice"));
        }
    }
    Ok(Loaded {
        settings,
        notes: cx.notes,
    })
}

fn load_agentarea(members: &[(&str, &Value<'_>)], cx: &mut Cx<'_>) -> Result<Profile, String> {
    let mut headers = Vec::new();
    let mut secrets: Option<Vec<(String, String)>> = None;
    let mut cred = None;
    let mut replay = None;
    // The core's own non-secret settings, as the JSON the core reads.
    let mut core = String::from("{");
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
            "headers" => headers = header_map(value, &FIELDS, "agentarea")?,
            "replay_guard" => replay = Some(value),
            // instance_id, require_context, the limits: the core reads and
            // checks them (and refuses names it does not know).
            other => {
                if core.len() > 1 {
                    core.push(',');
                }
                write_str(other, &mut core);
                core.push(':');
                value.write(&mut core);
            }
        }
    }
    core.push('}');
    let Some(secrets) = secrets else {
        return Err(
            "`secret_env` is required: the environment variables that hold the HMAC secrets".into(),
        );
    };
    let mut config = Config::from_json(core.as_bytes(), UnknownSettings::Refuse)
        .map_err(|e| explain(&e, &[]))?;
    let secret_names: Vec<String> = secrets.iter().map(|(n, _)| n.clone()).collect();
    config.secrets = secrets.into_iter().map(|(_, v)| v.into_bytes()).collect();
    config.credential = cred;
    let replay = replay
        .map(|v| replay_guard(v, &config.instance_id, cx))
        .transpose()?;
    let verifier = Verifier::new(config).map_err(|e| explain(&e, &secret_names))?;
    Ok(Profile::AgentArea {
        verifier,
        headers,
        replay,
    })
}

#[cfg(feature = "aivax")]
fn load_aivax(members: &[(&str, &Value<'_>)], cx: &mut Cx<'_>) -> Result<Profile, String> {
    let mut headers = Vec::new();
    let mut hook_key = None;
    let mut aivax = AivaxConfig::new(Vec::new());
    let mut cred = None;
    let mut max_body_bytes = DEFAULT_MAX_BODY_BYTES;
    let mut nonce_cache = 0;
    for &(name, value) in members {
        match name {
            "nonce_cache" => {
                nonce_cache = usize::try_from(number(value, "nonce_cache")?)
                    .ok()
                    .filter(|n| *n <= MAX_NONCE_CACHE)
                    .ok_or_else(|| {
                        format!("`nonce_cache` must be 0 (off) to {MAX_NONCE_CACHE} entries")
                    })?
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
            "headers" => headers = header_map(value, &AIVAX_FIELDS, "aivax")?,
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
    })?;
    Ok(Profile::Aivax {
        verifier,
        headers,
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

/// The gateways' counter names (the filter's and the module's; the
/// ext_authz service writes the same names in Prometheus form, `_` for
/// `.`): calls passed untouched, accepted, answered 500, and one per
/// refusal reason.
pub mod counters {
    use toolctx_core::Reason;

    pub const PASSED: &str = "toolctx.passed";
    pub const ACCEPTED: &str = "toolctx.accepted";
    pub const ERRORS: &str = "toolctx.errors";

    /// `toolctx.refused.<reason>`.
    pub fn refused(reason: Reason) -> String {
        format!("toolctx.refused.{}", reason.as_str())
    }
}

/// Longest JSON-RPC id or request id written to a log line.
pub const MAX_LOGGED_ID: usize = 64;

/// The log line of a refusal: reason, status, the request id (Envoy's
/// `x-request-id`, `-` when there is none) and the JSON-RPC id; never a
/// token, credential or secret.
pub fn refusal_line(refusal: &Refusal, request_id: Option<&[u8]>) -> String {
    format!(
        "refused {} status={} request_id={} rpc_id={}",
        refusal.reason().as_str(),
        refusal.status(),
        request_id.map_or_else(|| "-".into(), |v| printable(v, MAX_LOGGED_ID)),
        printable(refusal.id_json().as_bytes(), MAX_LOGGED_ID)
    )
}

/// The log line of a call the gateway could not decide (answered 500).
pub fn error_line(why: &str) -> String {
    format!("request refused with 500: {why}")
}

/// Printable, bounded text for a log line (never a token or a secret):
/// the first `max` bytes, anything outside printable ASCII as `?`.
pub fn printable(bytes: &[u8], max: usize) -> String {
    bytes
        .iter()
        .take(max)
        .map(|&b| {
            if (0x20..0x7f).contains(&b) {
                char::from(b)
            } else {
                '?'
            }
        })
        .collect()
}

/// Makes a verified value safe as a header value: bytes `!`..`~` except
/// `%` are kept, every other byte (space, controls, non-ASCII UTF-8, `%`)
/// becomes `%XX`, so `decodeURIComponent` gives back the exact value and a
/// claim can never inject a line break or lose its edge whitespace.
pub fn header_value(value: &str) -> Cow<'_, str> {
    let kept = |b: u8| (0x21..=0x7e).contains(&b) && b != b'%';
    if value.bytes().all(kept) {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len() * 3);
    for b in value.bytes() {
        if kept(b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    Cow::Owned(out)
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
            "HOOK" => Some("hook-key-value".into()),
            "LONG" => Some("k".repeat(73)),
            _ => None,
        }
    }

    fn load_str(s: &str) -> Result<Loaded, String> {
        load(s.as_bytes(), &env)
    }

    fn agentarea(l: &Loaded) -> (&Verifier, &Vec<(Field, String)>, &Option<ReplayGuard>) {
        match &l.settings.profile {
            Profile::AgentArea {
                verifier,
                headers,
                replay,
            } => (verifier, headers, replay),
            #[cfg(feature = "aivax")]
            Profile::Aivax { .. } => panic!("not agentarea"),
        }
    }

    #[test]
    fn loads_secrets_from_env_for_rotation() {
        let l = load_str(
            r#"{"instance_id":"i","secret_env":["S1","S2","UNSET"],"max_body_bytes":100}"#,
        )
        .unwrap();
        assert_eq!(
            agentarea(&l).0.config().secrets,
            vec![S1.as_bytes().to_vec(), S2.as_bytes().to_vec()]
        );
        assert_eq!(l.settings.max_body_bytes(), 100);
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
        let c = agentarea(&l).0.config().credential.clone().unwrap();
        assert_eq!(c.values, vec!["Bearer abc".to_string()]);
        assert!(!l.settings.include_reason);
        assert_eq!(
            *agentarea(&l).1,
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

    #[cfg(feature = "aivax")]
    #[test]
    fn reads_aivax_profile_with_the_key_from_env() {
        let l = load_str(
            r#"{"profile":"aivax","hook_key_env":"HOOK","require_nonce":false,"max_bcrypt_cost":10,
                "credential":{"header":"authorization","values_env":["CRED"]},"max_body_bytes":1000,
                "headers":{"external_user_id":"x-aivax-user","context":"x-aivax-context"},
                "meta_headers":{"sessionId":"X-Session-Id"}}"#,
        )
        .unwrap();
        let Profile::Aivax {
            verifier,
            headers,
            nonce_cache,
        } = &l.settings.profile
        else {
            panic!("not aivax")
        };
        assert_eq!(verifier.max_body_bytes(), 1000);
        assert_eq!(*nonce_cache, 0, "the nonce cache is off by default");
        assert_eq!(
            headers[0],
            (AivaxField::ExternalUserId, "x-aivax-user".into())
        );
        assert_eq!(
            l.settings.written_headers(),
            vec!["x-aivax-user", "x-aivax-context", "x-session-id"]
        );
        let dbg = format!("{:?}", l.settings);
        assert!(
            !dbg.contains("hook-key-value") && !dbg.contains("Bearer abc"),
            "{dbg}"
        );
        let cached =
            load_str(r#"{"profile":"aivax","hook_key_env":"HOOK","nonce_cache":256}"#).unwrap();
        assert!(matches!(
            cached.settings.profile,
            Profile::Aivax {
                nonce_cache: 256,
                ..
            }
        ));
        assert!(cached
            .settings
            .summary()
            .contains("nonce cache 256 entries"));
        assert!(
            load_str(r#"{"instance_id":"i","secret_env":["S1"],"nonce_cache":8}"#)
                .unwrap_err()
                .contains("belongs to")
        );
        for (bad, says) in [
            (r#"{"profile":"aivax","hook_key":"k"}"#, "inline `hook_key`"),
            (r#"{"profile":"aivax"}"#, "hook_key_env"),
            (
                r#"{"profile":"aivax","hook_key_env":"UNSET"}"#,
                "host_env_keys",
            ),
            (
                r#"{"profile":"aivax","hook_key_env":"HOOK","max_bcrypt_cost":32}"#,
                "4 to 31",
            ),
            (r#"{"profile":"aivax","hook_key_env":"LONG"}"#, "72 bytes"),
            (
                r#"{"profile":"aivax","hook_key_env":"HOOK","secret_env":["S1"]}"#,
                "agentarea profile",
            ),
            (
                r#"{"profile":"aivax","hook_key_env":"HOOK","nonce_cache":4097}"#,
                "0 (off) to 4096",
            ),
            (
                r#"{"profile":"aivax","hook_key_env":"HOOK","nonce_cache":-1}"#,
                "non-negative integer",
            ),
            (
                r#"{"profile":"aivax","hook_key_env":"HOOK","x":1}"#,
                "unknown setting `x`",
            ),
            (r#"{"profile":"other"}"#, "`profile`"),
            (
                r#"{"instance_id":"i","secret_env":["S1"],"hook_key_env":"HOOK"}"#,
                "aivax",
            ),
            (
                r#"{"profile":"aivax","hook_key_env":"HOOK","headers":{"task_id":"x-a"}}"#,
                "unknown aivax",
            ),
        ] {
            let e = load_str(bad).unwrap_err();
            assert!(
                e.contains(says) && !e.contains("hook-key-value"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn reads_meta_headers_and_replay_guard() {
        let l = load_str(
            r#"{"instance_id":"i","secret_env":["S1"],"headers":{"task_id":"x-task"},
                "meta_headers":{"sessionId":"X-Session-Id","idempotencyKey":"X-Idempotency-Key"},
                "replay_guard":{"slots":1024}}"#,
        )
        .unwrap();
        assert_eq!(
            l.settings.meta_headers,
            vec![
                ("sessionId".to_string(), "x-session-id".to_string()),
                (
                    "idempotencyKey".to_string(),
                    "x-idempotency-key".to_string()
                )
            ]
        );
        let r = agentarea(&l).2.clone().unwrap();
        assert_eq!(
            (r.slots, r.ways, r.prefix.as_str()),
            (1024, 4, "toolctx/replay/i/")
        );
        for bad in [
            r#""meta_headers":{"sessionId":"x-task"}"#,
            r#""meta_headers":{"sessionId":"content-length"}"#,
            r#""meta_headers":{"":"x-b"}"#,
            r#""meta_headers":[]"#,
            r#""replay_guard":{"slots":0}"#,
            r#""replay_guard":{"slots":1,"ways":17}"#,
            r#""replay_guard":{"slotz":1}"#,
            r#""replay_guard":true"#,
        ] {
            let text = format!(
                r#"{{"instance_id":"i","secret_env":["S1"],"headers":{{"task_id":"x-task"}},{bad}}}"#
            );
            assert!(load_str(&text).is_err(), "{bad}");
        }
    }

    #[test]
    fn meta_values_come_from_the_accepted_body() {
        let config = br#"{"instance_id":"i","secret_env":["S1"],
            "meta_headers":{"sessionId":"x-session-id","idempotencyKey":"x-idempotency-key","n":"x-n","z":"x-z"}}"#;
        let settings = load(config, &env).unwrap().settings;
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t",
            "_meta":{"sessionId":"s-1","n":{"a":[1,2.50]},"z":null}}}"#;
        assert_eq!(
            settings.meta_values(body).unwrap(),
            vec![
                ("x-session-id", "s-1".to_string()),
                ("x-n", r#"{"a":[1,2.50]}"#.to_string())
            ]
        );
        let no_meta = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#;
        assert_eq!(settings.meta_values(no_meta).unwrap(), vec![]);
    }

    #[cfg(feature = "service")]
    #[test]
    fn redis_replay_guard_is_for_the_service_only() {
        let env = |name: &str| match name {
            "REDIS" => Some("redis://:pw-secret@127.0.0.1:6379/0".to_string()),
            "BAD" => Some("http://x".to_string()),
            other => env(other),
        };
        let text =
            br#"{"instance_id":"i","secret_env":["S1"],"replay_guard":{"redis_url_env":"REDIS"}}"#;
        let e = load(text, &env).unwrap_err();
        assert!(e.contains("ext_authz service"), "{e}");
        let l = load_for(Host::Service, text, &env).unwrap();
        let r = agentarea(&l).2.clone().unwrap().redis.unwrap();
        assert_eq!(r.key_prefix, DEFAULT_REDIS_KEY_PREFIX);
        let shown = format!("{:?} {}", l.settings, l.settings.summary());
        assert!(
            !shown.contains("pw-secret") && shown.contains("REDIS"),
            "{shown}"
        );
        for (bad, says) in [
            (r#"{"redis_url_env":"REDIS","slots":4}"#, "no `slots`"),
            (r#"{"redis_url_env":"UNSET"}"#, "service's environment"),
            (r#"{"redis_url_env":"BAD"}"#, "redis://"),
            (
                r#"{"redis_url_env":"REDIS","redis_key_prefix":1}"#,
                "string",
            ),
        ] {
            let text = format!(r#"{{"instance_id":"i","secret_env":["S1"],"replay_guard":{bad}}}"#);
            let e = load_for(Host::Service, text.as_bytes(), &env).unwrap_err();
            assert!(e.contains(says) && !e.contains("pw-secret"), "{bad}: {e}");
        }
        // The in-process table is the same setting as the filter's.
        let text = br#"{"instance_id":"i","secret_env":["S1"],"replay_guard":{"slots":8}}"#;
        let l = load_for(Host::Service, text, &env).unwrap();
        assert_eq!(agentarea(&l).2.clone().unwrap().slots, 8);
        let e = load_for(
            Host::Service,
            br#"{"instance_id":"i","secret_env":["UNSET"]}"#,
            &env,
        )
        .unwrap_err();
        assert!(
            e.contains("service's environment") && !e.contains("host_env_keys"),
            "{e}"
        );
    }

    #[test]
    fn check_body_maps_accepted_calls_and_needs_a_store_for_the_guard() {
        let now = 1_767_225_600;
        let claims = format!(
            r#"{{"iss":"agentarea","aud":"i","iat":{now},"exp":{},"jti":"j-1","protocol":"1","task_id":"t-1","tool_call_id":"c-1","workspace_id":"w","idempotency_key":"t-1:c-1"}}"#,
            now + 300
        );
        let token = toolctx_core::sign_compact(
            br#"{"alg":"HS256","typ":"JWT"}"#,
            claims.as_bytes(),
            S1.as_bytes(),
        );
        let headers = vec![
            ("content-type".to_string(), b"application/json".to_vec()),
            ("x-agentarea-context".to_string(), token.into_bytes()),
        ];
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"agentarea/protocol":"1","agentarea/task_id":"t-1","agentarea/tool_call_id":"c-1","agentarea/workspace_id":"w","agentarea/idempotency_key":"t-1:c-1","sessionId":"s"}}}"#;
        // What the gateway does with the call under `config`, as text (the
        // decision borrows the settings, which live only inside).
        let run = |config: &str, first_use: Option<ClaimJti<'_>>| {
            let s = load_str(config).unwrap().settings;
            let toolctx_core::HeadersVerdict::ReadBody(checked) = s.check_headers("POST", &headers)
            else {
                panic!("headers refused")
            };
            let stores = Stores {
                first_use,
                ..Stores::default()
            };
            s.check_body(checked, &headers, body, now, stores)
                .map(|d| match d {
                    Decision::Reject(r) => format!("reject {}", r.reason().as_str()),
                    other => format!("{other:?}"),
                })
        };
        let plain = r#"{"instance_id":"i","secret_env":["S1"],"headers":{"task_id":"x-task"},"meta_headers":{"sessionId":"x-session-id"}}"#;
        let accepted = Decision::Accept(vec![
            ("x-task", "t-1".to_string()),
            ("x-session-id", "s".to_string()),
        ]);
        assert_eq!(run(plain, None).unwrap(), format!("{accepted:?}"));
        let guarded = r#"{"instance_id":"i","secret_env":["S1"],"replay_guard":{"slots":4}}"#;
        assert!(run(guarded, None).is_err());
        let mut seen = Vec::new();
        let mut once = |jti: &str, until: u64| {
            seen.push((jti.to_string(), until));
            Ok(false)
        };
        assert_eq!(
            run(guarded, Some(&mut once)).unwrap(),
            "reject token_replayed"
        );
        assert_eq!(seen, vec![("j-1".to_string(), now + 300 + 30)]);
        // A store that cannot answer: no verdict (internal_error), never token_replayed.
        let mut down = |_: &str, _: u64| Err("redis: connection refused".to_string());
        assert_eq!(
            run(guarded, Some(&mut down)),
            Err("redis: connection refused".to_string())
        );
    }

    #[test]
    fn header_values_cannot_break_lines() {
        assert_eq!(header_value("task-1:call_2"), "task-1:call_2");
        assert_eq!(header_value(" a\r\nb%ü"), "%20a%0D%0Ab%25%C3%BC");
    }
}
