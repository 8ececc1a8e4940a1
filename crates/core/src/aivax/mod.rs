//! The AIVAX profile (CONTRACT §7): `_aiv_*` members of `params._meta`.
//!
//! `_aiv_nonce` is a bcrypt hash of the account's hook key. It is verified
//! by hashing the configured plain-text hook key with the nonce's own salt
//! and cost and comparing in constant time, never by comparing strings. The
//! cost is read from the nonce, which the caller chooses, so a cost above
//! the configured cap (12 by default) is refused before any hashing.

use alloc::string::String;
use alloc::vec::Vec;

use crate::b64;
use crate::config::{
    self, ConfigError, Credential, UnknownSettings, DEFAULT_MAX_BODY_BYTES, MAX_BODY_LIMIT,
};
use crate::envelope::{ct_eq, next_verifier_id, Envelope};
use crate::forward::{canonical_text, Field, Forward, Upstream};
use crate::json::{self, Item, Kind, Members, Value};
use crate::reason::Reason;
use crate::verdict::{Checked, HeadersVerdict, Verdict};

/// Highest bcrypt cost accepted unless configured otherwise.
pub const DEFAULT_MAX_BCRYPT_COST: u32 = 12;
const MIN_BCRYPT_COST: u32 = 4;
const MAX_BCRYPT_COST: u32 = 31;
const NONCE: &str = "_aiv_nonce";
const RESERVED_PREFIX: &str = "_aiv";

/// Settings of the AIVAX profile.
#[derive(Clone, PartialEq, Eq)]
pub struct AivaxConfig {
    /// The account hook key in plain text (1..=72 bytes, no NUL).
    pub hook_key: Vec<u8>,
    /// Refuse a call whose `_aiv_nonce` is missing or `null`.
    pub require_nonce: bool,
    /// Highest bcrypt cost worked on (4..=31).
    pub max_bcrypt_cost: u32,
}

impl core::fmt::Debug for AivaxConfig {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AivaxConfig")
            .field("hook_key", &"[redacted]")
            .field("require_nonce", &self.require_nonce)
            .field("max_bcrypt_cost", &self.max_bcrypt_cost)
            .finish()
    }
}

impl AivaxConfig {
    pub fn new(hook_key: Vec<u8>) -> AivaxConfig {
        AivaxConfig {
            hook_key,
            require_nonce: true,
            max_bcrypt_cost: DEFAULT_MAX_BCRYPT_COST,
        }
    }

    /// Whether the settings are usable.
    pub fn validate(&self) -> Result<(), ConfigError> {
        // bcrypt reads at most 72 bytes and stops at NUL: a longer key or
        // one with NUL would be silently shortened.
        if self.hook_key.is_empty() || self.hook_key.len() > 72 || self.hook_key.contains(&0) {
            return Err(ConfigError::Invalid("hook_key"));
        }
        if !(MIN_BCRYPT_COST..=MAX_BCRYPT_COST).contains(&self.max_bcrypt_cost) {
            return Err(ConfigError::Limit("max_bcrypt_cost"));
        }
        Ok(())
    }
}

/// `_aiv_moment`: an ISO 8601 timestamp with its UTC offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moment {
    /// As sent.
    pub text: String,
    /// The instant, in Unix seconds (fraction dropped).
    pub unix_seconds: i64,
    /// The sender's offset from UTC, in minutes.
    pub offset_minutes: i32,
}

/// A field of an accepted AIVAX call that can be forwarded as a header.
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
    /// The flat string metadata as a JSON object (canonical JSON).
    Metadata,
    /// The whole typed context, as [`AivaxContext::to_json`] writes it.
    Context,
}

