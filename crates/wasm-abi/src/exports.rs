//! The exports the host calls (the ABI in the crate's documentation): each
//! names one operation of `state.rs`. The only unsafe here is the
//! attribute that gives them their plain names.
#![allow(unsafe_code)]
// SAFETY (every item below): `#[no_mangle]` only fixes the symbol's name.
// The functions take and return plain integers and floats, read no raw
// pointer (the host writes the input into a `Vec` the module owns, through
// `toolctx_input`), and no other symbol of this module has these names.

#[cfg(feature = "helpers")]
use crate::helpers as hp;
#[cfg(feature = "helpers")]
use crate::state::with;
use crate::state::{self as s, run};
#[cfg(feature = "verifier")]
use crate::verifier as v;

#[no_mangle]
pub extern "C" fn toolctx_version() -> i32 {
    s::ABI_VERSION
}

#[no_mangle]
pub extern "C" fn toolctx_input(len: i32) -> i32 {
    s::input(len)
}

/// A native build's input buffer (the FFM measurement, `bench/java.sh`):
/// `toolctx_input`'s `i32` cannot hold a 64-bit address.
#[cfg(not(target_arch = "wasm32"))]
#[no_mangle]
pub extern "C" fn toolctx_input_native(len: i32) -> usize {
    s::input_native(len)
}

/// A native build's last answer: its address (the length is the low 32
/// bits of the operation's `i64`, as on wasm32).
#[cfg(not(target_arch = "wasm32"))]
#[no_mangle]
pub extern "C" fn toolctx_output_native() -> usize {
    s::output_native()
}

#[cfg(feature = "verifier")]
#[no_mangle]
pub extern "C" fn toolctx_configure(flags: i32, replay_capacity: i32) -> i64 {
    run(|st, i| v::configure(st, i, flags, replay_capacity))
}

#[cfg(feature = "verifier")]
#[no_mangle]
pub extern "C" fn toolctx_describe() -> i64 {
    run(v::describe)
}

#[cfg(feature = "verifier")]
#[no_mangle]
pub extern "C" fn toolctx_check_headers() -> i64 {
    run(v::check_headers)
}

#[cfg(feature = "verifier")]
#[no_mangle]
pub extern "C" fn toolctx_verify(now: i64) -> i64 {
    run(|st, i| v::verify(st, i, now))
}

#[cfg(feature = "verifier")]
#[no_mangle]
pub extern "C" fn toolctx_verify_body(ticket: i32, now: i64) -> i64 {
    run(|st, i| v::verify_body(st, i, ticket, now))
}

#[cfg(feature = "verifier")]
#[no_mangle]
pub extern "C" fn toolctx_settle(ticket: i32) -> i64 {
    run(|st, i| v::settle(st, i, ticket))
}

#[cfg(feature = "verifier")]
#[no_mangle]
pub extern "C" fn toolctx_refusal() -> i64 {
    run(v::internal_refusal)
}

#[cfg(feature = "verifier")]
#[no_mangle]
pub extern "C" fn toolctx_describe_request() -> i64 {
    run(v::describe_request)
}

#[cfg(feature = "verifier")]
#[no_mangle]
pub extern "C" fn toolctx_replay_defaults() -> i64 {
    run(v::replay_defaults)
}

#[cfg(feature = "verifier")]
#[no_mangle]
pub extern "C" fn toolctx_redis_claim_args(until: i64, now: i64) -> i64 {
    run(|st, i| v::redis_claim_args(st, i, until, now))
}

#[cfg(feature = "verifier")]
#[no_mangle]
pub extern "C" fn toolctx_redis_claim_answer() -> i64 {
    run(v::redis_claim_reply)
}

#[cfg(feature = "verifier")]
#[no_mangle]
pub extern "C" fn toolctx_replay_memory(capacity: i32) -> i32 {
    s::with(|st| v::replay_memory(st, capacity))
}

#[cfg(feature = "verifier")]
#[no_mangle]
pub extern "C" fn toolctx_replay_first_use(until: i64, now: i64) -> i64 {
    run(|st, i| v::replay_first_use(st, i, until, now))
}

#[cfg(feature = "verifier")]
#[no_mangle]
pub extern "C" fn toolctx_core_codes() -> i64 {
    run(v::codes)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_idem_defaults() -> i64 {
    run(hp::idem_defaults)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_idem_store_key() -> i64 {
    run(hp::idem_store_key)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_idem_redis_key() -> i64 {
    run(hp::idem_redis_key)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_canonical_json() -> i64 {
    run(hp::canonical_json)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_idem_argument_hash() -> i64 {
    run(hp::idem_argument_hash)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_idem_running() -> i64 {
    run(hp::idem_running)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_idem_done() -> i64 {
    run(hp::idem_done)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_idem_read_entry() -> i64 {
    run(hp::idem_read_entry)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_idem_held() -> i64 {
    run(hp::idem_held)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_idem_wait(now_ms: i64, deadline_ms: i64, round: i32) -> i64 {
    hp::idem_wait(now_ms, deadline_ms, round)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_idem_refusal() -> i64 {
    run(hp::idem_refusal)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_idem_redis_args(ms: i64) -> i64 {
    run(|st, i| hp::idem_redis_args(st, i, ms))
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_idem_redis_meaning() -> i64 {
    run(hp::idem_redis_meaning)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_result_limits() -> i64 {
    run(hp::result_limits)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_check_result() -> i64 {
    run(hp::check_result)
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_progress_new(interval_ms: i64) -> i32 {
    with(|st| hp::progress_new(st, interval_ms))
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_progress_report(
    handle: i32,
    now_ms: i64,
    progress: f64,
    total: f64,
    has_message: i32,
) -> i64 {
    run(|st, i| hp::progress_report(st, i, handle, now_ms, progress, total, has_message))
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_progress_tick(handle: i32, now_ms: i64) -> i64 {
    run(|st, i| hp::progress_tick(st, i, handle, now_ms))
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_progress_flush(handle: i32, now_ms: i64) -> i64 {
    run(|st, i| hp::progress_flush(st, i, handle, now_ms))
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_progress_close(handle: i32) {
    with(|st| hp::progress_close(st, handle));
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_progress_free(handle: i32) {
    with(|st| hp::progress_free(st, handle));
}

#[cfg(feature = "helpers")]
#[no_mangle]
pub extern "C" fn toolctx_progress_sent(handle: i32) -> i64 {
    with(|st| hp::progress_sent(st, handle))
}
