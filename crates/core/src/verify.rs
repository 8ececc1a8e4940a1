//! The decision: CONTRACT §2, steps 0 to 14, in order.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use hmac::Mac;

use crate::b64;
use crate::config::{Config, ConfigError, Credential};
use crate::json::{self, write_str, JsonError, Value};
use crate::reason::Reason;
use crate::token::{self, push_u64, HmacSha256, ISSUER, META_PREFIX};

/// Header carrying the context token.
pub const TOKEN_HEADER: &str = "x-agentarea-context";
const MCP_METHOD_HEADER: &str = "mcp-method";
const MCP_NAME_HEADER: &str = "mcp-name";
const TOOLS_CALL: &str = "tools/call";

/// The context claims, required ones first (CONTRACT §2 step 11).
const CONTEXT_CLAIMS: [&str; 8] = [
    "protocol",
    "task_id",
    "tool_call_id",
    "workspace_id",
    "idempotency_key",
    "agent_id",
    "end_user_id",
    "metadata",
];
const REQUIRED_CLAIMS: usize = 5;
const MAX_END_USER_ID_CHARS: usize = 256;

/// A refused request: the reason and the JSON-RPC id to answer with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    reason: Reason,
    /// The request id as JSON text; `None` answers with `null`.
    id: Option<String>,
}

impl Refusal {
    pub fn new(reason: Reason, id: Option<String>) -> Refusal {
        Refusal { reason, id }
    }
    pub fn reason(&self) -> Reason {
        self.reason
    }
    pub fn status(&self) -> u16 {
        self.reason.status()
    }
    pub fn code(&self) -> i32 {
        self.reason.code()
    }
    pub fn message(&self) -> &'static str {
        self.reason.message()
    }
    /// The id as JSON text: a string literal, a number, or `null`.
    pub fn id_json(&self) -> &str {
        self.id.as_deref().unwrap_or("null")
    }

    /// The JSON-RPC error response. `include_reason: false` leaves out
    /// `error.data`; status, code and message never change.
    pub fn body(&self, include_reason: bool) -> String {
        let mut out = String::with_capacity(160);
        out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
        out.push_str(self.id_json());
        out.push_str(",\"error\":{\"code\":");
        let code = self.code();
        if code < 0 {
            out.push('-');
        }
        push_u64(u64::from(code.unsigned_abs()), &mut out);
        out.push_str(",\"message\":");
        write_str(self.message(), &mut out);
        if include_reason {
            out.push_str(",\"data\":{\"reason\":\"");
            out.push_str(self.reason.as_str());
            out.push_str("\"}");
        }
        out.push_str("}}");
        out
    }
}

/// What a verified `tools/call` may rely on.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    pub task_id: String,
    pub tool_call_id: String,
    pub workspace_id: String,
    pub idempotency_key: String,
    pub protocol: String,
    pub agent_id: Option<String>,
    pub end_user_id: Option<String>,
    pub metadata: Option<Value<'static>>,
    pub tool: Option<String>,
    pub jti: Option<String>,
    pub iat: u64,
    pub exp: u64,
    /// Index of the configured secret that signed the token (never the secret).
    pub secret_index: usize,
    /// The request's JSON-RPC `id` as JSON text (a string literal or a
    /// number as written); `None` when absent or of another type. Not
    /// vouched for by the token: for answering and logging.
    pub request_id: Option<String>,
}

impl Context {
    /// The context as a JSON object with the field names above.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(256);
        out.push('{');
        let fields = [
            ("task_id", Some(&self.task_id)),
            ("tool_call_id", Some(&self.tool_call_id)),
            ("workspace_id", Some(&self.workspace_id)),
            ("idempotency_key", Some(&self.idempotency_key)),
            ("protocol", Some(&self.protocol)),
            ("agent_id", self.agent_id.as_ref()),
            ("end_user_id", self.end_user_id.as_ref()),
            ("tool", self.tool.as_ref()),
            ("jti", self.jti.as_ref()),
        ];
        for (name, value) in fields {
            if let Some(v) = value {
                if out.len() > 1 {
                    out.push(',');
                }
                write_str(name, &mut out);
                out.push(':');
                write_str(v, &mut out);
            }
        }
        if let Some(m) = &self.metadata {
            out.push_str(",\"metadata\":");
            m.write(&mut out);
        }
        out.push_str(",\"iat\":");
        push_u64(self.iat, &mut out);
        out.push_str(",\"exp\":");
        push_u64(self.exp, &mut out);
        out.push_str(",\"secret_index\":");
        push_u64(self.secret_index as u64, &mut out);
        if let Some(id) = &self.request_id {
            out.push_str(",\"request_id\":");
            out.push_str(id);
        }
        out.push('}');
        out
    }
}

