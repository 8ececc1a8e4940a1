//! The exports the host calls (the ABI in the crate's documentation): each
//! names one operation of `state.rs`, twice: `toolctx_<op>` on the wasm
//! module's one state, and in a native build `toolctx_native_<op>` on a
//! handle's (`native.rs`). The crate's only unsafe code is here.
#![allow(unsafe_code)]
// SAFETY (every `#[no_mangle]` below): the attribute only fixes the
// symbol's name; no other symbol of this library has these names. The wasm
// exports take and return plain integers and floats and read no raw
// pointer (the host writes the input into a `Vec` the module owns, through
// `toolctx_input`). The native exports' pointers are read in `handle_ref`,
// `bytes` and `args` below, each with its own SAFETY note.

#[cfg(feature = "helpers")]
use crate::helpers as hp;
#[cfg(not(target_arch = "wasm32"))]
use crate::native::{Arg, Handle};
use crate::state::{self as s, run};
#[cfg(feature = "verifier")]
use crate::verifier as v;

/// The handle a native export was given; `None` for null.
///
/// # Safety
/// `h` is null or came from `toolctx_native_new` and was not freed, and no
/// other thread frees it during the call (the host's pool holds it).
#[cfg(not(target_arch = "wasm32"))]
unsafe fn handle_ref<'a>(h: *const Handle) -> Option<&'a Handle> {
    // SAFETY: by the caller's contract, a live `Box<Handle>`'s pointer;
    // shared access only (the handle locks its own state).
    unsafe { h.as_ref() }
}

/// `len` bytes at `ptr`, read during the call only.
///
/// # Safety
/// `ptr` is null (then `len` is 0) or points to `len` readable bytes that
/// nothing writes during the call.
#[cfg(not(target_arch = "wasm32"))]
unsafe fn bytes<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    if ptr.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: by the caller's contract, `len` readable `T`s at `ptr`,
    // unchanged for the call; they are copied or parsed before it returns.
    unsafe { core::slice::from_raw_parts(ptr, len) }
}

/// A native instance of its own (`native.rs`): as a new wasm instance.
#[cfg(not(target_arch = "wasm32"))]
#[no_mangle]
pub extern "C" fn toolctx_native_new() -> *mut Handle {
    Box::into_raw(Box::new(Handle::new()))
}

/// Drops an instance; null is ignored.
///
/// # Safety
/// `h` came from `toolctx_native_new`, is freed once, and is not in use.
#[cfg(not(target_arch = "wasm32"))]
#[no_mangle]
pub unsafe extern "C" fn toolctx_native_free(h: *mut Handle) {
    if !h.is_null() {
        // SAFETY: by the caller's contract, `h` is `toolctx_native_new`'s
        // `Box` pointer, owned again here and dropped once.
        drop(unsafe { Box::from_raw(h) });
    }
}

/// The last answer's address (its length is the operation's return value);
/// null once the handle is poisoned.
///
/// # Safety
/// As [`handle_ref`].
#[cfg(not(target_arch = "wasm32"))]
#[no_mangle]
pub unsafe extern "C" fn toolctx_native_output(h: *const Handle) -> *const u8 {
    // SAFETY: `h` as the caller's contract says.
    unsafe { handle_ref(h) }.map_or(core::ptr::null(), Handle::output)
}

