//! The server helpers' rules (CONTRACT §5, `toolctx_core::helpers`) in the
//! string forms every host reads: the npm package's `toolctx/helpers`
//! (through `crates/wasm-conventions`) and the Go and Java front ends
//! (through the raw module, `crates/wasm-abi`). Times are whole
//! milliseconds; each binding converts its host's numbers first.

use toolctx_core::helpers::idempotency::{self as core, redis, Held, Outcome, Wait};
use toolctx_core::helpers::progress::{Coalescer, Report, Step, Tick, INTERVAL_MS};
use toolctx_core::helpers::results::{self, LimitCode};
use toolctx_core::json::write_str;

use crate::codes::codes_json;
use crate::Error;

/// The store key of `key` in `namespace` (the namespace escaped, `:`, the key).
pub fn idem_store_key(namespace: &str, key: &str) -> String {
    core::store_key(namespace, key)
}

/// `prefix` then the store key.
pub fn idem_redis_key(prefix: &str, store_key: &str) -> String {
    core::redis_key(prefix, store_key)
}

/// Lowercase hex SHA-256 of the RFC 8785 form of a JSON text;
/// `not_canonicalizable` otherwise.
pub fn idem_argument_hash(arguments_json: &[u8]) -> Result<String, Error> {
    core::argument_hash(arguments_json).map_err(|e| Error::new("not_canonicalizable", e))
}

/// The RFC 8785 canonical form of a JSON text (`not_json`,
/// `not_canonicalizable`): what the argument hash is taken over.
pub fn canonical_json(text: &[u8]) -> Result<String, Error> {
    let value = toolctx_core::json::parse(text).map_err(|e| Error::new("not_json", e))?;
    toolctx_core::jcs::canonicalize(&value).map_err(|e| Error::new("not_canonicalizable", e))
}

/// The running entry (the claim) as stored.
pub fn idem_running(hash: &str, owner: &str) -> String {
    core::running(hash, owner)
}

/// The done entry as stored; `idempotency_entry_invalid` when the result
/// is not a JSON object.
pub fn idem_done(hash: &str, result_json: &[u8]) -> Result<String, Error> {
    core::done(hash, result_json).map_err(|e| Error::new(core::ENTRY_INVALID, e))
}

/// What a store holds (its bytes), read and written again as the core
/// encodes it (`{"state", "hash", "owner" | "result"}`);
/// `idempotency_entry_invalid` for anything else.
pub fn idem_read_entry(raw: &[u8]) -> Result<String, Error> {
    core::Entry::read(raw)
        .map(|e| e.encode())
        .map_err(|e| Error::new(core::ENTRY_INVALID, e))
}

/// A held entry for a call whose arguments hash to `hash`: `c` conflict,
/// `w` in flight (wait), `r` + the replayed result's JSON, written for
/// the retrying request's protocol `revision` (`""` when none is known);
/// `idempotency_entry_invalid` for an entry the core cannot read.
pub fn idem_held(raw: &[u8], hash: &str, revision: &str) -> Result<String, Error> {
    match core::held(raw, hash, revision).map_err(|e| Error::new(core::ENTRY_INVALID, e))? {
        Held::Conflict => Ok("c".into()),
        Held::InFlight => Ok("w".into()),
        Held::Replay(result) => Ok(format!("r{result}")),
    }
}

/// Milliseconds to sleep before claiming again, or `None`: the wait is
/// over, refuse.
pub fn idem_wait(now_ms: u64, deadline_ms: u64, round: u32) -> Option<u64> {
    match core::wait(now_ms, deadline_ms, round) {
        Wait::Refuse => None,
        Wait::Sleep(pause) => Some(pause),
    }
}

/// The default refusal for `outcome` as a `CallToolResult`'s JSON;
/// `invalid_argument` for an outcome the core does not name.
pub fn idem_refusal(outcome: &str, key: &str) -> Result<String, Error> {
    let outcome = Outcome::from_name(outcome)
        .ok_or_else(|| Error::new("invalid_argument", "unknown idempotency outcome"))?;
    Ok(core::refusal(outcome, key))
}

/// The arguments of the store command `command`: `claim` `SET key entry NX
/// PX ms`, `read` `GET key`, `complete` `SET key entry PX ms`, `release`
/// `EVAL <release script> 1 key entry`; empty for another command.
pub fn idem_redis_args(command: &str, key: &str, entry: &str, ms: u64) -> Vec<String> {
    match redis::Command::from_name(command) {
        Some(redis::Command::Claim) => redis::claim_args(key, entry, ms).into(),
        Some(redis::Command::Read) => redis::read_args(key).into(),
        Some(redis::Command::Complete) => redis::complete_args(key, entry, ms).into(),
        Some(redis::Command::Release) => redis::release_args(key, entry).into(),
        None => Vec::new(),
    }
}