/// The verdict on a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Not this contract's business: forward untouched.
    Pass,
    /// A verified `tools/call`.
    Accept(Box<Context>),
    /// Refuse with this error; nothing downstream runs.
    Reject(Refusal),
}

/// The verdict on headers alone (step 0 and step 1), before the body is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadersVerdict {
    /// Not a `POST`: forward untouched without reading the body.
    Pass,
    /// Read the body (up to [`Verifier::max_body_bytes`]) and call [`Verifier::check`].
    ReadBody,
    Reject(Refusal),
}

/// A validated configuration with the HMAC key state precomputed.
#[derive(Clone)]
pub struct Verifier {
    config: Config,
    macs: Vec<HmacSha256>,
}

impl core::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Verifier")
            .field("config", &self.config)
            .finish()
    }
}

enum Lookup<'h> {
    Missing,
    Once(&'h [u8]),
    Many,
}

fn header<'h, N: AsRef<[u8]>, V: AsRef<[u8]>>(headers: &'h [(N, V)], name: &str) -> Lookup<'h> {
    let mut found = Lookup::Missing;
    for (n, v) in headers {
        if n.as_ref().eq_ignore_ascii_case(name.as_bytes()) {
            found = match found {
                Lookup::Missing => Lookup::Once(v.as_ref()),
                _ => return Lookup::Many,
            };
        }
    }
    found
}

/// Constant-time equality; the running time depends only on `expected`'s length.
pub(crate) fn ct_eq(expected: &[u8], given: &[u8]) -> bool {
    let mut diff = u8::from(expected.len() != given.len());
    for (i, e) in expected.iter().enumerate() {
        diff |= e ^ given.get(i).copied().unwrap_or(0);
    }
    core::hint::black_box(diff) == 0
}

fn json_refusal(e: JsonError) -> Reason {
    match e {
        JsonError::Syntax => Reason::ParseError,
        JsonError::Duplicate => Reason::DuplicateMember,
        JsonError::TooDeep => Reason::TooDeep,
    }
}

/// `"<major>"` or `"<major>.<minor>"` in ASCII digits.
fn protocol_major(p: &str) -> Option<&str> {
    let (major, minor) = match p.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (p, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(major) && minor.is_none_or(digits)).then_some(major)
}

/// Whether `value` has the type and format of context claim `name`.
/// Names that are not context claims have no rule here.
fn context_value_ok(name: &str, value: &Value<'_>) -> bool {
    match (name, value) {
        ("protocol", Value::String(s)) => protocol_major(s).is_some(),
        ("end_user_id", Value::String(s)) => {
            (1..=MAX_END_USER_ID_CHARS).contains(&s.chars().count())
        }
        (
            "task_id" | "tool_call_id" | "workspace_id" | "idempotency_key" | "agent_id",
            Value::String(_),
        ) => true,
        ("metadata", Value::Object(_)) => true,
        _ => !CONTEXT_CLAIMS.contains(&name),
    }
}

fn get_str<'v>(obj: &'v Value<'_>, name: &str) -> Option<&'v str> {
    obj.get(name).and_then(Value::as_str)
}

fn owned(obj: &Value<'_>, name: &str) -> Option<String> {
    get_str(obj, name).map(String::from)
}

