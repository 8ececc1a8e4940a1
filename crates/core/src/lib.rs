#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

mod config;
pub mod json;
mod reason;
mod token;
mod verify;

pub use config::{
    Config, ConfigError, Credential, UnknownSettings, DEFAULT_CLOCK_SKEW_S, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_TOKEN_AGE_S, DEFAULT_MAX_TOKEN_BYTES, MAX_SECRET_BYTES, MIN_SECRET_BYTES,
};
pub use reason::Reason;
pub use token::{decode_unverified, ContextClaims, TokenClaims, ISSUER, META_PREFIX, TOKEN_TTL_S};
pub use verify::{Context, HeadersVerdict, Refusal, Verdict, Verifier, TOKEN_HEADER};
