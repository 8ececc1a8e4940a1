//! The idempotency helper's rules (CONTRACT §5), the core's
//! (`toolctx_core::helpers::idempotency`), for `toolctx/helpers`
//! (`npm/src/idempotency.ts`, `npm/src/redis.ts`): here, in the module the
//! helpers load, rather than in the verifier's, which every user ships.
//! Strings and bytes in, strings out; a refusal throws
//! `"<code>\n<message>"`.

use toolctx_core::helpers::idempotency::{self as core, redis, Held, Outcome, Wait};
use toolctx_wasm_boundary::js_error;
use wasm_bindgen::prelude::*;

/// The store key of `key` in `namespace` (the namespace escaped, `:`, the key).
#[wasm_bindgen(js_name = idemStoreKey)]
pub fn store_key(namespace: &str, key: &str) -> String {
    core::store_key(namespace, key)
}

/// `prefix` then the store key.
#[wasm_bindgen(js_name = idemRedisKey)]
pub fn redis_key(prefix: &str, store_key: &str) -> String {
    core::redis_key(prefix, store_key)
}

/// Lowercase hex SHA-256 of the RFC 8785 form of a JSON text; throws
/// `not_canonicalizable`.
#[wasm_bindgen(js_name = idemArgumentHash)]
pub fn argument_hash(arguments_json: &str) -> Result<String, JsValue> {
    core::argument_hash(arguments_json.as_bytes()).map_err(|e| js_error("not_canonicalizable", e))
}

/// The running entry (the claim) as stored.
#[wasm_bindgen(js_name = idemRunning)]
pub fn running(hash: &str, owner: &str) -> String {
    core::running(hash, owner)
}

/// The done entry as stored; throws `idempotency_entry_invalid` when the
/// result is not a JSON object.
#[wasm_bindgen(js_name = idemDone)]
pub fn done(hash: &str, result_json: &str) -> Result<String, JsValue> {
    core::done(hash, result_json.as_bytes()).map_err(|e| js_error(core::ENTRY_INVALID, e))
}

/// What a store holds (its bytes), read and written again as the core
/// encodes it (`{"state", "hash", "owner" | "result"}`); throws
/// `idempotency_entry_invalid` for anything else.
#[wasm_bindgen(js_name = idemReadEntry)]
pub fn read_entry(raw: &[u8]) -> Result<String, JsValue> {
    core::Entry::read(raw)
        .map(|e| e.encode())
        .map_err(|e| js_error(core::ENTRY_INVALID, e))
}

/// A held entry for a call whose arguments hash to `hash`: `c` conflict,
/// `w` in flight (wait), `r` + the replayed result's JSON; throws
/// `idempotency_entry_invalid`.
#[wasm_bindgen(js_name = idemHeld)]
pub fn held(raw: &[u8], hash: &str) -> Result<String, JsValue> {
    match core::held(raw, hash).map_err(|e| js_error(core::ENTRY_INVALID, e))? {
        Held::Conflict => Ok("c".into()),
        Held::InFlight => Ok("w".into()),
        Held::Replay(result) => Ok(format!("r{result}")),
    }
}

/// Milliseconds to sleep before claiming again, or -1: the wait is over.
#[wasm_bindgen(js_name = idemWait)]
pub fn wait(now_ms: f64, deadline_ms: f64, round: u32) -> f64 {
    // Whole non-negative milliseconds; JavaScript numbers are exact to 2^53.
    let ms = |v: f64| {
        if v.is_finite() && v > 0.0 {
            v as u64
        } else {
            0
        }
    };
    match core::wait(ms(now_ms), ms(deadline_ms), round) {
        Wait::Refuse => -1.0,
        Wait::Sleep(pause) => pause as f64,
    }
}

/// The default refusal for `outcome` as a `CallToolResult`'s JSON.
#[wasm_bindgen(js_name = idemRefusal)]
pub fn refusal(outcome: &str, key: &str) -> Result<String, JsValue> {
    let outcome = Outcome::from_name(outcome)
        .ok_or_else(|| js_error("invalid_argument", "unknown idempotency outcome"))?;
    Ok(core::refusal(outcome, key))
}