/// Every [`AivaxField`] by the name configurations use.
pub const AIVAX_FIELDS: [(&str, AivaxField); 9] = [
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

impl Field for AivaxField {
    type Context = AivaxContext;
    const TABLE: &'static [(&'static str, Self)] = &AIVAX_FIELDS;

    fn write(self, ctx: &AivaxContext, out: &mut String) -> bool {
        use core::fmt::Write as _;
        let text = |v: Option<&str>, out: &mut String| v.map(|v| out.push_str(v)).is_some();
        match self {
            AivaxField::NonceVerified => {
                out.push_str(if ctx.nonce_verified { "true" } else { "false" });
                true
            }
            AivaxField::ExternalUserId => text(ctx.external_user_id.as_deref(), out),
            AivaxField::CallSource => text(ctx.call_source.as_deref(), out),
            AivaxField::ConversationToken => text(ctx.conversation_token.as_deref(), out),
            AivaxField::Moment => text(ctx.moment.as_ref().map(|m| m.text.as_str()), out),
            AivaxField::MomentUnix => ctx
                .moment
                .as_ref()
                .map(|m| write!(out, "{}", m.unix_seconds))
                .is_some(),
            AivaxField::MomentOffsetMinutes => ctx
                .moment
                .as_ref()
                .map(|m| write!(out, "{}", m.offset_minutes))
                .is_some(),
            AivaxField::Metadata => canonical_text(&ctx.metadata_json(), out),
            AivaxField::Context => {
                out.push_str(&ctx.to_json());
                true
            }
        }
    }
}

/// What an AIVAX call carries, parsed and typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AivaxContext {
    /// Whether `_aiv_nonce` was present and verified against the hook key.
    pub nonce_verified: bool,
    pub external_user_id: Option<String>,
    /// Kept as sent: consumers tolerate future values.
    pub call_source: Option<String>,
    pub conversation_token: Option<String>,
    pub moment: Option<Moment>,
    /// The application's flat string metadata (every other string member
    /// of `_meta`), in document order.
    pub metadata: Vec<(String, String)>,
    /// The request's JSON-RPC `id` as JSON text (see `Context::request_id`).
    pub request_id: Option<String>,
    /// The headers to add upstream (see [`AivaxVerifier::upstream`]).
    pub upstream: Vec<(String, String)>,
}

impl AivaxContext {
    /// The flat metadata as a JSON object, members in document order.
    pub fn metadata_json(&self) -> String {
        let mut out = String::new();
        self.write_metadata(&mut out);
        out
    }

    fn write_metadata(&self, out: &mut String) {
        use crate::json::write_str;
        out.push('{');
        for (i, (k, v)) in self.metadata.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_str(k, out);
            out.push(':');
            write_str(v, out);
        }
        out.push('}');
    }

    /// The context as a JSON object.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    /// [`AivaxContext::to_json`] appended to `out`.
    pub fn write_json(&self, out: &mut String) {
        use crate::json::write_str;
        out.push_str("{\"nonce_verified\":");
        out.push_str(if self.nonce_verified { "true" } else { "false" });
        for (name, value) in [
            ("external_user_id", &self.external_user_id),
            ("call_source", &self.call_source),
            ("conversation_token", &self.conversation_token),
        ] {
            if let Some(v) = value {
                out.push_str(",\"");
                out.push_str(name);
                out.push_str("\":");
                write_str(v, out);
            }
        }
        if let Some(m) = &self.moment {
            out.push_str(",\"moment\":");
            write_str(&m.text, out);
            out.push_str(",\"moment_unix\":");
            out.push_str(itoa(m.unix_seconds).as_str());
            out.push_str(",\"moment_offset_minutes\":");
            out.push_str(itoa(i64::from(m.offset_minutes)).as_str());
        }
        out.push_str(",\"metadata\":");
        self.write_metadata(out);
        if let Some(id) = &self.request_id {
            out.push_str(",\"request_id\":");
            out.push_str(id);
        }
        out.push('}');
    }
}

fn itoa(v: i64) -> String {
    use core::fmt::Write as _;
    let mut s = String::new();
    let _ = write!(s, "{v}");
    s
}

crate::verdict::accepted!(AivaxContext);

/// The verdict of the AIVAX profile: [`Verdict`] with an [`AivaxContext`].
pub type AivaxVerdict = Verdict<AivaxContext>;

/// Verifies `tools/call` requests from AIVAX: CONTRACT §2 steps 0 to 7
/// (method, credential, body size, strict JSON, batch, shape, MCP headers),
/// then the `_aiv_*` members instead of the AgentArea token.
#[derive(Clone)]
pub struct AivaxVerifier {
    aivax: AivaxConfig,
    /// SHA-256 of the hook key: binds a [`NonceCache`] to this key.
    key_digest: [u8; 32],
    credential: Option<Credential>,
    max_body_bytes: usize,
    forward: Forward<AivaxField>,
    /// Names this verifier in the [`Checked`] proofs it makes.
    id: usize,
}

