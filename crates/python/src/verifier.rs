//! The AgentArea verifier (CONTRACT §1 to §3) and the request whose
//! headers passed steps 0 and 1 (`ReadBody`), with the replay guard: the
//! core's `ReplayCache` in this process, or a shared store called from
//! inside the core's guard.

use std::sync::Mutex;

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt};
use toolctx_core::{
    Checked, ClaimAnswer, Config, HeadersVerdict, ReplayCache, UnknownSettings, Verdict,
    Verifier as Core,
};

use crate::context::Context;
use crate::convert::{body_of, bytes_of, headers_of, json_text, now_of, Header};
use crate::errors::config_error;
use crate::verdict::{read_body_class, Rendering};

/// The replay guard's store.
enum Replay {
    None,
    /// The core's bounded cache, for one process.
    Memory(Mutex<ReplayCache>),
    /// `store.first_use(jti, until, now) -> ClaimAnswer` (or a bool),
    /// shared by several processes (`toolctx.RedisReplayStore`), called
    /// with the interpreter attached from inside the core's guard.
    Shared(Py<PyAny>),
}

/// The in-memory replay guard: `Verifier(..., replay=MemoryReplay(capacity))`.
#[pyclass(frozen, module = "toolctx")]
pub struct MemoryReplay {
    #[pyo3(get)]
    capacity: usize,
}

#[pymethods]
impl MemoryReplay {
    /// `capacity` as given, read by the core (0: its default); anything
    /// else it refuses raises its `ConfigError` (`limit_out_of_range`).
    #[new]
    #[pyo3(signature = (capacity = None))]
    fn new(py: Python<'_>, capacity: Option<&Bound<'_, PyInt>>) -> PyResult<MemoryReplay> {
        // An int past i64 is out of range either way: the core says so.
        let raw = capacity.map_or(0, |c| {
            c.extract::<i64>().unwrap_or(if c.lt(0).unwrap_or(false) {
                i64::MIN
            } else {
                i64::MAX
            })
        });
        let capacity = toolctx_core::replay::capacity(raw).map_err(|e| config_error(py, &e))?;
        Ok(MemoryReplay { capacity })
    }

    fn __repr__(&self) -> String {
        format!("MemoryReplay(capacity={})", self.capacity)
    }
}

/// The settings of CONTRACT §1 other than the secrets, by their names.
const SETTINGS: [&str; 9] = [
    "instance_id",
    "credential",
    "require_context",
    "clock_skew_s",
    "max_token_age_s",
    "max_body_bytes",
    "max_token_bytes",
    "protocol_majors",
    "forward",
];

/// Verifies MCP `tools/call` requests against their signed context.
/// Validated once at construction; holds no clock (pass `now`, or the
/// system clock is read per call). `toolctx.Verifier` is its subclass
/// that records each verdict (`toolctx.telemetry`).
#[pyclass(frozen, subclass, module = "toolctx")]
pub struct Verifier {
    core: Core,
    replay: Replay,
    rendering: Rendering,
}

#[pymethods]
impl Verifier {
    /// `Verifier(instance_id, secrets, *, credential=None,
    /// require_context=True, clock_skew_s=30, max_token_age_s=600,
    /// max_body_bytes=1048576, max_token_bytes=8192, protocol_majors=(1,),
    /// forward=None, include_reason=True, replay=None)`. `forward` is what
    /// goes upstream (`{"headers": {"task_id": "x-task-id", ...},
    /// "tuix": True, "meta": {"<_meta member>": "<header>"}}`): the verdict's
    /// `upstream` lists the headers to remove and to add. The settings are the core's
    /// (read and validated by it); a bad one raises `ConfigError` with the
    /// core's `code`, never showing a secret.
    #[new]
    #[pyo3(signature = (instance_id, secrets, *, credential = None, require_context = None,
        clock_skew_s = None, max_token_age_s = None, max_body_bytes = None,
        max_token_bytes = None, protocol_majors = None, forward = None, include_reason = None,
        replay = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        instance_id: &Bound<'_, PyAny>,
        secrets: &Bound<'_, PyAny>,
        credential: Option<&Bound<'_, PyAny>>,
        require_context: Option<&Bound<'_, PyAny>>,
        clock_skew_s: Option<&Bound<'_, PyAny>>,
        max_token_age_s: Option<&Bound<'_, PyAny>>,
        max_body_bytes: Option<&Bound<'_, PyAny>>,
        max_token_bytes: Option<&Bound<'_, PyAny>>,
        protocol_majors: Option<&Bound<'_, PyAny>>,
        forward: Option<&Bound<'_, PyAny>>,
        include_reason: Option<&Bound<'_, PyAny>>,
        replay: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Verifier> {
        let given = [
            Some(instance_id),
            credential,
            require_context,
            clock_skew_s,
            max_token_age_s,
            max_body_bytes,
            max_token_bytes,
            protocol_majors,
            forward,
        ];
        let settings = PyDict::new(py);
        for (name, value) in SETTINGS.iter().zip(given) {
            if let Some(v) = value.filter(|v| !v.is_none()) {
                settings.set_item(name, v)?;
            }
        }
        let text = json_text(settings.as_any())?;
        let mut config = Config::from_json(text.as_bytes(), UnknownSettings::Refuse)
            .map_err(|e| config_error(py, &e))?;
        config.secrets = secrets_of(secrets)?;
        let core = Core::new(config).map_err(|e| config_error(py, &e))?;
        let rendering = Rendering::new(py, include_reason, core.config().forward.removed())?;
        Ok(Verifier {
            core,
            replay: replay_of(replay)?,
            rendering,
        })
    }

