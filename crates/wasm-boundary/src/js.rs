//! The errors as JavaScript values, for the two wasm-bindgen modules of the
//! npm package (feature `js`).

use crate::Error;
use wasm_bindgen::JsValue;

impl From<Error> for JsValue {
    fn from(e: Error) -> JsValue {
        JsValue::from_str(e.as_str())
    }
}

pub fn js_error(code: &str, e: impl core::fmt::Display) -> JsValue {
    Error::new(code, e).into()
}

pub fn config_error(e: &toolctx_core::ConfigError) -> JsValue {
    Error::config(e).into()
}

/// A flag setting of the core's table (`include_reason`) from a JavaScript
/// value as the user gave it: `undefined` and `null` the row's default, a
/// boolean itself, anything else refused by the core (`config_type`).
pub fn flag_setting(row: &toolctx_core::settings::Setting, raw: &JsValue) -> Result<bool, JsValue> {
    use toolctx_core::settings::Raw;
    let raw = match raw.as_bool() {
        Some(b) => Raw::Flag(b),
        None if raw.is_undefined() || raw.is_null() => Raw::Absent,
        None => Raw::Other,
    };
    row.flag_of(raw).map_err(|e| config_error(&e.into()))
}

/// A Redis store's timeout in milliseconds, for both modules' `redisTimeoutMs`:
/// the core's rule (`redis::timeout_ms`) over the user's `timeoutMs`
/// (`undefined` is 0, the default); a number it refuses throws.
pub fn redis_timeout_ms(raw: Option<f64>) -> Result<u32, JsValue> {
    let ms = toolctx_core::redis::timeout_ms(raw.unwrap_or(0.0)).map_err(|e| config_error(&e))?;
    // At most `MAX_TIMEOUT_MS`, 60,000: a `u32` holds it.
    Ok(ms as u32)
}

/// A setting of the core's table read from a JavaScript value (`undefined`
/// and `null`: not given; a boolean, a number, a string; anything else is
/// the wrong type): the value to use, or the core's refusal thrown.
pub fn read_setting(name: &str, raw: &JsValue) -> Result<JsValue, JsValue> {
    use toolctx_core::settings::{read, Raw, Value};
    let text = raw.as_string();
    let raw = if raw.is_undefined() || raw.is_null() {
        Raw::Absent
    } else if let Some(b) = raw.as_bool() {
        Raw::Flag(b)
    } else if let Some(n) = raw.as_f64() {
        Raw::Number(n)
    } else if let Some(t) = &text {
        Raw::Text(t)
    } else {
        Raw::Other
    };
    match read(name, raw) {
        Ok(Value::Flag(b)) => Ok(JsValue::from_bool(b)),
        // Every number of the table is at most 2^53 (a `u32` or a duration).
        Ok(Value::Number(n)) => Ok(JsValue::from_f64(n as f64)),
        Ok(Value::Text(t)) => Ok(JsValue::from_str(t)),
        Err(e) => Err(Error::new(e.code(), e).into()),
    }
}
