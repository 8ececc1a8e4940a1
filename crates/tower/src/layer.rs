//! The HTTP lifecycle: headers first, the body read up to the core's limit,
//! the core's outcome applied (a refusal answered, or the request handed
//! on with its body replayed and the verified context in its extensions).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{header, HeaderValue, Request, Response, StatusCode};
use http_body::Body;
use toolctx_core::settings::INCLUDE_REASON;
use toolctx_core::{Context, Refusal, Verifier};
use tower_layer::Layer;
use tower_service::Service;

use crate::body::{read_limited, Read, RequestBody, ResponseBody};
use crate::decide::{self, Head, Outcome};
use crate::replay::ReplayStore;

/// What the layer found on a request it handed on, in the request's
/// extensions: the verified context of an accepted `tools/call`, or none
/// for a request that passes (not a `tools/call`, or a call without
/// context that the configuration lets through). Its presence says the
/// layer ran; the rmcp extractors read it.
#[derive(Clone, Debug)]
pub struct Verification {
    context: Option<Arc<Context>>,
}

impl Verification {
    /// The verified context, `None` when the request passed without one.
    pub fn context(&self) -> Option<&Context> {
        self.context.as_deref()
    }

    /// The verified context, shared.
    pub fn shared(&self) -> Option<Arc<Context>> {
        self.context.clone()
    }
}

type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

#[derive(Clone)]
struct Shared {
    verifier: Verifier,
    guard: Option<Arc<dyn ReplayStore>>,
    clock: Clock,
    include_reason: bool,
}

/// A [`tower_layer::Layer`] that verifies every request with the toolctx
/// core before the inner service sees it. Works over any `http` 1 body.
///
/// ```
/// use toolctx_core::{Config, Verifier};
/// use toolctx_tower::ToolctxLayer;
///
/// let verifier = Verifier::new(Config::new("inst-1", vec![vec![b's'; 32]]))?;
/// let layer = ToolctxLayer::new(verifier);
/// # let _ = layer;
/// # Ok::<(), toolctx_core::ConfigError>(())
/// ```
#[derive(Clone)]
pub struct ToolctxLayer {
    shared: Arc<Shared>,
}

impl fmt::Debug for ToolctxLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolctxLayer")
            .field("verifier", &self.shared.verifier)
            .field("replay_guard", &self.shared.guard.is_some())
            .field("include_reason", &self.shared.include_reason)
            .finish()
    }
}

fn system_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl ToolctxLayer {
    pub fn new(verifier: Verifier) -> ToolctxLayer {
        ToolctxLayer {
            shared: Arc::new(Shared {
                verifier,
                guard: None,
                clock: Arc::new(system_now),
                include_reason: crate::settings::flag(&INCLUDE_REASON, None),
            }),
        }
    }

    fn with(self, f: impl FnOnce(&mut Shared)) -> ToolctxLayer {
        let mut shared = Arc::unwrap_or_clone(self.shared);
        f(&mut shared);
        ToolctxLayer {
            shared: Arc::new(shared),
        }
    }

    /// The replay guard: each token id is accepted once within its
    /// lifetime, recorded in `store` ([`MemoryReplayStore`](crate::MemoryReplayStore)
    /// for one process, `RedisReplayStore` with the feature `redis` for
    /// several). A store that fails refuses the call (`internal_error`).
    pub fn replay_guard(self, store: impl ReplayStore) -> ToolctxLayer {
        self.with(|s| s.guard = Some(Arc::new(store)))
    }

    /// The clock, in Unix seconds (tests; the default reads the system's).
    pub fn clock(self, now: impl Fn() -> u64 + Send + Sync + 'static) -> ToolctxLayer {
        self.with(|s| s.clock = Arc::new(now))
    }

    /// `false` leaves `error.data` (the reason) out of refusals; status,
    /// code and message never change.
    pub fn include_reason(self, include: bool) -> ToolctxLayer {
        self.with(|s| s.include_reason = crate::settings::flag(&INCLUDE_REASON, Some(include)))
    }

    pub fn verifier(&self) -> &Verifier {
        &self.shared.verifier
    }
}

impl<S> Layer<S> for ToolctxLayer {
    type Service = Toolctx<S>;

    fn layer(&self, inner: S) -> Toolctx<S> {
        Toolctx {
            inner,
            shared: self.shared.clone(),
        }
    }
}

/// The service [`ToolctxLayer`] builds around `S`.
#[derive(Clone)]
pub struct Toolctx<S> {
    inner: S,
    shared: Arc<Shared>,
}

impl<S: fmt::Debug> fmt::Debug for Toolctx<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Toolctx")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

/// The future [`Toolctx`] answers with.
pub type ResponseFuture<R, E> = Pin<Box<dyn Future<Output = Result<R, E>> + Send>>;

fn refuse<B>(refusal: &Refusal, include_reason: bool, close: bool) -> Response<ResponseBody<B>> {
    let body = Bytes::from(refusal.body(include_reason));
    let len = body.len();
    let mut res = Response::new(ResponseBody::Refusal { bytes: Some(body) });
    // The core's statuses are all valid; a status it could not give is an
    // internal error rather than a panic.
    *res.status_mut() =
        StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = res.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    if close {
        // The rest of an oversized body is not read: end the connection.
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    res
}

impl<S, B, ResB> Service<Request<B>> for Toolctx<S>
where
    S: Service<Request<RequestBody<B>>, Response = Response<ResB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    ResB: Body,
    ResB::Data: From<Bytes>,
{
    type Response = Response<ResponseBody<ResB>>;
    type Error = S::Error;
    type Future = ResponseFuture<Self::Response, S::Error>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        // The clone that was polled ready serves this request.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let shared = self.shared.clone();
        Box::pin(async move {
            let (mut parts, body) = req.into_parts();
            let reason = shared.include_reason;
            let checked =
                match decide::head(&shared.verifier, parts.method.as_str(), &mut parts.headers) {
                    Head::Pass => {
                        parts.extensions.insert(Verification { context: None });
                        let req = Request::from_parts(parts, RequestBody::Unread { body });
                        return Ok(inner
                            .call(req)
                            .await?
                            .map(|body| ResponseBody::Inner { body }));
                    }
                    Head::Refuse(r) => return Ok(refuse(&r, reason, false)),
                    Head::ReadBody(checked) => checked,
                };
            let limit = shared.verifier.max_body_bytes();
            let (bytes, over_limit) = match read_limited(body, limit).await {
                Ok(Read::Whole(b)) => (b, false),
                Ok(Read::OverLimit(b)) => (b, true),
                Err(_) => return Ok(refuse(&decide::internal_error(), reason, true)),
            };
            let now = (shared.clock)();
            let outcome = decide::body(
                &shared.verifier,
                shared.guard.as_deref(),
                checked,
                &mut parts.headers,
                &bytes,
                over_limit,
                now,
            )
            .await;
            match outcome {
                Outcome::Refuse { refusal, close } => Ok(refuse(&refusal, reason, close)),
                Outcome::Forward { context } => {
                    parts.extensions.insert(Verification { context });
                    let req = Request::from_parts(parts, RequestBody::read(bytes));
                    Ok(inner
                        .call(req)
                        .await?
                        .map(|body| ResponseBody::Inner { body }))
                }
            }
        })
    }
}