    /// Read at most this many bytes of body; one more proves it too large.
    #[getter]
    fn max_body_bytes(&self) -> usize {
        self.core.max_body_bytes()
    }

    /// The tolerance for `exp`, `iat` and `nbf`, in seconds.
    #[getter]
    fn clock_skew_s(&self) -> u64 {
        self.core.config().clock_skew_s
    }

    /// The forwarded header names: removed from every request that passes
    /// or is accepted.
    #[getter]
    fn removed_headers(&self) -> Vec<String> {
        self.core.config().forward.removed().to_vec()
    }

    #[getter]
    fn instance_id(&self) -> &str {
        &self.core.config().instance_id
    }

    /// Whether the replay guard calls a shared store (which may block on
    /// the network: an async server runs `verify` in a worker thread then).
    #[getter]
    fn has_shared_replay_store(&self) -> bool {
        matches!(self.replay, Replay::Shared(_))
    }

    /// The whole decision on one request: `Pass`, `Accept` (with the
    /// verified `Context`) or `Reject`. `headers` are pairs (a header sent
    /// twice stays twice), a dict, or a multi-valued headers object; `body`
    /// bytes; `now` Unix seconds as an `int` (default: the system clock).
    /// The interpreter is released while the core decides.
    #[pyo3(signature = (method, headers, body, now = None))]
    fn verify(
        &self,
        py: Python<'_>,
        method: &str,
        headers: &Bound<'_, PyAny>,
        body: &Bound<'_, PyAny>,
        now: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let headers = headers_of(headers)?;
        let body = body_of(body)?;
        let now = now_of(now)?;
        let method = method.to_owned();
        let (v, store_error) = py.detach(|| match self.core.check_headers(&method, &headers) {
            HeadersVerdict::Pass => (Verdict::Pass, None),
            HeadersVerdict::Reject(r) => (Verdict::Reject(r), None),
            HeadersVerdict::ReadBody(proof) => self.decide(proof, &headers, &body, now),
        });
        self.answer(py, v, store_error)
    }

    /// Steps 0 and 1 (method, static credential) before the body is read:
    /// `Pass`, `Reject`, or `ReadBody`, which `verify_body` takes with the
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
        ReadBody::answer(py, v, headers, limit, &self.rendering)
    }

    /// `verify`'s verdict for the request `check_headers` answered
    /// `ReadBody` for, without steps 0 and 1. A `ReadBody` is used once.
    #[pyo3(signature = (read_body, body, now = None))]
    fn verify_body(
        &self,
        py: Python<'_>,
        read_body: &ReadBody,
        body: &Bound<'_, PyAny>,
        now: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let body = body_of(body)?;
        let now = now_of(now)?;
        let (proof, headers) = read_body.take()?;
        let (v, store_error) = py.detach(|| self.decide(proof, &headers, &body, now));
        self.answer(py, v, store_error)
    }

    /// The core's refusal for `reason` (a machine code), answering the
    /// request id `id_json` (JSON text, as `Context.request_id_json`;
    /// `None` answers `null`): for a verdict completed outside the core.
    #[pyo3(signature = (reason, id_json = None))]
    fn refuse(&self, py: Python<'_>, reason: &str, id_json: Option<String>) -> PyResult<Py<PyAny>> {
        self.rendering.refuse(py, reason, id_json)
    }

    /// The verifier with its secrets and credential values redacted.
    fn __repr__(&self) -> String {
        let replay = match &self.replay {
            Replay::None => "None".to_string(),
            Replay::Memory(_) => "memory".to_string(),
            Replay::Shared(_) => "shared".to_string(),
        };
        format!(
            "toolctx.Verifier({:?}, include_reason={}, replay={replay})",
            self.core.config(),
            if self.rendering.include_reason {
                "True"
            } else {
                "False"
            }
        )
    }
}

