//! Idempotent tools (CONTRACT §5): a retry carries the same idempotency key
//! and arguments with a new token. The first call's result is stored under
//! the verified key and a retry gets it back with
//! `_meta["agentarea/replayed"] = true`, without the tool running again.
//!
//! Every rule (store key, argument hash, entry encoding and validation,
//! conflict, wait and replay, refusals, defaults) is the core's
//! (`toolctx_core::helpers::idempotency`), shared with the npm and Python
//! packages; this module runs the loop (the store's I/O, sleeping) and
//! converts between rmcp's types and the core's JSON.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorData};
use serde::Serialize;
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use toolctx_core::helpers::idempotency as core;
use toolctx_core::helpers::memory;
use toolctx_core::settings::{self as setting, Raw, SettingError};
use toolctx_core::Context;

use crate::settings;

pub use toolctx_core::helpers::idempotency::{Outcome, OUTCOME_KEY, REPLAYED};

/// What a store holds under a key: a claim while the first call runs, or
/// the finished call's result.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Running {
        /// [`canonical_hash`] of the arguments.
        hash: String,
        /// Random id of the claiming call, so only it releases the claim.
        owner: String,
    },
    Done {
        hash: String,
        /// The `CallToolResult` as JSON.
        result: Value,
    },
}

impl Entry {
    /// The JSON a shared store keeps (the core's encoding, shared with the
    /// npm and Python packages: a release compares the exact text).
    pub fn encode(&self) -> Result<String, StoreError> {
        match self {
            Entry::Running { hash, owner } => Ok(core::running(hash, owner)),
            Entry::Done { hash, result } => {
                let text =
                    serde_json::to_vec(result).map_err(|e| StoreError::new(e.to_string()))?;
                core::done(hash, &text).map_err(|_| StoreError::entry_invalid())
            }
        }
    }

    /// Reads what a store holds (the core's validation): anything that is
    /// not an entry is `idempotency_entry_invalid`.
    pub fn decode(text: &[u8]) -> Result<Entry, StoreError> {
        match core::Entry::read(text).map_err(|_| StoreError::entry_invalid())? {
            core::Entry::Running { hash, owner } => Ok(Entry::Running {
                hash: hash.into_owned(),
                owner: owner.into_owned(),
            }),
            core::Entry::Done { hash, result } => Ok(Entry::Done {
                hash: hash.into_owned(),
                result: serde_json::from_str(&result.to_json())
                    .map_err(|_| StoreError::entry_invalid())?,
            }),
        }
    }
}

/// A store that failed (down, timed out, answered something else:
/// `idempotency_store_failed`), or that holds something under the key that
/// is not an entry (`idempotency_entry_invalid`).
#[derive(Debug, Clone)]
pub struct StoreError {
    code: &'static str,
    message: String,
}

impl StoreError {
    pub fn new(message: impl Into<String>) -> StoreError {
        StoreError {
            code: core::STORE_FAILED,
            message: message.into(),
        }
    }

    /// The key holds something that is not an entry.
    pub fn entry_invalid() -> StoreError {
        StoreError {
            code: core::ENTRY_INVALID,
            message: core::EntryInvalid.to_string(),
        }
    }

    /// `idempotency_store_failed` or `idempotency_entry_invalid`.
    pub fn code(&self) -> &'static str {
        self.code
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "toolctx: idempotency store: {}", self.message)
    }
}

impl std::error::Error for StoreError {}

pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Where results live. `claim` must be atomic across every process sharing
/// the store. [`MemoryStore`] and the Redis store (feature `redis`) ship.
pub trait IdempotencyStore: Send + Sync + 'static {
    /// When `key` holds nothing live, store `entry` for `lease` and answer
    /// `None` (the caller runs the tool); otherwise what `key` holds.
    fn claim<'a>(
        &'a self,
        key: &'a str,
        entry: &'a Entry,
        lease: Duration,
    ) -> StoreFuture<'a, Option<Entry>>;
    /// Store the finished call for `ttl`, replacing the claim.
    fn complete<'a>(&'a self, key: &'a str, entry: &'a Entry, ttl: Duration)
        -> StoreFuture<'a, ()>;
    /// Drop the claim `entry`, only while `key` still holds exactly it.
    fn release<'a>(&'a self, key: &'a str, entry: &'a Entry) -> StoreFuture<'a, ()>;
}