impl Verifier {
    /// Validates `config` (CONTRACT §1) and precomputes one HMAC key state
    /// per secret.
    pub fn new(config: Config) -> Result<Verifier, ConfigError> {
        config.validate()?;
        let macs = config
            .secrets
            .iter()
            .enumerate()
            .map(|(index, s)| {
                HmacSha256::new_from_slice(s).map_err(|_| ConfigError::SecretLength {
                    index,
                    len: s.len(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Verifier { config, macs })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The body limit a front end should buffer up to; one more byte is
    /// enough to know the body is too large.
    pub fn max_body_bytes(&self) -> usize {
        self.config.max_body_bytes
    }

    /// Steps 0 and 1, for front ends that decide before reading the body.
    pub fn check_headers<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        method: &str,
        headers: &[(N, V)],
    ) -> HeadersVerdict {
        self.envelope().headers(method, headers)
    }

    fn envelope(&self) -> Envelope<'_> {
        Envelope::new(self.config.credential.as_ref(), self.config.max_body_bytes)
    }

    /// The whole decision on one request. `now` is Unix seconds.
    pub fn check<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        method: &str,
        headers: &[(N, V)],
        body: &[u8],
        now: u64,
    ) -> Verdict {
        self.decide(method, headers, body, now, None)
    }

    /// [`Verifier::check`] with the replay guard: after step 14, the token's
    /// `jti` must be new. `first_use(jti, until)` records it as used until
    /// `until` (Unix seconds; the token is refused as expired from then on)
    /// and says whether it was unused. A token without `jti` cannot be
    /// guarded and is refused as `claim_invalid`; a used one as
    /// `token_replayed`. [`ReplayCache`] is a ready store for one process.
    pub fn check_once<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        method: &str,
        headers: &[(N, V)],
        body: &[u8],
        now: u64,
        first_use: FirstUse<'_>,
    ) -> Verdict {
        self.decide(method, headers, body, now, Some(first_use))
    }

    fn decide<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        method: &str,
        headers: &[(N, V)],
        body: &[u8],
        now: u64,
        first_use: Option<FirstUse<'_>>,
    ) -> Verdict {
        let rest = |call: Call<'_, '_>| {
            let context = self.check_call(call, headers, now)?;
            if let (Some(ctx), Some(first_use)) = (&context, first_use) {
                let jti = ctx.jti.as_deref().ok_or(Reason::ClaimInvalid)?;
                if !first_use(jti, ctx.exp.saturating_add(self.config.clock_skew_s)) {
                    return Err(Reason::TokenReplayed);
                }
            }
            Ok(context)
        };
        match self.envelope().run(method, headers, body, rest) {
            Outcome::Pass => Verdict::Pass,
            Outcome::Accept(mut context, request_id) => {
                context.request_id = request_id;
                Verdict::Accept(Box::new(context))
            }
            Outcome::Reject(r) => Verdict::Reject(r),
        }
    }

