//! The verified contexts, frozen: AgentArea's `Context` and `AivaxContext`.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use toolctx_core::aivax::AivaxContext as CoreAivax;
use toolctx_core::Context as CoreContext;

use crate::convert::parse_to_py;

/// A frozen context class over a core context: the profile's own getters,
/// then what every profile's context answers alike (the request id, the
/// JSON and `dict` forms, equality, hash and repr), written once here.
macro_rules! context_class {
    ($(#[$attr:meta])* $name:ident($core:ty) { $($getters:tt)* }) => {
        $(#[$attr])*
        #[pyclass(frozen, module = "toolctx")]
        pub struct $name {
            inner: $core,
        }

        impl $name {
            pub fn new(inner: $core) -> $name {
                $name { inner }
            }
        }

        #[pymethods]
        impl $name {
            $($getters)*

            /// The request's JSON-RPC id (not vouched for by the token), or `None`.
            #[getter]
            fn request_id<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
                self.inner
                    .request_id
                    .as_deref()
                    .map(|id| parse_to_py(py, id))
                    .transpose()
            }
            /// The request id as JSON text, exactly as the request wrote it.
            #[getter]
            fn request_id_json(&self) -> Option<&str> {
                self.inner.request_id.as_deref()
            }
            /// The context as the core writes it: a JSON object.
            fn to_json(&self) -> String {
                self.inner.to_json()
            }
            /// The context as a new `dict` (the fields of `to_json`).
            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                parse_to_py(py, &self.inner.to_json())
            }
            fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
                other
                    .cast::<$name>()
                    .is_ok_and(|o| o.get().inner == self.inner)
            }
            fn __hash__(&self) -> u64 {
                hash_of(&self.inner.to_json())
            }
            fn __repr__(&self) -> String {
                format!(concat!(stringify!($name), "({})"), self.inner.to_json())
            }
        }
    };
}

context_class! {
    /// What a verified `tools/call` may rely on (CONTRACT §2, after step 14).
    /// Frozen: every read gives a fresh value, so nothing downstream can
    /// change what the token vouched for.
    Context(CoreContext) {
        #[getter]
        fn task_id(&self) -> &str {
            &self.inner.task_id
        }
        #[getter]
        fn tool_call_id(&self) -> &str {
            &self.inner.tool_call_id
        }
        #[getter]
        fn workspace_id(&self) -> &str {
            &self.inner.workspace_id
        }
        /// `"<task_id>:<tool_call_id>"`, as the token vouched for it.
        #[getter]
        fn idempotency_key(&self) -> &str {
            &self.inner.idempotency_key
        }
        #[getter]
        fn protocol(&self) -> &str {
            &self.inner.protocol
        }
        #[getter]
        fn agent_id(&self) -> Option<&str> {
            self.inner.agent_id.as_deref()
        }
        #[getter]
        fn end_user_id(&self) -> Option<&str> {
            self.inner.end_user_id.as_deref()
        }
        /// The `metadata` claim as a new `dict` on every read, or `None`.
        #[getter]
        fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
            self.inner
                .metadata
                .as_ref()
                .map(|m| parse_to_py(py, m.as_str()))
                .transpose()
        }
        /// The `tool` claim, when the token was for one tool.
        #[getter]
        fn tool(&self) -> Option<&str> {
            self.inner.tool.as_deref()
        }
        #[getter]
        fn jti(&self) -> Option<&str> {
            self.inner.jti.as_deref()
        }
        #[getter]
        fn iat(&self) -> u64 {
            self.inner.iat
        }
        #[getter]
        fn exp(&self) -> u64 {
            self.inner.exp
        }
        /// Which configured secret signed the token (its index, never the secret).
        #[getter]
        fn secret_index(&self) -> usize {
            self.inner.secret_index
        }
    }
}

context_class! {
    /// The AIVAX context (CONTRACT §7): the `_aiv_*` members, parsed and typed.
    AivaxContext(CoreAivax) {
        /// Whether `_aiv_nonce` was present and verified against the hook key.
        #[getter]
        fn nonce_verified(&self) -> bool {
            self.inner.nonce_verified
        }
        #[getter]
        fn external_user_id(&self) -> Option<&str> {
            self.inner.external_user_id.as_deref()
        }
        /// As sent (unknown values are kept).
        #[getter]
        fn call_source(&self) -> Option<&str> {
            self.inner.call_source.as_deref()
        }
        #[getter]
        fn conversation_token(&self) -> Option<&str> {
            self.inner.conversation_token.as_deref()
        }
        /// `_aiv_moment` as sent.
        #[getter]
        fn moment(&self) -> Option<&str> {
            self.inner.moment.as_ref().map(|m| m.text.as_str())
        }
        /// The moment in Unix seconds (fraction dropped).
        #[getter]
        fn moment_unix(&self) -> Option<i64> {
            self.inner.moment.as_ref().map(|m| m.unix_seconds)
        }
        /// The sender's UTC offset in minutes.
        #[getter]
        fn moment_offset_minutes(&self) -> Option<i32> {
            self.inner.moment.as_ref().map(|m| m.offset_minutes)
        }
        /// The flat string metadata, a new `dict` on every read.
        #[getter]
        fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
            let d = PyDict::new(py);
            for (k, v) in &self.inner.metadata {
                d.set_item(k, v)?;
            }
            Ok(d)
        }
    }
}

/// A context's hash: of its JSON form, which equal contexts share.
fn hash_of(json: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    json.hash(&mut h);
    h.finish()
}