/// The in-memory store, for a server with one process (several replicas:
/// the Redis store): the core's (`toolctx_core::helpers::memory`, shared
/// with the npm and Python packages) behind a lock, on a monotonic clock.
/// Expiry, capacity (the least recently used leaves first) and the release
/// rule (only while the key holds exactly the caller's claim) are the
/// core's. Entries are kept as their stored text, as in Redis.
pub struct MemoryStore {
    inner: Mutex<memory::MemoryStore>,
    clock: Clock,
}

/// Milliseconds on a clock that only moves forward.
type Clock = Box<dyn Fn() -> u64 + Send + Sync>;

/// The monotonic clock (tokio's, so that a paused test clock moves it) in
/// milliseconds since the store was made.
fn monotonic() -> Clock {
    let start = Instant::now();
    Box::new(move || millis(start.elapsed()))
}

impl MemoryStore {
    /// Keeps at most `max_entries` (the least recently used goes first),
    /// read by the core's settings table (`idempotency_memory_entries`): 0
    /// is its default, a count past its range is refused.
    pub fn new(max_entries: usize) -> Result<MemoryStore, SettingError> {
        let store = memory::MemoryStore::with_entries(Raw::Number(max_entries as f64))?;
        Ok(MemoryStore::of(store, monotonic()))
    }

    fn of(store: memory::MemoryStore, clock: Clock) -> MemoryStore {
        MemoryStore {
            inner: Mutex::new(store),
            clock,
        }
    }

    pub fn len(&self) -> usize {
        self.inner.lock().map_or(0, |s| s.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `f` on the core's store at the clock's time.
    fn at<T>(&self, f: impl FnOnce(&mut memory::MemoryStore, u64) -> T) -> Result<T, StoreError> {
        let mut store = self
            .inner
            .lock()
            .map_err(|_| StoreError::new("memory store poisoned"))?;
        Ok(f(&mut store, (self.clock)()))
    }

    fn claim_text(
        &self,
        key: &str,
        mine: &str,
        lease: Duration,
    ) -> Result<Option<String>, StoreError> {
        self.at(|s, now| s.claim(key, mine, millis(lease), now))
    }

    fn complete_text(&self, key: &str, done: &str, ttl: Duration) -> Result<(), StoreError> {
        self.at(|s, now| s.complete(key, done, millis(ttl), now))
    }

    fn release_text(&self, key: &str, mine: &str) -> Result<bool, StoreError> {
        self.at(|s, now| s.release(key, mine, now))
    }
}

impl Default for MemoryStore {
    /// The core's default size (the settings table's absent value).
    fn default() -> MemoryStore {
        MemoryStore::of(memory::MemoryStore::default(), monotonic())
    }
}

impl IdempotencyStore for MemoryStore {
    fn claim<'a>(
        &'a self,
        key: &'a str,
        entry: &'a Entry,
        lease: Duration,
    ) -> StoreFuture<'a, Option<Entry>> {
        let r = entry
            .encode()
            .and_then(|mine| self.claim_text(key, &mine, lease))
            .and_then(|held| held.map(|t| Entry::decode(t.as_bytes())).transpose());
        Box::pin(std::future::ready(r))
    }

    fn complete<'a>(
        &'a self,
        key: &'a str,
        entry: &'a Entry,
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        let r = entry
            .encode()
            .and_then(|done| self.complete_text(key, &done, ttl));
        Box::pin(std::future::ready(r))
    }

    fn release<'a>(&'a self, key: &'a str, entry: &'a Entry) -> StoreFuture<'a, ()> {
        let r = entry
            .encode()
            .and_then(|mine| self.release_text(key, &mine))
            .map(|_| ());
        Box::pin(std::future::ready(r))
    }
}

