#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic
    )
)]

pub mod decide;
pub mod metrics;
pub mod replay;
pub mod request;
pub mod response;
pub mod server;

pub use server::{load, run, serve, Options, Service};
