//! The server helpers' rules (CONTRACT §5), decided here once for every
//! front end that serves the helpers (npm, Python, tower, and the Go and
//! Java front ends to come): one file per helper. A front end passes bytes
//! and `now` in, does the I/O (stores, sleeping) and applies the answer.

pub mod idempotency;
pub mod progress;
pub mod results;
pub mod revision;
