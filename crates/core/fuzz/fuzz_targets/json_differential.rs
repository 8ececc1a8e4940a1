//! Our reader against serde_json (exact numbers) on the same bytes. They
//! must agree, except where the contract makes ours stricter: duplicate
//! member names (serde_json keeps the last) and nesting deeper than 64
//! (serde_json allows 128). Every number ours reads is also written as
//! RFC 8785 text by the core's exact writer and compared with what the
//! writer replaced: `str::parse::<f64>` (correctly rounded) and ryu-js.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolctx_core::jcs;
use toolctx_core::json::{self, JsonError, Value};

fn numbers_agree(v: &Value<'_>) {
    match v {
        Value::Number(n) => {
            let ours = jcs::canonicalize(v).ok();
            let f: f64 = n.parse().expect("JSON number syntax parses");
            let f = if f == 0.0 { 0.0 } else { f };
            let theirs = f
                .is_finite()
                .then(|| ryu_js::Buffer::new().format_finite(f).to_owned());
            assert_eq!(ours, theirs, "RFC 8785 text of {n}");
        }
        Value::Array(items) => items.iter().for_each(numbers_agree),
        Value::Object(members) => members.iter().for_each(|(_, v)| numbers_agree(v)),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let ours = json::parse(data);
    let theirs = serde_json::from_slice::<serde_json::Value>(data);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => {
            let text = serde_json::to_string(b).expect("serde_json writes what it read");
            let b = json::parse(text.as_bytes()).expect("serde_json's output reads");
            assert_eq!(*a, b, "same document, different values");
            numbers_agree(a);
        }
        (Ok(_), Err(e)) => panic!("we accept, serde_json refuses: {e}"),
        (Err(JsonError::Duplicate | JsonError::TooDeep), Ok(_)) => {}
        (Err(e), Ok(_)) => panic!("serde_json accepts, we refuse: {e}"),
        (Err(_), Err(_)) => {}
    }
});
