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
//! - the request arrives in this object's own memory, where the TypeScript
//!   layer writes it directly (`reserve`, then the addresses at
//!   `answerPtr` in the module's memory, `wasmMemory()`): the method and the headers'
//!   bytes back to back, then the body, with the lengths (method, then name
//!   and value for each header, in order, duplicates kept) as `u32`s; a
//!   call names how many bytes and lengths it wrote, so one call into the
//!   module carries the whole request, with no copy made by wasm-bindgen;
//! - the verdict is left in this object's memory too, UTF-8 at the place
//!   `answerPtr` names (its address, then the call returns its length);
//!   its first character is a tag:
//!   `p` pass, `b` + a ticket: read the body (headers only; the body goes
//!   to `verifyBody` with the ticket), `u` the ticket holds nothing (call
//!   `verify` with the whole request), `A` + the context as a record
//!   (`record.rs`: the fields in the order of the core's JSON, each
//!   length-prefixed, then the headers the core decided to set upstream;
//!   the raw module answers `a` + JSON instead), `c` + a ticket, the
//!   claim's `until` and its `jti` on lines of their own (see the replay
//!   guard below), `r` + the refusal as JSON (`status`, `code`, `reason`,
//!   `message`, `id`, `body`, every field as the core rendered it);
//! - `headerNames`: the request headers the check reads (the TypeScript
//!   layer passes only these from fetch's `Headers`), then the lower-case
//!   header names to remove from every request that passes or is accepted
//!   (every copy, any case) before the accepted call's headers are set;
//!   fixed per configuration.
//! - `describeRequest(method, body, reason)`: the request's JSON-RPC method
//!   and tool as the core read them (`telemetry::describe`), asked by the
//!   TypeScript layer only when a span or a verdict event will use them.
//!
//! The npm package's TypeScript layer builds the inputs and reads the tag:
//! `toolctx-wasm-boundary` (`crates/wasm-boundary`, shared with the
//! conventions module and the raw module) here, `npm/src/boundary/` there.
//!
//! Headers, then body: `checkHeaders` keeps the core's `Checked` proof in
//! this object, with a copy of the method and headers it checked, under
//! the ticket it answers (`b<ticket>`); `verifyBody(ticket, body, now)`
//! (the body alone written to the input, `body` bytes) takes them back,
//! once, and runs the core's `check_body` on them, so the
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

mod record;
mod replay;

use toolctx_core::replay::redis;
use toolctx_core::settings::INCLUDE_REASON;
use toolctx_core::ReplayClaim;
use toolctx_wasm_boundary::{described, AgentArea, Boundary, Error};
use wasm_bindgen::prelude::*;

/// A validated configuration with the HMAC key state precomputed, held in
/// WebAssembly memory for the life of the JavaScript object: the AgentArea
/// profile (`toolctx-wasm-boundary`'s `AgentArea`, which the raw module
/// shares) with the header checks waiting for their body.
#[wasm_bindgen]
pub struct Verifier {
    boundary: Boundary<AgentArea>,
    /// The request as the TypeScript layer wrote it: the method and the
    /// headers' bytes back to back, then the body.
    input: Vec<u8>,
    /// Their lengths: the method's, then each header's name's and value's.
    lens: Vec<u32>,
    /// The last answer, kept until the next call.
    answer: String,
    /// The addresses the TypeScript layer reads: the answer's, the input's
    /// bytes' and lengths'.
    place: Vec<u32>,
}

#[wasm_bindgen]
impl Verifier {
    /// Reads the configuration in the core's JSON form (snake_case setting
    /// names, `forward` included; an unknown setting is refused) and
    /// validates it.
    ///
    /// `replay_capacity` (a number, or `undefined` for no guard here)
    /// turns on the in-memory replay guard, sized by the core
    /// (`replay::capacity_of_f64`, the settings table's `replay_capacity`
    /// row: 0 the default; refused `limit_out_of_range` unless a whole
    /// number in its range);
    /// `shared_store` turns on the claims for a shared store instead (`c`,
    /// `settle`). `include_reason` as the user gave it (`undefined`: the
    /// settings table's default).
    ///
    /// Throws a string `"<code>\n<message>"`: the core's stable
    /// `ConfigError::code` and its message, which never contains a secret.
    #[wasm_bindgen(constructor)]
    pub fn new(
        config_json: &[u8],
        include_reason: Option<bool>,
        replay_capacity: Option<f64>,
        shared_store: bool,
    ) -> Result<Verifier, JsValue> {
        let memory = replay_capacity
            .map(toolctx_core::replay::capacity_of_f64)
            .transpose()
            .map_err(|e| Error::config(&e))?;
        let profile = AgentArea::new(config_json, memory, shared_store, record::record)?;
        Ok(Verifier {
            boundary: Boundary::new(profile, INCLUDE_REASON.flag(include_reason)),
            input: Vec::new(),
            lens: Vec::new(),
            answer: String::new(),
            place: vec![0; 3],
        })
    }

