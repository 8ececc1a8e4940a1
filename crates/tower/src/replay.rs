//! The replay guard's stores: each token id is claimed once within its
//! lifetime. A store only answers what it found ([`ClaimAnswer`]); what the
//! answer means (accepted, `token_replayed`, `replay_guard_full`,
//! `internal_error`) is the core's to say, in `Verifier::settle`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use toolctx_core::{ClaimAnswer, ConfigError, ReplayCache, ReplayClaim, DEFAULT_REPLAY_CAPACITY};

/// The future a [`ReplayStore`] answers with.
pub type ClaimFuture<'a> = Pin<Box<dyn Future<Output = ClaimAnswer> + Send + 'a>>;

/// Where the replay guard records token ids. `claim` must be atomic across
/// every process sharing the store, and answers one of the core's four
/// answers: [`ClaimAnswer::FirstUse`], `Used` (`token_replayed`), `Full`
/// (it cannot record more: `replay_guard_full`, retryable) or `Failed`
/// (down, timed out, a bad reply: `internal_error`), never `FirstUse` when
/// it does not know.
pub trait ReplayStore: Send + Sync + 'static {
    /// Records `claim.jti` as used until `claim.until` (Unix seconds) if it
    /// was not, and says which.
    fn claim<'a>(&'a self, claim: &'a ReplayClaim, now: u64) -> ClaimFuture<'a>;
}

/// Token ids in this process's memory (the core's [`ReplayCache`]): for a
/// server with one process.
#[derive(Debug)]
pub struct MemoryReplayStore {
    cache: Mutex<ReplayCache>,
}

impl MemoryReplayStore {
    /// A store for at most `capacity` live token ids (the call rate times
    /// the token lifetime: 1000 calls/s x 330 s is 330,000), read by the
    /// core ([`toolctx_core::replay::capacity`], the settings table's
    /// `replay_capacity` row, docs/CONTRACT.md §5.3): 0 is its default, and
    /// a capacity outside its range is refused (`limit_out_of_range`).
    pub fn new(capacity: i64) -> Result<MemoryReplayStore, ConfigError> {
        Ok(MemoryReplayStore {
            cache: Mutex::new(ReplayCache::with_capacity(capacity)?),
        })
    }
}

impl Default for MemoryReplayStore {
    /// The core's default capacity ([`DEFAULT_REPLAY_CAPACITY`]).
    fn default() -> MemoryReplayStore {
        MemoryReplayStore {
            cache: Mutex::new(ReplayCache::new(DEFAULT_REPLAY_CAPACITY)),
        }
    }
}

impl ReplayStore for MemoryReplayStore {
    fn claim<'a>(&'a self, claim: &'a ReplayClaim, now: u64) -> ClaimFuture<'a> {
        let answer = self.cache.lock().map_or(ClaimAnswer::Failed, |mut c| {
            c.first_use(&claim.jti, claim.until, now)
        });
        Box::pin(std::future::ready(answer))
    }
}
