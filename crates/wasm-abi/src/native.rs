//! The native build's instances (the Java front end's FFM backend): the
//! same operations as the wasm module, on a `State` per handle rather than
//! the module's one, and a panic caught at the boundary rather than
//! aborting the process. In safe Rust; `exports.rs` turns the host's
//! pointers into the references used here.
//!
//! # Native ABI (version 1, next to the wasm ABI in the crate's docs)
//! - `toolctx_native_new() -> *mut Handle`: a fresh instance (as a new wasm
//!   instance); `toolctx_native_free(h)` drops it. A handle is used by one
//!   thread at a time (the host's pool), from any thread.
//! - `toolctx_native_<op>(h, input, input_len, args, args_len) -> i64` for
//!   every `toolctx_<op>` of the wasm ABI: `input` is the operation's
//!   fields (read during the call only), `args` its numeric arguments as
//!   `i64`s in order (an `i32` in the low bits, an `f64` as its bits;
//!   missing ones are 0). An operation that answers text returns its
//!   answer's length, the answer itself at `toolctx_native_output(h)`
//!   (valid until the handle's next operation); the others return their
//!   number.
//! - [`TRAP`] (`i64::MIN`, no answer of any operation): the operation
//!   panicked. The handle is poisoned (every later operation answers
//!   `TRAP`): the host frees it, refuses the request with the core's
//!   `internal_error` refusal (asked of another handle) and keeps serving.
//!   The library's panic hook (installed by the first `toolctx_native_new`)
//!   writes one fixed line to stderr, with where it panicked and never
//!   the panic's message, which may hold the request's data.
#![forbid(unsafe_code)]

use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe, PanicHookInfo};
use std::sync::{Mutex, Once, PoisonError};

use crate::state::{answer, Op, State};

/// What an operation that panicked returns.
pub const TRAP: i64 = i64::MIN;

/// One instance: its state, or `None` once an operation panicked (what is
/// left of it is not trusted again).
pub struct Handle {
    // A mutex, though the host uses a handle from one thread at a time: a
    // host that did not would wait rather than share the state.
    state: Mutex<Option<State>>,
}

/// What the panic hook writes, before the panic's `file:line`.
pub const PANIC_LINE: &str =
    "toolctx: internal error (a panic was caught; the request was refused)";

/// Replaces the default panic hook, which prints the panic's message
/// (it may quote the request) to the host's stderr, with [`PANIC_LINE`].
/// The hook is this library's own: a native library links its own copy
/// of std, so the host's other Rust code keeps its hook.
fn quiet_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| std::panic::set_hook(Box::new(panic_line)));
}

fn panic_line(info: &PanicHookInfo<'_>) {
    let mut line = String::from(PANIC_LINE);
    if let Some(at) = info.location() {
        line.push_str(&format!(" at {}:{}", at.file(), at.line()));
    }
    line.push('\n');
    // Nothing to do if stderr is gone.
    let _ = std::io::stderr().write_all(line.as_bytes());
}

impl Handle {
    pub fn new() -> Handle {
        quiet_panics();
        Handle {
            state: Mutex::new(Some(State::new())),
        }
    }

    /// Runs `op` on this instance; `TRAP` (and poisoned) if it panics.
    fn guarded(&self, op: impl FnOnce(&mut State) -> i64) -> i64 {
        let mut slot = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(state) = slot.as_mut() else {
            return TRAP;
        };
        match catch_unwind(AssertUnwindSafe(|| op(state))) {
            Ok(n) => n,
            Err(_) => {
                *slot = None;
                TRAP
            }
        }
    }

    /// An operation that answers text: the answer's length.
    pub fn text(&self, input: &[u8], op: impl Op) -> i64 {
        self.guarded(|s| {
            #[cfg(feature = "test-panic")]
            test_panic(input);
            answer(s, input, op);
            i64::try_from(s.output().len()).unwrap_or(TRAP)
        })
    }

    /// An operation that answers a number.
    pub fn number<N: Number>(&self, op: impl FnOnce(&mut State) -> N) -> i64 {
        self.guarded(|s| op(s).widen())
    }

    /// The last answer's address (null once poisoned).
    pub fn output(&self) -> *const u8 {
        let slot = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        slot.as_ref()
            .map_or(core::ptr::null(), |s| s.output().as_ptr())
    }
}

impl Default for Handle {
    fn default() -> Handle {
        Handle::new()
    }
}

/// The test build's panic on demand (feature `test-panic`, never shipped):
/// any input that holds the marker panics, so the Java tests see a panic
/// refused and the next request served. Its message stands for a
/// request's data: the Java tests check it never reaches stderr.
#[cfg(feature = "test-panic")]
#[allow(clippy::panic)]
fn test_panic(input: &[u8]) {
    const MARKER: &[u8] = b"toolctx-test-panic";
    if input.windows(MARKER.len()).any(|w| w == MARKER) {
        panic!("a panic on demand: toolctx-panic-payload-5f1c (the request's data)");
    }
}

/// What a numeric operation answers, as the native export returns it
/// (nothing is 0).
pub trait Number {
    fn widen(self) -> i64;
}

impl Number for () {
    fn widen(self) -> i64 {
        0
    }
}

impl Number for i32 {
    fn widen(self) -> i64 {
        self.into()
    }
}

impl Number for i64 {
    fn widen(self) -> i64 {
        self
    }
}

/// A numeric argument as the host passes it (`i64`), read as the export's
/// type; a missing one is 0.
pub trait Arg: Sized {
    fn take(args: &mut core::slice::Iter<'_, i64>) -> Self;
}

impl Arg for i64 {
    fn take(args: &mut core::slice::Iter<'_, i64>) -> i64 {
        args.next().copied().unwrap_or(0)
    }
}

impl Arg for i32 {
    fn take(args: &mut core::slice::Iter<'_, i64>) -> i32 {
        // The low 32 bits, as a wasm host hands an i32.
        i64::take(args) as i32
    }
}

impl Arg for f64 {
    fn take(args: &mut core::slice::Iter<'_, i64>) -> f64 {
        f64::from_bits(i64::take(args) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Answer;

    #[test]
    fn handles_are_independent_and_a_panic_poisons_only_its_own() {
        let a = Handle::new();
        let b = Handle::new();
        assert_eq!(
            a.text(b"x", |_, i| Ok(Answer::Text(format!("{}", i.len())))),
            2
        );
        assert_eq!(b.text(b"", |_, _| Ok(Answer::Text("long".into()))), 5);
        #[allow(clippy::panic)]
        let trapped = a.number(|_| -> i64 { panic!("on purpose") });
        assert_eq!(trapped, TRAP);
        assert_eq!(a.number(|_| 1i32), TRAP, "poisoned from then on");
        assert!(a.output().is_null());
        assert_eq!(b.number(|_| 7i32), 7, "the other handle keeps serving");
        assert!(!b.output().is_null());
    }

    #[test]
    fn arguments_are_read_in_order_with_their_types() {
        let bits = 1.5f64.to_bits() as i64;
        let args = [-1i64 << 32 | 5, 9, bits];
        let mut it = args.iter();
        assert_eq!(i32::take(&mut it), 5);
        assert_eq!(i64::take(&mut it), 9);
        assert_eq!(f64::take(&mut it), 1.5);
        assert_eq!(i64::take(&mut it), 0, "a missing argument is 0");
    }
}
