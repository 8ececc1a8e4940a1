//! The replay guard's vocabulary for the npm package, from the core: the
//! answers a store gives (`first_use`, `used`, `full`, `failed`), the one
//! reading of Redis's reply to the claim, and the defaults (the in-memory
//! capacity, the store timeout's rule). The TypeScript layer converts its Redis
//! client's reply into a kind and bytes (`npm/src/redis.ts`); what that
//! reply means is decided here, by the core.

use toolctx_core::ClaimAnswer;
use wasm_bindgen::prelude::*;

/// What Redis's reply to the claim (`redisClaimArgs`) means, as an answer's
/// name: `kind` is `nil`, `status`, `bulk`, `integer`, `error` or `other`
/// and `value` its bytes (a status's or error's text, a bulk string, an
/// integer's decimal text). A kind or value the core does not know is no
/// answer: `failed`, never `first_use`.
#[wasm_bindgen(js_name = redisClaimAnswer)]
pub fn redis_claim_answer(kind: &str, value: &[u8]) -> String {
    toolctx_wasm_boundary::redis_claim_answer(kind, value)
        .as_str()
        .into()
}

/// A custom store's answer as the core reads it: `true` first use, `false`
/// used, an answer's name as itself; anything else `failed`.
pub(crate) fn store_answer(answer: &JsValue) -> ClaimAnswer {
    match (answer.as_bool(), answer.as_string()) {
        (Some(first_use), _) => ClaimAnswer::of(first_use),
        (None, Some(name)) => ClaimAnswer::from_name(&name),
        (None, None) => ClaimAnswer::Failed,
    }
}

/// How long one Redis command may wait for its reply, in milliseconds:
/// the core's store timeout rule (`redis::timeout_ms`) over the user's
/// `timeoutMs` (`undefined` or 0: the default, 500; else rounded to whole
/// milliseconds, 1 to 60,000). Throws `"<code>\n<message>"`
/// (`limit_out_of_range`) for any other number.
#[wasm_bindgen(js_name = redisTimeoutMs)]
pub fn redis_timeout_ms(raw: Option<f64>) -> Result<u32, JsValue> {
    toolctx_wasm_boundary::redis_timeout_ms(raw)
}
