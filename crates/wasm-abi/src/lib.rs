//! The raw wasm module of toolctx: the core behind plain exports, with no
//! wasm-bindgen and no imports, for the hosts that embed a `.wasm` and call
//! it themselves (Go through wazero, `go/`; Java, `java/`). Nothing is
//! decided here: the core decides, and the answers are the strings of
//! `toolctx-wasm-boundary` that the npm package reads too.
//!
//! # ABI, version 1
//! Built for `wasm32-unknown-unknown`; exports `memory` and the functions
//! below. An instance is single-threaded: a host keeps a pool of instances
//! and hands each to one caller at a time.
//!
//! **Input.** The host asks `toolctx_input(len: i32) -> i32` for a buffer of
//! `len` bytes in the module's memory (valid until the next
//! `toolctx_input`; 0 if it cannot be had), writes the operation's input
//! there and calls the operation. The input is a run of *fields*: each a
//! `u32` little-endian length, then that many bytes, filling exactly `len`
//! bytes.
//!
//! **Output.** Every operation that answers text returns an `i64`:
//! `(ptr << 32) | len` of its answer in the module's memory, valid until
//! the next operation. The answer's first byte is `=` (then the payload)
//! or `!` (then `<code>\n<message>`: the core's stable code, `internal` for
//! a malformed input). A list is answered as fields after the `=`.
//!
//! **Traps.** A panic aborts (`unreachable`): the host drops that instance,
//! refuses the request with the core's `internal_error` refusal (asked of
//! another instance, [`toolctx_refusal`](exports)) and keeps serving.
//!
//! | export | input fields | answer after `=` |
//! | --- | --- | --- |
//! | `toolctx_version() -> i32` | | the ABI version (1) |
//! | `toolctx_configure(flags: i32, replay_capacity: i64)` | config JSON | fields: max body bytes, max token bytes (decimal; a host sizes its HTTP request-head limit by the second), then each header name to remove upstream |
//! | `toolctx_configure_flags()` | | fields: each flag's name and its bit (decimal), in turn |
//! | `toolctx_describe()` | | the verifier, secrets redacted |
//! | `toolctx_check_headers()` | lens, heads | `p`, `r` + refusal JSON, `b` + ticket |
//! | `toolctx_verify(now: i64)` | lens, heads, body | `p`, `a` + context..., `r` + refusal JSON, `c` + claim |
//! | `toolctx_verify_body(ticket: i32, now: i64)` | body | as `toolctx_verify`, or `u` |
//! | `toolctx_settle(ticket: i32)` | answer name | `a` + context..., `r` + refusal JSON |
//! | `toolctx_refusal()` | reason code | `r` + refusal JSON (no id) |
//! | `toolctx_describe_request()` | method, body, reason | fields: method, tool |
//! | `toolctx_replay_defaults()` | | fields: Redis key prefix, in-memory capacity, store timeout ms |
//! | `toolctx_redis_claim_args(until: i64, now: i64)` | prefix, jti | fields: the command |
//! | `toolctx_redis_claim_answer()` | reply kind, reply value | `first_use`, `used`, `full` or `failed` |
//! | `toolctx_replay_memory(capacity: i64)` | | the capacity (decimal): this instance now holds the in-memory replay guard (`capacity` as the user gave it: see below) |
//! | `toolctx_replay_first_use(until: i64, now: i64)` | jti | `first_use`, `used` or `full` (that guard's answer) |
//! | `toolctx_redis_timeout(ms: f64)` | | the store timeout in whole ms (decimal): the core's rule over the user's (0 the default); both modules |
//! | `toolctx_setting(kind: i32, number: f64)` | name, text | the setting read by the core's table (`true`/`false`, decimal, the text) from the user's raw value: `kind` 0 not given, 1 false, 2 true, 3 `number`, 4 the text, 5 anything else; the helpers' module |
//! | `toolctx_core_codes()` | | JSON: reasons, config errors, telemetry names; the helpers' module (the verifier's keeps its size budget) |
//! | `toolctx_idem_defaults()` | | JSON |
//! | `toolctx_idem_store_key()` | namespace, key | the store key |
//! | `toolctx_idem_redis_key()` | prefix, store key | the Redis key |
//! | `toolctx_canonical_json()` | JSON text | its RFC 8785 form (`!not_json`, `!not_canonicalizable`) |
//! | `toolctx_idem_argument_hash()` | arguments JSON | hex SHA-256 |
//! | `toolctx_idem_running()` | hash, owner | the running entry |
//! | `toolctx_idem_done()` | hash, result JSON | the done entry |
//! | `toolctx_idem_read_entry()` | raw entry | the entry re-encoded |
//! | `toolctx_idem_held()` | raw entry, hash, protocol revision (`""`: none known) | `c`, `w`, `r` + result JSON for that revision |
//! | `toolctx_idem_wait(now_ms: i64, deadline_ms: i64, round: i32) -> i64` | | ms to sleep, or -1: refuse |
//! | `toolctx_idem_refusal()` | outcome, key | the refusal's `CallToolResult` JSON |
//! | `toolctx_idem_redis_args(ms: i64)` | command, key, entry | fields: the command |
//! | `toolctx_idem_redis_meaning()` | command, reply kind, reply value | the meaning's name |
//! | `toolctx_idem_memory(kind: i32, number: f64)` | text | the capacity (decimal): this instance now holds the core's in-memory idempotency store, sized by the settings table's `idempotency_memory_entries` from the user's raw value (`kind`, `number` and the text as `toolctx_setting`'s) |
//! | `toolctx_idem_memory_claim(lease_ms: i64, now_ms: i64)` | key, running entry | `n`: the claim took the key; `h` + the live entry that holds it |
//! | `toolctx_idem_memory_read(now_ms: i64)` | key | `h` + the live entry, or `n` |
//! | `toolctx_idem_memory_complete(ttl_ms: i64, now_ms: i64)` | key, done entry | nothing (stored) |
//! | `toolctx_idem_memory_release(now_ms: i64)` | key, running entry | `r`: the key held exactly that entry and is gone; `n` |
//! | `toolctx_idem_memory_len() -> i64` | | entries held (-1: no store) |
//! | `toolctx_result_limits()` | | JSON |
//! | `toolctx_check_result()` | result JSON | JSON array of findings |
//! | `toolctx_progress_new(interval_ms: i64) -> i32` | | a handle; the interval as `toolctx_setting` read `progress_interval_ms` (the host reads the user's first) |
//! | `toolctx_progress_report(h: i32, now_ms: i64, progress: f64, total: f64, has_message: i32)` | message | `s`, `h`, `a`, `d` + ... |
//! | `toolctx_progress_tick(h: i32, now_ms: i64)` | | `s`, `w`, `i` + ... |
//! | `toolctx_progress_flush(h: i32, now_ms: i64)` | | `s` + report, or nothing |
//! | `toolctx_progress_close(h: i32)` / `toolctx_progress_free(h: i32)` | | nothing |
//! | `toolctx_progress_sent(h: i32) -> i64` | | reports sent (-1: no such handle) |
//!
//! **Native build.** The same crate built as a native library (the Java
//! front end's FFM backend, `scripts/lib.sh` `build_native_abi`) also
//! exports `toolctx_native_<op>` for every operation above, each on an
//! instance handle of its own and with a panic caught (`native.rs`).
//!
//! `flags`, by the names `toolctx_configure_flags` gives their bits under
//! (hosts read them from there, never write them down): `include_reason`,
//! refusals carry `data.reason`, and `include_reason_given`, the user gave
//! `include_reason` (without it, the settings table's default applies);
//! `shared_store`, a shared replay store answers the claims (`c`,
//! `toolctx_settle`); `memory_guard`, the in-memory replay guard, of
//! `replay_capacity` ids (ignored without it). A replay
//! capacity is the user's number, unchanged (an `i64` carries any host's
//! integer): the core's `replay::capacity` reads it by the settings table
//! (`replay_capacity`, docs/CONTRACT.md §5.3: 0 the default) and refuses
//! anything outside its range `!limit_out_of_range`. `lens` is `u32` little-endian lengths (the
//! method, then name and value per header, duplicates kept) cutting `heads`
//! (`toolctx_wasm_boundary::split`). `now` is Unix seconds; `total` NaN is
//! no total. Progress answers are `toolctx_wasm_boundary::helpers::Progress`'s.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
// Unsafe code only in `exports.rs`, where the host's pointers are read
// (every other module forbids it).
#![deny(unsafe_code)]

mod exports;
#[cfg(feature = "helpers")]
mod helpers;
#[cfg(feature = "helpers")]
mod memory;
#[cfg(not(target_arch = "wasm32"))]
mod native;
mod state;
#[cfg(any(feature = "verifier", feature = "helpers"))]
mod store;
#[cfg(feature = "verifier")]
mod verifier;

pub use state::{fields, ABI_VERSION};
