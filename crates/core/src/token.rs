//! Compact JWS segments and the signing side (CONTRACT §4).

use alloc::string::String;
use alloc::vec::Vec;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::claims::{member, write_claims, Claim, ClaimValue};
use crate::config::{ConfigError, MAX_SECRET_BYTES, MIN_SECRET_BYTES};
use crate::digits::push_u64;
use crate::json::{write_str, Value};
use crate::{b64, scan};

pub(crate) type HmacSha256 = Hmac<Sha256>;

/// The JOSE header of every minted token.
pub(crate) const MINTED_HEADER: &[u8] = br#"{"alg":"HS256","typ":"JWT"}"#;

/// Lifetime of a minted token: `exp = iat + 300`.
pub const TOKEN_TTL_S: u64 = 300;
/// The issuer every token names.
pub const ISSUER: &str = "agentarea";
/// The `_meta` key prefix of context values.
pub const META_PREFIX: &str = "agentarea/";

/// The context a platform vouches for (the `agentarea/*` values).
#[derive(Debug, Clone, PartialEq)]
pub struct ContextClaims {
    pub protocol: String,
    pub task_id: String,
    pub tool_call_id: String,
    pub workspace_id: String,
    pub agent_id: Option<String>,
    pub end_user_id: Option<String>,
    /// Must be an object when present.
    pub metadata: Option<Value<'static>>,
}

impl ContextClaims {
    /// `"<task_id>:<tool_call_id>"`.
    pub fn idempotency_key(&self) -> String {
        let mut k = String::with_capacity(self.task_id.len() + 1 + self.tool_call_id.len());
        k.push_str(&self.task_id);
        k.push(':');
        k.push_str(&self.tool_call_id);
        k
    }

    fn claim<'a>(&'a self, claim: Claim, key: &'a str) -> Option<ClaimValue<'a>> {
        match claim {
            Claim::Protocol => Some(ClaimValue::Text(&self.protocol)),
            Claim::TaskId => Some(ClaimValue::Text(&self.task_id)),
            Claim::ToolCallId => Some(ClaimValue::Text(&self.tool_call_id)),
            Claim::WorkspaceId => Some(ClaimValue::Text(&self.workspace_id)),
            Claim::IdempotencyKey => Some(ClaimValue::Text(key)),
            Claim::AgentId => self.agent_id.as_deref().map(ClaimValue::Text),
            Claim::EndUserId => self.end_user_id.as_deref().map(ClaimValue::Text),
            Claim::Metadata => self.metadata.as_ref().map(ClaimValue::Json),
        }
    }

    /// Writes the context members (no braces), each name prefixed.
    fn write_members(&self, prefix: &str, out: &mut String) {
        let key = self.idempotency_key();
        write_claims(prefix, |c| self.claim(c, &key), out);
    }

    /// The `params._meta` object (the `agentarea/*` keys only) as JSON.
    pub fn meta_json(&self) -> String {
        let mut out = String::from("{");
        self.write_members(META_PREFIX, &mut out);
        out.push('}');
        out
    }
}

/// Everything a minted token says.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenClaims {
    /// `aud`: the server instance id.
    pub instance_id: String,
    /// `tool`: the server's own tool name, when the token is for one tool.
    pub tool: Option<String>,
    /// `jti`: unique per token (a random UUID, chosen by the caller).
    pub jti: String,
    /// `iat`, Unix seconds; `exp` is `iat + 300`.
    pub iat: u64,
    pub context: ContextClaims,
}

impl TokenClaims {
    /// The token payload as JSON.
    pub fn payload_json(&self) -> String {
        let mut out = String::from("{");
        member("", "iss", &mut out);
        write_str(ISSUER, &mut out);
        member("", "aud", &mut out);
        write_str(&self.instance_id, &mut out);
        member("", "iat", &mut out);
        push_u64(self.iat, &mut out);
        member("", "exp", &mut out);
        push_u64(self.iat.saturating_add(TOKEN_TTL_S), &mut out);
        member("", "jti", &mut out);
        write_str(&self.jti, &mut out);
        if let Some(tool) = &self.tool {
            member("", "tool", &mut out);
            write_str(tool, &mut out);
        }
        self.context.write_members("", &mut out);
        out.push('}');
        out
    }