/// The hash a retry's arguments are compared by (the core's
/// `argument_hash`: lowercase hex SHA-256 of the RFC 8785 form), the npm
/// and Python packages' `canonicalHash`.
pub fn canonical_hash(value: &impl Serialize) -> Result<String, ErrorData> {
    let text =
        serde_json::to_vec(value).map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
    core::argument_hash(&text).map_err(|e| ErrorData::invalid_params(e.to_string(), None))
}

type StoreErrorHook = Arc<dyn Fn(&StoreError) + Send + Sync>;

/// The idempotency guard for one tool (or several sharing a namespace).
///
/// - A call without a verified context has no key: refused (`unverified`,
///   the tool does not run) unless [`Idempotent::allow_unverified`].
/// - The first call with a key claims it, runs, and stores its result (an
///   `isError` one too: the tool ran). A tool that fails (`Err`) releases
///   the claim, so a retry runs again.
/// - A duplicate with the same arguments gets the stored result with
///   `_meta["agentarea/replayed"] = true`, or waits up to `wait` while the
///   first call runs (then `in_progress`); with other arguments it is a
///   `conflict`, never a replay.
/// - An `input_required` response (a round of a 2026-07-28 multi-round-trip
///   call) is not stored: the claim is released.
/// - A store that fails refuses the call (an error, the tool does not run);
///   one that fails to record a finished result is told to
///   [`Idempotent::on_store_error`] and the result is still returned.
#[derive(Clone)]
pub struct Idempotent {
    store: Arc<dyn IdempotencyStore>,
    ttl: Duration,
    lease: Duration,
    wait: Duration,
    namespace: String,
    allow_unverified: bool,
    on_store_error: StoreErrorHook,
}

impl Default for Idempotent {
    fn default() -> Idempotent {
        Idempotent::new(MemoryStore::default())
    }
}

impl Idempotent {
    /// The core's defaults for `ttl`, `lease` and `wait` (the settings
    /// table, docs/CONTRACT.md §5.3).
    pub fn new(store: impl IdempotencyStore) -> Idempotent {
        Idempotent {
            store: Arc::new(store),
            ttl: settings::duration_or_default(&setting::TTL),
            lease: settings::duration_or_default(&setting::LEASE),
            wait: settings::duration_or_default(&setting::WAIT),
            namespace: String::new(),
            allow_unverified: false,
            on_store_error: Arc::new(|e| eprintln!("{e} (the result was returned, not stored)")),
        }
    }

    /// How long a result is kept. Each duration is read by the core's
    /// settings table (docs/CONTRACT.md §5.3): zero is its default, one
    /// outside its range is refused (`limit_out_of_range`).
    pub fn ttl(mut self, ttl: Duration) -> Result<Idempotent, SettingError> {
        self.ttl = settings::duration(&setting::TTL, ttl)?;
        Ok(self)
    }

    /// How long a claim lasts if its process dies first: above the tool's
    /// longest run.
    pub fn lease(mut self, lease: Duration) -> Result<Idempotent, SettingError> {
        self.lease = settings::duration(&setting::LEASE, lease)?;
        Ok(self)
    }

    /// How long a duplicate waits for the first call to finish.
    pub fn wait(mut self, wait: Duration) -> Result<Idempotent, SettingError> {
        self.wait = settings::duration(&setting::WAIT, wait)?;
        Ok(self)
    }

    /// Keeps this tool's keys apart from other tools' in a shared store;
    /// joined with the idempotency key by the core's store key (see
    /// [`Idempotent::store_key`]).
    pub fn namespace(mut self, namespace: impl Into<String>) -> Idempotent {
        self.namespace = namespace.into();
        self
    }

