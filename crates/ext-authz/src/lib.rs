#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
// Shipped code may not panic; unit tests may (clippy.toml).

pub mod decide;
pub mod metrics;
pub mod replay;
pub mod request;
pub mod response;
pub mod server;

pub use server::{load, run, serve, Options, Service};