/// What a reply to `command` (`claim`, `read`, `complete`, `release`)
/// means (`claimed`, `taken`, `held`, `gone`, `stored`, `released`,
/// `not_held`, `failed`): the reply as a kind's name and its value's bytes,
/// read by the core's `Reply::from_parts`.
pub fn idem_redis_meaning(command: &str, kind: &str, value: &[u8]) -> &'static str {
    let Some(command) = redis::Command::from_name(command) else {
        return redis::Meaning::Failed.as_str();
    };
    // A kind the core has no name for, or a value its kind cannot hold, is
    // a reply no command expects: a failed store.
    let reply = toolctx_core::redis::Reply::from_parts(kind, value)
        .unwrap_or(toolctx_core::redis::Reply::Other);
    redis::meaning(command, reply).as_str()
}

/// The defaults and names as JSON: `{"keyPrefix", "ttlMs", "leaseMs",
/// "waitMs", "memoryEntries", "storeTimeoutMs", "claimRounds", "replayed",
/// "outcomeKey", "releaseScript", "outcomes"}`.
pub fn idem_defaults() -> String {
    let mut out = String::from("{\"keyPrefix\":");
    write_str(core::DEFAULT_KEY_PREFIX, &mut out);
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
        write_str(value, &mut out);
    }
    out.push_str(",\"outcomes\":");
    codes_json(Outcome::ALL.iter().map(|o| o.as_str()), &mut out);
    out.push('}');
    out
}

/// `{"textChars","structuredChars","imageBytes","images","imageTypes",
/// "codes","progressIntervalMs"}`.
pub fn result_limits() -> String {
    let mut out = format!(
        "{{\"textChars\":{},\"structuredChars\":{},\"imageBytes\":{},\"images\":{},\"progressIntervalMs\":{},\"imageTypes\":",
        results::TEXT_CHARS,
        results::STRUCTURED_CHARS,
        results::IMAGE_BYTES,
        results::IMAGES,
        INTERVAL_MS
    );
    codes_json(results::IMAGE_TYPES.iter().copied(), &mut out);
    out.push_str(",\"codes\":");
    codes_json(LimitCode::ALL.iter().map(|c| c.as_str()), &mut out);
    out.push('}');
    out
}

/// The limits the result (a `tools/call` result as JSON) runs into, as a
/// JSON array of `{"code","message","size","limit","index"?}`; the core's
/// code for a result it cannot read.
pub fn check_result(result_json: &[u8]) -> Result<String, Error> {
    let findings = results::check(result_json).map_err(|e| Error::new(e.code(), e))?;
    let mut out = String::from("[");
    for (i, f) in findings.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        f.write_json(&mut out);
    }
    out.push(']');
    Ok(out)
}

/// One call's progress coalescing (the core's `Coalescer`). Its answers are
/// strings whose first character is a tag: `s` + the report to send as
/// JSON (`progress`, and `total`, `message` when present), `h` + the flush
/// time (held; a timer already waits), `a` + the flush time (held: arm a
/// timer for then), `d` + why it is dropped, `w` + the time to tick again,
/// `i` nothing held (the timer is done), `` nothing to flush.
pub struct Progress(Coalescer);

impl Progress {
    pub fn new(interval_ms: u64) -> Progress {
        Progress(Coalescer::new(interval_ms))
    }

    /// `s` + report, `h`/`a` + flush time, or `d` + reason.
    pub fn report(
        &mut self,
        now_ms: u64,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> String {
        match self.0.report(now_ms, progress, total, message) {
            Step::Send(r) => send(&r),
            Step::Hold { flush_at, arm } => format!("{}{flush_at}", if arm { 'a' } else { 'h' }),
            Step::Drop(why) => format!("d{}", why.as_str()),
        }
    }

    /// A timer fired: `s` + report, `w` + time, or `i`.
    pub fn tick(&mut self, now_ms: u64) -> String {
        match self.0.tick(now_ms) {
            Tick::Send(r) => send(&r),
            Tick::Wait(at) => format!("w{at}"),
            Tick::Idle => String::from("i"),
        }
    }

    /// `s` + the held report, to send now, or `` when nothing is held.
    pub fn flush(&mut self, now_ms: u64) -> String {
        self.0.flush(now_ms).map_or_else(String::new, |r| send(&r))
    }

    /// The call ended: nothing more is sent.
    pub fn close(&mut self) {
        self.0.close();
    }

    /// Reports sent so far.
    pub fn sent(&self) -> u64 {
        self.0.sent()
    }
}

/// `s` + `{"progress":P,"total":T,"message":M}`, numbers as JavaScript
/// writes them (the core only sends finite ones).
fn send(r: &Report) -> String {
    let mut out = String::from("s{\"progress\":");
    number(r.progress, &mut out);
    if let Some(total) = r.total {
        out.push_str(",\"total\":");
        number(total, &mut out);
    }
    if let Some(message) = &r.message {
        out.push_str(",\"message\":");
        write_str(message, &mut out);
    }
    out.push('}');
    out
}

/// A finite number as JavaScript writes it (the core's RFC 8785 writer);
/// anything else as `null`.
fn number(v: f64, out: &mut String) {
    let mut text = String::new();
    match toolctx_core::jcs::write_double(v, &mut text) {
        Ok(()) => out.push_str(&text),
        Err(_) => out.push_str("null"),
    }
}