    /// Steps 8 to 14, after the envelope; `Ok(None)` is a call without
    /// context that the configuration lets pass.
    fn check_call<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        call: Call<'_, '_>,
        headers: &[(N, V)],
        now: u64,
    ) -> Result<Option<Context>, Reason> {
        let Call { name, meta } = call;
        let has_context_keys = || meta.iter().any(|(k, _)| k.starts_with(META_PREFIX));

        // Step 8.
        let token = match header(headers, TOKEN_HEADER) {
            Lookup::Once(t) => t,
            Lookup::Many => return Err(Reason::TokenDuplicated),
            Lookup::Missing if !self.config.require_context && !has_context_keys() => {
                return Ok(None)
            }
            Lookup::Missing => return Err(Reason::TokenMissing),
        };

        // Step 9.
        if token.len() > self.config.max_token_bytes {
            return Err(Reason::TokenTooLarge);
        }
        let segments = token::split(token).ok_or(Reason::TokenMalformed)?;
        let jose = token_object(&segments.header)?;
        let claims = token_object(&segments.payload)?;
        if get_str(&jose, "alg") != Some("HS256") {
            return Err(Reason::AlgNotAllowed);
        }
        if jose.get("typ").is_some_and(|t| t.as_str() != Some("JWT")) {
            return Err(Reason::TokenMalformed);
        }
        if jose.get("crit").is_some() || jose.get("b64").is_some() {
            return Err(Reason::CritNotSupported);
        }
        let secret_index = self
            .signer(segments.signed, &segments.signature)
            .ok_or(Reason::SignatureInvalid)?;

        // Step 10.
        let (iat, exp) = self.check_times(&claims, now)?;

        // Step 11: the token first, then the values in `_meta`.
        for (i, name) in CONTEXT_CLAIMS.iter().enumerate() {
            match claims.get(name) {
                None if i < REQUIRED_CLAIMS => return Err(Reason::ContextMalformed),
                Some(v) if !context_value_ok(name, v) => return Err(Reason::ContextMalformed),
                _ => {}
            }
        }
        let s = |name| get_str(&claims, name).unwrap_or_default();
        let (task_id, tool_call_id, key) = (s("task_id"), s("tool_call_id"), s("idempotency_key"));
        let composed = key.len() == task_id.len() + 1 + tool_call_id.len()
            && key.strip_prefix(task_id).and_then(|k| k.strip_prefix(':')) == Some(tool_call_id);
        if !composed {
            return Err(Reason::ContextMalformed);
        }
        for (k, v) in meta {
            if let Some(name) = k.strip_prefix(META_PREFIX) {
                if !context_value_ok(name, v) {
                    return Err(Reason::ContextMalformed);
                }
            }
        }

        // Step 12.
        let tool = match claims.get("tool") {
            None => None,
            Some(Value::String(t)) if t == name => Some(String::from(&**t)),
            Some(_) => return Err(Reason::ToolMismatch),
        };

        // Step 13.
        let protocol = s("protocol");
        if !self.major_supported(protocol_major(protocol).unwrap_or_default()) {
            return Err(Reason::ProtocolUnsupported);
        }

        // Step 14: `_meta` keys in document order, then the token's claims.
        for (k, v) in meta {
            if let Some(name) = k.strip_prefix(META_PREFIX) {
                match claims.get(name) {
                    None => return Err(Reason::ClaimMissing),
                    Some(c) if c != v => return Err(Reason::MetaMismatch),
                    Some(_) => {}
                }
            }
        }
        for name in CONTEXT_CLAIMS {
            if claims.get(name).is_some()
                && !meta
                    .iter()
                    .any(|(k, _)| k.strip_prefix(META_PREFIX) == Some(name))
            {
                return Err(Reason::MetaMissing);
            }
        }

        Ok(Some(Context {
            task_id: String::from(task_id),
            tool_call_id: String::from(tool_call_id),
            workspace_id: String::from(s("workspace_id")),
            idempotency_key: String::from(key),
            protocol: String::from(protocol),
            agent_id: owned(&claims, "agent_id"),
            end_user_id: owned(&claims, "end_user_id"),
            metadata: claims.get("metadata").map(Value::to_owned_value),
            tool,
            jti: owned(&claims, "jti"),
            iat,
            exp,
            secret_index,
            request_id: None,
        }))
    }

    /// Index of the first configured secret whose MAC matches. Every secret
    /// is tried, so the time taken does not say which one matched.
    fn signer(&self, signed: &[u8], signature: &[u8]) -> Option<usize> {
        let mut found = None;
        for (i, mac) in self.macs.iter().enumerate() {
            let mut m = mac.clone();
            m.update(signed);
            if m.verify_slice(signature).is_ok() && found.is_none() {
                found = Some(i);
            }
        }
        found
    }

    /// Step 10, in the contract's order; returns `(iat, exp)`.
    fn check_times(&self, claims: &Value<'_>, now: u64) -> Result<(u64, u64), Reason> {
        if get_str(claims, "iss") != Some(ISSUER) {
            return Err(Reason::IssuerInvalid);
        }
        let id = self.config.instance_id.as_str();
        let audience_ok = match claims.get("aud") {
            Some(Value::String(a)) => a == id,
            Some(Value::Array(items)) => {
                items.iter().all(|i| matches!(i, Value::String(_)))
                    && items.iter().any(|i| i.as_str() == Some(id))
            }
            _ => false,
        };
        if !audience_ok {
            return Err(Reason::AudienceInvalid);
        }
        let date = |name| claims.get(name).and_then(Value::as_numeric_date);
        let (Some(iat), Some(exp)) = (date("iat"), date("exp")) else {
            return Err(Reason::ClaimInvalid);
        };
        let skew = self.config.clock_skew_s;
        if now >= exp.saturating_add(skew) {
            return Err(Reason::TokenExpired);
        }
        if iat > now.saturating_add(skew) {
            return Err(Reason::TokenIssuedInFuture);
        }
        if now.saturating_sub(iat) > self.config.max_token_age_s.saturating_add(skew) {
            return Err(Reason::TokenTooOld);
        }
        if let Some(nbf) = claims.get("nbf") {
            let nbf = nbf.as_numeric_date().ok_or(Reason::ClaimInvalid)?;
            if nbf > now.saturating_add(skew) {
                return Err(Reason::TokenNotYetValid);
            }
        }
        if claims.get("jti").is_some_and(|j| j.as_str().is_none()) {
            return Err(Reason::ClaimInvalid);
        }
        Ok((iat, exp))
    }

    /// Whether a protocol major (ASCII digits, leading zeros allowed) is
    /// configured; any length of digits compares by value.
    fn major_supported(&self, major: &str) -> bool {
        let trimmed = major.trim_start_matches('0');
        let mut value: u64 = 0;
        for b in trimmed.bytes() {
            match value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(b.wrapping_sub(b'0'))))
            {
                Some(v) => value = v,
                None => return false,
            }
        }
        !major.is_empty() && self.config.protocol_majors.contains(&value)
    }
}

