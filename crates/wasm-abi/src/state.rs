//! An instance's state and the operations on it, in safe Rust: the input
//! buffer the host writes, the last answer it reads, the verifier, and the
//! progress coalescers. `exports.rs` only names them for the host.
#![forbid(unsafe_code)]

use std::cell::RefCell;

use toolctx_wasm_boundary::Error;
#[cfg(feature = "helpers")]
use toolctx_wasm_boundary::{helpers::Progress, Tickets};
#[cfg(feature = "verifier")]
use toolctx_wasm_boundary::{AgentArea, Boundary};

/// The version of the ABI these exports keep (`toolctx_version`).
pub const ABI_VERSION: i32 = 1;

/// Progress coalescers alive at once per instance; the oldest is forgotten
/// (its calls answer `!internal`) when a host never frees its handles.
#[cfg(feature = "helpers")]
const PROGRESS_HANDLES: usize = 4096;

pub struct State {
    input: Vec<u8>,
    output: Vec<u8>,
    #[cfg(feature = "verifier")]
    pub(crate) verifier: Option<Boundary<AgentArea>>,
    /// The core's in-memory replay guard on its own (`toolctx_replay_memory`),
    /// for a host whose pooled verifiers all claim through one instance.
    #[cfg(feature = "verifier")]
    pub(crate) replay: Option<toolctx_core::ReplayCache>,
    #[cfg(feature = "helpers")]
    pub(crate) progress: Tickets<Progress>,
    /// The core's in-memory idempotency store on its own
    /// (`toolctx_idem_memory`), which the host calls under one lock.
    #[cfg(feature = "helpers")]
    pub(crate) idem_memory: Option<toolctx_core::helpers::memory::MemoryStore>,
}

impl State {
    /// A fresh instance: no verifier, no input, no answer.
    pub const fn new() -> State {
        State {
            input: Vec::new(),
            output: Vec::new(),
            #[cfg(feature = "verifier")]
            verifier: None,
            #[cfg(feature = "verifier")]
            replay: None,
            #[cfg(feature = "helpers")]
            progress: Tickets::new(PROGRESS_HANDLES),
            #[cfg(feature = "helpers")]
            idem_memory: None,
        }
    }

    /// The last answer, for a native host (`native.rs`).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn output(&self) -> &[u8] {
        &self.output
    }
}

impl Default for State {
    fn default() -> State {
        State::new()
    }
}

// The wasm module's one instance: a wasm instance is its own process. A
// native build gives each host instance a `State` of its own (`native.rs`).
thread_local! {
    static STATE: RefCell<State> = const { RefCell::new(State::new()) };
}

/// `toolctx_input`: a buffer of `len` bytes for the host to write, as a
/// pointer into this module's memory; 0 for a negative length.
pub fn input(len: i32) -> i32 {
    buffer(len).map_or(0, pointer)
}

/// The input buffer, `len` zeroed bytes; `None` for a negative length.
fn buffer(len: i32) -> Option<*const u8> {
    let len = usize::try_from(len).ok()?;
    Some(STATE.with_borrow_mut(|s| {
        s.input.clear();
        s.input.resize(len, 0);
        s.input.as_ptr()
    }))
}

fn pointer(p: *const u8) -> i32 {
    // wasm32: an address is 32 bits. On a native build (tests) the value is
    // only a token: a native host reads `toolctx_native_output` instead.
    p as usize as i32
}

/// What an operation answers: text, a list (as fields), or an error.
pub enum Answer {
    Text(String),
    List(Vec<Vec<u8>>),
}

impl From<String> for Answer {
    fn from(s: String) -> Answer {
        Answer::Text(s)
    }
}

/// An operation on an instance: its state and the input the host wrote.
pub trait Op: FnOnce(&mut State, &[u8]) -> Result<Answer, Error> {}
impl<F: FnOnce(&mut State, &[u8]) -> Result<Answer, Error>> Op for F {}

/// Runs `op` on the input the host wrote and this instance's state, keeps
/// its answer (`=` + payload or `!` + error) and returns where it lies:
/// `(ptr << 32) | len`.
pub fn run(op: impl Op) -> i64 {
    STATE.with_borrow_mut(|s| {
        let input = core::mem::take(&mut s.input);
        let answer = op(s, &input);
        s.input = input;
        keep(s, answer);
        let ptr = pointer(s.output.as_ptr()) as u32;
        let len = u32::try_from(s.output.len()).unwrap_or(u32::MAX);
        ((u64::from(ptr) << 32) | u64::from(len)) as i64
    })
}

