//! The verdict as Python sees it: `Pass`, `Accept` (with a profile's
//! context) and `Reject`, frozen, every field as the core gave it.

use std::sync::Mutex;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyTuple};
use toolctx_core::{Accepted, Checked, HeadersVerdict, Refusal, Verdict};

use crate::convert::{parse_to_py, Header};

/// A request whose headers passed steps 0 and 1, held until its body
/// comes: the core's proof and the headers, taken once.
pub struct Held(Mutex<Option<(Checked, Vec<Header>)>>);

impl Held {
    pub fn new(proof: Checked, headers: Vec<Header>) -> Held {
        Held(Mutex::new(Some((proof, headers))))
    }

    /// The proof and the headers; an error the second time (`what` names
    /// the Python object holding them).
    pub fn take(&self, what: &str) -> PyResult<(Checked, Vec<Header>)> {
        self.0
            .lock()
            .map_err(|_| PyRuntimeError::new_err(format!("{what} lock poisoned")))?
            .take()
            .ok_or_else(|| PyRuntimeError::new_err(format!("this {what} was already used")))
    }
}

/// The request whose headers passed steps 0 and 1, as a frozen class of
/// its own per profile (each verifier's `verify_body` takes only its own):
/// the held proof and headers, and the body limit to read up to. Also
/// `check_headers`' one answer: `Pass`, `Reject`, or this class.
macro_rules! read_body_class {
    ($(#[$attr:meta])* $name:ident) => {
        $(#[$attr])*
        #[pyclass(frozen, module = "toolctx")]
        pub struct $name {
            held: $crate::verdict::Held,
            #[pyo3(get)]
            max_body_bytes: usize,
        }

        impl $name {
            /// `check_headers`' answer to the core's verdict on `headers`,
            /// rendered by the verifier's `rendering`.
            fn answer(
                py: Python<'_>,
                v: ::toolctx_core::HeadersVerdict,
                headers: Vec<$crate::convert::Header>,
                max_body_bytes: usize,
                rendering: &$crate::verdict::Rendering,
            ) -> PyResult<Py<PyAny>> {
                rendering.headers(py, v, |proof| {
                    let held = $crate::verdict::Held::new(proof, headers);
                    Ok(Py::new(py, $name { held, max_body_bytes })?.into_any())
                })
            }

            /// The proof and the headers; an error the second time.
            fn take(&self) -> PyResult<(::toolctx_core::Checked, Vec<$crate::convert::Header>)> {
                self.held.take(stringify!($name))
            }
        }

        #[pymethods]
        impl $name {
            #[getter]
            fn outcome(&self) -> &'static str {
                "read_body"
            }

            fn __repr__(&self) -> String {
                format!(
                    concat!(stringify!($name), "(max_body_bytes={})"),
                    self.max_body_bytes
                )
            }
        }
    };
}
pub(crate) use read_body_class;

/// What goes upstream with a request that passed or was accepted, as the
/// core decided it: remove every header named in `remove` (any letter
/// case, every copy), then add `set` (values already encoded).
#[pyclass(frozen, module = "toolctx")]
pub struct Upstream {
    remove: Vec<String>,
    set: Vec<(String, String)>,
}

impl Upstream {
    pub fn new(remove: &[String], set: Vec<(String, String)>) -> Upstream {
        Upstream {
            remove: remove.to_vec(),
            set,
        }
    }

    /// A verifier's `Upstream` for the verdicts that set no header (every
    /// pass, most accepts): made once and shared, as it is frozen.
    pub fn removing(py: Python<'_>, remove: &[String]) -> PyResult<Py<Upstream>> {
        Py::new(py, Upstream::new(remove, Vec::new()))
    }
}

#[pymethods]
impl Upstream {
    /// Lower-case header names to remove.
    #[getter]
    fn remove<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.remove)
    }

    /// `(lower-case name, value)` pairs to add after that.
    #[getter]
    fn set<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.set)
    }

    /// ASGI headers (pairs of bytes) with this applied: the removed names
    /// left out, the set ones appended.
    fn apply<'py>(
        &self,
        py: Python<'py>,
        headers: Vec<(Vec<u8>, Vec<u8>)>,
    ) -> PyResult<Vec<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>> {
        let removed = |name: &[u8]| {
            self.remove
                .iter()
                .any(|r| name.eq_ignore_ascii_case(r.as_bytes()))
        };
        let kept = headers.iter().filter(|(n, _)| !removed(n));
        let added = self.set.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes()));
        Ok(kept
            .map(|(n, v)| (n.as_slice(), v.as_slice()))
            .chain(added)
            .map(|(n, v)| (PyBytes::new(py, n), PyBytes::new(py, v)))
            .collect())
    }

    fn __bool__(&self) -> bool {
        !(self.remove.is_empty() && self.set.is_empty())
    }

    fn __repr__(&self) -> String {
        format!("Upstream(remove={:?}, set={:?})", self.remove, self.set)
    }
}

/// Not this contract's business: forward the request, with `upstream`
/// applied (the forwarded headers' spoofed copies removed).
#[pyclass(frozen, module = "toolctx")]
pub struct Pass {
    #[pyo3(get)]
    upstream: Py<Upstream>,
}

impl Pass {
    /// A pass, with the verifier's `Upstream` that only removes.
    pub fn object(py: Python<'_>, removing: &Py<Upstream>) -> PyResult<Py<PyAny>> {
        let upstream = removing.clone_ref(py);
        Ok(Py::new(py, Pass { upstream })?.into_any())
    }
}