/// The replay guard's store: records a token id as used until a Unix
/// second and says whether it was unused.
pub type FirstUse<'a> = &'a mut dyn FnMut(&str, u64) -> bool;

/// Token ids seen within their lifetime, for one process: bounded, and
/// forgetting each id once its token could no longer be accepted anyway.
#[derive(Debug, Clone)]
pub struct ReplayCache {
    /// jti -> Unix second from which the token is expired.
    until: alloc::collections::BTreeMap<String, u64>,
    capacity: usize,
}

impl ReplayCache {
    /// A cache for at most `capacity` live token ids (size it for the call
    /// rate times the token lifetime: 1000 calls/s x 330 s is 330,000).
    pub fn new(capacity: usize) -> ReplayCache {
        ReplayCache {
            until: alloc::collections::BTreeMap::new(),
            capacity,
        }
    }

    /// Records `jti` until `until`; whether it was unused. When the cache
    /// is full of live ids it answers `false`: refusing is the safe side.
    pub fn first_use(&mut self, jti: &str, until: u64, now: u64) -> bool {
        if let Some(&t) = self.until.get(jti) {
            if t > now {
                return false;
            }
        }
        if self.until.len() >= self.capacity {
            self.until.retain(|_, t| *t > now);
            if self.until.len() >= self.capacity {
                return false;
            }
        }
        self.until.insert(String::from(jti), until);
        true
    }

    pub fn len(&self) -> usize {
        self.until.len()
    }

    pub fn is_empty(&self) -> bool {
        self.until.is_empty()
    }
}

/// Steps 0 and 1: `Pass` for anything but `POST`, then the static credential.
fn check_credential<N: AsRef<[u8]>, V: AsRef<[u8]>>(
    credential: Option<&Credential>,
    method: &str,
    headers: &[(N, V)],
) -> HeadersVerdict {
    if method != "POST" {
        return HeadersVerdict::Pass;
    }
    let Some(cred) = credential else {
        return HeadersVerdict::ReadBody;
    };
    let reason = match header(headers, &cred.header) {
        Lookup::Missing => Reason::CredentialMissing,
        Lookup::Many => Reason::CredentialInvalid,
        Lookup::Once(given) => {
            // Every accepted value is compared, matched or not.
            let ok = cred
                .values
                .iter()
                .fold(false, |ok, v| ct_eq(v.as_bytes(), given) | ok);
            if ok {
                return HeadersVerdict::ReadBody;
            }
            Reason::CredentialInvalid
        }
    };
    HeadersVerdict::Reject(Refusal::new(reason, None))
}

/// A single `tools/call` that passed steps 0 to 7.
pub(crate) struct Call<'v, 'b> {
    /// `params.name`.
    pub name: &'v str,
    /// The members of `params._meta` (empty when absent), in document order.
    pub meta: &'v [(Cow<'b, str>, Value<'b>)],
}

/// A decision of any profile.
pub(crate) enum Outcome<T> {
    Pass,
    /// The accepted context and the request's id as JSON text.
    Accept(T, Option<String>),
    Reject(Refusal),
}

/// Steps 0 to 7, the part of the contract every profile shares.
pub(crate) struct Envelope<'c> {
    credential: Option<&'c Credential>,
    max_body_bytes: usize,
}

