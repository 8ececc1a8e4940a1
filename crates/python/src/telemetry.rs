//! The core's telemetry names (`toolctx_core::telemetry`) as the dict
//! `toolctx._native.TELEMETRY`, which `toolctx.telemetry` records under.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use toolctx_core::telemetry as t;

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
