//! The boundary's one error shape, `"<code>\n<message>"`: the npm package
//! throws it as a string, the raw module (`crates/wasm-abi`) answers it
//! after a `!`. The code is one of the core's stable codes (or `internal`);
//! the message never holds a secret.

use core::fmt::Display;
use toolctx_core::ConfigError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(String);

impl Error {
    pub fn new(code: &str, e: impl Display) -> Error {
        Error(format!("{code}\n{e}"))
    }

    /// An `internal` error: the host and the module disagree (never the
    /// request's fault). Never inlined: one copy for every caller (the
    /// modules' sizes are budgeted).
    #[inline(never)]
    pub fn internal(message: &str) -> Error {
        Error::new("internal", message)
    }

    /// A configuration the core refused, under its `ConfigError::code`.
    /// Never inlined, as `internal`.
    #[inline(never)]
    pub fn config(e: &ConfigError) -> Error {
        Error::new(e.code(), e)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}