fn whole_ms(v: f64) -> u64 {
    if v.is_finite() && v > 0.0 {
        v.ceil() as u64
    } else {
        0
    }
}

/// A command's arguments as a JSON array of strings (one string across the
/// boundary rather than a `string[]`'s glue).
fn args_json(args: &[String]) -> String {
    let mut out = String::from("[");
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        toolctx_core::json::write_str(a, &mut out);
    }
    out.push(']');
    out
}

/// The arguments of the store command `command`, as a JSON array of
/// strings: `claim` `SET key entry NX PX ms`, `read` `GET key`, `complete`
/// `SET key entry PX ms`, `release` `EVAL <release script> 1 key entry`
/// (milliseconds rounded up, at least 1); `[]` for another command.
#[wasm_bindgen(js_name = idemRedisArgs)]
pub fn redis_args(command: &str, key: &str, entry: &str, ms: f64) -> String {
    match redis::Command::from_name(command) {
        Some(redis::Command::Claim) => args_json(&redis::claim_args(key, entry, whole_ms(ms))),
        Some(redis::Command::Read) => args_json(&redis::read_args(key)),
        Some(redis::Command::Complete) => {
            args_json(&redis::complete_args(key, entry, whole_ms(ms)))
        }
        Some(redis::Command::Release) => args_json(&redis::release_args(key, entry)),
        None => "[]".into(),
    }
}

/// What a reply to `command` (`claim`, `read`, `complete`, `release`)
/// means (`claimed`, `taken`, `held`, `gone`, `stored`, `released`,
/// `not_held`, `failed`). The reply as `npm/src/redis.ts` hands it over:
/// `kind` `nil`, `status` (`text`), `bulk` (`bytes`), `integer`
/// (`integer`) or `error` (`text`); any other kind means `failed`.
#[wasm_bindgen(js_name = idemRedisMeaning)]
pub fn redis_meaning(command: &str, kind: &str, text: &str, bytes: &[u8], integer: f64) -> String {
    let Some(command) = redis::Command::from_name(command) else {
        return redis::Meaning::Failed.as_str().into();
    };
    let reply = match kind {
        "nil" => redis::Reply::Nil,
        "status" => redis::Reply::Status(text),
        "bulk" => redis::Reply::Bulk(bytes),
        // Only whole numbers are Redis integers.
        "integer" if integer.fract() == 0.0 && integer.abs() < 9.0e15 => {
            redis::Reply::Integer(integer as i64)
        }
        _ => redis::Reply::Error(text),
    };
    redis::meaning(command, reply).as_str().into()
}

/// The defaults and names as JSON: `{"keyPrefix", "ttlMs", "leaseMs",
/// "waitMs", "memoryEntries", "storeTimeoutMs", "claimRounds", "replayed",
/// "outcomeKey", "releaseScript", "outcomes"}`.
#[wasm_bindgen(js_name = idemDefaults)]
pub fn defaults() -> String {
    let mut out = String::from("{\"keyPrefix\":");
    toolctx_core::json::write_str(core::DEFAULT_KEY_PREFIX, &mut out);
    out.push_str(&format!(
        ",\"ttlMs\":{},\"leaseMs\":{},\"waitMs\":{},\"memoryEntries\":{},\"storeTimeoutMs\":{},\"claimRounds\":{}",
        core::DEFAULT_TTL_MS,
        core::DEFAULT_LEASE_MS,
        core::DEFAULT_WAIT_MS,
        core::DEFAULT_MEMORY_ENTRIES,
        core::DEFAULT_STORE_TIMEOUT_MS,
        core::CLAIM_ROUNDS
    ));
    for (name, value) in [
        ("replayed", core::REPLAYED),
        ("outcomeKey", core::OUTCOME_KEY),
        ("releaseScript", redis::RELEASE_SCRIPT),
    ] {
        out.push_str(",\"");
        out.push_str(name);
        out.push_str("\":");
        toolctx_core::json::write_str(value, &mut out);
    }
    out.push_str(",\"outcomes\":[");
    for (i, o) in Outcome::ALL.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        toolctx_core::json::write_str(o.as_str(), &mut out);
    }
    out.push_str("]}");
    out
}
