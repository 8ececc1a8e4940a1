//! The second WebAssembly module of the npm package `toolctx`: what the
//! AgentArea verifier does not need, kept out of its module so that users
//! who only verify AgentArea calls do not ship it. Loaded only by the
//! package's subpaths `toolctx/conventions`, `toolctx/aivax` and
//! `toolctx/helpers`.
//!
//! - The AIVAX profile ([`AivaxVerifier`], CONTRACT §7): the same inputs and
//!   verdict tags as `toolctx-wasm`'s `Verifier` (the shared
//!   `toolctx-wasm-boundary`, `crates/wasm-boundary`), with a cache of verified nonces per
//!   verifier so that a repeated nonce skips bcrypt.
//! - The conventions of CONTRACT §6 and §7 (tool names, RFC 8785, the Tuix
//!   key): plain functions over strings.
//! - The core's description of a request for telemetry (`describeRequest`,
//!   as in `toolctx-wasm`), for the AIVAX verifier's spans and events.
//! - The idempotency helper's rules (`idempotency.rs`) and the cancellation
//!   key (`cancel.rs`), for `toolctx/helpers`.
//! - The core's machine codes ([`core_codes`]), for the npm package's test
//!   of its hand-copied unions and its build (the telemetry names); here
//!   rather than in the verifier's module, which every user of the package
//!   ships.
//!
//! Nothing is decided here: the core decides.

mod cancel;
mod helpers_limits;
mod idempotency;

use toolctx_core::aivax::{AivaxContext, AivaxVerdict, AivaxVerifier as AivaxCore, NonceCache};
use toolctx_core::settings::INCLUDE_REASON;
use toolctx_core::{jcs, json, names, Checked, HeadersVerdict, UnknownSettings};
use toolctx_wasm_boundary::{
    config_error, described, flag_setting, js_error, lines, Boundary, Profile,
};
use wasm_bindgen::prelude::*;

/// Verified nonces remembered per verifier object (bound to its hook key by
/// the core; failures are never cached): the settings table's default
/// (`nonce_cache`).
const NONCE_CACHE_ENTRIES: usize = toolctx_core::settings::DEFAULT_NONCE_CACHE;

/// The AIVAX profile (CONTRACT §7): the envelope checks, then the `_aiv_*`
/// members of `_meta`, with the nonce verified by bcrypt against the hook
/// key, or found among the nonces this object already verified.
#[wasm_bindgen]
pub struct AivaxVerifier {
    boundary: Boundary<Aivax>,
}

/// The AIVAX profile's core, with its cache of verified nonces.
struct Aivax {
    core: AivaxCore,
    nonces: NonceCache,
}

#[wasm_bindgen]
impl AivaxVerifier {
    /// Reads `{"hook_key", "require_nonce", "max_bcrypt_cost", "credential",
    /// "max_body_bytes", "forward"}` (an unknown setting is refused). Throws a string
    /// `"<code>\n<message>"`; the message never contains the hook key.
    /// `include_reason` as the user gave it, read by the settings table
    /// (`undefined` or `null`: its default; not a boolean: `config_type`).
    #[wasm_bindgen(constructor)]
    pub fn new(config_json: &[u8], include_reason: JsValue) -> Result<AivaxVerifier, JsValue> {
        let core = AivaxCore::from_json(config_json, UnknownSettings::Refuse)
            .map_err(|e| config_error(&e))?;
        let include_reason = flag_setting(&INCLUDE_REASON, &include_reason)?;
        let nonces = NonceCache::new(NONCE_CACHE_ENTRIES);
        Ok(AivaxVerifier {
            boundary: Boundary::new(Aivax { core, nonces }, include_reason),
        })
    }

    #[wasm_bindgen(getter, js_name = maxBodyBytes)]
    pub fn max_body_bytes(&self) -> usize {
        self.boundary.profile.core.max_body_bytes()
    }

    /// The header names to remove upstream from every request that passes
    /// or is accepted, lower-case, one per line (the core's
    /// `Forward::removed`), as in `toolctx-wasm`'s `Verifier`.
    #[wasm_bindgen(getter, js_name = removedHeaders)]
    pub fn removed_headers(&self) -> String {
        lines(self.boundary.profile.core.forward().removed())
    }

