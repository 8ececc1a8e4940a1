//! The replay guard's vocabulary for Python, from the core: the four
//! answers a store gives (`ClaimAnswer`), what a custom store's return
//! value and a redis-py reply to the claim mean, and the defaults. A store
//! does the I/O; the core says what its answer means.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString};
use toolctx_core::replay::redis::claim_answer;

/// What a replay store answers when asked to record a token id (the
/// core's `ClaimAnswer`): `FIRST_USE` accepts, `USED` refuses
/// `token_replayed`, `FULL` `replay_guard_full` (retryable), `FAILED`
/// `internal_error`.
#[pyclass(eq, eq_int, hash, frozen, module = "toolctx")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClaimAnswer {
    #[pyo3(name = "FIRST_USE")]
    FirstUse,
    #[pyo3(name = "USED")]
    Used,
    #[pyo3(name = "FULL")]
    Full,
    #[pyo3(name = "FAILED")]
    Failed,
}

impl From<toolctx_core::ClaimAnswer> for ClaimAnswer {
    fn from(a: toolctx_core::ClaimAnswer) -> ClaimAnswer {
        use toolctx_core::ClaimAnswer as Core;
        match a {
            Core::FirstUse => ClaimAnswer::FirstUse,
            Core::Used => ClaimAnswer::Used,
            Core::Full => ClaimAnswer::Full,
            Core::Failed => ClaimAnswer::Failed,
        }
    }
}

impl From<ClaimAnswer> for toolctx_core::ClaimAnswer {
    fn from(a: ClaimAnswer) -> toolctx_core::ClaimAnswer {
        use toolctx_core::ClaimAnswer as Core;
        match a {
            ClaimAnswer::FirstUse => Core::FirstUse,
            ClaimAnswer::Used => Core::Used,
            ClaimAnswer::Full => Core::Full,
            ClaimAnswer::Failed => Core::Failed,
        }
    }
}

#[pymethods]
impl ClaimAnswer {
    /// The answer's name in every language: `first_use`, `used`, `full`,
    /// `failed`.
    #[getter]
    fn value(&self) -> &'static str {
        toolctx_core::ClaimAnswer::from(*self).as_str()
    }

    /// The answer named `name`; any other name is `FAILED`.
    #[staticmethod]
    fn named(name: &str) -> ClaimAnswer {
        toolctx_core::ClaimAnswer::from_name(name).into()
    }

    fn __str__(&self) -> &'static str {
        self.value()
    }
}

/// What a custom store's `first_use` returned, as the core reads it: a
/// `ClaimAnswer`; `True` first use, `False` used (the older bool stores);
/// an answer's name. `Err` for anything else (the store is then `FAILED`,
/// and the error logged).
pub fn store_answer(answer: &Bound<'_, PyAny>) -> PyResult<toolctx_core::ClaimAnswer> {
    if let Ok(a) = answer.cast::<ClaimAnswer>() {
        return Ok((*a.get()).into());
    }
    if answer.is_instance_of::<PyBool>() {
        return Ok(toolctx_core::ClaimAnswer::of(answer.is_truthy()?));
    }
    if let Ok(name) = answer.cast::<PyString>() {
        return Ok(toolctx_core::ClaimAnswer::from_name(name.to_str()?));
    }
    Err(pyo3::exceptions::PyTypeError::new_err(
        "replay store first_use must return a ClaimAnswer (or a bool: True first use, False used)",
    ))
}

/// A Redis store's wait for a reply, in whole milliseconds, as the core's
/// rule reads the user's (`redis::timeout_ms`: 0 the default, 500; else
/// rounded to whole milliseconds, 1 to 60,000); `ConfigError`
/// (`limit_out_of_range`) for anything else.
#[pyfunction]
pub fn redis_timeout_ms(py: Python<'_>, ms: f64) -> PyResult<u64> {
    toolctx_core::redis::timeout_ms(ms).map_err(|e| crate::errors::config_error(py, &e))
}

/// What a redis-py reply to the claim (`redis_claim_args`) means:
/// `FIRST_USE`, `USED`, or `FAILED` for anything but `OK` and nil (the
/// reply read by `crate::redis::read_reply`).
#[pyfunction]
pub fn redis_claim_answer(reply: &Bound<'_, PyAny>) -> PyResult<ClaimAnswer> {
    crate::redis::read_reply(reply, |r| claim_answer(r).into())
}
