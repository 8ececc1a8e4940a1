//! Server helpers for verified calls (CONTRACT §5), with the npm and Python
//! packages' rules: idempotent retries ([`Idempotent`]), progress at the
//! platform's rate ([`Progress`]), result limits ([`check_result`]).

mod idempotency;
mod progress;
mod results;

pub use idempotency::{
    canonical_hash, refusal, Entry, IdempotencyStore, Idempotent, MemoryStore, Outcome, StoreError,
    StoreFuture, OUTCOME_KEY, REPLAYED,
};
pub use progress::Progress;
pub use results::{
    check_result, checked, checked_with, try_check_result, warn_in_development, LimitCode,
    LimitFinding, Limits, ResultError, LIMITS,
};
