//! The AgentArea profile both AgentArea verifier objects hold (the npm
//! package's `toolctx-wasm` and the raw module `crates/wasm-abi`): the
//! core, with the in-memory replay guard, or the accepted calls waiting for
//! a shared store's answer (`c` + ticket, then [`AgentArea::settle`]).

use toolctx_core::digits::push_u64;
use toolctx_core::{
    Checked, ClaimAnswer, Claimed, Config, Context, HeadersVerdict, PendingClaim, Reason, Refusal,
    ReplayCache, ReplayClaim, UnknownSettings, Verdict, Verifier,
};

use crate::verdicts::{refusal, verdict_in};
use crate::{Error, Profile, Tickets};

pub struct AgentArea {
    core: Verifier,
    replay: Option<ReplayCache>,
    claims: Option<Tickets<PendingClaim>>,
    form: fn(&Context) -> String,
}

/// How many accepted calls wait for a shared replay store's answer at once
/// per verifier; an older one is forgotten and its `settle` refused
/// `internal_error` (the hosts' stores bound each claim in time).
const WAITING_CLAIMS: usize = 4096;

impl AgentArea {
    /// Reads the configuration in the core's JSON form (snake_case setting
    /// names, `forward` included; an unknown setting is refused) and
    /// validates it. `memory` turns on the in-memory replay guard for at
    /// most that many live token ids (the core's `replay::capacity` of the
    /// host's number, which the caller asked); `shared_store` turns on
    /// the claims for a shared store instead (`c`, [`AgentArea::settle`]).
    /// An accepted call is answered in `form`: [`accepted`](crate::accepted)'s
    /// `a` + JSON (the raw module), or a module's own form (the npm
    /// module's record, `crates/wasm`, which its TypeScript layer reads
    /// without `JSON.parse`).
    pub fn new(
        config_json: &[u8],
        memory: Option<usize>,
        shared_store: bool,
        form: fn(&Context) -> String,
    ) -> Result<AgentArea, Error> {
        let core = Config::from_json(config_json, UnknownSettings::Refuse)
            .and_then(Verifier::new)
            .map_err(|e| Error::config(&e))?;
        Ok(AgentArea {
            core,
            replay: memory.map(ReplayCache::new),
            claims: shared_store.then(|| Tickets::new(WAITING_CLAIMS)),
            form,
        })
    }

    /// The body limit: read at most this many bytes, one more proves the
    /// body too large.
    pub fn max_body_bytes(&self) -> usize {
        self.core.max_body_bytes()
    }

    /// The token limit (`max_token_bytes`): a host sizes its HTTP server's
    /// request-head limit from it, so that a larger token reaches the check
    /// and is refused `token_too_large`.
    pub fn max_token_bytes(&self) -> usize {
        self.core.config().max_token_bytes
    }

    /// The request headers the check reads (the core's
    /// `Verifier::read_headers`, the token's last), an empty line, then the header names to
    /// remove upstream from every request that passes or is accepted
    /// ([`AgentArea::removed`]), each name ending in a newline: both lists in
    /// one answer, read once per verifier.
    pub fn header_names(&self) -> String {
        let mut out = String::new();
        for name in self.core.read_headers().into_iter().flatten() {
            line(name, &mut out);
        }
        line("", &mut out);
        for name in self.removed() {
            line(name, &mut out);
        }
        out
    }

    /// The names as the core holds them.
    pub fn removed(&self) -> &[String] {
        self.core.config().forward.removed()
    }

    /// The verifier with its configuration, secrets and credential values
    /// redacted (the core's `Config::describe`).
    pub fn describe(&self) -> String {
        let mut out = String::from("Verifier { config: ");
        self.core.config().describe(&mut out);
        out.push_str(" }");
        out
    }

    /// The final verdict on the accepted call that answered `c` + `ticket`,
    /// once the shared store answered its claim (`Verifier::settle`): `a` +
    /// context, or `r` + refusal. A ticket that holds nothing (never issued,
    /// settled already, pushed out) is refused `internal_error`.
    pub fn settle(&mut self, ticket: f64, answer: ClaimAnswer, include_reason: bool) -> String {
        match self.claims.as_mut().and_then(|c| c.take(ticket)) {
            Some(pending) => {
                verdict_in(self.core.settle(pending, answer), include_reason, self.form)
            }
            None => refusal(&Refusal::new(Reason::InternalError, None), include_reason),
        }
    }
}

impl Profile for AgentArea {
    type Context = Context;

    fn check_headers(&self, method: &str, headers: &[(&[u8], &[u8])]) -> HeadersVerdict {
        self.core.check_headers(method, headers)
    }

    /// Steps 2 to 14 and the in-memory replay guard.
    fn check_body(
        &mut self,
        proof: Checked,
        headers: &[(&[u8], &[u8])],
        body: &[u8],
        now: f64,
    ) -> Verdict {
        // `as` saturates: negative and NaN become 0; the hosts refuse both first.
        let now = now as u64;
        match &mut self.replay {
            Some(cache) => {
                self.core
                    .check_body_once(proof, headers, body, now, &mut |jti, until| {
                        cache.first_use(jti, until, now)
                    })
            }
            None => self.core.check_body(proof, headers, body, now),
        }
    }

    /// With a shared store, an accepted call answers what to claim (`c` +
    /// ticket, the claim's `until` and its `jti` on lines of their own) or
    /// the core's refusal of a token it cannot guard, and waits for
    /// [`AgentArea::settle`].
    fn answer(&mut self, v: Verdict, include_reason: bool) -> String {
        let Some(claims) = self.claims.as_mut() else {
            return verdict_in(v, include_reason, self.form);
        };
        match self.core.claim(v) {
            Claimed::Decided(v) => verdict_in(v, include_reason, self.form),
            Claimed::Claim(pending) => {
                let ReplayClaim { jti, until } = pending.claim().clone();
                let mut out = String::from("c");
                push_u64(claims.hold(pending).into(), &mut out);
                out.push('\n');
                push_u64(until, &mut out);
                out.push('\n');
                out.push_str(&jti);
                out
            }
        }
    }
}

/// `text` and a newline. Never inlined: one copy for every line (the
/// modules' sizes are budgeted).
#[inline(never)]
fn line(text: &str, out: &mut String) {
    out.push_str(text);
    out.push('\n');
}

/// What Redis's reply to the replay claim means: `kind` is `nil`, `status`,
/// `bulk`, `integer`, `error` or `other` and `value` its bytes (a status's
/// or error's text, a bulk string, an integer's decimal text). A kind or
/// value the core does not know is no answer: failed, never first use.
pub fn redis_claim_answer(kind: &str, value: &[u8]) -> ClaimAnswer {
    toolctx_core::redis::Reply::from_parts(kind, value).map_or(
        ClaimAnswer::Failed,
        toolctx_core::replay::redis::claim_answer,
    )
}