impl<'c> Envelope<'c> {
    pub fn new(credential: Option<&'c Credential>, max_body_bytes: usize) -> Envelope<'c> {
        Envelope {
            credential,
            max_body_bytes,
        }
    }

    /// Steps 0 and 1.
    pub fn headers<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        method: &str,
        headers: &[(N, V)],
    ) -> HeadersVerdict {
        check_credential(self.credential, method, headers)
    }

    /// Runs steps 0 to 7, then `rest` on the call; a refusal from `rest`
    /// carries the request's id.
    pub fn run<N: AsRef<[u8]>, V: AsRef<[u8]>, T>(
        &self,
        method: &str,
        headers: &[(N, V)],
        body: &[u8],
        rest: impl FnOnce(Call<'_, '_>) -> Result<Option<T>, Reason>,
    ) -> Outcome<T> {
        match self.headers(method, headers) {
            HeadersVerdict::Pass => return Outcome::Pass,
            HeadersVerdict::Reject(r) => return Outcome::Reject(r),
            HeadersVerdict::ReadBody => {}
        }
        let early = |reason| Outcome::Reject(Refusal::new(reason, None));
        // Step 2.
        if body.len() > self.max_body_bytes {
            return early(Reason::BodyTooLarge);
        }
        // Step 3.
        let doc = match json::parse_request(body) {
            Ok(doc) => doc,
            Err(e) => return early(json_refusal(e)),
        };
        // Steps 4 and 5.
        let request = match &doc {
            Value::Array(items) => {
                let has_call = items
                    .iter()
                    .any(|i| get_str(i, "method") == Some(TOOLS_CALL));
                return if has_call {
                    early(Reason::BatchWithToolsCall)
                } else {
                    Outcome::Pass
                };
            }
            Value::Object(_) if get_str(&doc, "method") == Some(TOOLS_CALL) => &doc,
            _ => return Outcome::Pass,
        };
        let id = match request.get("id") {
            Some(Value::String(s)) => {
                let mut text = String::with_capacity(s.len() + 2);
                write_str(s, &mut text);
                Some(text)
            }
            Some(Value::Number(n)) => Some(String::from(&**n)),
            _ => None,
        };
        match call_shape(request, headers).and_then(rest) {
            Ok(Some(accepted)) => Outcome::Accept(accepted, id),
            Ok(None) => Outcome::Pass,
            Err(reason) => Outcome::Reject(Refusal::new(reason, id)),
        }
    }
}

/// Steps 6 and 7 on a `tools/call` request object.
fn call_shape<'v, 'b, N: AsRef<[u8]>, V: AsRef<[u8]>>(
    request: &'v Value<'b>,
    headers: &[(N, V)],
) -> Result<Call<'v, 'b>, Reason> {
    // Step 6.
    let params = request
        .get("params")
        .filter(|p| p.is_object())
        .ok_or(Reason::InvalidParams)?;
    let name = get_str(params, "name").ok_or(Reason::InvalidParams)?;
    let meta: &[(Cow<'b, str>, Value<'b>)] = match params.get("_meta") {
        None => &[],
        Some(Value::Object(members)) => members,
        Some(_) => return Err(Reason::InvalidParams),
    };
    // Step 7.
    match header(headers, MCP_METHOD_HEADER) {
        Lookup::Missing => {}
        Lookup::Once(v) if v == TOOLS_CALL.as_bytes() => {}
        _ => return Err(Reason::HeaderMismatch),
    }
    match header(headers, MCP_NAME_HEADER) {
        Lookup::Missing => {}
        Lookup::Once(v) if mcp_name_matches(v, name) => {}
        _ => return Err(Reason::HeaderMismatch),
    }
    Ok(Call { name, meta })
}

/// A token's header or payload: a JSON object, read by the body's reader.
fn token_object(bytes: &[u8]) -> Result<Value<'_>, Reason> {
    json::parse(bytes)
        .ok()
        .filter(Value::is_object)
        .ok_or(Reason::TokenMalformed)
}

/// `Mcp-Name` against `params.name`, decoding the `=?base64?…?=` form.
fn mcp_name_matches(header: &[u8], name: &str) -> bool {
    let encoded = header
        .strip_prefix(b"=?base64?")
        .and_then(|rest| rest.strip_suffix(b"?="));
    match encoded {
        Some(encoded) => b64::STD
            .decode_padded(encoded)
            .is_some_and(|bytes| bytes == name.as_bytes()),
        None => header == name.as_bytes(),
    }
}
