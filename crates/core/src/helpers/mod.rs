//! The server helpers' rules (CONTRACT §5), decided here once for every
//! front end that serves the helpers (npm, Python, tower, Go and Java; the
//! cancellation key for npm, the one front end with a cancellation
//! helper): one file per helper. A front end passes bytes
//! and `now` in, does the I/O (stores, sleeping) and applies the answer.

pub mod cancel;
pub mod idempotency;
pub mod memory;
pub mod progress;
pub mod results;
pub mod revision;