    /// Where an idempotency key's entry lives in the store (the core's
    /// store key: the namespace escaped, `:`, the key), shared with the npm
    /// and Python packages; the Redis store puts its prefix before it.
    pub fn store_key(&self, idempotency_key: &str) -> String {
        core::store_key(&self.namespace, idempotency_key)
    }

    /// Runs calls without verified context unguarded (for a server whose
    /// layer has `require_context: false` and a tool safe to run twice for
    /// such callers). Default: refused as `unverified`.
    pub fn allow_unverified(mut self, allow: bool) -> Idempotent {
        self.allow_unverified = allow;
        self
    }

    /// Told when the store fails to record a finished call.
    pub fn on_store_error(
        mut self,
        hook: impl Fn(&StoreError) + Send + Sync + 'static,
    ) -> Idempotent {
        self.on_store_error = Arc::new(hook);
        self
    }

    /// Runs `tool` at most once per idempotency key of `context`, with
    /// `arguments` (the call's, as sent) for the conflict check. `revision`
    /// is the call's protocol revision ([`protocol_revision`](crate::rmcp::protocol_revision)
    /// of its `RequestContext`; `""` when none is known): a replay is
    /// written for it by the core. `cancel` (the call's `ctx.ct`) stops a
    /// duplicate's wait.
    pub async fn run<A, F, Fut>(
        &self,
        context: Option<&Context>,
        revision: &str,
        arguments: &A,
        cancel: &CancellationToken,
        tool: F,
    ) -> Result<CallToolResponse, ErrorData>
    where
        A: Serialize,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<CallToolResponse, ErrorData>>,
    {
        let Some(context) = context else {
            return if self.allow_unverified {
                tool().await
            } else {
                Ok(refusal(Outcome::Unverified, "").into())
            };
        };
        let failed = |e: StoreError| {
            ErrorData::internal_error(e.to_string(), Some(serde_json::json!({ "code": e.code() })))
        };
        let key = self.store_key(&context.idempotency_key);
        let hash = canonical_hash(arguments)?;
        let mine = Entry::Running {
            hash: hash.clone(),
            owner: uuid::Uuid::new_v4().to_string(),
        };
        let start = Instant::now();
        let deadline = millis(self.wait);
        let mut round = 0;
        loop {
            let Some(held) = self
                .store
                .claim(&key, &mine, self.lease)
                .await
                .map_err(failed)?
            else {
                break;
            };
            let text = held.encode().map_err(failed)?;
            match core::held(text.as_bytes(), &hash, revision)
                .map_err(|_| failed(StoreError::entry_invalid()))?
            {
                core::Held::Conflict => {
                    return Ok(refusal(Outcome::Conflict, &context.idempotency_key).into())
                }
                core::Held::Replay(result) => return replayed(&result).map(CallToolResponse::from),
                core::Held::InFlight => {}
            }
            let now = millis(start.elapsed());
            let pause = match core::wait(now, deadline, round) {
                core::Wait::Sleep(ms) if !cancel.is_cancelled() => ms,
                _ => return Ok(refusal(Outcome::InProgress, &context.idempotency_key).into()),
            };
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(pause)) => {}
                _ = cancel.cancelled() => {}
            }
            round += 1;
        }
        // Release the claim if this future is dropped (the call cancelled)
        // before the result is stored.
        let mut claim = Claim {
            store: Some(self.store.clone()),
            key: key.clone(),
            entry: mine.clone(),
        };
        let response = tool().await;
        let result = match &response {
            Ok(CallToolResponse::Complete(result)) => result,
            // A failed run, an input_required round or a task: nothing is stored.
            _ => {
                claim.release().await;
                return response;
            }
        };
        claim.store = None;
        let stored = serde_json::to_value(result)
            .map_err(|e| StoreError::new(e.to_string()))
            .map(|result| Entry::Done { hash, result });
        let recorded = match stored {
            Ok(done) => self.store.complete(&key, &done, self.ttl).await,
            Err(e) => Err(e),
        };
        if let Err(e) = recorded {
            (self.on_store_error)(&e);
        }
        response
    }
}

