//! The signing side (CONTRACT §4), for platforms written in Python: one
//! claims object gives the token and the `_meta` that goes with it, both
//! written by the core (integer dates, `exp = iat + 300`, the idempotency
//! key composed).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt};
use toolctx_core::json::{self, Value};
use toolctx_core::{ContextClaims, TokenClaims, TOKEN_HEADER, TOKEN_TTL_S};

use crate::convert::{bytes_of, json_text, parse_to_py};
use crate::errors::config_error;

/// Everything a platform vouches for in one call: mint its token with
/// `mint(secret)`, and send `meta()` as the call's `params._meta`.
#[pyclass(frozen, module = "toolctx")]
pub struct Claims {
    inner: TokenClaims,
}

fn int_time(v: &Bound<'_, PyAny>, name: &str) -> PyResult<u64> {
    // `time.time()` is a float: the contract's dates are integers.
    if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an int (Unix seconds), e.g. int(time.time())"
        )));
    }
    v.extract::<u64>()
        .map_err(|_| PyValueError::new_err(format!("{name} must be a non-negative int")))
}

#[pymethods]
impl Claims {
    /// `Claims(*, instance_id, task_id, tool_call_id, workspace_id,
    /// protocol=None (`"1"`), agent_id=None, end_user_id=None, metadata=None,
    /// tool=None, jti=None, iat=None)`: `jti` defaults to a random UUID,
    /// `iat` to the system clock (an `int`; a `float` is refused).
    #[new]
    #[pyo3(signature = (*, instance_id, task_id, tool_call_id, workspace_id, protocol = None,
        agent_id = None, end_user_id = None, metadata = None, tool = None, jti = None, iat = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        instance_id: String,
        task_id: String,
        tool_call_id: String,
        workspace_id: String,
        protocol: Option<String>,
        agent_id: Option<String>,
        end_user_id: Option<String>,
        metadata: Option<&Bound<'_, PyAny>>,
        tool: Option<String>,
        jti: Option<String>,
        iat: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Claims> {
        let metadata = match metadata.filter(|m| !m.is_none()) {
            None => None,
            Some(m) => {
                if !m.is_instance_of::<PyDict>() {
                    return Err(PyTypeError::new_err("metadata must be a dict"));
                }
                let text = json_text(m)?;
                let v = json::parse(text.as_bytes())
                    .map_err(|e| PyValueError::new_err(format!("metadata: {e}")))?;
                Some(Value::into_owned(v))
            }
        };
        let jti = match jti {
            Some(j) => j,
            None => py
                .import("uuid")?
                .call_method0("uuid4")?
                .str()?
                .to_str()?
                .to_owned(),
        };
        let iat = match iat.filter(|i| !i.is_none()) {
            Some(i) => int_time(i, "iat")?,
            None => crate::convert::now_of(None)?,
        };
        Ok(Claims {
            inner: TokenClaims {
                instance_id,
                tool,
                jti,
                iat,
                context: ContextClaims {
                    protocol: protocol.unwrap_or_else(|| "1".into()),
                    task_id,
                    tool_call_id,
                    workspace_id,
                    agent_id,
                    end_user_id,
                    metadata,
                },
            },
        })
    }

    /// The HS256 compact JWS for the `X-AgentArea-Context` header, signed
    /// with `secret` (32..=512 bytes; `ConfigError` otherwise).
    fn mint(&self, py: Python<'_>, secret: &Bound<'_, PyAny>) -> PyResult<String> {
        let secret = bytes_of(secret, "secret")?;
        self.inner.mint(&secret).map_err(|e| config_error(py, &e))
    }

    /// The `params._meta` members that go with the token (`agentarea/*`),
    /// a new `dict`: add `progressToken` or your own keys to it.
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        parse_to_py(py, &self.inner.context.meta_json())
    }

    /// `meta()` as the core writes it.
    fn meta_json(&self) -> String {
        self.inner.context.meta_json()
    }

    /// The token's payload as a `dict`.
    fn payload<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        parse_to_py(py, &self.inner.payload_json())
    }

    fn payload_json(&self) -> String {
        self.inner.payload_json()
    }

    /// The request headers for the call: `{"x-agentarea-context": token}`.
    fn headers<'py>(
        &self,
        py: Python<'py>,
        secret: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item(TOKEN_HEADER, self.mint(py, secret)?)?;
        Ok(d)
    }

    #[getter]
    fn idempotency_key(&self) -> String {
        self.inner.context.idempotency_key()
    }
    #[getter]
    fn jti(&self) -> &str {
        &self.inner.jti
    }
    #[getter]
    fn iat(&self) -> u64 {
        self.inner.iat
    }
    #[getter]
    fn exp(&self) -> u64 {
        self.inner.iat.saturating_add(TOKEN_TTL_S)
    }
    #[getter]
    fn instance_id(&self) -> &str {
        &self.inner.instance_id
    }
    #[getter]
    fn tool(&self) -> Option<&str> {
        self.inner.tool.as_deref()
    }
    #[getter]
    fn task_id(&self) -> &str {
        &self.inner.context.task_id
    }
    #[getter]
    fn tool_call_id(&self) -> &str {
        &self.inner.context.tool_call_id
    }
    #[getter]
    fn workspace_id(&self) -> &str {
        &self.inner.context.workspace_id
    }

    fn __repr__(&self) -> String {
        format!("Claims({})", self.inner.payload_json())
    }
}
