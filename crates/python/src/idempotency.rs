//! The idempotency helper's rules (CONTRACT §5), the core's
//! (`toolctx_core::helpers::idempotency`), for `toolctx.helpers.idempotency`:
//! the store key, the argument hash, the entry's encoding and reading, the
//! decision on a held entry, the wait, the refusals, the Redis commands and
//! the one reading of a Redis reply. Python runs the loop (the store's I/O,
//! sleeping) and applies the answers.

use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use toolctx_core::helpers::idempotency::{self as core, redis, Entry, Held, Outcome, Wait};
use toolctx_core::helpers::memory::MemoryStore;

use crate::convert::json_text;
use crate::errors::toolctx_error;

fn entry_invalid(py: Python<'_>) -> PyErr {
    toolctx_error(py, core::ENTRY_INVALID, core::EntryInvalid.to_string())
}

/// Bytes of a `str` (UTF-8) or `bytes` value; anything else is not an entry.
fn raw_bytes(py: Python<'_>, raw: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(s) = raw.cast::<PyString>() {
        return Ok(s
            .to_str()
            .map_err(|_| entry_invalid(py))?
            .as_bytes()
            .to_vec());
    }
    raw.cast::<PyBytes>()
        .map(|b| b.as_bytes().to_vec())
        .map_err(|_| entry_invalid(py))
}

/// The store key of `key` in `namespace` (the namespace escaped, `:`, the key).
#[pyfunction]
pub fn idempotency_store_key(namespace: &str, key: &str) -> String {
    core::store_key(namespace, key)
}

/// `prefix` then the store key.
#[pyfunction]
pub fn idempotency_redis_key(prefix: &str, store_key: &str) -> String {
    core::redis_key(prefix, store_key)
}

/// Lowercase hex SHA-256 of the RFC 8785 form of a Python JSON value.
#[pyfunction]
pub fn idempotency_argument_hash(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = json_text(value)?;
    core::argument_hash(text.as_bytes())
        .map_err(|e| toolctx_error(py, "not_canonicalizable", e.to_string()))
}

/// The running entry (the claim) as stored.
#[pyfunction]
pub fn idempotency_running(hash: &str, owner: &str) -> String {
    core::running(hash, owner)
}

/// The done entry as stored; `result_json` must be a JSON object.
#[pyfunction]
pub fn idempotency_done(py: Python<'_>, hash: &str, result_json: &str) -> PyResult<String> {
    core::done(hash, result_json.as_bytes()).map_err(|_| entry_invalid(py))
}

/// What a store holds, read: `("running", hash, owner)` or `("done", hash,
/// result_json)`; anything else raises `idempotency_entry_invalid`.
#[pyfunction]
pub fn idempotency_read_entry(
    py: Python<'_>,
    raw: &Bound<'_, PyAny>,
) -> PyResult<(&'static str, String, String)> {
    let bytes = raw_bytes(py, raw)?;
    match Entry::read(&bytes).map_err(|_| entry_invalid(py))? {
        Entry::Running { hash, owner } => Ok(("running", hash.into_owned(), owner.into_owned())),
        Entry::Done { hash, result } => Ok(("done", hash.into_owned(), result.to_json())),
    }
}

/// A held entry for a call whose arguments hash to `hash`: `("conflict",
/// None)`, `("in_flight", None)` or `("replay", result_json)`, the replay
/// written for the retrying request's protocol `revision` (`""` when none
/// is known).
#[pyfunction]
pub fn idempotency_held(
    py: Python<'_>,
    raw: &Bound<'_, PyAny>,
    hash: &str,
    revision: &str,
) -> PyResult<(&'static str, Option<String>)> {
    let bytes = raw_bytes(py, raw)?;
    Ok(
        match core::held(&bytes, hash, revision).map_err(|_| entry_invalid(py))? {
            Held::Conflict => ("conflict", None),
            Held::InFlight => ("in_flight", None),
            Held::Replay(result) => ("replay", Some(result)),
        },
    )
}