/// A held claim, released when the call ends without a result to store.
struct Claim {
    store: Option<Arc<dyn IdempotencyStore>>,
    key: String,
    entry: Entry,
}

impl Claim {
    async fn release(&mut self) {
        if let Some(store) = self.store.take() {
            // A claim that cannot be released expires with its lease.
            let _ = store.release(&self.key, &self.entry).await;
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(store) = self.store.take() {
            let (key, entry) = (std::mem::take(&mut self.key), self.entry.clone());
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    let _ = store.release(&key, &entry).await;
                });
            }
        }
    }
}

/// Milliseconds, saturating.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The core's replay (the stored result, `_meta["agentarea/replayed"] =
/// true` added, `resultType` where the call's revision has it) as rmcp's
/// result.
fn replayed(result: &str) -> Result<CallToolResult, ErrorData> {
    serde_json::from_str(result)
        .map_err(|e| ErrorData::internal_error(format!("toolctx: stored result: {e}"), None))
}

/// The default answer to a refused call: the core's (an `isError` result
/// naming the reason, with `_meta["toolctx/idempotency"]` set to the
/// outcome).
pub fn refusal(outcome: Outcome, key: &str) -> CallToolResult {
    serde_json::from_str(&core::refusal(outcome, key))
        .unwrap_or_else(|_| CallToolResult::error(vec![ContentBlock::text(outcome.as_str())]))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use serde_json::Value as J;
    use toolctx_vectors::memory_store::{run_files, Made, Store};

    use super::*;

    /// Tower's store, made by its own constructors, with its clock set to
    /// each operation's `now`; entries as the vectors' texts (the encoding
    /// around them is the core's, run by the helper vectors).
    struct AtNow {
        store: MemoryStore,
        now: Arc<AtomicU64>,
    }

    impl AtNow {
        fn at(&self, now: u64) -> &MemoryStore {
            self.now.store(now, Ordering::SeqCst);
            &self.store
        }
    }

    impl Store for AtNow {
        fn capacity(&self) -> usize {
            self.store.inner.lock().map_or(0, |s| s.capacity())
        }
        fn claim(&mut self, key: &str, entry: &str, ms: u64, now: u64) -> Option<String> {
            let lease = Duration::from_millis(ms);
            self.at(now).claim_text(key, entry, lease).ok().flatten()
        }
        fn read(&mut self, key: &str, now: u64) -> Option<String> {
            self.at(now).at(|s, now| s.read(key, now)).ok().flatten()
        }
        fn complete(&mut self, key: &str, entry: &str, ms: u64, now: u64) {
            let ttl = Duration::from_millis(ms);
            self.at(now).complete_text(key, entry, ttl).unwrap();
        }
        fn release(&mut self, key: &str, entry: &str, now: u64) -> bool {
            self.at(now).release_text(key, entry).unwrap()
        }
        fn entries(&self) -> usize {
            self.store.len()
        }
    }

    /// `MemoryStore::default()` for a capacity not given, else
    /// `MemoryStore::new(n)`; a capacity `usize` cannot hold never reaches
    /// tower.
    fn tower_store(capacity: Option<&J>) -> Made {
        let mut store = match capacity {
            None | Some(J::Null) => MemoryStore::default(),
            Some(n) => {
                let n = n.as_u64().ok_or(format!("tower takes a count, not {n}"))?;
                MemoryStore::new(n as usize).map_err(|e| e.to_string())?
            }
        };
        let now = Arc::new(AtomicU64::new(0));
        let clock = now.clone();
        store.clock = Box::new(move || clock.load(Ordering::SeqCst));
        Ok(Box::new(AtNow { store, now }))
    }

    #[test]
    fn memory_store_vectors_pass() {
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/vectors/memory-store.json"
        );
        if let Err(e) = run_files(&[file.to_string()], tower_store) {
            panic!("{e}");
        }
    }
}
