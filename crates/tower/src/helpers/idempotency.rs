//! Idempotent tools (CONTRACT §5), the npm package's rules
//! (`npm/src/idempotency.ts`): a retry carries the same idempotency key and
//! arguments with a new token. The first call's result is stored under the
//! verified key and a retry gets it back with
//! `_meta["agentarea/replayed"] = true`, without the tool running again.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorData, MetaObject};
use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use toolctx_core::{jcs, json as core_json, Context};

/// The `_meta` key the platform reads on a replayed result.
pub const REPLAYED: &str = "agentarea/replayed";
/// The `_meta` key naming why the helper refused a call.
pub const OUTCOME_KEY: &str = "toolctx/idempotency";

/// Why a call was refused (the npm package's `IdempotencyOutcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The same key with other arguments.
    Conflict,
    /// The first call still running after the wait.
    InProgress,
    /// No verified context, so no key (see [`Idempotent::allow_unverified`]).
    Unverified,
}

impl Outcome {
    pub const ALL: [Outcome; 3] = [Outcome::Conflict, Outcome::InProgress, Outcome::Unverified];

    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Conflict => "conflict",
            Outcome::InProgress => "in_progress",
            Outcome::Unverified => "unverified",
        }
    }
}

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
    fn hash(&self) -> &str {
        match self {
            Entry::Running { hash, .. } | Entry::Done { hash, .. } => hash,
        }
    }

    /// The JSON a shared store keeps (the npm and Python packages' form,
    /// members in a fixed order so a release compares the exact string).
    pub fn encode(&self) -> String {
        #[derive(Serialize)]
        struct Running<'a> {
            state: &'static str,
            hash: &'a str,
            owner: &'a str,
        }
        #[derive(Serialize)]
        struct Done<'a> {
            state: &'static str,
            hash: &'a str,
            result: &'a Value,
        }
        let text = match self {
            Entry::Running { hash, owner } => serde_json::to_string(&Running {
                state: "running",
                hash,
                owner,
            }),
            Entry::Done { hash, result } => serde_json::to_string(&Done {
                state: "done",
                hash,
                result,
            }),
        };
        // Strings and a JSON value always serialize.
        text.unwrap_or_default()
    }

    /// Reads what [`Entry::encode`] (or the npm or Python store) wrote.
    pub fn decode(text: &[u8]) -> Result<Entry, StoreError> {
        let bad = || StoreError::new("the idempotency store holds something else under this key");
        let v: Value = serde_json::from_slice(text).map_err(|_| bad())?;
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        let hash = s("hash").ok_or_else(bad)?;
        match v.get("state").and_then(Value::as_str) {
            Some("running") => Ok(Entry::Running {
                hash,
                owner: s("owner").ok_or_else(bad)?,
            }),
            Some("done") => Ok(Entry::Done {
                hash,
                result: v.get("result").cloned().ok_or_else(bad)?,
            }),
            _ => Err(bad()),
        }
    }
}

/// A store that failed (down, timed out, answered something else).
#[derive(Debug, Clone)]
pub struct StoreError(String);

impl StoreError {
    pub fn new(message: impl Into<String>) -> StoreError {
        StoreError(message.into())
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "toolctx: idempotency store: {}", self.0)
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

/// An in-memory LRU with a TTL per entry, for a server with one process
/// (several replicas: the Redis store).
pub struct MemoryStore {
    max: usize,
    inner: Mutex<Lru>,
}

#[derive(Default)]
struct Lru {
    /// key -> (entry, expiry, last use)
    entries: HashMap<String, (Entry, Instant, u64)>,
    /// last use -> key, oldest first.
    order: BTreeMap<u64, String>,
    tick: u64,
}

impl Lru {
    fn live(&mut self, key: &str, now: Instant) -> Option<Entry> {
        let (entry, expires, used) = self.entries.get(key)?.clone();
        self.order.remove(&used);
        if expires <= now {
            self.entries.remove(key);
            return None;
        }
        self.tick += 1;
        self.order.insert(self.tick, key.to_string());
        if let Some(slot) = self.entries.get_mut(key) {
            slot.2 = self.tick;
        }
        Some(entry)
    }

    fn put(&mut self, key: &str, entry: Entry, expires: Instant, max: usize) {
        if let Some((_, _, used)) = self.entries.remove(key) {
            self.order.remove(&used);
        }
        self.tick += 1;
        self.order.insert(self.tick, key.to_string());
        self.entries
            .insert(key.to_string(), (entry, expires, self.tick));
        while self.entries.len() > max {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            self.entries.remove(&oldest);
        }
    }
}

impl MemoryStore {
    /// Keeps at most `max_entries` (the least recently used goes first).
    pub fn new(max_entries: usize) -> MemoryStore {
        MemoryStore {
            max: max_entries,
            inner: Mutex::new(Lru::default()),
        }
    }

    pub fn len(&self) -> usize {
        self.inner.lock().map_or(0, |l| l.entries.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn with<T>(&self, f: impl FnOnce(&mut Lru) -> T) -> Result<T, StoreError> {
        let mut lru = self
            .inner
            .lock()
            .map_err(|_| StoreError::new("memory store poisoned"))?;
        Ok(f(&mut lru))
    }
}

impl Default for MemoryStore {
    fn default() -> MemoryStore {
        MemoryStore::new(10_000)
    }
}

impl IdempotencyStore for MemoryStore {
    fn claim<'a>(
        &'a self,
        key: &'a str,
        entry: &'a Entry,
        lease: Duration,
    ) -> StoreFuture<'a, Option<Entry>> {
        let r = self.with(|lru| {
            let now = Instant::now();
            match lru.live(key, now) {
                Some(held) => Some(held),
                None => {
                    lru.put(key, entry.clone(), now + lease, self.max);
                    None
                }
            }
        });
        Box::pin(std::future::ready(r))
    }

