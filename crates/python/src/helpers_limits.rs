//! The result limits and the progress coalescing rule of the server helpers
//! (CONTRACT §5), as the core decides them (`toolctx_core::helpers`), for
//! `toolctx.helpers.results` and `toolctx.helpers.progress`: a result's
//! JSON in, its findings out; each progress report and timer in, what to
//! send when out. The clock, the timer and the send stay in Python.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::IntoPyObjectExt;
use toolctx_core::helpers::progress::{Coalescer, Report, Step, Tick, INTERVAL_MS};
use toolctx_core::helpers::results::{self, LimitCode};

use crate::convert::json_text;
use crate::errors::toolctx_error;

/// One finding: `(code, message, size, limit, index)`.
type Finding = (&'static str, String, usize, usize, Option<usize>);

/// The limits the result (its JSON form: dict, list, str, numbers, None)
/// runs into, in the core's order. Raises `ToolctxError`
/// (`invalid_argument`) for a result the core cannot read.
#[pyfunction]
pub fn check_result(py: Python<'_>, result: &Bound<'_, PyAny>) -> PyResult<Vec<Finding>> {
    // The message ends with the core's reason in parentheses.
    let text = json_text(result).map_err(|e| {
        toolctx_error(
            py,
            "invalid_argument",
            format!("the result is not JSON the platform reads: {e} (result_not_json)"),
        )
    })?;
    let findings = py
        .detach(|| results::check(text.as_bytes()))
        .map_err(|e| toolctx_error(py, "invalid_argument", format!("{e} ({})", e.code())))?;
    Ok(findings
        .into_iter()
        .map(|f| (f.code.as_str(), f.message, f.size, f.limit, f.index))
        .collect())
}

/// The core's limits: `text_chars`, `structured_chars`, `image_bytes`,
/// `images`, `image_types`.
pub fn limits(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("text_chars", results::TEXT_CHARS)?;
    d.set_item("structured_chars", results::STRUCTURED_CHARS)?;
    d.set_item("image_bytes", results::IMAGE_BYTES)?;
    d.set_item("images", results::IMAGES)?;
    d.set_item("image_types", PyTuple::new(py, results::IMAGE_TYPES)?)?;
    Ok(d)
}

/// The findings' codes, in the core's order.
pub fn limit_codes(py: Python<'_>) -> PyResult<Bound<'_, PyTuple>> {
    PyTuple::new(py, LimitCode::ALL.map(LimitCode::as_str))
}

/// The least time between two progress sends (ms): the platform's rate.
pub const PROGRESS_INTERVAL_MS: u64 = INTERVAL_MS;

/// One call's progress coalescing (the core's `Coalescer`). Times are
/// milliseconds on a clock that does not go back.
#[pyclass(module = "toolctx")]
pub struct ProgressCoalescer {
    core: Coalescer,
}

fn send(py: Python<'_>, r: Report) -> PyResult<Py<PyAny>> {
    ("send", r.progress, r.total, r.message).into_py_any(py)
}

#[pymethods]
impl ProgressCoalescer {
    /// `interval_ms` as the user gave it, read by the settings table
    /// (`progress_interval_ms`: `None` or 0 the default); a value it
    /// refuses raises its `ConfigError`.
    #[new]
    #[pyo3(signature = (interval_ms = None))]
    fn new(py: Python<'_>, interval_ms: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let core = match interval_ms {
            Some(value) => crate::settings::with_raw(value, Coalescer::with_setting)?,
            None => Coalescer::with_setting(toolctx_core::settings::Raw::Absent),
        };
        Ok(ProgressCoalescer {
            core: core.map_err(|e| crate::errors::setting_error(py, &e))?,
        })
    }

    /// `("send", progress, total, message)`, `("hold", flush_at, arm)` or
    /// `("drop", reason)`.
    #[pyo3(signature = (now, progress, total = None, message = None))]
    fn report(
        &mut self,
        py: Python<'_>,
        now: u64,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        match self.core.report(now, progress, total, message) {
            Step::Send(r) => send(py, r),
            Step::Hold { flush_at, arm } => ("hold", flush_at, arm).into_py_any(py),
            Step::Drop(why) => ("drop", why.as_str()).into_py_any(py),
        }
    }

    /// A timer fired: `("send", progress, total, message)`, `("wait", at)`
    /// or `("idle",)`.
    fn tick(&mut self, py: Python<'_>, now: u64) -> PyResult<Py<PyAny>> {
        match self.core.tick(now) {
            Tick::Send(r) => send(py, r),
            Tick::Wait(at) => ("wait", at).into_py_any(py),
            Tick::Idle => ("idle",).into_py_any(py),
        }
    }

    /// The held report to send now, as `(progress, total, message)`, or `None`.
    fn flush(&mut self, now: u64) -> Option<(f64, Option<f64>, Option<String>)> {
        self.core
            .flush(now)
            .map(|r| (r.progress, r.total, r.message))
    }

    /// The call ended: nothing more is sent.
    fn close(&mut self) {
        self.core.close();
    }

    /// Reports sent so far.
    #[getter]
    fn sent(&self) -> u64 {
        self.core.sent()
    }
}

/// Adds this file's names to `toolctx._native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<ProgressCoalescer>()?;
    m.add_function(wrap_pyfunction!(check_result, m)?)?;
    m.add("RESULT_LIMITS", limits(py)?)?;
    m.add("LIMIT_CODES", limit_codes(py)?)?;
    m.add("PROGRESS_INTERVAL_MS", PROGRESS_INTERVAL_MS)?;
    Ok(())
}
