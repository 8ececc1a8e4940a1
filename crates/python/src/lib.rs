//! Python bindings (PyO3, abi3 for CPython 3.10+) over `toolctx-core`: the
//! native module `toolctx._native` of the Python package `toolctx`
//! (`python/toolctx`, which adds the ASGI middleware, the MCP SDK and
//! FastMCP integrations and the server helpers in Python).
//!
//! Nothing is decided here: the core decides; this crate carries Python
//! values in (method, headers, body, `now`) and the verdict out, and
//! releases the interpreter while the core works.
#![forbid(unsafe_code)]

use pyo3::prelude::*;

mod aivax;
mod context;
mod conventions;
mod convert;
mod errors;
mod helpers_limits;
mod idempotency;
mod redis;
mod replay;
mod settings;
mod signing;
mod telemetry;
mod verdict;
mod verifier;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<verifier::Verifier>()?;
    m.add_class::<verifier::ReadBody>()?;
    m.add_class::<verifier::MemoryReplay>()?;
    m.add_class::<aivax::AivaxVerifier>()?;
    m.add_class::<aivax::AivaxReadBody>()?;
    m.add_class::<context::Context>()?;
    m.add_class::<context::AivaxContext>()?;
    m.add_class::<verdict::Pass>()?;
    m.add_class::<verdict::Upstream>()?;
    m.add_class::<verdict::Accept>()?;
    m.add_class::<verdict::Reject>()?;
    m.add_class::<signing::Claims>()?;
    m.add("ToolctxError", py.get_type::<errors::ToolctxError>())?;
    m.add("ConfigError", py.get_type::<errors::ConfigError>())?;
    m.add("TOKEN_HEADER", toolctx_core::TOKEN_HEADER)?;
    m.add("META_PREFIX", toolctx_core::META_PREFIX)?;
    m.add("ISSUER", toolctx_core::ISSUER)?;
    m.add("TOKEN_TTL_S", toolctx_core::TOKEN_TTL_S)?;
    m.add("CORE_VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add("TUIX_HEADERS", toolctx_core::TUIX_HEADERS.to_vec())?;
    m.add(
        "REDIS_KEY_PREFIX",
        toolctx_core::replay::redis::DEFAULT_KEY_PREFIX,
    )?;
    m.add_function(wrap_pyfunction!(conventions::redis_claim_args, m)?)?;
    m.add_class::<replay::ClaimAnswer>()?;
    m.add_function(wrap_pyfunction!(replay::redis_claim_answer, m)?)?;
    m.add_function(wrap_pyfunction!(replay::redis_timeout_ms, m)?)?;
    m.add_function(wrap_pyfunction!(settings::read_setting, m)?)?;
    m.add(
        "DEFAULT_REPLAY_CAPACITY",
        toolctx_core::DEFAULT_REPLAY_CAPACITY,
    )?;
    m.add("REDIS_TIMEOUT_MS", toolctx_core::redis::TIMEOUT_MS)?;
    m.add("TELEMETRY", telemetry::names(py)?)?;
    m.add_function(wrap_pyfunction!(telemetry::describe_request, m)?)?;
    m.add_function(wrap_pyfunction!(conventions::qualified_tool_name, m)?)?;
    m.add_function(wrap_pyfunction!(conventions::server_label, m)?)?;
    m.add_function(wrap_pyfunction!(conventions::canonical_json, m)?)?;
    m.add_function(wrap_pyfunction!(conventions::canonical_json_text, m)?)?;
    m.add_function(wrap_pyfunction!(conventions::tuix_idempotency_key, m)?)?;
    m.add_function(wrap_pyfunction!(conventions::reasons, m)?)?;
    m.add_function(wrap_pyfunction!(conventions::refusal_table, m)?)?;
    m.add_function(wrap_pyfunction!(conventions::config_error_codes, m)?)?;
    m.add_function(wrap_pyfunction!(conventions::context_claims, m)?)?;
    m.add_function(wrap_pyfunction!(conventions::refuse, m)?)?;
    idempotency::add(m)?;
    helpers_limits::register(m)?;
    Ok(())
}
