//! The conventions of CONTRACT §6 and §7 (tool names, RFC 8785, the Tuix
//! key) and the core's name lists (reasons, configuration error codes,
//! context claims), as plain functions.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use toolctx_core::{jcs, json, names, ConfigError, Reason, Refusal};

use crate::convert::json_text;
use crate::errors::toolctx_error;
use crate::verdict::reject;

/// `mcp__<server>__<tool>`, the name a model sees (CONTRACT §6).
#[pyfunction]
pub fn qualified_tool_name(instance_name: &str, tool: &str) -> String {
    names::qualified_tool_name(instance_name, tool)
}

/// `<server>` of the model-facing name.
#[pyfunction]
pub fn server_label(instance_name: &str) -> String {
    names::server_label(instance_name)
}

/// The RFC 8785 canonical form of a Python JSON value (dict, list, str,
/// int, float, bool, None), written by the core.
#[pyfunction]
pub fn canonical_json(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    canonical_text(py, &json_text(value)?)
}

/// The RFC 8785 canonical form of a JSON text.
#[pyfunction]
pub fn canonical_json_text(py: Python<'_>, text: &str) -> PyResult<String> {
    canonical_text(py, text)
}

fn canonical_text(py: Python<'_>, text: &str) -> PyResult<String> {
    let value =
        json::parse(text.as_bytes()).map_err(|e| toolctx_error(py, "not_json", e.to_string()))?;
    jcs::canonicalize(&value).map_err(|e| toolctx_error(py, "not_canonicalizable", e.to_string()))
}

/// The Tuix idempotency key (CONTRACT §7): lowercase hex SHA-256 of the
/// canonical `{"arguments", "sessionId", "tool", "turn"}`, top-level
/// `null` and `""` arguments left out.
#[pyfunction]
#[pyo3(signature = (session_id, turn, tool, arguments = None))]
pub fn tuix_idempotency_key(
    py: Python<'_>,
    session_id: &str,
    turn: &str,
    tool: &str,
    arguments: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let text = match arguments {
        Some(a) if !a.is_none() => json_text(a)?,
        _ => "{}".to_string(),
    };
    let value =
        json::parse(text.as_bytes()).map_err(|e| toolctx_error(py, "not_json", e.to_string()))?;
    jcs::tuix_idempotency_key(session_id, turn, tool, &value)
        .map_err(|e| toolctx_error(py, "not_canonicalizable", e.to_string()))
}

/// Every refusal reason the core can give, in the order of the checks.
#[pyfunction]
pub fn reasons<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, Reason::ALL.iter().map(|r| r.as_str()))
}

/// `(reason, http_status, jsonrpc_code, message)` for every reason: the
/// core's one refusal table.
#[pyfunction]
pub fn refusal_table<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        Reason::ALL
            .iter()
            .map(|r| (r.as_str(), r.status(), r.code(), r.message())),
    )
}

/// Every configuration error code (`ConfigError.code`).
#[pyfunction]
pub fn config_error_codes<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
    // The settings table's own code (`config_placeholder`) after the core's.
    let settings = toolctx_core::settings::SettingError::CODES;
    let own = settings.iter().filter(|c| !ConfigError::CODES.contains(c));
    let codes: Vec<&str> = ConfigError::CODES.iter().chain(own).copied().collect();
    PyTuple::new(py, codes)
}

/// The context claims, in the core's order (each `_meta` key is
/// `agentarea/<claim>`): the core's `CONTEXT_CLAIMS`.
#[pyfunction]
pub fn context_claims<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, toolctx_core::CONTEXT_CLAIMS)
}

/// The core's refusal for `reason` (a machine code such as
/// `internal_error`), answering `id_json` (JSON text; `None` answers
/// `null`): a `Reject` as a verifier renders one, for a front end that
/// must refuse without a verdict (its verifier could not run).
#[pyfunction]
#[pyo3(signature = (reason, id_json = None, include_reason = None))]
pub fn refuse(
    py: Python<'_>,
    reason: &str,
    id_json: Option<String>,
    include_reason: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let include_reason = crate::settings::include_reason(py, include_reason)?;
    refusal(py, reason, id_json, include_reason)
}

/// [`refuse`] with `include_reason` read already (a verifier's).
pub fn refusal(
    py: Python<'_>,
    reason: &str,
    id_json: Option<String>,
    include_reason: bool,
) -> PyResult<Py<PyAny>> {
    let reason = Reason::from_code(reason)
        .ok_or_else(|| PyValueError::new_err(format!("unknown refusal reason {reason:?}")))?;
    if let Some(id) = &id_json {
        if !matches!(
            json::parse(id.as_bytes()),
            Ok(json::Value::String(_) | json::Value::Number(_))
        ) {
            return Err(PyValueError::new_err(
                "id_json must be a JSON string or number",
            ));
        }
    }
    reject(py, Refusal::new(reason, id_json), include_reason)
}

/// The Redis command that records `jti` until `until` at `now`, as every
/// front end sends it (`SET <prefix><jti> 1 NX PX <ms>`).
#[pyfunction]
pub fn redis_claim_args(prefix: &str, jti: &str, until: u64, now: u64) -> Vec<String> {
    let claim = toolctx_core::ReplayClaim {
        jti: jti.to_string(),
        until,
    };
    toolctx_core::replay::redis::claim_args(prefix, &claim, now).to_vec()
}
