//! The AIVAX verifier: the shared envelope's steps, then the `_aiv_*`
//! members, and what goes upstream.

use alloc::vec::Vec;

use super::config::AivaxConfig;
use super::context::AivaxContext;
use super::field::AivaxField;
use super::members::check;
use super::nonce::NonceCache;
use crate::config::{
    self, ConfigError, Credential, UnknownSettings, DEFAULT_MAX_BODY_BYTES, MAX_BODY_LIMIT,
};
use crate::envelope::{next_verifier_id, Envelope};
use crate::forward::{Forward, Upstream};
use crate::json::{self, Value};
use crate::verdict::{Checked, HeadersVerdict, Verdict};

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
            ctx.upstream = self.forward.set_headers(&ctx, call.meta);
            Ok(Some(ctx))
        })
    }

    fn envelope(&self) -> Envelope<'_> {
        Envelope::new(self.id, self.credential.as_ref(), self.max_body_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
