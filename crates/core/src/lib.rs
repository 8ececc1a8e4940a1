#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
// Shipped code may not panic; unit tests may (clippy.toml).

extern crate alloc;

#[macro_use]
mod table;

pub mod aivax;
mod b64;
mod claims;
mod config;
mod context;
pub mod digits;
mod envelope;
pub mod forward;
mod headers;
pub mod helpers;
pub mod jcs;
pub mod json;
pub mod names;
#[cfg(feature = "policy")]
pub mod policy;
mod reason;
pub mod redis;
mod refusal;
pub mod replay;
mod scan;
pub mod settings;
mod sort;
#[cfg(feature = "store")]
pub mod store;
pub mod telemetry;
mod token;
mod verdict;
mod verify;

pub use claims::CONTEXT_CLAIMS;
pub use config::{
    Config, ConfigError, Credential, UnknownSettings, DEFAULT_CLOCK_SKEW_S, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_TOKEN_AGE_S, DEFAULT_MAX_TOKEN_BYTES, MAX_SECRET_BYTES, MIN_SECRET_BYTES,
};
pub use context::Context;
pub use forward::{Forward, ForwardError, ForwardField, Upstream, FORWARD_FIELDS, TUIX_HEADERS};
pub use headers::TOKEN_HEADER;
pub use reason::Reason;
pub use refusal::Refusal;
pub use replay::{
    ClaimAnswer, Claimed, FirstUse, PendingClaim, ReplayCache, ReplayClaim,
    DEFAULT_REPLAY_CAPACITY, MAX_REPLAY_CAPACITY,
};
pub use token::{
    decode_unverified, sign_compact, ContextClaims, TokenClaims, ISSUER, META_PREFIX, TOKEN_TTL_S,
};
pub use verdict::{Accepted, Checked, HeadersVerdict, Verdict};
pub use verify::Verifier;
