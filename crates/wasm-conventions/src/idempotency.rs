//! The idempotency helper's rules (CONTRACT §5), the core's
//! (`toolctx_core::helpers::idempotency`, in the string forms of
//! `toolctx_wasm_boundary::helpers`), for `toolctx/helpers`
//! (`npm/src/idempotency.ts`, `npm/src/redis.ts`): here, in the module the
//! helpers load, rather than in the verifier's, which every user ships.
//! Strings and bytes in, strings out; a refusal throws
//! `"<code>\n<message>"`.

use toolctx_core::helpers::memory;
use toolctx_wasm_boundary::helpers as h;
use wasm_bindgen::prelude::*;

/// The store key of `key` in `namespace` (the namespace escaped, `:`, the key).
#[wasm_bindgen(js_name = idemStoreKey)]
pub fn store_key(namespace: &str, key: &str) -> String {
    h::idem_store_key(namespace, key)
}

/// `prefix` then the store key.
#[wasm_bindgen(js_name = idemRedisKey)]
pub fn redis_key(prefix: &str, store_key: &str) -> String {
    h::idem_redis_key(prefix, store_key)
}

/// Lowercase hex SHA-256 of the RFC 8785 form of a JSON text; throws
/// `not_canonicalizable`.
#[wasm_bindgen(js_name = idemArgumentHash)]
pub fn argument_hash(arguments_json: &str) -> Result<String, JsValue> {
    Ok(h::idem_argument_hash(arguments_json.as_bytes())?)
}

/// The running entry (the claim) as stored.
#[wasm_bindgen(js_name = idemRunning)]
pub fn running(hash: &str, owner: &str) -> String {
    h::idem_running(hash, owner)
}

/// The done entry as stored; throws `idempotency_entry_invalid` when the
/// result is not a JSON object.
#[wasm_bindgen(js_name = idemDone)]
pub fn done(hash: &str, result_json: &str) -> Result<String, JsValue> {
    Ok(h::idem_done(hash, result_json.as_bytes())?)
}

/// What a store holds (its bytes), read and written again as the core
/// encodes it; throws `idempotency_entry_invalid` for anything else.
#[wasm_bindgen(js_name = idemReadEntry)]
pub fn read_entry(raw: &[u8]) -> Result<String, JsValue> {
    Ok(h::idem_read_entry(raw)?)
}

/// A held entry for a call whose arguments hash to `hash`: `c` conflict,
/// `w` in flight (wait), `r` + the replayed result's JSON for the retrying
/// request's protocol `revision` (`""` when none is known); throws
/// `idempotency_entry_invalid`.
#[wasm_bindgen(js_name = idemHeld)]
pub fn held(raw: &[u8], hash: &str, revision: &str) -> Result<String, JsValue> {
    Ok(h::idem_held(raw, hash, revision)?)
}

/// Milliseconds to sleep before claiming again, or -1: the wait is over.
#[wasm_bindgen(js_name = idemWait)]
pub fn wait(now_ms: f64, deadline_ms: f64, round: u32) -> f64 {
    h::idem_wait(whole_ms(now_ms), whole_ms(deadline_ms), round).map_or(-1.0, |ms| ms as f64)
}

/// The default refusal for `outcome` as a `CallToolResult`'s JSON.
#[wasm_bindgen(js_name = idemRefusal)]
pub fn refusal(outcome: &str, key: &str) -> Result<String, JsValue> {
    Ok(h::idem_refusal(outcome, key)?)
}

/// A JavaScript time in milliseconds, whole (JavaScript numbers are exact
/// to 2^53): 0 for anything negative or not a number.
fn whole_ms(v: f64) -> u64 {
    if v.is_finite() && v > 0.0 {
        v as u64
    } else {
        0
    }
}

/// A lease or TTL in milliseconds, rounded up.
fn ms_up(v: f64) -> u64 {
    whole_ms(v.ceil())
}

