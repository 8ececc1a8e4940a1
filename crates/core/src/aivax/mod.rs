//! The AIVAX profile (CONTRACT §7): `_aiv_*` members of `params._meta`.
//!
//! `_aiv_nonce` is a bcrypt hash of the account's hook key. It is verified
//! by hashing the configured plain-text hook key with the nonce's own salt
//! and cost and comparing in constant time, never by comparing strings. The
//! cost is read from the nonce, which the caller chooses, so a cost above
//! the configured cap (12 by default) is refused before any hashing.

// One file per job; the names below are the profile's public paths.
mod config;
mod context;
mod field;
mod members;
mod moment;
mod nonce;
mod verifier;

pub use config::{AivaxConfig, DEFAULT_MAX_BCRYPT_COST};
pub use context::AivaxContext;
pub use field::{AivaxField, AIVAX_FIELDS};
pub use moment::{parse_moment, Moment};
pub use nonce::NonceCache;
pub use verifier::{AivaxVerdict, AivaxVerifier};
