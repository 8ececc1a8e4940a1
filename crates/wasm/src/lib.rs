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
//!   `verify` with the whole request), `a` + the context as JSON (then a
//!   newline and the request id's JSON text, when there is one or headers
//!   follow; then newline, name, newline, value for each header the core
//!   decided to set upstream), `c` + a ticket, the claim's `until` and its
//!   `jti` on lines of their own (see the replay guard below), `r` + the
//!   refusal as JSON (`status`, `code`, `reason`, `message`, `id`, `body`,
//!   every field as the core rendered it);
//! - `removedHeaders`: the lower-case header names to remove from every
//!   request that passes or is accepted (every copy, any case) before the
//!   accepted call's headers are set, one per line, fixed per configuration.
//! - `describeRequest(method, body, reason)`: the request's JSON-RPC method
//!   and tool as the core read them (`telemetry::describe`), asked by the
//!   TypeScript layer only when a span or a verdict event will use them.
//!
//! The npm package's TypeScript layer builds the inputs and reads the tag:
//! `toolctx-wasm-boundary` (`crates/wasm-boundary`, shared with the
//! conventions module and the raw module) here, `npm/src/boundary.ts` there.
//!
//! Headers, then body: `checkHeaders` keeps the core's `Checked` proof in
//! this object, with a copy of the method and headers it checked, under
//! the ticket it answers (`b<ticket>`); `verifyBody(ticket, body, now)`
//! takes them back, once, and runs the core's `check_body` on them, so the
//! body check neither runs steps 0 and 1 again nor can be handed other
//! headers. A ticket that holds nothing answers `u`, never a verdict.
//!
//! The replay guard (CONTRACT §3, `token_replayed`, `replay_guard_full`) is
//! the core's too: with an in-memory store the verifier holds a
//! `ReplayCache` and every verdict goes through `check_body_once`; with a
//! shared (asynchronous) store an accepted call answers `c` with the core's
//! `Verifier::claim` while its pending claim waits here under the ticket, the
//! TypeScript layer asks the store, and `settle(ticket, answer)` gives the
//! core's final verdict (`Verifier::settle`). The Redis command a store
//! sends is the core's as well (`redisClaimArgs`), and so is what its reply
//! means (`redisClaimAnswer`, in `replay.rs`).

mod replay;

use toolctx_core::replay::redis;
use toolctx_core::ReplayClaim;
use toolctx_wasm_boundary::{described, AgentArea, Boundary};
use wasm_bindgen::prelude::*;

/// A validated configuration with the HMAC key state precomputed, held in
/// WebAssembly memory for the life of the JavaScript object: the AgentArea
/// profile (`toolctx-wasm-boundary`'s `AgentArea`, which the raw module
/// shares) with the header checks waiting for their body.
#[wasm_bindgen]
pub struct Verifier {
    boundary: Boundary<AgentArea>,
}

#[wasm_bindgen]
impl Verifier {
    /// Reads the configuration in the core's JSON form (snake_case setting
    /// names, `forward` included; an unknown setting is refused) and
    /// validates it.
    ///
    /// `replay_capacity` above 0 turns on the in-memory replay guard, for
    /// at most that many live token ids (0: no guard here); `shared_store`
    /// turns on the claims for a shared store instead (`c`, `settle`).
    ///
    /// Throws a string `"<code>\n<message>"`: the core's stable
    /// `ConfigError::code` and its message, which never contains a secret.
    #[wasm_bindgen(constructor)]
    pub fn new(
        config_json: &[u8],
        include_reason: bool,
        replay_capacity: u32,
        shared_store: bool,
    ) -> Result<Verifier, JsValue> {
        let profile = AgentArea::new(config_json, replay_capacity as usize, shared_store)?;
        Ok(Verifier {
            boundary: Boundary::new(profile, include_reason),
        })
    }

    /// The body limit: read at most this many bytes, one more proves the
    /// body too large.
    #[wasm_bindgen(getter, js_name = maxBodyBytes)]
    pub fn max_body_bytes(&self) -> usize {
        self.boundary.profile.max_body_bytes()
    }

    /// The header names to remove upstream from every request that passes
    /// or is accepted, lower-case, one per line (the core's
    /// `Forward::removed`); empty when nothing is forwarded.
    #[wasm_bindgen(getter, js_name = removedHeaders)]
    pub fn removed_headers(&self) -> String {
        self.boundary.profile.removed_headers()
    }

    /// Steps 0 and 1 (method and static credential), before the body is
    /// read: `p`, `r` + refusal, or `b` + a ticket for `verifyBody`, which
    /// keeps the core's proof here with the method and headers checked.
    #[wasm_bindgen(js_name = checkHeaders)]
    pub fn check_headers(&mut self, heads: &[u8], lens: &[u32]) -> Result<String, JsValue> {
        Ok(self.boundary.check_headers(heads, lens)?)
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
        Ok(self.boundary.verify(heads, lens, body, now)?)
    }

    /// `verify`'s verdict for the request that `checkHeaders` gave `ticket`
    /// for, on the method and headers it checked then, without steps 0 and
    /// 1; `u` when the ticket holds nothing (never issued, already used, or
    /// forgotten): then call `verify` with the whole request.
    #[wasm_bindgen(js_name = verifyBody)]
    pub fn verify_body(&mut self, ticket: f64, body: &[u8], now: f64) -> Result<String, JsValue> {
        Ok(self.boundary.verify_body(ticket, body, now)?)
    }

    /// The final verdict on the accepted call that answered `c` + `ticket`,
    /// once the shared replay store answered its claim: `answer` is
    /// `first_use`, `used`, `full` or `failed`, or a bool (`true` first
    /// use, `false` used); anything else is `failed`. The core decides
    /// (`Verifier::settle`): `a` + context, or `r` + refusal. A ticket that
    /// holds nothing (never issued, settled already, pushed out) is refused
    /// `internal_error`.
    pub fn settle(&mut self, ticket: f64, answer: JsValue) -> String {
        let include_reason = self.boundary.include_reason;
        self.boundary
            .profile
            .settle(ticket, replay::store_answer(&answer), include_reason)
    }

    /// The verifier with its configuration, secrets and credential values
    /// redacted (the core's `Config::describe`), for `toString` and
    /// `util.inspect`.
    pub fn describe(&self) -> String {
        self.boundary.profile.describe()
    }
}

/// The Redis command that claims `jti` until `until` at Unix second `now`
/// under `prefix`: the core's `replay::redis::claim_args` (`SET <key> 1 NX
/// PX <ms>`), for the npm package's `redisReplayStore`.
#[wasm_bindgen(js_name = redisClaimArgs)]
pub fn redis_claim_args(prefix: &str, jti: &str, until: f64, now: f64) -> Vec<String> {
    // `as` saturates: the TypeScript layer hands non-negative integers.
    let claim = ReplayClaim {
        jti: jti.into(),
        until: until as u64,
    };
    redis::claim_args(prefix, &claim, now as u64).into()
}

/// The request's JSON-RPC method and tool as the core read them, for
/// telemetry: `[]`, `[method]` or `[method, tool]` (the core's
/// `telemetry::describe`; `reason` empty unless the verdict was a refusal).
#[wasm_bindgen(js_name = describeRequest)]
pub fn describe_request(method: &str, body: &[u8], reason: &str) -> Vec<String> {
    described(method, body, reason)
}

/// The core's default Redis key prefix for token ids (`toolctx:jti:`).
#[wasm_bindgen(js_name = redisKeyPrefix)]
pub fn redis_key_prefix() -> String {
    redis::DEFAULT_KEY_PREFIX.into()
}