/// Each operation's two exports: `$wasm` on the module's state and
/// `$native` on a handle (`text`: answers text; `number`: a number).
macro_rules! exports {
    ($( $(#[$attr:meta])* $kind:ident $wasm:ident / $native:ident ($($a:ident: $t:ty),*) -> $ret:ty = $op:expr; )*) => {$(
        $(#[$attr])*
        #[no_mangle]
        pub extern "C" fn $wasm($($a: $t),*) -> $ret {
            exports!(@wasm $kind $op)
        }

        /// The native export of the operation (`native.rs`).
        ///
        /// # Safety
        /// `h` as [`handle_ref`]; `input` and `args` as [`bytes`].
        $(#[$attr])*
        #[cfg(not(target_arch = "wasm32"))]
        #[no_mangle]
        pub unsafe extern "C" fn $native(
            h: *const Handle,
            input: *const u8,
            input_len: usize,
            args: *const i64,
            args_len: usize,
        ) -> i64 {
            // SAFETY: the pointers as the caller's contract says.
            let (Some(h), input, args) = (unsafe { handle_ref(h) }, unsafe { bytes(input, input_len) }, unsafe { bytes(args, args_len) }) else {
                return crate::native::TRAP;
            };
            let mut _args = args.iter();
            $(let $a = <$t as Arg>::take(&mut _args);)*
            exports!(@native $kind h input $op)
        }
    )*};
    (@wasm text $op:expr) => { run($op) };
    (@wasm number $op:expr) => { s::with($op) };
    (@native text $h:ident $input:ident $op:expr) => { $h.text($input, $op) };
    (@native number $h:ident $input:ident $op:expr) => {{
        let _ = $input; // a numeric operation reads no fields
        $h.number($op)
    }};
}

#[no_mangle]
pub extern "C" fn toolctx_version() -> i32 {
    s::ABI_VERSION
}

#[no_mangle]
pub extern "C" fn toolctx_input(len: i32) -> i32 {
    s::input(len)
}

/// A native build's ABI version (as `toolctx_version`).
#[cfg(not(target_arch = "wasm32"))]
#[no_mangle]
pub extern "C" fn toolctx_native_version() -> i32 {
    s::ABI_VERSION
}

/// The verifier's operations (feature `verifier`).
#[cfg(feature = "verifier")]
mod verifier_ops {
    use super::*;

    exports! {
        text toolctx_configure / toolctx_native_configure(flags: i32, replay_capacity: i64) -> i64
            = |st, i| v::configure(st, i, flags, replay_capacity);
        text toolctx_configure_flags / toolctx_native_configure_flags() -> i64 = v::configure_flags;
        text toolctx_describe / toolctx_native_describe() -> i64 = v::describe;
        text toolctx_check_headers / toolctx_native_check_headers() -> i64 = v::check_headers;
        text toolctx_verify / toolctx_native_verify(now: i64) -> i64 = |st, i| v::verify(st, i, now);
        text toolctx_verify_body / toolctx_native_verify_body(ticket: i32, now: i64) -> i64
            = |st, i| v::verify_body(st, i, ticket, now);
        text toolctx_settle / toolctx_native_settle(ticket: i32) -> i64 = |st, i| v::settle(st, i, ticket);
        text toolctx_refusal / toolctx_native_refusal() -> i64 = v::internal_refusal;
        text toolctx_describe_request / toolctx_native_describe_request() -> i64 = v::describe_request;
        text toolctx_replay_defaults / toolctx_native_replay_defaults() -> i64 = v::replay_defaults;
        text toolctx_redis_claim_args / toolctx_native_redis_claim_args(until: i64, now: i64) -> i64
            = |st, i| v::redis_claim_args(st, i, until, now);
        text toolctx_redis_claim_answer / toolctx_native_redis_claim_answer() -> i64 = v::redis_claim_reply;
        text toolctx_replay_memory / toolctx_native_replay_memory(capacity: i64) -> i64
            = |st, i| v::replay_memory(st, i, capacity);
        text toolctx_replay_first_use / toolctx_native_replay_first_use(until: i64, now: i64) -> i64
            = |st, i| v::replay_first_use(st, i, until, now);
    }
}

/// The operations both modules carry (either feature).
#[cfg(any(feature = "verifier", feature = "helpers"))]
mod store_ops {
    use super::*;

    exports! {
        text toolctx_redis_timeout / toolctx_native_redis_timeout(ms: f64) -> i64
            = |st, i| crate::store::redis_timeout(st, i, ms);

    }
}

/// The server helpers' operations (feature `helpers`).
#[cfg(feature = "helpers")]
mod helper_ops {
    use super::*;

    exports! {
        text toolctx_setting / toolctx_native_setting(kind: i32, number: f64) -> i64
            = |st, i| hp::setting(st, i, kind, number);
        text toolctx_core_codes / toolctx_native_core_codes() -> i64 = hp::codes;
        text toolctx_idem_defaults / toolctx_native_idem_defaults() -> i64 = hp::idem_defaults;
        text toolctx_idem_store_key / toolctx_native_idem_store_key() -> i64 = hp::idem_store_key;
        text toolctx_idem_redis_key / toolctx_native_idem_redis_key() -> i64 = hp::idem_redis_key;
        text toolctx_canonical_json / toolctx_native_canonical_json() -> i64 = hp::canonical_json;
        text toolctx_idem_argument_hash / toolctx_native_idem_argument_hash() -> i64 = hp::idem_argument_hash;
        text toolctx_idem_running / toolctx_native_idem_running() -> i64 = hp::idem_running;
        text toolctx_idem_done / toolctx_native_idem_done() -> i64 = hp::idem_done;
        text toolctx_idem_read_entry / toolctx_native_idem_read_entry() -> i64 = hp::idem_read_entry;
        text toolctx_idem_held / toolctx_native_idem_held() -> i64 = hp::idem_held;
        number toolctx_idem_wait / toolctx_native_idem_wait(now_ms: i64, deadline_ms: i64, round: i32) -> i64
            = |_| hp::idem_wait(now_ms, deadline_ms, round);
        text toolctx_idem_refusal / toolctx_native_idem_refusal() -> i64 = hp::idem_refusal;
        text toolctx_idem_redis_args / toolctx_native_idem_redis_args(ms: i64) -> i64
            = |st, i| hp::idem_redis_args(st, i, ms);
        text toolctx_idem_redis_meaning / toolctx_native_idem_redis_meaning() -> i64 = hp::idem_redis_meaning;
        text toolctx_idem_memory / toolctx_native_idem_memory(kind: i32, number: f64) -> i64
            = |st, i| crate::memory::open(st, i, kind, number);
        text toolctx_idem_memory_claim / toolctx_native_idem_memory_claim(lease_ms: i64, now_ms: i64) -> i64
            = |st, i| crate::memory::claim(st, i, lease_ms, now_ms);
        text toolctx_idem_memory_read / toolctx_native_idem_memory_read(now_ms: i64) -> i64
            = |st, i| crate::memory::read(st, i, now_ms);
        text toolctx_idem_memory_complete / toolctx_native_idem_memory_complete(ttl_ms: i64, now_ms: i64) -> i64
            = |st, i| crate::memory::complete(st, i, ttl_ms, now_ms);
        text toolctx_idem_memory_release / toolctx_native_idem_memory_release(now_ms: i64) -> i64
            = |st, i| crate::memory::release(st, i, now_ms);
        number toolctx_idem_memory_len / toolctx_native_idem_memory_len() -> i64 = crate::memory::len;
        text toolctx_result_limits / toolctx_native_result_limits() -> i64 = hp::result_limits;
        text toolctx_check_result / toolctx_native_check_result() -> i64 = hp::check_result;
        number toolctx_progress_new / toolctx_native_progress_new(interval_ms: i64) -> i32
            = |st| hp::progress_new(st, interval_ms);
        text toolctx_progress_report / toolctx_native_progress_report(
            handle: i32, now_ms: i64, progress: f64, total: f64, has_message: i32
        ) -> i64 = |st, i| hp::progress_report(st, i, handle, now_ms, progress, total, has_message);
        text toolctx_progress_tick / toolctx_native_progress_tick(handle: i32, now_ms: i64) -> i64
            = |st, i| hp::progress_tick(st, i, handle, now_ms);
        text toolctx_progress_flush / toolctx_native_progress_flush(handle: i32, now_ms: i64) -> i64
            = |st, i| hp::progress_flush(st, i, handle, now_ms);
        number toolctx_progress_close / toolctx_native_progress_close(handle: i32) -> ()
            = |st| hp::progress_close(st, handle);
        number toolctx_progress_free / toolctx_native_progress_free(handle: i32) -> ()
            = |st| hp::progress_free(st, handle);
        number toolctx_progress_sent / toolctx_native_progress_sent(handle: i32) -> i64
            = |st| hp::progress_sent(st, handle);
    }
}
