//! The AgentArea profile's decision: CONTRACT §2 steps 8 to 14 (token,
//! claims, context, tool, protocol, binding) on the call that the envelope
//! (`envelope.rs`, steps 0 to 7) hands on.

use alloc::string::String;
use alloc::vec::Vec;

use hmac::Mac;

use crate::claims::{self, protocol_major, Claim};
use crate::config::{Config, ConfigError};
use crate::context::Context;
use crate::envelope::{get_str, header, next_verifier_id, Call, Envelope, Lookup};
use crate::json::{self, Value};
use crate::reason::Reason;
use crate::replay::FirstUse;
use crate::token::{self, HmacSha256, ISSUER, META_PREFIX};
use crate::verdict::{Checked, HeadersVerdict, Verdict};

/// Header carrying the context token.
pub const TOKEN_HEADER: &str = "x-agentarea-context";

/// A validated configuration with the HMAC key state precomputed.
#[derive(Clone)]
pub struct Verifier {
    config: Config,
    macs: Vec<HmacSha256>,
    /// Names this verifier in the [`Checked`] proofs it makes.
    id: usize,
}

impl core::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Verifier")
            .field("config", &self.config)
            .finish()
    }
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
        Ok(Verifier {
            config,
            macs,
            id: next_verifier_id(),
        })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The body limit a front end should buffer up to; one more byte is
    /// enough to know the body is too large.
    pub fn max_body_bytes(&self) -> usize {
        self.config.max_body_bytes
    }

    /// Steps 0 and 1, for front ends that decide before reading the body:
    /// on `ReadBody`, read it and hand it on with the proof to
    /// [`Verifier::check_body`] (or [`Verifier::check_body_once`]).
    pub fn check_headers<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        method: &str,
        headers: &[(N, V)],
    ) -> HeadersVerdict {
        self.envelope().headers(method, headers)
    }

    fn envelope(&self) -> Envelope<'_> {
        Envelope::new(
            self.id,
            self.config.credential.as_ref(),
            self.config.max_body_bytes,
        )
    }

    /// The whole decision on one request. `now` is Unix seconds.
    pub fn check<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        method: &str,
        headers: &[(N, V)],
        body: &[u8],
        now: u64,
    ) -> Verdict {
        self.check_headers(method, headers)
            .and_then(|checked| self.check_body(checked, headers, body, now))
    }

    /// Steps 2 to 14 on a request whose headers passed
    /// [`Verifier::check_headers`]: `checked` is its proof, `headers` the
    /// same headers. The verdict is [`Verifier::check`]'s.
    pub fn check_body<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        checked: Checked,
        headers: &[(N, V)],
        body: &[u8],
        now: u64,
    ) -> Verdict {
        self.decide(checked, headers, body, now, None)
    }

    /// [`Verifier::check`] with the replay guard: after step 14, the token's
    /// `jti` must be new. `first_use(jti, until)` records it as used until
    /// `until` (Unix seconds; the token is refused as expired from then on)
    /// and says whether it was unused. A token without `jti` cannot be
    /// guarded and is refused as `claim_invalid`; a used one as
    /// `token_replayed`. [`ReplayCache`](crate::ReplayCache) is a ready store for one process.
    pub fn check_once<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        method: &str,
        headers: &[(N, V)],
        body: &[u8],
        now: u64,
        first_use: FirstUse<'_>,
    ) -> Verdict {
        self.check_headers(method, headers)
            .and_then(|checked| self.check_body_once(checked, headers, body, now, first_use))
    }

    /// [`Verifier::check_body`] with the replay guard of
    /// [`Verifier::check_once`].
    pub fn check_body_once<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        checked: Checked,
        headers: &[(N, V)],
        body: &[u8],
        now: u64,
        first_use: FirstUse<'_>,
    ) -> Verdict {
        self.decide(checked, headers, body, now, Some(first_use))
    }

    fn decide<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        checked: Checked,
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
        self.envelope().body(checked, headers, body, rest)
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
        for claim in Claim::ALL {
            match claims.get(claim.name()) {
                None if claim.required() => return Err(Reason::ContextMalformed),
                Some(v) if !claim.accepts(v) => return Err(Reason::ContextMalformed),
                _ => {}
            }
        }
        let s = |claim: Claim| get_str(&claims, claim.name()).unwrap_or_default();
        let (task_id, tool_call_id) = (s(Claim::TaskId), s(Claim::ToolCallId));
        let key = s(Claim::IdempotencyKey);
        let composed = key.len() == task_id.len() + 1 + tool_call_id.len()
            && key.strip_prefix(task_id).and_then(|k| k.strip_prefix(':')) == Some(tool_call_id);
        if !composed {
            return Err(Reason::ContextMalformed);
        }
        for (k, v) in meta {
            if let Some(name) = k.strip_prefix(META_PREFIX) {
                if !claims::value_ok(name, v) {
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
        let protocol = s(Claim::Protocol);
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
        for claim in Claim::ALL {
            let name = claim.name();
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
            workspace_id: String::from(s(Claim::WorkspaceId)),
            idempotency_key: String::from(key),
            protocol: String::from(protocol),
            agent_id: owned(&claims, Claim::AgentId.name()),
            end_user_id: owned(&claims, Claim::EndUserId.name()),
            metadata: claims
                .get(Claim::Metadata.name())
                .map(Value::to_owned_value),
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

/// A token's header or payload: a JSON object, read by the body's reader.
fn token_object(bytes: &[u8]) -> Result<Value<'_>, Reason> {
    json::parse(bytes)
        .ok()
        .filter(Value::is_object)
        .ok_or(Reason::TokenMalformed)
}
