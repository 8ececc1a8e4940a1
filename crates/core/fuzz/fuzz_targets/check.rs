//! The whole check: the first two bytes give the token length, the token
//! follows, the rest is the body.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

#[path = "common.rs"]
mod common;

static VERIFIER: OnceLock<toolctx_core::Verifier> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let v = VERIFIER.get_or_init(common::verifier);
    let (len, rest) = match data {
        [a, b, rest @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), rest),
        _ => return,
    };
    let (token, body) = rest.split_at(len.min(rest.len()));
    let headers: [(&[u8], &[u8]); 2] = [(b"content-type", b"application/json"), (b"x-agentarea-context", token)];
    common::check(v, &headers, body);
});
