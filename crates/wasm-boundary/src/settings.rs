//! The settings table (`toolctx_core::settings`) across the boundary: a
//! host's raw value as a kind and a number or text, and the value read in
//! one string form. Nothing is decided here: the core's table reads it.

use toolctx_core::digits::u64_text;
use toolctx_core::settings::{self, Raw, Value};

use crate::Error;

/// The raw kinds a host names (`toolctx_setting`'s `kind`): not given, a
/// flag, a number, a text, anything else.
pub const ABSENT: i32 = 0;
pub const FALSE: i32 = 1;
pub const TRUE: i32 = 2;
pub const NUMBER: i32 = 3;
pub const TEXT: i32 = 4;
pub const OTHER: i32 = 5;

/// A host's raw value from its kind, number and text (an unknown kind is
/// [`Raw::Other`]: refused as the wrong type).
pub fn raw(kind: i32, number: f64, text: &str) -> Raw<'_> {
    match kind {
        ABSENT => Raw::Absent,
        FALSE => Raw::Flag(false),
        TRUE => Raw::Flag(true),
        NUMBER => Raw::Number(number),
        TEXT => Raw::Text(text),
        _ => Raw::Other,
    }
}

/// The setting `name` read from `raw`, as text: `true`/`false`, a number's
/// decimal digits, or the text itself; or the core's refusal.
pub fn read(name: &str, raw: Raw<'_>) -> Result<String, Error> {
    Ok(
        match settings::read(name, raw).map_err(|e| Error::new(e.code(), e))? {
            Value::Flag(b) => String::from(if b { "true" } else { "false" }),
            Value::Number(n) => u64_text(n),
            Value::Text(t) => String::from(t),
        },
    )
}
