//! What the layer tests (and the HTTP vector example) share: a recording
//! inner service, tokens and requests.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use http::{HeaderMap, Request, Response};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use toolctx_core::{Config, ContextClaims, TokenClaims, Verifier};
use toolctx_tower::{RequestBody, Verification};
use tower_service::Service;

pub const INSTANCE: &str = "inst-layer-tests";
pub const SECRET: &[u8] = b"layer-tests-secret-0123456789abcdefghij";
pub const NOW: u64 = 1_767_225_600;

/// What the inner service answers, and the header it marks its answer
/// with (a HEAD answer has no body).
pub const INNER: &[u8] = b"inner";
pub const INNER_HEADER: &str = "x-toolctx-inner";

/// What reached the inner service.
pub struct Seen {
    pub headers: HeaderMap,
    pub verification: Option<Verification>,
    pub body: Vec<u8>,
}

#[derive(Clone, Default)]
pub struct Inner(pub Arc<Mutex<Vec<Seen>>>);

impl<B: Body<Data = Bytes> + Send + 'static> Service<Request<RequestBody<B>>> for Inner
where
    B::Error: std::fmt::Debug,
{
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<RequestBody<B>>) -> Self::Future {
        let seen = self.0.clone();
        Box::pin(async move {
            let (parts, body) = req.into_parts();
            let body = body
                .collect()
                .await
                .map(|b| b.to_bytes().to_vec())
                .unwrap_or_default();
            seen.lock().unwrap().push(Seen {
                headers: parts.headers,
                verification: parts.extensions.get::<Verification>().cloned(),
                body,
            });
            let mut res = Response::new(Full::new(Bytes::from_static(INNER)));
            res.headers_mut()
                .insert(INNER_HEADER, http::HeaderValue::from_static("1"));
            Ok(res)
        })
    }
}

/// A body that counts how often it is polled and never ends.
#[derive(Clone, Default)]
pub struct Untouchable(pub Arc<AtomicUsize>);

impl Body for Untouchable {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Poll::Pending
    }
}

pub fn config(extra: &str) -> Verifier {
    let json = format!(
        r#"{{"instance_id":"{INSTANCE}","secrets":["{}"]{extra}}}"#,
        std::str::from_utf8(SECRET).unwrap()
    );
    Verifier::new(
        Config::from_json(json.as_bytes(), toolctx_core::UnknownSettings::Refuse).unwrap(),
    )
    .unwrap()
}

pub fn claims(jti: &str) -> TokenClaims {
    TokenClaims {
        instance_id: INSTANCE.into(),
        tool: None,
        jti: jti.into(),
        iat: NOW,
        context: ContextClaims {
            protocol: "1".into(),
            task_id: "task-1".into(),
            tool_call_id: "call-1".into(),
            workspace_id: "ws-1".into(),
            agent_id: None,
            end_user_id: None,
            metadata: None,
        },
    }
}

pub fn call_body(c: &TokenClaims, extra_meta: &str) -> String {
    let meta = c.context.meta_json();
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"t","arguments":{{}},"_meta":{{{extra_meta}{}}}}}}}"#,
        meta.trim_start_matches('{').trim_end_matches('}')
    )
}

pub fn post(body: &str, headers: &[(&str, &str)]) -> Request<Full<Bytes>> {
    let mut b = Request::builder().method("POST").uri("/mcp");
    for (n, v) in headers {
        b = b.header(*n, *v);
    }
    b.body(Full::new(Bytes::from(body.to_string()))).unwrap()
}

pub async fn answer<S, B>(svc: &mut S, req: Request<B>) -> (u16, String)
where
    S: Service<
        Request<B>,
        Response = Response<toolctx_tower::ResponseBody<Full<Bytes>>>,
        Error = Infallible,
    >,
{
    let res = svc.call(req).await.unwrap();
    let status = res.status().as_u16();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(body.to_vec()).unwrap())
}