    /// Steps 0 and 1 (method and static credential), before the body is
    /// read: `p`, `r` + refusal, or `b` + a ticket for `verifyBody`, as in
    /// `toolctx-wasm`'s `Verifier`.
    #[wasm_bindgen(js_name = checkHeaders)]
    pub fn check_headers(&mut self, heads: &[u8], lens: &[u32]) -> Result<String, JsValue> {
        Ok(self.boundary.check_headers(heads, lens)?)
    }

    /// The whole decision (no clock: nothing in the profile expires).
    pub fn verify(&mut self, heads: &[u8], lens: &[u32], body: &[u8]) -> Result<String, JsValue> {
        Ok(self.boundary.verify(heads, lens, body, 0.0)?)
    }

    /// `verify`'s verdict for the request `checkHeaders` gave `ticket` for,
    /// on the headers it checked, without steps 0 and 1; `u` when the
    /// ticket holds nothing: then call `verify` with the whole request.
    #[wasm_bindgen(js_name = verifyBody)]
    pub fn verify_body(&mut self, ticket: f64, body: &[u8]) -> Result<String, JsValue> {
        Ok(self.boundary.verify_body(ticket, body, 0.0)?)
    }

    /// The verifier with the hook key and credential values redacted.
    pub fn describe(&self) -> String {
        format!("{:?}", self.boundary.profile.core)
    }
}

impl Profile for Aivax {
    type Context = AivaxContext;

    fn check_headers(&self, method: &str, headers: &[(&[u8], &[u8])]) -> HeadersVerdict {
        self.core.check_headers(method, headers)
    }

    /// Steps 2 to 7 and the `_aiv_*` members, the nonce cache consulted.
    fn check_body(
        &mut self,
        proof: Checked,
        headers: &[(&[u8], &[u8])],
        body: &[u8],
        _now: f64,
    ) -> AivaxVerdict {
        self.core
            .check_body_cached(proof, headers, body, &mut self.nonces)
    }
}

/// The request's JSON-RPC method and tool as the core read them, for the
/// AIVAX verifier's telemetry: as `toolctx-wasm`'s `describeRequest`.
#[wasm_bindgen(js_name = describeRequest)]
pub fn describe_request(method: &str, body: &[u8], reason: &str) -> Vec<String> {
    described(method, body, reason)
}

/// `mcp__<server>__<tool>`, the name a model sees (CONTRACT §6).
#[wasm_bindgen(js_name = qualifiedToolName)]
pub fn qualified_tool_name(instance_name: &str, tool: &str) -> String {
    names::qualified_tool_name(instance_name, tool)
}

/// `<server>` for an instance name (CONTRACT §6).
#[wasm_bindgen(js_name = serverLabel)]
pub fn server_label(instance_name: &str) -> String {
    names::server_label(instance_name)
}

/// The RFC 8785 canonical form of a JSON text. Throws `"<code>\n<message>"`
/// (`not_json` or `not_canonicalizable`).
#[wasm_bindgen(js_name = canonicalJson)]
pub fn canonical_json(text: &str) -> Result<String, JsValue> {
    Ok(toolctx_wasm_boundary::helpers::canonical_json(
        text.as_bytes(),
    )?)
}

/// The Tuix idempotency key (CONTRACT §7) over `arguments_json`, a JSON text.
#[wasm_bindgen(js_name = tuixIdempotencyKey)]
pub fn tuix_idempotency_key(
    session_id: &str,
    turn: &str,
    tool: &str,
    arguments_json: &str,
) -> Result<String, JsValue> {
    let value = json::parse(arguments_json.as_bytes()).map_err(|e| js_error("not_json", e))?;
    jcs::tuix_idempotency_key(session_id, turn, tool, &value)
        .map_err(|e| js_error("not_canonicalizable", e))
}

/// The core's machine codes and telemetry names, for the npm package's
/// test that its hand-written unions still match them
/// (`npm/test/codes.test.mjs`; `toolctx_wasm_boundary::core_codes`) and
/// for its build, which writes the telemetry names into the package.
#[wasm_bindgen(js_name = coreCodes)]
pub fn core_codes() -> String {
    toolctx_wasm_boundary::core_codes()
}