/// The milliseconds to sleep before claiming again, or `None`: the wait is
/// over (refuse `in_progress`).
#[pyfunction]
pub fn idempotency_wait(now_ms: u64, deadline_ms: u64, round: u32) -> Option<u64> {
    match core::wait(now_ms, deadline_ms, round) {
        Wait::Refuse => None,
        Wait::Sleep(ms) => Some(ms),
    }
}

/// The default refusal for `outcome` as a `CallToolResult`'s JSON.
#[pyfunction]
pub fn idempotency_refusal(py: Python<'_>, outcome: &str, key: &str) -> PyResult<String> {
    let outcome = Outcome::from_name(outcome).ok_or_else(|| {
        toolctx_error(
            py,
            "invalid_argument",
            format!("unknown idempotency outcome {outcome:?}"),
        )
    })?;
    Ok(core::refusal(outcome, key))
}

/// `SET key entry NX PX lease_ms`.
#[pyfunction]
pub fn idempotency_redis_claim_args(key: &str, entry: &str, lease_ms: u64) -> Vec<String> {
    redis::claim_args(key, entry, lease_ms).to_vec()
}

/// `GET key`.
#[pyfunction]
pub fn idempotency_redis_read_args(key: &str) -> Vec<String> {
    redis::read_args(key).to_vec()
}

/// `SET key entry PX ttl_ms`.
#[pyfunction]
pub fn idempotency_redis_complete_args(key: &str, entry: &str, ttl_ms: u64) -> Vec<String> {
    redis::complete_args(key, entry, ttl_ms).to_vec()
}

/// `EVAL <release script> 1 key entry`.
#[pyfunction]
pub fn idempotency_redis_release_args(key: &str, entry: &str) -> Vec<String> {
    redis::release_args(key, entry).to_vec()
}

/// What a redis-py reply to `command` (`claim`, `read`, `complete`,
/// `release`) means: `(meaning, held bytes or None)`, the reply read by
/// `crate::redis::read_reply`.
#[pyfunction]
pub fn idempotency_redis_meaning<'py>(
    py: Python<'py>,
    command: &str,
    reply: &Bound<'py, PyAny>,
) -> PyResult<(&'static str, Option<Bound<'py, PyBytes>>)> {
    let command = redis::Command::from_name(command).ok_or_else(|| {
        toolctx_error(
            py,
            "invalid_argument",
            format!("unknown Redis command {command:?}"),
        )
    })?;
    crate::redis::read_reply(reply, |reply| {
        let meaning = redis::meaning(command, reply);
        let held = match meaning {
            redis::Meaning::Held(bytes) => Some(PyBytes::new(py, bytes)),
            _ => None,
        };
        (meaning.as_str(), held)
    })
}

/// The constants: defaults, prefix, `_meta` keys, outcomes.
pub fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("IDEMPOTENCY_KEY_PREFIX", core::DEFAULT_KEY_PREFIX)?;
    m.add("IDEMPOTENCY_TTL_MS", core::DEFAULT_TTL_MS)?;
    m.add("IDEMPOTENCY_LEASE_MS", core::DEFAULT_LEASE_MS)?;
    m.add("IDEMPOTENCY_WAIT_MS", core::DEFAULT_WAIT_MS)?;
    m.add("IDEMPOTENCY_MEMORY_ENTRIES", core::DEFAULT_MEMORY_ENTRIES)?;
    m.add(
        "IDEMPOTENCY_STORE_TIMEOUT_MS",
        core::DEFAULT_STORE_TIMEOUT_MS,
    )?;
    m.add("IDEMPOTENCY_CLAIM_ROUNDS", core::CLAIM_ROUNDS)?;
    m.add("IDEMPOTENCY_REPLAYED", core::REPLAYED)?;
    m.add("IDEMPOTENCY_OUTCOME_KEY", core::OUTCOME_KEY)?;
    m.add("IDEMPOTENCY_RELEASE_SCRIPT", redis::RELEASE_SCRIPT)?;
    m.add(
        "IDEMPOTENCY_OUTCOMES",
        Outcome::ALL.iter().map(|o| o.as_str()).collect::<Vec<_>>(),
    )?;
    m.add_function(wrap_pyfunction!(idempotency_store_key, m)?)?;
    m.add_function(wrap_pyfunction!(idempotency_redis_key, m)?)?;
    m.add_function(wrap_pyfunction!(idempotency_argument_hash, m)?)?;
    m.add_function(wrap_pyfunction!(idempotency_running, m)?)?;
    m.add_function(wrap_pyfunction!(idempotency_done, m)?)?;
    m.add_function(wrap_pyfunction!(idempotency_read_entry, m)?)?;
    m.add_function(wrap_pyfunction!(idempotency_held, m)?)?;
    m.add_function(wrap_pyfunction!(idempotency_wait, m)?)?;
    m.add_function(wrap_pyfunction!(idempotency_refusal, m)?)?;
    m.add_function(wrap_pyfunction!(idempotency_redis_claim_args, m)?)?;
    m.add_function(wrap_pyfunction!(idempotency_redis_read_args, m)?)?;
    m.add_function(wrap_pyfunction!(idempotency_redis_complete_args, m)?)?;
    m.add_function(wrap_pyfunction!(idempotency_redis_release_args, m)?)?;
    m.add_function(wrap_pyfunction!(idempotency_redis_meaning, m)?)?;
    m.add_class::<IdempotencyMemoryStore>()?;
    Ok(())
}

