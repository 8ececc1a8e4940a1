#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
// Shipped code may not panic; unit tests may (clippy.toml).

mod body;
mod decide;
#[cfg(feature = "rmcp")]
pub mod helpers;
mod layer;
#[cfg(feature = "redis")]
mod redis;
mod replay;
#[cfg(feature = "rmcp")]
pub mod rmcp;
pub mod settings;

pub use body::{RequestBody, ResponseBody};
pub use layer::{ResponseFuture, Toolctx, ToolctxLayer, Verification};
#[cfg(all(feature = "redis", feature = "rmcp"))]
pub use redis::RedisStore;
#[cfg(feature = "redis")]
pub use redis::{reply as redis_reply, Redis, RedisReplayStore, DEFAULT_TIMEOUT};
pub use replay::{ClaimFuture, MemoryReplayStore, ReplayStore};
pub use toolctx_core;