    /// Mints the HS256 compact JWS for `X-AgentArea-Context`.
    pub fn mint(&self, secret: &[u8]) -> Result<String, ConfigError> {
        if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&secret.len()) {
            return Err(ConfigError::SecretLength {
                index: 0,
                len: secret.len(),
            });
        }
        Ok(sign_compact(
            MINTED_HEADER,
            self.payload_json().as_bytes(),
            secret,
        ))
    }
}

/// `base64url(header).base64url(payload).base64url(HMAC-SHA256(secret))`
/// over any header and payload bytes: for test and conformance tools that
/// need tokens the verifier must refuse. [`TokenClaims::mint`] is the way
/// to make a valid one.
pub fn sign_compact(header: &[u8], payload: &[u8], secret: &[u8]) -> String {
    let mut token = String::with_capacity((header.len() + payload.len()) * 4 / 3 + 48);
    b64::URL.encode_unpadded(header, &mut token);
    token.push('.');
    b64::URL.encode_unpadded(payload, &mut token);
    // HMAC takes keys of any length; this never fails.
    if let Ok(mut mac) = HmacSha256::new_from_slice(secret) {
        mac.update(token.as_bytes());
        token.push('.');
        b64::URL.encode_unpadded(&mac.finalize().into_bytes(), &mut token);
    }
    token
}

/// A token split into its three segments, decoded but not yet trusted.
pub(crate) struct Segments<'t> {
    /// The ASCII `header.payload` the signature covers.
    pub signed: &'t [u8],
    /// The header's bytes, the payload's, then the signature's: one buffer.
    decoded: Vec<u8>,
    /// Where the payload and the signature start in `decoded`.
    payload_at: usize,
    signature_at: usize,
}

impl Segments<'_> {
    pub fn header(&self) -> &[u8] {
        self.decoded.get(..self.payload_at).unwrap_or_default()
    }

    pub fn payload(&self) -> &[u8] {
        self.decoded
            .get(self.payload_at..self.signature_at)
            .unwrap_or_default()
    }

    pub fn signature(&self) -> &[u8] {
        self.decoded.get(self.signature_at..).unwrap_or_default()
    }
}

/// Exactly three segments, each canonical unpadded base64url.
pub(crate) fn split(token: &[u8]) -> Option<Segments<'_>> {
    let dot = |from: usize| scan::find(token.get(from..)?, b'.').map(|i| from + i);
    let first = dot(0)?;
    let second = dot(first + 1)?;
    if dot(second + 1).is_some() {
        return None;
    }
    let parts = [
        token.get(..first)?,
        token.get(first + 1..second)?,
        token.get(second + 1..)?,
    ];
    let mut ends = [0; 3];
    let mut total = 0;
    for (end, part) in ends.iter_mut().zip(parts) {
        total += b64::decoded_len(part)?;
        *end = total;
    }
    let mut decoded = alloc::vec![0u8; total];
    let mut start = 0;
    for (end, part) in ends.into_iter().zip(parts) {
        b64::URL.decode_unpadded_to(part, decoded.get_mut(start..end)?)?;
        start = end;
    }
    Some(Segments {
        signed: token.get(..second)?,
        decoded,
        payload_at: ends[0],
        signature_at: ends[1],
    })
}

/// Decodes a token's header and payload without checking anything but
/// their form: for inspection tools, never for a decision.
pub fn decode_unverified(token: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    let s = split(token.as_bytes())?;
    Some((s.header().to_vec(), s.payload().to_vec()))
}