/// The core's in-memory idempotency store (`toolctx_core::helpers::memory`:
/// expiry, capacity, the exact-text release rule), for
/// `toolctx.helpers.MemoryIdempotencyStore`: entries as their stored text,
/// times in milliseconds on the caller's clock. Each call holds the store's
/// lock for a few map operations and keeps the interpreter: releasing it
/// would cost more than the work.
#[pyclass(frozen, module = "toolctx")]
pub struct IdempotencyMemoryStore {
    core: Mutex<MemoryStore>,
}

impl IdempotencyMemoryStore {
    fn store(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, MemoryStore>> {
        self.core
            .lock()
            .map_err(|_| toolctx_error(py, core::STORE_FAILED, "the memory store is poisoned"))
    }
}

#[pymethods]
impl IdempotencyMemoryStore {
    /// Sized by the settings table's `idempotency_memory_entries` from the
    /// user's `capacity` (`None` or 0: its default); a value it refuses
    /// raises its `ConfigError`.
    #[new]
    #[pyo3(signature = (capacity = None))]
    fn new(
        py: Python<'_>,
        capacity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<IdempotencyMemoryStore> {
        let store = match capacity {
            Some(c) => crate::settings::with_raw(c, MemoryStore::with_entries)?,
            None => Ok(MemoryStore::default()),
        }
        .map_err(|e| crate::errors::setting_error(py, &e))?;
        Ok(IdempotencyMemoryStore {
            core: Mutex::new(store),
        })
    }

    /// `None` when the claim is the caller's (`entry` held for `lease_ms`),
    /// else the live entry that holds `key`.
    fn claim(
        &self,
        py: Python<'_>,
        key: &str,
        entry: &str,
        lease_ms: u64,
        now_ms: u64,
    ) -> PyResult<Option<String>> {
        Ok(self.store(py)?.claim(key, entry, lease_ms, now_ms))
    }

    /// The live entry under `key`, if any.
    fn read(&self, py: Python<'_>, key: &str, now_ms: u64) -> PyResult<Option<String>> {
        Ok(self.store(py)?.read(key, now_ms))
    }

    /// `entry` under `key` for `ttl_ms`, replacing whatever held it.
    fn complete(
        &self,
        py: Python<'_>,
        key: &str,
        entry: &str,
        ttl_ms: u64,
        now_ms: u64,
    ) -> PyResult<()> {
        self.store(py)?.complete(key, entry, ttl_ms, now_ms);
        Ok(())
    }

    /// Deletes `key` only while it holds exactly `entry`; `True` when it did.
    fn release(&self, py: Python<'_>, key: &str, entry: &str, now_ms: u64) -> PyResult<bool> {
        Ok(self.store(py)?.release(key, entry, now_ms))
    }

    #[getter]
    fn capacity(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.store(py)?.capacity())
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.store(py)?.len())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "IdempotencyMemoryStore(capacity={})",
            self.capacity(py)?
        ))
    }
}
