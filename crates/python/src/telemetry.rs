//! The core's telemetry names (`toolctx_core::telemetry`) as the dict
//! `toolctx._native.TELEMETRY`, which `toolctx.telemetry` records under,
//! and its description of a request (`describe_request`).

use pyo3::prelude::*;
use pyo3::types::PyDict;
use toolctx_core::telemetry as t;
use toolctx_core::Reason;

use crate::convert::body_of;

/// `describe_request(method, body, reason=None)`: `(method, tool)`, the
/// request's JSON-RPC method and the tool of a `tools/call` as the core
/// read them (each `None` when it did not: `toolctx_core::telemetry::describe`),
/// for the span, the refusal log line and the `on_verdict` event.
/// `reason` is the refusal's reason, `None` when the verdict was not one.
#[pyfunction]
#[pyo3(signature = (method, body, reason = None))]
pub fn describe_request(
    method: &str,
    body: &Bound<'_, PyAny>,
    reason: Option<&str>,
) -> PyResult<(Option<String>, Option<String>)> {
    let body = body_of(body)?;
    let d = t::describe(method, &body, reason.and_then(Reason::from_code));
    Ok((d.method, d.tool))
}

pub fn names(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (key, value) in [
        ("scope", t::SCOPE),
        ("verdicts", t::VERDICTS),
        ("check_duration", t::CHECK_DURATION),
        ("check_duration_unit", t::CHECK_DURATION_UNIT),
        ("outcome", t::OUTCOME),
        ("reason", t::REASON),
        ("span", t::SPAN),
        ("mcp_method", t::MCP_METHOD),
        ("tool", t::TOOL),
        ("task_id", t::TASK_ID),
        ("workspace_id", t::WORKSPACE_ID),
        ("prometheus_verdicts", t::PROMETHEUS_VERDICTS),
        ("prometheus_check_duration", t::PROMETHEUS_CHECK_DURATION),
    ] {
        d.set_item(key, value)?;
    }
    d.set_item("outcomes", t::OUTCOMES)?;
    d.set_item("duration_buckets_s", t::DURATION_BUCKETS_S)?;
    Ok(d)
}
