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
