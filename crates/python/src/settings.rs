//! The core's settings table (`toolctx_core::settings`, docs/CONTRACT.md
//! §5.3) for Python: a user's value as Python holds it, read once.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
use toolctx_core::settings::{self, Raw, Value};

/// The value to use for the setting `name` (the core's name) from the
/// user's `value`: `None` is not given; a `bool`, an `int` or `float`, a
/// `str`; anything else is the wrong type. `ConfigError` with the core's
/// code (`config_type`, `limit_out_of_range`, `config_placeholder`, ...).
#[pyfunction]
pub fn read_setting(py: Python<'_>, name: &str, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    with_raw(value, |raw| match settings::read(name, raw) {
        Ok(Value::Flag(b)) => Ok(PyBool::new(py, b).to_owned().into_any().unbind()),
        Ok(Value::Number(n)) => Ok(n.into_pyobject(py)?.into_any().unbind()),
        Ok(Value::Text(t)) => Ok(PyString::new(py, t).into_any().unbind()),
        Err(e) => Err(crate::errors::setting_error(py, &e)),
    })?
}

/// `read` over the user's `value` as the core's raw value (see
/// [`read_setting`]); `read` keeps nothing borrowed from it.
pub fn with_raw<T>(value: &Bound<'_, PyAny>, read: impl FnOnce(Raw<'_>) -> T) -> PyResult<T> {
    let text;
    let raw = if value.is_none() {
        Raw::Absent
    } else if let Ok(b) = value.cast::<PyBool>() {
        Raw::Flag(b.is_true())
    } else if value.is_instance_of::<PyInt>() {
        // Exact up to 2^53, past every range beyond it; an int too large
        // for a double is out of range too.
        Raw::Number(value.extract::<f64>().unwrap_or(f64::INFINITY))
    } else if let Ok(f) = value.cast::<PyFloat>() {
        Raw::Number(f.value())
    } else if let Ok(s) = value.cast::<PyString>() {
        text = s.to_cow()?;
        Raw::Text(&text)
    } else {
        Raw::Other
    };
    Ok(read(raw))
}

/// `include_reason` as the user gave it (`None`, a `bool`; anything else
/// `ConfigError`, `config_type`), read by the settings table.
pub fn include_reason(py: Python<'_>, value: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
    let row = &settings::INCLUDE_REASON;
    match value {
        Some(value) => with_raw(value, |raw: Raw<'_>| row.flag_of(raw))?,
        None => row.flag_of(Raw::Absent),
    }
    .map_err(|e| crate::errors::setting_error(py, &e))
}
