//! Our reader against serde_json (exact numbers) on the same bytes. They
//! must agree, except where the contract makes ours stricter: duplicate
//! member names (serde_json keeps the last) and nesting deeper than 64
//! (serde_json allows 128). Every number ours reads is also written as
//! RFC 8785 text by the core's exact writer and compared with what the
//! writer replaced: `str::parse::<f64>` (correctly rounded) and ryu-js.
//! A duplicate ours reports must be there: serde_json's events are read
//! for a name twice in one object.
#![no_main]
use std::collections::HashSet;
use std::fmt;

use libfuzzer_sys::fuzz_target;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use toolctx_core::jcs;
use toolctx_core::json::{self, JsonError, Value};

/// Whether a document names a member twice in one object, at any depth.
struct Duplicated(bool);

impl<'de> Deserialize<'de> for Duplicated {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Duplicated(false))
    }
}

impl<'de> Visitor<'de> for Duplicated {
    type Value = Duplicated;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        let mut twice = false;
        while let Some(Duplicated(inner)) = seq.next_element()? {
            twice |= inner;
        }
        Ok(Duplicated(twice))
    }
    // Numbers come here too (arbitrary_precision: one private member).
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        let (mut seen, mut twice) = (HashSet::new(), false);
        while let Some(name) = map.next_key::<String>()? {
            twice |= !seen.insert(name);
            let Duplicated(inner) = map.next_value()?;
            twice |= inner;
        }
        Ok(Duplicated(twice))
    }
}

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
        (Err(JsonError::Duplicate), Ok(_)) => {
            let twice = serde_json::from_slice::<Duplicated>(data).map(|Duplicated(t)| t);
            assert!(matches!(twice, Ok(true)), "a duplicate reported where there is none");
        }
        (Err(JsonError::TooDeep), Ok(_)) => {}
        (Err(e), Ok(_)) => panic!("serde_json accepts, we refuse: {e}"),
        (Err(_), Err(_)) => {}
    }
});