#[pymethods]
impl Pass {
    #[getter]
    fn outcome(&self) -> &'static str {
        "pass"
    }

    fn __bool__(&self) -> bool {
        true
    }

    fn __repr__(&self) -> &'static str {
        "Pass()"
    }
}

/// A verified `tools/call`: run the tool with `context`, the request
/// handed on with `upstream` applied.
#[pyclass(frozen, module = "toolctx")]
pub struct Accept {
    #[pyo3(get)]
    context: Py<PyAny>,
    #[pyo3(get)]
    upstream: Py<Upstream>,
}

#[pymethods]
impl Accept {
    #[getter]
    fn outcome(&self) -> &'static str {
        "accept"
    }

    fn __bool__(&self) -> bool {
        true
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("Accept(context={})", self.context.bind(py).repr()?))
    }
}

/// A refused request: answer `status` with `body`; nothing downstream runs.
#[pyclass(frozen, module = "toolctx")]
pub struct Reject {
    refusal: Refusal,
    #[pyo3(get)]
    body: Py<PyString>,
}

#[pymethods]
impl Reject {
    #[getter]
    fn outcome(&self) -> &'static str {
        "reject"
    }

    /// The HTTP status.
    #[getter]
    fn status(&self) -> u16 {
        self.refusal.status()
    }

    /// The JSON-RPC error code.
    #[getter]
    fn code(&self) -> i32 {
        self.refusal.code()
    }

    /// The stable machine code (`error.data.reason`).
    #[getter]
    fn reason(&self) -> &'static str {
        self.refusal.reason().as_str()
    }

    #[getter]
    fn message(&self) -> &'static str {
        self.refusal.message()
    }

    /// The JSON-RPC id answered: `None`, an `int` or a `str` (a number
    /// with a fraction or exponent as a `float`; `id_json` is exact).
    #[getter]
    fn id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        parse_to_py(py, self.refusal.id_json())
    }

    /// The id as the body writes it: JSON text.
    #[getter]
    fn id_json(&self) -> &str {
        self.refusal.id_json()
    }

    /// The response headers to send with `body`.
    #[getter]
    fn headers(&self) -> [(&'static str, &'static str); 1] {
        [("content-type", "application/json")]
    }

    /// A refusal is falsy, so `if verdict:` reads as "may go on".
    fn __bool__(&self) -> bool {
        false
    }

    fn __repr__(&self) -> String {
        format!(
            "Reject(status={}, code={}, reason={:?}, id={})",
            self.refusal.status(),
            self.refusal.code(),
            self.refusal.reason().as_str(),
            self.refusal.id_json()
        )
    }
}

/// How a verifier of either profile renders its verdicts: refusals with
/// `data.reason` or without (the settings table's `include_reason`, read
/// from the user's value), and the `Upstream` shared by every verdict that
/// sets no header.
pub struct Rendering {
    pub include_reason: bool,
    removing: Py<Upstream>,
}

impl Rendering {
    /// `include_reason` as the user gave it; `removed`, the verifier's
    /// forwarded header names.
    pub fn new(
        py: Python<'_>,
        include_reason: Option<&Bound<'_, PyAny>>,
        removed: &[String],
    ) -> PyResult<Rendering> {
        Ok(Rendering {
            include_reason: crate::settings::include_reason(py, include_reason)?,
            removing: Upstream::removing(py, removed)?,
        })
    }

    /// `check_headers`' answer to the core's verdict on `headers`: `Pass`,
    /// `Reject`, or `held` (the profile's class holding the proof).
    pub fn headers(
        &self,
        py: Python<'_>,
        v: HeadersVerdict,
        held: impl FnOnce(Checked) -> PyResult<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        match v {
            HeadersVerdict::Pass => Pass::object(py, &self.removing),
            HeadersVerdict::Reject(r) => reject(py, r, self.include_reason),
            HeadersVerdict::ReadBody(proof) => held(proof),
        }
    }

    /// Any profile's verdict, the accepted context made by `context`.
    pub fn verdict<C: Accepted>(
        &self,
        py: Python<'_>,
        v: Verdict<C>,
        context: impl FnOnce(Python<'_>, C) -> PyResult<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        verdict(py, v, self.include_reason, &self.removing, context)
    }

    /// The core's refusal for `reason` (a machine code), answering
    /// `id_json`, rendered as this verifier renders refusals.
    pub fn refuse(
        &self,
        py: Python<'_>,
        reason: &str,
        id_json: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        crate::conventions::refusal(py, reason, id_json, self.include_reason)
    }
}

/// A refusal as a Python `Reject`, its body rendered by the core.
pub fn reject(py: Python<'_>, refusal: Refusal, include_reason: bool) -> PyResult<Py<PyAny>> {
    let body = PyString::new(py, &refusal.body(include_reason)).unbind();
    Ok(Py::new(py, Reject { refusal, body })?.into_any())
}

/// Any profile's verdict, the accepted context made by `context`;
/// `removing` is the verifier's `Upstream` that removes its forwarded
/// header names and sets none.
pub fn verdict<C: Accepted>(
    py: Python<'_>,
    v: Verdict<C>,
    include_reason: bool,
    removing: &Py<Upstream>,
    context: impl FnOnce(Python<'_>, C) -> PyResult<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    match v {
        Verdict::Pass => Pass::object(py, removing),
        Verdict::Accept(ctx) => {
            let upstream = match ctx.upstream() {
                [] => removing.clone_ref(py),
                set => Py::new(py, Upstream::new(&removing.get().remove, set.to_vec()))?,
            };
            let context = context(py, *ctx)?;
            Ok(Py::new(py, Accept { context, upstream })?.into_any())
        }
        Verdict::Reject(r) => reject(py, r, include_reason),
    }
}
