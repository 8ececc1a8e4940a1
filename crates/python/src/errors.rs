//! The exceptions: `ToolctxError` with a stable `code`, and `ConfigError`
//! for a configuration the core refused (its `ConfigError::code`; the
//! message never holds a secret).

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

create_exception!(
    toolctx,
    ToolctxError,
    PyValueError,
    "A toolctx error; `code` is a stable machine code."
);
create_exception!(
    toolctx,
    ConfigError,
    ToolctxError,
    "A configuration the core refused; `code` is the core's configuration error code."
);

/// `exc(message)` with `.code` set.
fn with_code(py: Python<'_>, err: PyErr, code: &str) -> PyErr {
    // Setting an attribute on a fresh exception instance cannot fail in
    // practice; if it did, the exception still carries its message.
    let _ = err.value(py).setattr("code", code);
    err
}

pub fn config_error(py: Python<'_>, e: &toolctx_core::ConfigError) -> PyErr {
    with_code(py, ConfigError::new_err(e.to_string()), e.code())
}

pub fn setting_error(py: Python<'_>, e: &toolctx_core::settings::SettingError) -> PyErr {
    with_code(py, ConfigError::new_err(e.to_string()), e.code())
}

pub fn toolctx_error(py: Python<'_>, code: &str, message: impl Into<String>) -> PyErr {
    with_code(py, ToolctxError::new_err(message.into()), code)
}
