//! WebAssembly bindings over `toolctx-core` for the npm package `toolctx`:
//! the AgentArea verifier alone, so that the module the package's main
//! entries load stays small. The conventions (tool names, RFC 8785, the
//! Tuix key) and the AIVAX verifier are in `toolctx-wasm-conventions`, a
//! second module loaded only by the subpaths that need it.
//!
//! Nothing is decided here: the core decides, this crate only carries bytes
//! in and a compact verdict out. The boundary is kept cheap because it runs on
//! every request:
//!
//! - the method and the headers arrive as one `Uint8Array` holding their
//!   bytes back to back, with a `Uint32Array` of lengths (method, then name
//!   and value for each header, in order, duplicates kept);
//! - the body arrives as its own `Uint8Array`;
//! - the verdict leaves as one string whose first character is a tag:
//!   `p` pass, `b` + a ticket: read the body (headers only; the body goes
//!   to `verifyBody` with the ticket), `u` the ticket holds nothing (call
//!   `verify` with the whole request), `a` + the context as JSON
//!   (then a newline and the request id's JSON text, when there is one),
//!   `r` + the refusal as JSON (`status`, `code`, `reason`, `message`, `id`,
//!   `body`, every field as the core rendered it).
//!
//! The npm package's TypeScript layer builds the inputs and reads the tag:
//! `toolctx-wasm-boundary` (`crates/wasm-boundary`, shared with the
//! conventions module) here, `npm/src/boundary.ts` there.
//!
//! Headers, then body: `checkHeaders` keeps the core's `Checked` proof in
//! this object, with a copy of the method and headers it checked, under
//! the ticket it answers (`b<ticket>`); `verifyBody(ticket, body, now)`
//! takes them back, once, and runs the core's `check_body` on them, so the
//! body check neither runs steps 0 and 1 again nor can be handed other
//! headers. A ticket that holds nothing answers `u`, never a verdict.
//!
//! The replay guard (CONTRACT §3, `token_replayed`) is the core's too: with
//! an in-memory store the verifier holds a `ReplayCache` and every verdict
//! goes through `check_body_once`; with a shared (asynchronous) store the
//! TypeScript layer claims the `jti` after an accept and, when the claim
//! fails, answers with a refusal rendered here (`refuse`).

use toolctx_core::{
    Checked, Config, Context, HeadersVerdict, Reason, Refusal, ReplayCache, UnknownSettings,
    Verdict, Verifier as Core,
};
use toolctx_wasm_boundary::{config_error, refusal, Boundary, Profile};
use wasm_bindgen::prelude::*;

/// A validated configuration with the HMAC key state precomputed, held in
/// WebAssembly memory for the life of the JavaScript object.
#[wasm_bindgen]
pub struct Verifier {
    boundary: Boundary<AgentArea>,
}

/// The AgentArea profile's core, with the in-memory replay guard when
/// configured.
struct AgentArea {
    core: Core,
    replay: Option<ReplayCache>,
}

#[wasm_bindgen]
impl Verifier {
    /// Reads the configuration in the core's JSON form (snake_case setting
    /// names; an unknown setting is refused) and validates it.
    ///
    /// `replay_capacity` above 0 turns on the in-memory replay guard, for
    /// at most that many live token ids (0: no guard here).
    ///
    /// Throws a string `"<code>\n<message>"`: the core's stable
    /// `ConfigError::code` and its message, which never contains a secret.
    #[wasm_bindgen(constructor)]
    pub fn new(
        config_json: &[u8],
        include_reason: bool,
        replay_capacity: u32,
    ) -> Result<Verifier, JsValue> {
        let config = Config::from_json(config_json, UnknownSettings::Refuse);
        match config.and_then(Core::new) {
            Ok(core) => {
                let replay =
                    (replay_capacity > 0).then(|| ReplayCache::new(replay_capacity as usize));
                let profile = AgentArea { core, replay };
                Ok(Verifier {
                    boundary: Boundary::new(profile, include_reason),
                })
            }
            Err(e) => Err(config_error(&e)),
        }
    }

    /// The body limit: read at most this many bytes, one more proves the
    /// body too large.
    #[wasm_bindgen(getter, js_name = maxBodyBytes)]
    pub fn max_body_bytes(&self) -> usize {
        self.boundary.profile.core.max_body_bytes()
    }

    /// The tolerance for `exp`, `iat` and `nbf`, in seconds: a token is
    /// guarded against replay until `exp` plus this.
    #[wasm_bindgen(getter, js_name = clockSkewSeconds)]
    pub fn clock_skew_seconds(&self) -> f64 {
        self.boundary.profile.core.config().clock_skew_s as f64
    }

    /// Steps 0 and 1 (method and static credential), before the body is
    /// read: `p`, `r` + refusal, or `b` + a ticket for `verifyBody`, which
    /// keeps the core's proof here with the method and headers checked.
    #[wasm_bindgen(js_name = checkHeaders)]
    pub fn check_headers(&mut self, heads: &[u8], lens: &[u32]) -> Result<String, JsValue> {
        self.boundary.check_headers(heads, lens)
    }

    /// The whole decision, with the in-memory replay guard when there is
    /// one. `now` is Unix seconds (the caller checks that it is a
    /// non-negative integer).
    pub fn verify(
        &mut self,
        heads: &[u8],
        lens: &[u32],
        body: &[u8],
        now: f64,
    ) -> Result<String, JsValue> {
        self.boundary.verify(heads, lens, body, now)
    }

    /// `verify`'s verdict for the request that `checkHeaders` gave `ticket`
    /// for, on the method and headers it checked then, without steps 0 and
    /// 1; `u` when the ticket holds nothing (never issued, already used, or
    /// forgotten): then call `verify` with the whole request.
    #[wasm_bindgen(js_name = verifyBody)]
    pub fn verify_body(&mut self, ticket: f64, body: &[u8], now: f64) -> Result<String, JsValue> {
        self.boundary.verify_body(ticket, body, now)
    }

    /// The core's refusal for `reason` (a machine code such as
    /// `token_replayed`), answering the request id `id_json` (JSON text, as
    /// in an accepted context's `request_id`; `undefined` answers `null`):
    /// `r` + the refusal as JSON, as `verify` renders one. For a verdict
    /// completed outside the core (the replay guard's shared store).
    pub fn refuse(&self, reason: &str, id_json: Option<String>) -> Result<String, JsValue> {
        let reason = Reason::from_code(reason)
            .ok_or_else(|| JsValue::from_str("internal\nunknown refusal reason"))?;
        Ok(refusal(
            &Refusal::new(reason, id_json),
            self.boundary.include_reason,
        ))
    }

    /// The verifier with its configuration, secrets and credential values
    /// redacted (the core's `Debug`), for `toString` and `util.inspect`.
    pub fn describe(&self) -> String {
        format!("{:?}", self.boundary.profile.core)
    }
}

impl Profile for AgentArea {
    type Context = Context;

    fn check_headers(&self, method: &str, headers: &[(&[u8], &[u8])]) -> HeadersVerdict {
        self.core.check_headers(method, headers)
    }

    /// Steps 2 to 14 and the replay guard.
    fn check_body(
        &mut self,
        proof: Checked,
        headers: &[(&[u8], &[u8])],
        body: &[u8],
        now: f64,
    ) -> Verdict {
        // `as` saturates: negative and NaN become 0; the TS layer refuses both first.
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
}
