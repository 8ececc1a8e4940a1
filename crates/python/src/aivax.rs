//! The AIVAX verifier (CONTRACT §7): the envelope checks, then the
//! `_aiv_*` members, the nonce verified by bcrypt against the hook key (a
//! cost above the cap refused before any work), with a cache of nonces
//! this verifier already verified.

use std::sync::Mutex;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use toolctx_core::aivax::{AivaxVerdict, AivaxVerifier as Core, NonceCache};
use toolctx_core::UnknownSettings;

use crate::context::AivaxContext;
use crate::convert::{body_of, headers_of, json_text};
use crate::errors::config_error;
use crate::verdict::{read_body_class, Rendering};

/// Verified nonces remembered per verifier (bound to its hook key by the
/// core; failures are never cached).
/// The settings table's default (`nonce_cache`).
const NONCE_CACHE_ENTRIES: usize = toolctx_core::settings::DEFAULT_NONCE_CACHE;

/// Verifies `tools/call` requests from AIVAX (`toolctx.AivaxVerifier`
/// adds the telemetry in Python, as `toolctx.Verifier` does).
#[pyclass(frozen, subclass, module = "toolctx")]
pub struct AivaxVerifier {
    core: Core,
    nonces: Mutex<NonceCache>,
    rendering: Rendering,
}

#[pymethods]
impl AivaxVerifier {
    /// `AivaxVerifier(hook_key, *, require_nonce=True, max_bcrypt_cost=12,
    /// credential=None, max_body_bytes=1048576, forward=None,
    /// include_reason=True)`, `forward` as `Verifier`'s (with AIVAX's
    /// context fields);
    /// validated by the core, `ConfigError` when refused (never showing the
    /// hook key).
    #[new]
    #[pyo3(signature = (hook_key, *, require_nonce = None, max_bcrypt_cost = None,
        credential = None, max_body_bytes = None, forward = None, include_reason = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        hook_key: &Bound<'_, PyAny>,
        require_nonce: Option<&Bound<'_, PyAny>>,
        max_bcrypt_cost: Option<&Bound<'_, PyAny>>,
        credential: Option<&Bound<'_, PyAny>>,
        max_body_bytes: Option<&Bound<'_, PyAny>>,
        forward: Option<&Bound<'_, PyAny>>,
        include_reason: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<AivaxVerifier> {
        let settings = PyDict::new(py);
        for (name, value) in [
            ("hook_key", Some(hook_key)),
            ("require_nonce", require_nonce),
            ("max_bcrypt_cost", max_bcrypt_cost),
            ("credential", credential),
            ("max_body_bytes", max_body_bytes),
            ("forward", forward),
        ] {
            if let Some(v) = value.filter(|v| !v.is_none()) {
                settings.set_item(name, v)?;
            }
        }
        let text = json_text(settings.as_any())?;
        let core = Core::from_json(text.as_bytes(), UnknownSettings::Refuse)
            .map_err(|e| config_error(py, &e))?;
        let rendering = Rendering::new(py, include_reason, core.forward().removed())?;
        Ok(AivaxVerifier {
            core,
            nonces: Mutex::new(NonceCache::new(NONCE_CACHE_ENTRIES)),
            rendering,
        })
    }

    #[getter]
    fn max_body_bytes(&self) -> usize {
        self.core.max_body_bytes()
    }

    /// The forwarded header names (see `Verifier.removed_headers`).
    #[getter]
    fn removed_headers(&self) -> Vec<String> {
        self.core.forward().removed().to_vec()
    }

    /// `Pass`, `Accept` (with an `AivaxContext`) or `Reject`; the
    /// interpreter is released while the core decides (bcrypt included).
    fn verify(
        &self,
        py: Python<'_>,
        method: &str,
        headers: &Bound<'_, PyAny>,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let headers = headers_of(headers)?;
        let body = body_of(body)?;
        let method = method.to_owned();
        self.decide(py, |core, nonces| {
            core.check_cached(&method, &headers, &body, nonces)
        })
    }

    /// Steps 0 and 1 only, as `Verifier.check_headers` answers: `Pass`,
    /// `Reject`, or `AivaxReadBody`, which `verify_body` takes with the
    /// body to run the remaining steps on the headers checked here.
    fn check_headers(
        &self,
        py: Python<'_>,
        method: &str,
        headers: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let headers = headers_of(headers)?;
        let v = self.core.check_headers(method, &headers);
        let limit = self.core.max_body_bytes();
        AivaxReadBody::answer(py, v, headers, limit, &self.rendering)
    }

    /// `verify`'s verdict for the request `check_headers` answered
    /// `AivaxReadBody` for, without steps 0 and 1. An `AivaxReadBody` is
    /// used once.
    fn verify_body(
        &self,
        py: Python<'_>,
        read_body: &AivaxReadBody,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let body = body_of(body)?;
        let (proof, headers) = read_body.take()?;
        self.decide(py, |core, nonces| {
            core.check_body_cached(proof, &headers, &body, nonces)
        })
    }

    /// The core's refusal for `reason`, rendered as this verifier renders
    /// refusals (see `Verifier.refuse`).
    #[pyo3(signature = (reason, id_json = None))]
    fn refuse(&self, py: Python<'_>, reason: &str, id_json: Option<String>) -> PyResult<Py<PyAny>> {
        self.rendering.refuse(py, reason, id_json)
    }

    fn __repr__(&self) -> String {
        format!("toolctx.AivaxVerifier({:?})", self.core)
    }
}

impl AivaxVerifier {
    /// `run` with the nonce cache, the interpreter released, its verdict
    /// rendered.
    fn decide(
        &self,
        py: Python<'_>,
        run: impl FnOnce(&Core, &mut NonceCache) -> AivaxVerdict + Send,
    ) -> PyResult<Py<PyAny>> {
        let v: PyResult<AivaxVerdict> = py.detach(|| {
            let mut nonces = self
                .nonces
                .lock()
                .map_err(|_| PyRuntimeError::new_err("nonce cache lock poisoned"))?;
            Ok(run(&self.core, &mut nonces))
        });
        self.rendering.verdict(py, v?, |py, ctx| {
            Ok(Py::new(py, AivaxContext::new(ctx))?.into_any())
        })
    }
}

read_body_class! {
    /// The AIVAX request whose headers passed steps 0 and 1: hand it to
    /// `AivaxVerifier.verify_body` with the body (read at most
    /// `max_body_bytes + 1`).
    AivaxReadBody
}
