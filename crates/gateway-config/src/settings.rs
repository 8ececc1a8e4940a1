//! The loaded settings and the decision a gateway applies: the core's
//! verdict and upstream headers, with the gateway's stores plugged in.

use std::fmt::Write as _;

#[cfg(feature = "aivax")]
use toolctx_core::aivax::{AivaxVerifier, NonceCache};
pub use toolctx_core::PendingClaim;
use toolctx_core::{Checked, ClaimAnswer, Claimed, HeadersVerdict, Refusal, Verdict, Verifier};

use crate::replay::ReplayGuard;

/// Which contract the gateway verifies, with its verifier (which holds what
/// it forwards upstream).
#[derive(Debug)]
pub enum Profile {
    /// AgentArea's signed context token (CONTRACT §2).
    AgentArea {
        verifier: Verifier,
        replay: Option<ReplayGuard>,
    },
    /// AIVAX's `_aiv_*` members (CONTRACT §7).
    #[cfg(feature = "aivax")]
    Aivax {
        verifier: AivaxVerifier,
        /// Verified nonces each VM remembers (0: no cache).
        nonce_cache: usize,
    },
}

/// Most nonces a VM's cache holds: the settings table's (`nonce_cache`).
pub use toolctx_core::settings::MAX_NONCE_CACHE;

/// Everything a gateway needs, validated once at start-up.
#[derive(Debug)]
pub struct Settings {
    pub profile: Profile,
    /// Leave `error.data.reason` in refusal bodies (the default).
    pub include_reason: bool,
}

/// What the gateway does with a request whose body was checked.
#[derive(Debug, PartialEq, Eq)]
pub enum Decision {
    /// Forward it without the [`Settings::removed_headers`]: not a
    /// `tools/call` (or one let through without context, `require_context:
    /// false`).
    Pass,
    /// A verified call: forward it without the removed headers and with
    /// these set, `(lower-case name, value)`, values encoded by the core.
    Accept(Vec<(String, String)>),
    /// Answer with the core's refusal; nothing goes upstream.
    Reject(Refusal),
}

/// The replay guard's shared store: records a token id until a Unix
/// second and answers (the core says what the answer means).
pub type ClaimJti<'a> = &'a mut dyn FnMut(&str, u64) -> ClaimAnswer;

/// The stores a body check may use (see [`Settings::check_body`]).
#[derive(Default)]
pub struct Stores<'a> {
    /// The replay guard's store: required with `replay_guard`.
    pub first_use: Option<ClaimJti<'a>>,
    /// The AIVAX nonces already verified (`nonce_cache`), when kept.
    #[cfg(feature = "aivax")]
    pub nonces: Option<&'a mut NonceCache>,
}

/// What a body check leaves to do when the replay guard's store answers
/// later (Redis, asked without blocking): see [`Settings::check_body_deferred`].
#[derive(Debug)]
pub enum Deferred {
    /// Decided without the store: apply it.
    Decided(Decision),
    /// An accepted call whose token id must be claimed first: send
    /// [`PendingClaim::claim`] to the store, then hand its answer to
    /// [`Settings::settle`].
    Claim(PendingClaim),
}

impl Settings {
    /// Every header name the gateway writes, lower-case: removed from every
    /// request that passes or is accepted, so a caller cannot spoof it (the
    /// core's list, read once at load time).
    pub fn removed_headers(&self) -> &[String] {
        match &self.profile {
            Profile::AgentArea { verifier, .. } => verifier.config().forward.removed(),
            #[cfg(feature = "aivax")]
            Profile::Aivax { verifier, .. } => verifier.forward().removed(),
        }
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

    /// The checks after the headers' on the complete body, for whichever
    /// profile is configured, as what the gateway does next.
    /// `stores.first_use` is the replay guard's store, required when one is
    /// configured (the core calls it only once every other check passed,
    /// and decides what its answer means: a failed store is
    /// `internal_error`, a full one `replay_guard_full`); `stores.nonces`
    /// the AIVAX nonces the gateway remembers, if it keeps them. `Err` only
    /// when the gateway was wired without the store its configuration
    /// needs: refuse with `internal_error`.
    pub fn check_body<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        checked: Checked,
        headers: &[(N, V)],
        body: &[u8],
        now: u64,
        stores: Stores<'_>,
    ) -> Result<Decision, String> {
        Ok(match &self.profile {
            Profile::AgentArea { verifier, replay } => match (replay, stores.first_use) {
                (None, _) => decision(verifier.check_body(checked, headers, body, now)),
                (Some(_), Some(store)) => {
                    decision(verifier.check_body_once(checked, headers, body, now, store))
                }
                (Some(_), None) => return Err("the replay guard has no store".into()),
            },
            #[cfg(feature = "aivax")]
            Profile::Aivax { verifier, .. } => decision(match stores.nonces {
                Some(cache) => verifier.check_body_cached(checked, headers, body, cache),
                None => verifier.check_body(checked, headers, body),
            }),
        })
    }