// Neither the hook key nor its digest reaches a log through `{:?}`.
impl core::fmt::Debug for AivaxVerifier {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AivaxVerifier")
            .field("aivax", &self.aivax)
            .field("credential", &self.credential)
            .field("max_body_bytes", &self.max_body_bytes)
            .finish()
    }
}

impl AivaxVerifier {
    pub fn new(
        aivax: AivaxConfig,
        credential: Option<Credential>,
        max_body_bytes: usize,
    ) -> Result<AivaxVerifier, ConfigError> {
        aivax.validate()?;
        if let Some(c) = &credential {
            c.validate()?;
        }
        if !(1..=MAX_BODY_LIMIT).contains(&max_body_bytes) {
            return Err(ConfigError::Limit("max_body_bytes"));
        }
        use sha2::{Digest, Sha256};
        Ok(AivaxVerifier {
            key_digest: Sha256::digest(&aivax.hook_key).into(),
            aivax,
            credential,
            max_body_bytes,
            forward: Forward::new(),
            id: next_verifier_id(),
        })
    }

    /// This verifier forwarding `forward` upstream (see [`crate::forward`]).
    pub fn with_forward(mut self, forward: Forward<AivaxField>) -> AivaxVerifier {
        self.forward = forward;
        self
    }

    pub fn forward(&self) -> &Forward<AivaxField> {
        &self.forward
    }

    /// What goes upstream with `verdict` (see [`crate::Verifier::upstream`]).
    pub fn upstream<'a>(&'a self, verdict: &'a AivaxVerdict) -> Option<Upstream<'a>> {
        crate::forward::upstream(&self.forward, verdict)
    }

    /// Reads `{"hook_key": "...", "require_nonce": true, "max_bcrypt_cost":
    /// 12, "credential": {...}, "max_body_bytes": 1048576}` (only
    /// `hook_key` is required) and validates it.
    pub fn from_json(text: &[u8], unknown: UnknownSettings) -> Result<AivaxVerifier, ConfigError> {
        let doc = json::parse(text).map_err(|_| ConfigError::Json)?;
        let Value::Object(members) = &doc else {
            return Err(ConfigError::Json);
        };
        let mut hook_key = None;
        let mut aivax = AivaxConfig::new(Vec::new());
        let mut credential = None;
        let mut max_body_bytes = DEFAULT_MAX_BODY_BYTES;
        let mut forward = Forward::new();
        for (name, value) in members {
            match &**name {
                "forward" => forward = Forward::from_value(value).map_err(ConfigError::Forward)?,
                "hook_key" => hook_key = Some(config::string(value, "hook_key")?.into_bytes()),
                "require_nonce" => {
                    aivax.require_nonce = match value {
                        Value::Bool(b) => *b,
                        _ => return Err(ConfigError::Type("require_nonce")),
                    }
                }
                "max_bcrypt_cost" => {
                    aivax.max_bcrypt_cost =
                        u32::try_from(config::integer(value, "max_bcrypt_cost")?)
                            .map_err(|_| ConfigError::Limit("max_bcrypt_cost"))?
                }
                "credential" => credential = config::credential(value)?,
                "max_body_bytes" => max_body_bytes = config::size(value, "max_body_bytes")?,
                other if unknown == UnknownSettings::Refuse => {
                    return Err(ConfigError::UnknownSetting(other.into()))
                }
                _ => {}
            }
        }
        aivax.hook_key = hook_key.ok_or(ConfigError::Missing("hook_key"))?;
        Ok(AivaxVerifier::new(aivax, credential, max_body_bytes)?.with_forward(forward))
    }