    fn complete<'a>(
        &'a self,
        key: &'a str,
        entry: &'a Entry,
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        let r = self.with(|lru| lru.put(key, entry.clone(), Instant::now() + ttl, self.max));
        Box::pin(std::future::ready(r))
    }

    fn release<'a>(&'a self, key: &'a str, entry: &'a Entry) -> StoreFuture<'a, ()> {
        let r = self.with(|lru| {
            if lru.live(key, Instant::now()).as_ref() == Some(entry) {
                if let Some((_, _, used)) = lru.entries.remove(key) {
                    lru.order.remove(&used);
                }
            }
        });
        Box::pin(std::future::ready(r))
    }
}

/// Lowercase hex SHA-256 of the RFC 8785 form of `value` (written by the
/// core), the npm and Python packages' `canonicalHash`.
pub fn canonical_hash(value: &impl Serialize) -> Result<String, ErrorData> {
    let text =
        serde_json::to_string(value).map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
    let parsed = core_json::parse(text.as_bytes())
        .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
    let canonical = jcs::canonicalize(&parsed)
        .map_err(|_| ErrorData::invalid_params("arguments cannot be canonicalized", None))?;
    let digest = Sha256::digest(canonical.as_bytes());
    let mut hex = String::with_capacity(64);
    for b in digest.iter() {
        use std::fmt::Write as _;
        let _ = write!(hex, "{b:02x}");
    }
    Ok(hex)
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
    /// Results kept 24 h, claims leased 30 min, a duplicate waits 60 s.
    pub fn new(store: impl IdempotencyStore) -> Idempotent {
        Idempotent {
            store: Arc::new(store),
            ttl: Duration::from_secs(24 * 60 * 60),
            lease: Duration::from_secs(30 * 60),
            wait: Duration::from_secs(60),
            namespace: String::new(),
            allow_unverified: false,
            on_store_error: Arc::new(|e| eprintln!("{e} (the result was returned, not stored)")),
        }
    }

    /// How long a result is kept.
    pub fn ttl(mut self, ttl: Duration) -> Idempotent {
        self.ttl = ttl;
        self
    }

    /// How long a claim lasts if its process dies first: above the tool's
    /// longest run (the platform waits up to 1800 s).
    pub fn lease(mut self, lease: Duration) -> Idempotent {
        self.lease = lease;
        self
    }

    /// How long a duplicate waits for the first call to finish.
    pub fn wait(mut self, wait: Duration) -> Idempotent {
        self.wait = wait;
        self
    }

    /// Prefixed to the idempotency key in the store.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Idempotent {
        self.namespace = namespace.into();
        self
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
    /// `arguments` (the call's, as sent) for the conflict check. `cancel`
    /// (the call's `ctx.ct`) stops a duplicate's wait.
    pub async fn run<A, F, Fut>(
        &self,
        context: Option<&Context>,
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
        let failed = |e: StoreError| ErrorData::internal_error(e.to_string(), None);
        let key = format!("{}{}", self.namespace, context.idempotency_key);
        let hash = canonical_hash(arguments)?;
        let mine = Entry::Running {
            hash: hash.clone(),
            owner: uuid::Uuid::new_v4().to_string(),
        };
        let deadline = Instant::now() + self.wait;
        let mut pause = Duration::from_millis(10);
        loop {
            let Some(held) = self
                .store
                .claim(&key, &mine, self.lease)
                .await
                .map_err(failed)?
            else {
                break;
            };
            if held.hash() != hash {
                return Ok(refusal(Outcome::Conflict, &context.idempotency_key).into());
            }
            if let Entry::Done { result, .. } = held {
                return replayed(result).map(CallToolResponse::from);
            }
            let now = Instant::now();
            if now >= deadline || cancel.is_cancelled() {
                return Ok(refusal(Outcome::InProgress, &context.idempotency_key).into());
            }
            tokio::select! {
                _ = tokio::time::sleep(pause.min(deadline - now)) => {}
                _ = cancel.cancelled() => {}
            }
            pause = (pause * 2).min(Duration::from_millis(250));
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

fn replayed(mut result: Value) -> Result<CallToolResult, ErrorData> {
    if let Some(obj) = result.as_object_mut() {
        let meta = obj.entry("_meta").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(REPLAYED.to_string(), Value::Bool(true));
        }
    }
    serde_json::from_value(result)
        .map_err(|e| ErrorData::internal_error(format!("toolctx: stored result: {e}"), None))
}

/// The default answer to a refused call: an `isError` result naming the
/// reason, with `_meta["toolctx/idempotency"]` set to the outcome.
pub fn refusal(outcome: Outcome, key: &str) -> CallToolResult {
    let text = match outcome {
        Outcome::Conflict => format!("idempotency conflict: key {key} was already used with different arguments"),
        Outcome::InProgress => format!("call {key} is still running; retry later"),
        Outcome::Unverified => "refused: this tool is idempotent and the call carries no verified toolctx context, so it \
             cannot be guarded (is ToolctxLayer in front of the MCP service?)"
            .to_string(),
    };
    let mut meta = MetaObject::new();
    meta.0.insert(
        OUTCOME_KEY.to_string(),
        Value::String(outcome.as_str().to_string()),
    );
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.meta = Some(meta);
    result
}
