//! The strict JSON reader: never panics, and what it accepts it writes back
//! to a document that reads as an equal value.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolctx_core::json;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = json::parse(data) {
        let text = v.to_json();
        let again = json::parse(text.as_bytes()).expect("written JSON reads back");
        assert_eq!(v, again);
    }
});
