//! The AgentArea profile's decision: CONTRACT §2 steps 8 to 14 (token,
//! claims, context, tool, protocol, binding) on the call that the envelope
//! (`envelope.rs`, steps 0 to 7) hands on.

use alloc::string::String;
use alloc::vec::Vec;

use hmac::{KeyInit, Mac};

use crate::claims::{self, protocol_major, Claim};
use crate::config::{Config, ConfigError};
use crate::context::Context;
use crate::envelope::{header, next_verifier_id, Call, Envelope, Lookup, MCP_HEADERS};
use crate::forward::Upstream;
use crate::headers::TOKEN_HEADER;
use crate::json::{self, Doc, Item, JsonText, Keep, Kind as JsonKind, Members, NameIndex};
use crate::reason::Reason;
use crate::refusal::Refusal;
use crate::replay::{ClaimAnswer, Claimed, FirstUse, PendingClaim, ReplayClaim};
use crate::scan;
use crate::token::{self, HmacSha256, ISSUER, META_PREFIX};
use crate::verdict::{Checked, HeadersVerdict, Verdict};

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

    /// The request headers the check reads, by name (compared
    /// case-insensitively): the credential's when one is configured,
    /// `mcp-method`, `mcp-name` and the token's ([`TOKEN_HEADER`]). It reads
    /// no other, so a front end whose headers are a map asked by name
    /// (fetch's `Headers`, where walking every header costs more than the
    /// rest of the boundary) may pass these alone, each as often as it
    /// came, and gets the verdict every header would give. `None` in the
    /// credential's place when none is configured. The token's comes last,
    /// always: the npm package takes its name from there (a fetch
    /// `Headers` joins repeated token headers with ", ", which it splits).
    pub fn read_headers(&self) -> [Option<&str>; 4] {
        let [method, name] = MCP_HEADERS;
        let credential = self.config.credential.as_ref().map(|c| c.header.as_str());
        [credential, Some(method), Some(name), Some(TOKEN_HEADER)]
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
        let envelope = Envelope::new(
            self.id,
            self.config.credential.as_ref(),
            self.config.max_body_bytes,
        );
        // A policy reads the arguments: the body check records them.
        #[cfg(feature = "policy")]
        if self.config.policy.is_some() {
            return envelope.keeping_arguments();
        }
        envelope
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
        #[cfg(feature = "policy")]
        let mut denied_by: Option<String> = None;
        let rest = |call: Call<'_, '_>| {
            let meta = call.meta;
            #[cfg(feature = "policy")]
            let (tool, arguments) = (call.name, call.arguments);
            #[cfg_attr(not(feature = "policy"), allow(unused_mut))]
            let mut ctx = self.check_call(call, headers, now)?;
            #[cfg(feature = "policy")]
            if let Some(policy) = &self.config.policy {
                // After the verdict (CONTRACT §8). A call that passes
                // without a context is decided too, with no claims: a
                // rule on the claims then denies it.
                if let Some(rule) =
                    crate::policy::denial(policy, ctx.as_ref(), tool, arguments, meta)
                {
                    match (policy.mode, ctx.as_mut()) {
                        (crate::policy::Mode::Audit, Some(ctx)) => {
                            ctx.policy_audit = Some(String::from(rule))
                        }
                        (crate::policy::Mode::Audit, None) => {}
                        (crate::policy::Mode::Enforce, _) => {
                            denied_by = Some(String::from(rule));
                            return Err(Reason::PolicyDenied);
                        }
                    }
                }
            }
            let Some(mut ctx) = ctx else {
                return Ok(None);
            };
            ctx.upstream = self.config.forward.set_headers(&ctx, meta);
            Ok(Some(ctx))
        };
        let verdict = self.envelope().body(checked, headers, body, rest);
        #[cfg(feature = "policy")]
        if let (Verdict::Reject(refusal), Some(rule)) = (&verdict, denied_by) {
            return Verdict::Reject(refusal.clone().with_rule(rule));
        }
        verdict
    }

    /// [`Verifier::check`] with the replay guard: after step 14, the token's
    /// `jti` must be new. `first_use(jti, until)` records it as used until
    /// `until` (Unix seconds; the token is refused as expired from then on)
    /// and answers with a [`ClaimAnswer`], whose meaning is the core's
    /// ([`ClaimAnswer::verdict`]): a used id is `token_replayed`, a full
    /// store `replay_guard_full`, a failed one `internal_error`. A token
    /// without `jti` cannot be guarded and is refused as `claim_invalid`.
    /// [`ReplayCache`](crate::ReplayCache) is a ready store for one process;
    /// a store that answers asynchronously uses [`Verifier::claim`] and
    /// [`Verifier::settle`] instead (the same sequence, split at the I/O).
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
    /// [`Verifier::check_once`]: [`Verifier::claim`], the store asked,
    /// [`Verifier::settle`].
    pub fn check_body_once<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        checked: Checked,
        headers: &[(N, V)],
        body: &[u8],
        now: u64,
        first_use: FirstUse<'_>,
    ) -> Verdict {
        match self.claim(self.check_body(checked, headers, body, now)) {
            Claimed::Decided(verdict) => verdict,
            Claimed::Claim(pending) => {
                let answer = first_use(&pending.claim.jti, pending.claim.until);
                self.settle(pending, answer)
            }
        }
    }

    /// The replay guard's first half on a body verdict: an accepted call
    /// must claim its `jti` until `exp + clock_skew_s` ([`Claimed::Claim`]:
    /// ask the store, then [`Verifier::settle`]); a token without `jti`
    /// cannot be guarded and is refused `claim_invalid` with the request's
    /// id; a pass or a refusal is decided as it is.
    pub fn claim(&self, verdict: Verdict) -> Claimed {
        let Verdict::Accept(ctx) = verdict else {
            return Claimed::Decided(verdict);
        };
        match self.claim_of(&ctx) {
            Ok(claim) => Claimed::Claim(PendingClaim { ctx, claim }),
            Err(reason) => Claimed::Decided(Verdict::Reject(Refusal::new(
                reason,
                ctx.request_id.clone(),
            ))),
        }
    }

    fn claim_of(&self, ctx: &Context) -> Result<ReplayClaim, Reason> {
        let jti = ctx.jti.as_ref().ok_or(Reason::ClaimInvalid)?;
        Ok(ReplayClaim {
            jti: jti.clone(),
            until: ctx.exp.saturating_add(self.config.clock_skew_s),
        })
    }

    /// The final verdict on a [`PendingClaim`] once the replay store
    /// answered it: accepted (with the headers the core computed) on a
    /// first use, else refused as [`ClaimAnswer::verdict`] says, with the
    /// request's id.
    pub fn settle(&self, pending: PendingClaim, answer: ClaimAnswer) -> Verdict {
        let PendingClaim { ctx, .. } = pending;
        match answer.verdict() {
            Ok(()) => Verdict::Accept(ctx),
            Err(reason) => Verdict::Reject(Refusal::new(reason, ctx.request_id.clone())),
        }
    }

    /// What goes upstream with `verdict`: nothing on a refusal; on a pass
    /// or an accept, the headers to remove (every forwarded name) and, on an
    /// accept, the ones to add (see [`crate::forward`]).
    pub fn upstream<'a>(&'a self, verdict: &'a Verdict) -> Option<Upstream<'a>> {
        crate::forward::upstream(&self.config.forward, verdict)
    }

    /// Steps 8 to 14, after the envelope; `Ok(None)` is a call without
    /// context that the configuration lets pass.
    fn check_call<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        call: Call<'_, '_>,
        headers: &[(N, V)],
        now: u64,
    ) -> Result<Option<Context>, Reason> {
        let name = call.name;
        let context_meta = || ContextMeta(call.meta_members());

        // Step 8.
        let token = match header(headers, TOKEN_HEADER) {
            Lookup::Once(t) => t,
            Lookup::Many => return Err(Reason::TokenDuplicated),
            Lookup::Missing if !self.config.require_context && context_meta().next().is_none() => {
                return Ok(None)
            }
            Lookup::Missing => return Err(Reason::TokenMissing),
        };

        // Step 9.
        if token.len() > self.config.max_token_bytes {
            return Err(Reason::TokenTooLarge);
        }
        let segments = token::split(token).ok_or(Reason::TokenMalformed)?;
        // Natively, the header every minted token has passes the header's
        // checks as it is: it is neither read nor checked. The size-bound
        // wasm builds read every header (the code for the shortcut is not
        // worth its bytes there).
        #[cfg(not(target_arch = "wasm32"))]
        let minted = segments.header() == token::MINTED_HEADER;
        #[cfg(target_arch = "wasm32")]
        let minted = false;
        // Every failure to read either segment is `token_malformed`, so
        // the header may be read apart; its checks come after both reads.
        let jose = match minted {
            true => None,
            false => Some(read_token(segments.header())?),
        };
        let payload = read_token(segments.payload())?;
        let payload = token_object(&payload)?;
        if let Some(jose) = &jose {
            check_jose(token_object(jose)?)?;
        }
        let claims = Claims::read(payload);
        let secret_index = self
            .signer(segments.signed, segments.signature())
            .ok_or(Reason::SignatureInvalid)?;

        // Step 10.
        let (iat, exp) = self.check_times(&claims, now)?;

        // Step 11: the token first, then the values in `_meta`.
        for claim in Claim::ALL {
            match claims.context(claim) {
                None if claim.required() => return Err(Reason::ContextMalformed),
                Some(v) if !claim.accepts(v) => return Err(Reason::ContextMalformed),
                _ => {}
            }
        }
        let s = |claim| claims.context(claim).and_then(Item::as_str);
        let text = |claim| s(claim).unwrap_or_default();
        let (task_id, tool_call_id) = (text(Claim::TaskId), text(Claim::ToolCallId));
        let key = text(Claim::IdempotencyKey);
        let composed = key.len() == task_id.len() + 1 + tool_call_id.len()
            && key.strip_prefix(task_id).and_then(|k| k.strip_prefix(':')) == Some(tool_call_id);
        if !composed {
            return Err(Reason::ContextMalformed);
        }
        // `_meta` is read once for steps 11 and 14: how many keys name a
        // context claim, step 11's refusal if one of them is malformed
        // (it comes before any other), and step 14's first refusal in
        // document order (a key without its claim in the token, or with
        // another value), given after steps 12 and 13.
        let mut bound = 0;
        let mut unbound = None;
        for (k, v) in context_meta() {
            let at = READ_INDEX.position(k);
            let claim = at
                .and_then(|i| i.checked_sub(CONTEXT))
                .and_then(|i| Claim::ALL.get(i));
            if let Some(claim) = claim {
                if !claim.accepts(v) {
                    return Err(Reason::ContextMalformed);
                }
                bound += 1;
            }
            if unbound.is_none() {
                unbound = match claims.get_at(at, k) {
                    None => Some(Reason::ClaimMissing),
                    Some(c) if !c.json_eq(v) => Some(Reason::MetaMismatch),
                    Some(_) => None,
                };
            }
        }

        // Step 12.
        let tool = match claims.at(TOOL) {
            None => None,
            Some(t) if t.as_str() == Some(name) => Some(String::from(name)),
            Some(_) => return Err(Reason::ToolMismatch),
        };

        // Step 13.
        let protocol = text(Claim::Protocol);
        if !self.major_supported(protocol_major(protocol).unwrap_or_default()) {
            return Err(Reason::ProtocolUnsupported);
        }

        // Step 14: `_meta` keys in document order (read above), then the
        // token's claims.
        if let Some(reason) = unbound {
            return Err(reason);
        }
        // Each of those keys has its claim in the token (and names it
        // once): fewer keys than claims means a claim without its key.
        if bound < claims.found.iter().skip(CONTEXT).flatten().count() {
            return Err(Reason::MetaMissing);
        }

        let owned = |claim| s(claim).map(String::from);
        Ok(Some(Context {
            task_id: String::from(task_id),
            tool_call_id: String::from(tool_call_id),
            workspace_id: String::from(text(Claim::WorkspaceId)),
            idempotency_key: String::from(key),
            protocol: String::from(protocol),
            agent_id: owned(Claim::AgentId),
            end_user_id: owned(Claim::EndUserId),
            metadata: claims
                .context(Claim::Metadata)
                .map(|m| JsonText::new(m.to_compact())),
            tool,
            jti: claims.at(JTI).and_then(Item::as_str).map(String::from),
            iat,
            exp,
            secret_index,
            request_id: None,
            upstream: Vec::new(),
            #[cfg(feature = "policy")]
            policy_audit: None,
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
    fn check_times(&self, claims: &Claims<'_, '_>, now: u64) -> Result<(u64, u64), Reason> {
        if claims.at(ISS).and_then(Item::as_str) != Some(ISSUER) {
            return Err(Reason::IssuerInvalid);
        }
        let id = self.config.instance_id.as_str();
        if !claims.at(AUD).is_some_and(|aud| audience_ok(aud, id)) {
            return Err(Reason::AudienceInvalid);
        }
        let date = |i| claims.at(i).and_then(Item::as_numeric_date);
        let (Some(iat), Some(exp)) = (date(IAT), date(EXP)) else {
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
        if let Some(nbf) = claims.at(NBF) {
            let nbf = nbf.as_numeric_date().ok_or(Reason::ClaimInvalid)?;
            if nbf > now.saturating_add(skew) {
                return Err(Reason::TokenNotYetValid);
            }
        }
        if claims.at(JTI).is_some_and(|j| j.as_str().is_none()) {
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

/// The token header's checks (step 9): `alg` pinned, `typ` if any `JWT`,
/// no `crit` nor `b64`. Inlined: its one call (the wasm builds' only
/// path) then costs no more wasm than before it was split out.
#[inline(always)]
fn check_jose(jose: Item<'_, '_>) -> Result<(), Reason> {
    let mut found = [None; 4];
    jose.get_all(&[b"alg", b"typ", b"crit", b"b64"], &mut found);
    let [alg, typ, crit, b64] = found;
    if alg.and_then(Item::as_str) != Some("HS256") {
        return Err(Reason::AlgNotAllowed);
    }
    if typ.is_some_and(|t| t.as_str() != Some("JWT")) {
        return Err(Reason::TokenMalformed);
    }
    if crit.is_some() || b64.is_some() {
        return Err(Reason::CritNotSupported);
    }
    Ok(())
}

/// `aud` names `id`: a string, or an array of strings with `id` among them.
fn audience_ok(aud: Item<'_, '_>, id: &str) -> bool {
    if aud.kind() != JsonKind::Array {
        return aud.as_str() == Some(id);
    }
    let mut found = false;
    for item in aud.elements() {
        match item.as_str() {
            Some(a) => found |= a == id,
            None => return false,
        }
    }
    found
}

/// The `_meta` members that carry context, as (claim name, value).
#[derive(Clone)]
struct ContextMeta<'d, 'b>(Members<'d, 'b>);

impl<'d, 'b> Iterator for ContextMeta<'d, 'b> {
    type Item = (&'d [u8], Item<'d, 'b>);

    // One copy for the three loops over it (the wasm builds are size-bound).
    #[inline(never)]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (k, v) = self.0.next()?;
            // The prefix compared in words (`strip_prefix` calls `memcmp`).
            let prefix = META_PREFIX.as_bytes();
            if let Some((head, k)) = k.str_bytes().and_then(|k| k.split_at_checked(prefix.len())) {
                if scan::equal(head, prefix) {
                    return Some((k, v));
                }
            }
        }
    }
}

/// A token's header or payload, read by the body's reader.
fn read_token(bytes: &[u8]) -> Result<Doc<'_>, Reason> {
    json::read(bytes, Keep::All).map_err(|_| Reason::TokenMalformed)
}

/// The top-level value of a token's header or payload, which must be an object.
fn token_object<'d, 'a>(doc: &'d Doc<'a>) -> Result<Item<'d, 'a>, Reason> {
    doc.root()
        .filter(|v| v.is_object())
        .ok_or(Reason::TokenMalformed)
}

// The payload members the checks read, by their place in `READ`: the
// registered claims, then the context claims in table order.
const ISS: usize = 0;
const AUD: usize = 1;
const IAT: usize = 2;
const EXP: usize = 3;
const NBF: usize = 4;
const JTI: usize = 5;
const TOOL: usize = 6;
const CONTEXT: usize = 7;
const READ: [&[u8]; CONTEXT + Claim::ALL.len()] = {
    let mut names: [&[u8]; CONTEXT + Claim::ALL.len()] = [
        b"iss", b"aud", b"iat", b"exp", b"nbf", b"jti", b"tool", b"", b"", b"", b"", b"", b"", b"",
        b"",
    ];
    let mut i = 0;
    while i < Claim::ALL.len() {
        // In range: `names` has room for every claim after `CONTEXT`.
        #[allow(clippy::indexing_slicing)]
        {
            names[CONTEXT + i] = claims::NAMES[i];
        }
        i += 1;
    }
    names
};

/// `READ` found by table rather than scanned.
static READ_INDEX: NameIndex<{ READ.len() }> = NameIndex::new(READ);

/// The token payload, with the members the checks read found in one pass.
struct Claims<'d, 'a> {
    all: Item<'d, 'a>,
    found: [Option<Item<'d, 'a>>; READ.len()],
}

impl<'d, 'a> Claims<'d, 'a> {
    fn read(all: Item<'d, 'a>) -> Claims<'d, 'a> {
        let mut found = [None; READ.len()];
        READ_INDEX.get_all(all, &mut found);
        Claims { all, found }
    }

    fn at(&self, i: usize) -> Option<Item<'d, 'a>> {
        self.found.get(i).copied().flatten()
    }

    fn context(&self, claim: Claim) -> Option<Item<'d, 'a>> {
        self.at(CONTEXT + claim as usize)
    }

    /// The claim `name`, whatever it is, given its place in `READ`.
    fn get_at(&self, read_at: Option<usize>, name: &[u8]) -> Option<Item<'d, 'a>> {
        match read_at {
            Some(i) => self.at(i),
            None => self.all.member(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each payload member costs one compare: no two read names share a
    /// slot of the index.
    #[test]
    fn read_names_each_have_their_own_slot() {
        assert!(READ_INDEX.direct());
        for (i, name) in READ.iter().enumerate() {
            assert_eq!(READ_INDEX.position(name), Some(i));
        }
    }
}
