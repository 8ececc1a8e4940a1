//! What both modules (either feature) answer about a Redis store.
#![forbid(unsafe_code)]

use toolctx_core::digits::u64_text;
use toolctx_wasm_boundary::Error;

use crate::state::{Answer, State};

/// `toolctx_redis_timeout`: the core's store timeout rule
/// (`redis::timeout_ms`) over the user's timeout in milliseconds, as the
/// host counts them (0 the default); the whole milliseconds to wait, or the
/// core's `limit_out_of_range`.
pub fn redis_timeout(_: &mut State, _: &[u8], ms: f64) -> Result<Answer, Error> {
    let ms = toolctx_core::redis::timeout_ms(ms).map_err(|e| Error::config(&e))?;
    Ok(u64_text(ms).into())
}