impl Verifier {
    /// Steps 2 to 14 and the replay guard; the shared store's exception,
    /// if it raised one (the verdict is then a refusal).
    fn decide(
        &self,
        proof: Checked,
        headers: &[Header],
        body: &[u8],
        now: u64,
    ) -> (Verdict, Option<PyErr>) {
        match &self.replay {
            Replay::None => (self.core.check_body(proof, headers, body, now), None),
            Replay::Memory(cache) => {
                // Locked only around the cache itself: verifications of one
                // verifier run in parallel up to the guard.
                let mut poisoned = false;
                let v =
                    self.core
                        .check_body_once(proof, headers, body, now, &mut |jti, until| match cache
                            .lock()
                        {
                            Ok(mut cache) => cache.first_use(jti, until, now),
                            Err(_) => {
                                poisoned = true;
                                ClaimAnswer::Failed
                            }
                        });
                let error = poisoned.then(|| PyRuntimeError::new_err("replay cache lock poisoned"));
                (v, error)
            }
            Replay::Shared(store) => {
                // The store records and answers (a ClaimAnswer, or True:
                // first use, False: used; an exception: it could not
                // answer); the core says what that means.
                let mut error = None;
                let v = self
                    .core
                    .check_body_once(proof, headers, body, now, &mut |jti, until| {
                        Python::attach(|py| {
                            let answer = store
                                .bind(py)
                                .call_method1("first_use", (jti, until, now))
                                .and_then(|r| crate::replay::store_answer(&r));
                            answer.unwrap_or_else(|e| {
                                error = Some(e);
                                ClaimAnswer::Failed
                            })
                        })
                    });
                (v, error)
            }
        }
    }

    /// The verdict as Python; a store that failed (refused `internal_error`
    /// by the core) is said in the `toolctx` log first.
    fn answer(
        &self,
        py: Python<'_>,
        v: Verdict,
        store_error: Option<PyErr>,
    ) -> PyResult<Py<PyAny>> {
        if let Some(e) = store_error {
            let logging = py.import("logging")?;
            let log = logging.call_method1("getLogger", ("toolctx",))?;
            log.call_method1(
                "warning",
                ("replay store failed; call refused: %s", e.value(py).repr()?),
            )?;
        }
        self.rendering.verdict(py, v, |py, ctx| {
            Ok(Py::new(py, Context::new(ctx))?.into_any())
        })
    }
}

read_body_class! {
    /// The request whose headers passed steps 0 and 1: hand it to
    /// `Verifier.verify_body` with the body (read at most `max_body_bytes + 1`).
    ReadBody
}

/// One secret (`str` or `bytes`) or a sequence of them, as bytes.
fn secrets_of(secrets: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<u8>>> {
    use pyo3::types::{PyByteArray, PyBytes, PyString};
    if secrets.is_instance_of::<PyString>()
        || secrets.is_instance_of::<PyBytes>()
        || secrets.is_instance_of::<PyByteArray>()
    {
        return Ok(vec![bytes_of(secrets, "secrets")?]);
    }
    let items = secrets
        .try_iter()
        .map_err(|_| PyTypeError::new_err("secrets must be a str, bytes, or a list of them"))?;
    let mut out = Vec::new();
    for s in items {
        out.push(bytes_of(&s?, "each secret")?);
    }
    Ok(out)
}

fn replay_of(replay: Option<&Bound<'_, PyAny>>) -> PyResult<Replay> {
    let Some(r) = replay.filter(|r| !r.is_none()) else {
        return Ok(Replay::None);
    };
    if let Ok(m) = r.cast::<MemoryReplay>() {
        return Ok(Replay::Memory(Mutex::new(ReplayCache::new(
            m.get().capacity,
        ))));
    }
    if r.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(
            "replay takes MemoryReplay(capacity) or a store with first_use",
        ));
    }
    if !r.hasattr("first_use")? {
        return Err(PyTypeError::new_err(
            "replay takes MemoryReplay(capacity), RedisReplayStore(client) or a store with first_use(jti, until, now)",
        ));
    }
    Ok(Replay::Shared(r.clone().unbind()))
}