    /// Steps 0 and 1, before the body is read: on `ReadBody`, read it and
    /// hand it on with the proof to [`AivaxVerifier::check_body`] (or
    /// [`AivaxVerifier::check_body_cached`]).
    pub fn check_headers<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        method: &str,
        headers: &[(N, V)],
    ) -> HeadersVerdict {
        self.envelope().headers(method, headers)
    }

    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }

    /// The whole decision on one request.
    pub fn check<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        method: &str,
        headers: &[(N, V)],
        body: &[u8],
    ) -> AivaxVerdict {
        self.check_headers(method, headers)
            .and_then(|checked| self.check_body(checked, headers, body))
    }

    /// Steps 2 to 7 and the `_aiv_*` members on a request whose headers
    /// passed [`AivaxVerifier::check_headers`]: `checked` is its proof,
    /// `headers` the same headers. The verdict is
    /// [`AivaxVerifier::check`]'s.
    pub fn check_body<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        checked: Checked,
        headers: &[(N, V)],
        body: &[u8],
    ) -> AivaxVerdict {
        self.decide(checked, headers, body, None)
    }

    /// [`AivaxVerifier::check`] that skips bcrypt for a nonce this
    /// verifier already verified: the outcome is a pure function of the
    /// nonce string and the hook key, so a hit gives the same verdict for
    /// a fraction of the work. Every other check still runs.
    pub fn check_cached<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        method: &str,
        headers: &[(N, V)],
        body: &[u8],
        cache: &mut NonceCache,
    ) -> AivaxVerdict {
        self.check_headers(method, headers)
            .and_then(|checked| self.check_body_cached(checked, headers, body, cache))
    }

    /// [`AivaxVerifier::check_body`] with the nonce cache of
    /// [`AivaxVerifier::check_cached`].
    pub fn check_body_cached<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        checked: Checked,
        headers: &[(N, V)],
        body: &[u8],
        cache: &mut NonceCache,
    ) -> AivaxVerdict {
        cache.bind(self.key_digest);
        self.decide(checked, headers, body, Some(cache))
    }

    fn decide<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        checked: Checked,
        headers: &[(N, V)],
        body: &[u8],
        cache: Option<&mut NonceCache>,
    ) -> AivaxVerdict {
        self.envelope().body(checked, headers, body, |call| {
            let mut ctx = check(&self.aivax, call.meta, cache)?;
            ctx.upstream = self.forward.set_headers(&ctx, |m| {
                call.meta.and_then(|o| o.get(m)).map(|v| v.to_value())
            });
            Ok(Some(ctx))
        })
    }

    fn envelope(&self) -> Envelope<'_> {
        Envelope::new(self.id, self.credential.as_ref(), self.max_body_bytes)
    }
}

/// Nonces that verified against one hook key: bounded, oldest out first.
/// Bound to the key it was first used with; used with another key it
/// starts empty again, so a cache can never vouch across accounts. A ring
/// searched linearly: a scan of even a thousand 60-byte nonces is far
/// cheaper than one bcrypt, and the code stays small in wasm builds.
#[derive(Debug, Clone)]
pub struct NonceCache {
    key: Option<[u8; 32]>,
    entries: Vec<Vec<u8>>,
    next: usize,
    capacity: usize,
}

impl NonceCache {
    pub fn new(capacity: usize) -> NonceCache {
        NonceCache {
            key: None,
            entries: Vec::new(),
            next: 0,
            capacity,
        }
    }

    fn bind(&mut self, digest: [u8; 32]) {
        if self.key != Some(digest) {
            self.entries.clear();
            self.next = 0;
            self.key = Some(digest);
        }
    }

    fn contains(&self, nonce: &[u8]) -> bool {
        self.entries.iter().any(|e| e.as_slice() == nonce)
    }

