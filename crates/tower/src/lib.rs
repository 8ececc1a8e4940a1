#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
// Shipped code may not panic; unit tests may.
#![cfg_attr(
    test,
    allow(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic
    )
)]

mod body;
mod decide;
#[cfg(feature = "rmcp")]
pub mod helpers;
mod layer;
mod replay;
#[cfg(feature = "rmcp")]
pub mod rmcp;

pub use body::{RequestBody, ResponseBody};
pub use layer::{ResponseFuture, Toolctx, ToolctxLayer, Verification};
pub use replay::MemoryReplayStore;
pub use toolctx_core;