/// Runs `op` on `input` and keeps its answer in `s` (`=` + payload or `!`
/// + error): a native handle's state (`native.rs`).
#[cfg(not(target_arch = "wasm32"))]
pub fn answer(s: &mut State, input: &[u8], op: impl Op) {
    let answer = op(s, input);
    keep(s, answer);
}

/// Writes an operation's answer where the host reads it. Apart from the
/// generic callers, and never inlined: one copy, not one per export, in
/// the size-bound module.
#[inline(never)]
fn keep(s: &mut State, answer: Result<Answer, Error>) {
    s.output.clear();
    match answer {
        Ok(Answer::Text(text)) => {
            s.output.push(b'=');
            s.output.extend_from_slice(text.as_bytes());
        }
        Ok(Answer::List(items)) => {
            s.output.push(b'=');
            for item in items {
                put_field(&item, &mut s.output);
            }
        }
        Err(e) => {
            s.output.push(b'!');
            s.output.extend_from_slice(e.as_str().as_bytes());
        }
    }
}

/// Runs `op` on the state alone, for the operations that answer a number
/// (the helpers'; the verifier's all answer text).
#[cfg(feature = "helpers")]
pub fn with<T>(op: impl FnOnce(&mut State) -> T) -> T {
    STATE.with_borrow_mut(op)
}

pub(crate) fn bad(what: &str) -> Error {
    Error::internal(what)
}

fn put_field(bytes: &[u8], out: &mut Vec<u8>) {
    let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(bytes);
}

/// The input's fields: each a `u32` little-endian length, then its bytes.
pub fn fields(input: &[u8]) -> Result<Vec<&[u8]>, Error> {
    let mut rest = input;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let (len, tail) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| bad("a field's length is cut short"))?;
        let len = usize::try_from(u32::from_le_bytes(*len)).map_err(|_| bad("field too long"))?;
        if len > tail.len() {
            return Err(bad("a field runs past the input"));
        }
        let (field, tail) = tail.split_at(len);
        out.push(field);
        rest = tail;
    }
    Ok(out)
}

/// Exactly `N` fields.
pub(crate) fn exact<const N: usize>(input: &[u8]) -> Result<[&[u8]; N], Error> {
    fields(input)?
        .try_into()
        .map_err(|_| bad("wrong number of input fields"))
}

pub(crate) fn utf8(field: &[u8]) -> Result<&str, Error> {
    core::str::from_utf8(field).map_err(|_| bad("a text field is not UTF-8"))
}

/// A ticket or handle as the boundary's `Tickets` take it: they are `u32`
/// counters, which the host hands back as `i32` bits.
pub(crate) fn ticket(t: i32) -> f64 {
    f64::from(t as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        put_field(bytes, &mut out);
        out
    }

    #[test]
    fn fields_are_cut_by_their_lengths() {
        let input = [field(b"ab"), field(b""), field(b"xyz")].concat();
        assert_eq!(fields(&input).ok(), Some(vec![&b"ab"[..], b"", b"xyz"]));
        assert_eq!(fields(&[]).ok(), Some(vec![]));
        let cut = input.get(..input.len() - 1).unwrap_or(&[]);
        assert!(fields(cut).is_err(), "runs past the input");
        assert!(fields(&[1, 0, 0]).is_err(), "a length cut short");
        assert!(exact::<2>(&input).is_err(), "three fields are not two");
    }

    #[test]
    fn an_answer_is_marked_and_an_error_carries_its_code() {
        let packed = run(|_, _| Ok(Answer::Text("p".into())));
        assert_eq!(packed & 0xffff_ffff, 2);
        with_output(|out| assert_eq!(out, b"=p"));
        run(|_, _| Err(Error::new("internal", "no")));
        with_output(|out| assert_eq!(out, b"!internal\nno"));
        run(|_, _| Ok(Answer::List(vec![b"a".to_vec(), b"bc".to_vec()])));
        with_output(|out| assert_eq!(out, [&b"="[..], &field(b"a"), &field(b"bc")].concat()));
    }

    fn with_output(check: impl FnOnce(&[u8])) {
        STATE.with_borrow(|s| check(&s.output));
    }
}
