//! Our reader against serde_json (exact numbers) on the same bytes. They
//! must agree, except where the contract makes ours stricter: duplicate
//! member names (serde_json keeps the last) and nesting deeper than 64
//! (serde_json allows 128).
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolctx_core::json::{self, JsonError};

fuzz_target!(|data: &[u8]| {
    let ours = json::parse(data);
    let theirs = serde_json::from_slice::<serde_json::Value>(data);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => {
            let text = serde_json::to_string(b).expect("serde_json writes what it read");
            let b = json::parse(text.as_bytes()).expect("serde_json's output reads");
            assert_eq!(*a, b, "same document, different values");
        }
        (Ok(_), Err(e)) => panic!("we accept, serde_json refuses: {e}"),
        (Err(JsonError::Duplicate | JsonError::TooDeep), Ok(_)) => {}
        (Err(e), Ok(_)) => panic!("serde_json accepts, we refuse: {e}"),
        (Err(_), Err(_)) => {}
    }
});