/// The arguments of the store command `command` as a JSON array of strings
/// (one string across the boundary rather than a `string[]`'s glue);
/// milliseconds rounded up; `[]` for another command.
#[wasm_bindgen(js_name = idemRedisArgs)]
pub fn redis_args(command: &str, key: &str, entry: &str, ms: f64) -> String {
    let mut out = String::new();
    toolctx_wasm_boundary::codes_json(
        h::idem_redis_args(command, key, entry, ms_up(ms))
            .iter()
            .map(String::as_str),
        &mut out,
    );
    out
}

/// What a reply to `command` (`claim`, `read`, `complete`, `release`)
/// means. The reply as `npm/src/redis.ts` (`replyParts`) hands it over: a
/// kind's name and its value as bytes.
#[wasm_bindgen(js_name = idemRedisMeaning)]
pub fn redis_meaning(command: &str, kind: &str, value: &[u8]) -> String {
    h::idem_redis_meaning(command, kind, value).into()
}

/// How long one Redis command may wait for its reply, in milliseconds: the
/// core's store timeout rule over the user's `timeoutMs` (`undefined` or 0:
/// the default, 500; else rounded to whole milliseconds, 1 to 60,000);
/// throws `limit_out_of_range` for any other number.
#[wasm_bindgen(js_name = redisTimeoutMs)]
pub fn redis_timeout_ms(raw: Option<f64>) -> Result<u32, JsValue> {
    toolctx_wasm_boundary::redis_timeout_ms(raw)
}

/// A setting of the core's table (docs/CONTRACT.md §5.3) read from the
/// user's JavaScript value (`undefined`/`null`: not given): the value to
/// use; throws `"<code>\n<message>"` (`config_type`, `limit_out_of_range`,
/// `config_placeholder`, ...).
#[wasm_bindgen(js_name = readSetting)]
pub fn read_setting(name: &str, raw: JsValue) -> Result<JsValue, JsValue> {
    toolctx_wasm_boundary::read_setting(name, &raw)
}

/// The defaults and names as JSON (`toolctx_wasm_boundary::helpers::idem_defaults`).
#[wasm_bindgen(js_name = idemDefaults)]
pub fn defaults() -> String {
    h::idem_defaults()
}

/// The core's in-memory idempotency store (`toolctx_core::helpers::memory`:
/// expiry, capacity, the exact-text release rule), for
/// `memoryIdempotencyStore`: entries as their stored text, times in
/// JavaScript milliseconds (leases and TTLs rounded up). One method for
/// the four operations: each method of a class costs its own glue.
#[wasm_bindgen(js_name = IdemMemoryStore)]
pub struct MemoryStore {
    core: memory::MemoryStore,
}

#[wasm_bindgen(js_class = IdemMemoryStore)]
impl MemoryStore {
    /// A store for `capacity` entries, the count `readSetting` read from
    /// the user's `idempotency_memory_entries` (a cast saturates; the core
    /// keeps at least one).
    #[wasm_bindgen(constructor)]
    pub fn new(capacity: f64) -> MemoryStore {
        MemoryStore {
            core: memory::MemoryStore::new(capacity as usize),
        }
    }

    /// Operation `op` on `key` at `now`: 0 claim (`entry` for `ms`):
    /// `undefined` when the claim is the caller's, else the entry that
    /// holds the key; 1 read: the live entry, if any; 2 complete (`entry`
    /// for `ms`): `undefined`; 3 release: `""` when the key held exactly
    /// `entry` and is deleted, else `undefined`.
    pub fn run(&mut self, op: u32, key: &str, entry: &str, ms: f64, now: f64) -> Option<String> {
        let (ms, now) = (ms_up(ms), whole_ms(now));
        match op {
            0 => self.core.claim(key, entry, ms, now),
            1 => self.core.read(key, now),
            2 => {
                self.core.complete(key, entry, ms, now);
                None
            }
            _ => self.core.release(key, entry, now).then(String::new),
        }
    }

    /// Entries held.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> f64 {
        self.core.len() as f64
    }
}