    /// Makes room for a request of `bytes` bytes (method, headers and body)
    /// and `lens` lengths, keeping what they hold. The input may move:
    /// where its bytes and its lengths now are is at `answerPtr`, after the
    /// answer's address.
    pub fn reserve(&mut self, bytes: usize, lens: usize) {
        if self.input.len() < bytes {
            self.input.resize(bytes, 0);
        }
        if self.lens.len() < lens {
            self.lens.resize(lens, 0);
        }
        if let [_, input, lens] = &mut self.place[..] {
            *input = self.input.as_ptr() as u32;
            *lens = self.lens.as_ptr() as u32;
        }
    }

    /// Where the address of the last answer is, then those of the input's
    /// bytes and lengths (three `u32`s), fixed for the life of this object.
    #[wasm_bindgen(getter, js_name = answerPtr)]
    pub fn answer_ptr(&self) -> usize {
        self.place.as_ptr() as usize
    }

    /// The body limit: read at most this many bytes, one more proves the
    /// body too large.
    #[wasm_bindgen(getter, js_name = maxBodyBytes)]
    pub fn max_body_bytes(&self) -> usize {
        self.boundary.profile.max_body_bytes()
    }

    /// The request headers the check reads (the core's
    /// `Verifier::read_headers`), each followed by a newline; an empty line;
    /// then the header names to remove upstream from every request that
    /// passes or is accepted, lower-case, one per line (the core's
    /// `Forward::removed`), nothing when nothing is forwarded.
    #[wasm_bindgen(getter, js_name = headerNames)]
    pub fn header_names(&self) -> String {
        self.boundary.profile.header_names()
    }

    /// Steps 0 and 1 (method and static credential), before the body is
    /// read, on the method and headers written to the input (`heads` bytes,
    /// `lens` lengths): `p`, `r` + refusal, or `b` + a ticket for
    /// `verifyBody`, which keeps the core's proof here with the method and
    /// headers checked. Returns the answer's length.
    #[wasm_bindgen(js_name = checkHeaders)]
    pub fn check_headers(&mut self, heads: usize, lens: usize) -> Result<usize, JsValue> {
        let answer = request(&self.input, &self.lens, heads, lens, 0)
            .and_then(|(heads, _, lens)| self.boundary.check_headers(heads, lens));
        self.keep(answer)
    }

    /// The whole decision on the request written to the input (`heads`
    /// bytes of method and headers, `lens` lengths, then `body` bytes),
    /// with the in-memory replay guard when there is one. `now` is Unix
    /// seconds (the caller checks that it is a non-negative integer).
    /// Returns the answer's length.
    pub fn verify(
        &mut self,
        heads: usize,
        lens: usize,
        body: usize,
        now: f64,
    ) -> Result<usize, JsValue> {
        let answer = request(&self.input, &self.lens, heads, lens, body)
            .and_then(|(heads, body, lens)| self.boundary.verify(heads, lens, body, now));
        self.keep(answer)
    }

    /// `verify`'s verdict for the request that `checkHeaders` gave `ticket`
    /// for, on the method and headers it checked then, without steps 0 and
    /// 1, and the body written to the input (`body` bytes); `u` when the
    /// ticket holds nothing (never issued, already used, or forgotten):
    /// then call `verify` with the whole request. Returns the answer's
    /// length.
    #[wasm_bindgen(js_name = verifyBody)]
    pub fn verify_body(&mut self, ticket: f64, body: usize, now: f64) -> Result<usize, JsValue> {
        let answer = request(&self.input, &self.lens, 0, 0, body)
            .and_then(|(_, body, _)| self.boundary.verify_body(ticket, body, now));
        self.keep(answer)
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

impl Verifier {
    /// Keeps `answer` where `answerPtr` says; its length in bytes. One
    /// copy for the three calls: the module's size is budgeted.
    #[inline(never)]
    fn keep(&mut self, answer: Result<String, Error>) -> Result<usize, JsValue> {
        self.answer = answer?;
        if let Some(at) = self.place.first_mut() {
            *at = self.answer.as_ptr() as u32;
        }
        Ok(self.answer.len())
    }
}

/// A request in the input: its method and headers' bytes, its body, and
/// their lengths.
type Request<'a> = (&'a [u8], &'a [u8], &'a [u32]);

/// The request in the input: `heads` bytes of method and headers, then
/// `body` bytes, and `count` lengths.
fn request<'a>(
    input: &'a [u8],
    lens: &'a [u32],
    heads: usize,
    count: usize,
    body: usize,
) -> Result<Request<'a>, Error> {
    let rest = input.get(heads..).and_then(|rest| rest.get(..body));
    match (input.get(..heads), rest, lens.get(..count)) {
        (Some(heads), Some(body), Some(lens)) => Ok((heads, body, lens)),
        _ => Err(Error::internal("the request does not fit its input")),
    }
}

/// The module's memory, where the TypeScript layer writes each request
/// and reads each answer (`reserve`, `answerPtr`).
#[wasm_bindgen(js_name = wasmMemory)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
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