    fn insert(&mut self, nonce: &[u8]) {
        if self.capacity == 0 || self.contains(nonce) {
            return;
        }
        if self.entries.len() < self.capacity {
            self.entries.push(nonce.to_vec());
        } else if let Some(slot) = self.entries.get_mut(self.next) {
            *slot = nonce.to_vec();
            self.next = (self.next + 1) % self.capacity;
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Checks the `_aiv_*` members of `_meta` (an object, or absent).
pub(crate) fn check(
    config: &AivaxConfig,
    meta: Option<Item<'_, '_>>,
    cache: Option<&mut NonceCache>,
) -> Result<AivaxContext, Reason> {
    // A member that is absent or null.
    let get = |name: &str| {
        meta.and_then(|m| m.get(name))
            .filter(|v| v.kind() != Kind::Null)
    };
    let nonce_verified = match get(NONCE) {
        None if config.require_nonce => return Err(Reason::NonceMissing),
        None => false,
        Some(nonce) => {
            let nonce = nonce.as_str().ok_or(Reason::NonceInvalid)?;
            if !nonce_matches(config, nonce.as_bytes(), cache) {
                return Err(Reason::NonceInvalid);
            }
            true
        }
    };
    let optional = |name: &str| -> Result<Option<String>, Reason> {
        match get(name) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(|s| Some(String::from(s)))
                .ok_or(Reason::ContextMalformed),
        }
    };
    let moment = match optional("_aiv_moment")? {
        None => None,
        Some(text) => Some(parse_moment(&text).ok_or(Reason::ContextMalformed)?),
    };
    let mut metadata = Vec::new();
    for (k, v) in meta.map_or(Members::NONE, Item::members) {
        if let (Some(k), Some(v)) = (k.as_str(), v.as_str()) {
            if !k.starts_with(RESERVED_PREFIX) {
                metadata.push((String::from(k), String::from(v)));
            }
        }
    }
    Ok(AivaxContext {
        nonce_verified,
        external_user_id: optional("_aiv_external_user_id")?,
        call_source: optional("_aiv_call_source")?,
        conversation_token: optional("_aiv_conversation_token")?,
        moment,
        metadata,
        request_id: None,
        upstream: Vec::new(),
    })
}

/// `$2a$`/`$2b$`/`$2y$`, two cost digits, `$`, 22 salt and 31 hash symbols.
fn nonce_matches(config: &AivaxConfig, nonce: &[u8], cache: Option<&mut NonceCache>) -> bool {
    let (Some(prefix), Some(cost), Some(b'$'), Some(salt), Some(hash)) = (
        nonce.get(..4),
        nonce.get(4..6),
        nonce.get(6),
        nonce.get(7..29),
        nonce.get(29..),
    ) else {
        return false;
    };
    if !matches!(prefix, b"$2a$" | b"$2b$" | b"$2y$") || hash.len() != 31 {
        return false;
    }
    let cost = match cost {
        &[a @ b'0'..=b'9', b @ b'0'..=b'9'] => u32::from(a - b'0') * 10 + u32::from(b - b'0'),
        _ => return false,
    };
    // The caller picks the cost: refuse expensive ones before any work.
    if !(MIN_BCRYPT_COST..=config.max_bcrypt_cost).contains(&cost) {
        return false;
    }
    // Only well-formed nonces within the cost cap reach the cache.
    if cache.as_ref().is_some_and(|c| c.contains(nonce)) {
        return true;
    }
    let Some(salt) = b64::BCRYPT
        .decode_unpadded_lenient(salt)
        .and_then(|s| <[u8; 16]>::try_from(s).ok())
    else {
        return false;
    };
    // bcrypt hashes the key with its NUL terminator, at most 72 bytes.
    let mut key = Vec::with_capacity(config.hook_key.len() + 1);
    key.extend_from_slice(&config.hook_key);
    key.push(0);
    key.truncate(72);
    let digest = bcrypt::bcrypt(cost, salt, &key);
    let mut expected = String::with_capacity(31);
    b64::BCRYPT.encode_unpadded(digest.get(..23).unwrap_or(&[]), &mut expected);
    let ok = ct_eq(expected.as_bytes(), hash);
    if let (true, Some(cache)) = (ok, cache) {
        cache.insert(nonce);
    }
    ok
}

fn digits(s: &[u8]) -> Option<u32> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.iter().try_fold(0u32, |v, d| {
        v.checked_mul(10)?.checked_add(u32::from(d - b'0'))
    })
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`.
pub fn parse_moment(text: &str) -> Option<Moment> {
    let b = text.as_bytes();
    let field = |from: usize, to: usize| digits(b.get(from..to)?);
    let sep = |at: usize, c: u8| b.get(at) == Some(&c);
    if !(sep(4, b'-')
        && sep(7, b'-')
        && (sep(10, b'T') || sep(10, b't'))
        && sep(13, b':')
        && sep(16, b':'))
    {
        return None;
    }
    let (year, month, day) = (field(0, 4)?, field(5, 7)?, field(8, 10)?);
    let (hour, minute, second) = (field(11, 13)?, field(14, 16)?, field(17, 19)?);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let max_day = month_days.get(usize::try_from(month).ok()?.checked_sub(1)?)?;
    if day == 0 || day > *max_day || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut at = 19;
    if sep(at, b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == start {
            return None;
        }
    }
    let offset_minutes: i32 = match b.get(at..)? {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (h, m) = (digits(&[*h1, *h2])?, digits(&[*m1, *m2])?);
            if h > 23 || m > 59 {
                return None;
            }
            let minutes = i32::try_from(h * 60 + m).ok()?;
            if *sign == b'-' {
                -minutes
            } else {
                minutes
            }
        }
        _ => return None,
    };
    let days = days_from_civil(i64::from(year), i64::from(month), i64::from(day));
    let local = days * 86_400 + i64::from(hour) * 3600 + i64::from(minute) * 60 + i64::from(second);
    Some(Moment {
        text: String::from(text),
        unix_seconds: local - i64::from(offset_minutes) * 60,
        offset_minutes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments() {
        let m = parse_moment("2025-09-09T16:58:05.0000000+00:00").unwrap();
        assert_eq!((m.unix_seconds, m.offset_minutes), (1_757_437_085, 0));
        let m = parse_moment("2025-09-09T19:58:05+03:00").unwrap();
        assert_eq!((m.unix_seconds, m.offset_minutes), (1_757_437_085, 180));
        assert_eq!(
            parse_moment("1970-01-01T00:00:00Z").unwrap().unix_seconds,
            0
        );
        assert_eq!(
            parse_moment("2024-02-29T00:00:00-01:30")
                .unwrap()
                .unix_seconds,
            1_709_170_200
        );
        for bad in [
            "2025-09-09T16:58:05",
            "2025-02-29T00:00:00Z",
            "2025-13-01T00:00:00Z",
            "2025-09-09 16:58:05Z",
            "2025-09-09T16:58:05.+00:00",
            "2025-09-09T16:58:05+0000",
            "2025-09-09T24:00:00Z",
            "２025-09-09T16:58:05Z",
        ] {
            assert_eq!(parse_moment(bad), None, "{bad}");
        }
    }

    /// A hash made by Python's `bcrypt` (see tests/vectors/generate.py).
    #[test]
    fn nonce_checks_cost_before_work() {
        let config = AivaxConfig::new(b"correctbatteryhorsestapler".to_vec());
        let good = b"$2b$04$EGdrhbKUv8Oc9vGiXX0HQOxSg445d458Muh7DAHskb6QbtCvdxcie";
        assert!(nonce_matches(&config, good, None));
        assert!(!nonce_matches(
            &AivaxConfig::new(b"wrong".to_vec()),
            good,
            None
        ));
        let mut costly = *good;
        costly[4..6].copy_from_slice(b"31");
        assert!(
            !nonce_matches(&config, &costly, None),
            "cost 31 is over the cap: refused without hashing"
        );
        assert!(!nonce_matches(&config, &good[..59], None));
    }

    fn digest(c: &AivaxConfig) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        Sha256::digest(&c.hook_key).into()
    }

    #[test]
    fn debug_shows_no_key() {
        let v = AivaxVerifier::new(
            AivaxConfig::new(b"hook-key-do-not-print".to_vec()),
            None,
            1024,
        )
        .unwrap();
        let shown = alloc::format!("{v:?}");
        assert!(
            !shown.contains("hook-key-do-not-print") && !shown.contains("key_digest"),
            "{shown}"
        );
    }

    #[test]
    fn nonce_cache_is_bound_to_its_key() {
        let good = b"$2b$04$EGdrhbKUv8Oc9vGiXX0HQOxSg445d458Muh7DAHskb6QbtCvdxcie";
        let right = AivaxConfig::new(b"correctbatteryhorsestapler".to_vec());
        let wrong = AivaxConfig::new(b"wrong".to_vec());
        let mut cache = NonceCache::new(2);
        cache.bind(digest(&right));
        assert!(nonce_matches(&right, good, Some(&mut cache)));
        assert_eq!(cache.len(), 1);
        assert!(nonce_matches(&right, good, Some(&mut cache)), "a hit");
        // The same cache used with another key forgets what it knew.
        cache.bind(digest(&wrong));
        assert!(cache.is_empty());
        assert!(!nonce_matches(&wrong, good, Some(&mut cache)));
        assert!(cache.is_empty(), "failures are never cached");
        // Over the cost cap is refused before the cache is consulted.
        cache.bind(digest(&right));
        assert!(nonce_matches(&right, good, Some(&mut cache)));
        let mut capped = right.clone();
        capped.max_bcrypt_cost = 4;
        let mut costly = *good;
        costly[4..6].copy_from_slice(b"05");
        assert!(!nonce_matches(&capped, &costly, Some(&mut cache)));
    }
}