    /// [`Settings::check_body`] for a replay guard whose store answers
    /// asynchronously: a call the core accepts comes back as
    /// [`Deferred::Claim`] (or refused, as the core refuses a token it
    /// cannot guard); anything else is decided here. `Err` when no replay
    /// guard is configured.
    pub fn check_body_deferred<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        checked: Checked,
        headers: &[(N, V)],
        body: &[u8],
        now: u64,
    ) -> Result<Deferred, String> {
        let Profile::AgentArea {
            verifier,
            replay: Some(_),
        } = &self.profile
        else {
            return Err("no replay guard to claim in".into());
        };
        // The core's sequence (`Verifier::claim`, then `settle`): this only
        // turns its verdicts into what the gateway does.
        Ok(
            match verifier.claim(verifier.check_body(checked, headers, body, now)) {
                Claimed::Claim(pending) => Deferred::Claim(pending),
                Claimed::Decided(verdict) => Deferred::Decided(decision(verdict)),
            },
        )
    }

    /// The decision on a [`PendingClaim`] once the store answered (the
    /// core's `Verifier::settle`: a first use is accepted with the headers
    /// the core computed, anything else refused as the core says).
    pub fn settle(&self, pending: PendingClaim, answer: ClaimAnswer) -> Result<Decision, String> {
        match &self.profile {
            Profile::AgentArea { verifier, .. } => Ok(decision(verifier.settle(pending, answer))),
            #[cfg(feature = "aivax")]
            Profile::Aivax { .. } => Err("a replay claim under the aivax profile".into()),
        }
    }

    /// One line for the log: what is configured, never a secret.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        match &self.profile {
            Profile::AgentArea { verifier, replay } => {
                let c = verifier.config();
                let _ = write!(
                    out,
                    "profile agentarea for instance {} with {} secret(s), credential {}, max_body_bytes {}, \
                     {} forwarded header(s), replay guard {}",
                    c.instance_id,
                    c.secrets.len(),
                    if c.credential.is_some() { "on" } else { "off" },
                    c.max_body_bytes,
                    c.forward.removed().len(),
                    replay.as_ref().map_or_else(|| "off".to_string(), ReplayGuard::summary)
                );
            }
            #[cfg(feature = "aivax")]
            Profile::Aivax {
                verifier,
                nonce_cache,
            } => {
                let _ = write!(
                    out,
                    "profile aivax, max_body_bytes {}, {} forwarded header(s), nonce cache {}",
                    verifier.max_body_bytes(),
                    verifier.forward().removed().len(),
                    if *nonce_cache == 0 {
                        "off".to_string()
                    } else {
                        format!("{nonce_cache} entries")
                    }
                );
            }
        }
        out
    }
}

/// The core's verdict as what the gateway does; an accepted call hands on
/// the headers the core computed for it.
fn decision<C: toolctx_core::Accepted + Upstreamed>(verdict: Verdict<C>) -> Decision {
    match verdict {
        Verdict::Pass => Decision::Pass,
        Verdict::Reject(r) => Decision::Reject(r),
        Verdict::Accept(mut ctx) => Decision::Accept(ctx.take_upstream()),
    }
}

/// A context whose upstream headers can be moved out.
trait Upstreamed {
    fn take_upstream(&mut self) -> Vec<(String, String)>;
}

impl Upstreamed for toolctx_core::Context {
    fn take_upstream(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.upstream)
    }
}

#[cfg(feature = "aivax")]
impl Upstreamed for toolctx_core::aivax::AivaxContext {
    fn take_upstream(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.upstream)
    }
}
