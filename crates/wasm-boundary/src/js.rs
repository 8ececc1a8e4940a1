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

/// A Redis store's timeout in milliseconds, for both modules' `redisTimeoutMs`:
/// the core's rule (`redis::timeout_ms`) over the user's `timeoutMs`
/// (`undefined` is 0, the default); a number it refuses throws.
pub fn redis_timeout_ms(raw: Option<f64>) -> Result<u32, JsValue> {
    let ms = toolctx_core::redis::timeout_ms(raw.unwrap_or(0.0)).map_err(|e| config_error(&e))?;
    // At most `MAX_TIMEOUT_MS`, 60,000.
    Ok(u32::try_from(ms).unwrap_or(u32::MAX))
}
