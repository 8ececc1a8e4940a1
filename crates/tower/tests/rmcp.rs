//! The layer and the extractors with rmcp's own server and client, over
//! HTTP on 127.0.0.1: rmcp's stateless mode, 2026-07-28 clients
//! (`server/discover`) and legacy session mode, each with a fresh token per
//! `tools/call` in `X-AgentArea-Context` (the platform's side is a client
//! for rmcp's transport that adds the header), plus the helpers in a real
//! call (idempotent replay, progress) and the extractor's error when the
//! layer is missing.
#![cfg(feature = "rmcp")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientJsonRpcMessage, ContentBlock,
    ErrorData, ProgressNotificationParam, ProtocolVersion, RequestMetaObject, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RoleServer, RunningService};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{
    tool, tool_handler, tool_router, ClientHandler, ClientLifecycleMode, ClientServiceExt,
    ServerHandler,
};
use serde_json::{json, Value};
use sse_stream::Sse;
use toolctx_core::{Config, ContextClaims, TokenClaims, Verifier};
use toolctx_tower::helpers::{Idempotent, Progress, REPLAYED};
use toolctx_tower::rmcp::{protocol_revision, MaybeVerified, Verified};
use toolctx_tower::{MemoryReplayStore, ToolctxLayer};
use tower_layer::Layer;

const INSTANCE: &str = "inst-rmcp-tests";
const SECRET: &[u8] = b"rmcp-tests-secret-0123456789abcdefghij";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

static JTI: AtomicU64 = AtomicU64::new(0);

fn claims(task: &str, call: &str, tool: &str) -> TokenClaims {
    TokenClaims {
        instance_id: INSTANCE.into(),
        tool: Some(tool.into()),
        jti: format!(
            "jti-{}-{}",
            std::process::id(),
            JTI.fetch_add(1, Ordering::SeqCst)
        ),
        iat: now(),
        context: ContextClaims {
            protocol: "1".into(),
            task_id: task.into(),
            tool_call_id: call.into(),
            workspace_id: "ws-1".into(),
            agent_id: None,
            end_user_id: Some("user-42".into()),
            metadata: None,
        },
    }
}

// ---- the server ----------------------------------------------------------

#[derive(Clone)]
struct Tools {
    once: Idempotent,
    /// Runs of whoami and maybe, and of once's body, on this server.
    runs: Arc<AtomicU64>,
    once_runs: Arc<AtomicU64>,
}

#[derive(serde::Deserialize, schemars::JsonSchema, serde::Serialize)]
struct OnceArgs {
    order: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

#[tool_router]
impl Tools {
    #[tool(description = "the verified context")]
    async fn whoami(
        &self,
        Parameters(_): Parameters<NoArgs>,
        ctx: Verified,
    ) -> Result<CallToolResult, ErrorData> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(CallToolResult::structured(json!({
            "task_id": ctx.task_id, "tool_call_id": ctx.tool_call_id, "jti": ctx.jti,
        })))
    }

    #[tool(description = "the verified context, if any")]
    async fn maybe(
        &self,
        Parameters(_): Parameters<NoArgs>,
        ctx: MaybeVerified,
    ) -> Result<CallToolResult, ErrorData> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let task = ctx.context().map(|c| c.task_id.clone());
        Ok(CallToolResult::structured(json!({ "task_id": task })))
    }

    #[tool(description = "runs once per idempotency key")]
    async fn once(
        &self,
        Parameters(args): Parameters<OnceArgs>,
        ctx: MaybeVerified,
        rc: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.once
            .run(
                ctx.context(),
                &protocol_revision(&rc),
                &args,
                &rc.ct,
                || async {
                    let n = self.once_runs.fetch_add(1, Ordering::SeqCst) + 1;
                    Ok(
                        CallToolResult::structured(json!({ "order": args.order, "runs": n }))
                            .into(),
                    )
                },
            )
            .await
    }

    #[tool(description = "reports progress")]
    async fn report(
        &self,
        Parameters(_): Parameters<NoArgs>,
        rc: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let progress = Progress::new(&rc)
            .interval(Duration::from_millis(100))
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        for i in 1..=5 {
            progress
                .report(f64::from(i), Some(5.0), Some(format!("step {i}")))
                .await;
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(format!(
            "sent {}",
            progress.sent()
        ))]))
    }
}

#[tool_handler]
impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

struct Server {
    url: String,
    runs: Arc<AtomicU64>,
    stop: tokio_util::sync::CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// rmcp's service, behind the layer unless `layer` is false, on a free port.
async fn serve(sessions: bool, layer: bool, require_context: bool) -> Server {
    let stop = tokio_util::sync::CancellationToken::new();
    let once = Idempotent::default();
    let (runs, once_runs) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let counted = runs.clone();
    let mcp = StreamableHttpService::new(
        move || {
            Ok(Tools {
                once: once.clone(),
                runs: counted.clone(),
                once_runs: once_runs.clone(),
            })
        },
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(sessions)
            .with_cancellation_token(stop.child_token()),
    );
    let mut config = Config::new(INSTANCE, vec![SECRET.to_vec()]);
    config.require_context = require_context;
    let guarded = ToolctxLayer::new(Verifier::new(config).unwrap())
        .replay_guard(MemoryReplayStore::new(10_000).unwrap());
    let router = if layer {
        axum::Router::new().route_service("/mcp", guarded.layer(mcp))
    } else {
        axum::Router::new().route_service("/mcp", mcp)
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let ct = stop.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async move { ct.cancelled_owned().await })
            .await;
    });
    Server { url, runs, stop }
}

// ---- the platform's side: rmcp's client, one token per request ---------

/// rmcp's reqwest client, adding `X-AgentArea-Context` to each POST whose
/// JSON-RPC method has a token set.
#[derive(Clone, Default)]
struct Platform {
    http: reqwest::Client,
    tokens: Arc<Mutex<HashMap<String, String>>>,
}

impl Platform {
    fn set(&self, method: &str, token: Option<String>) {
        let mut t = self.tokens.lock().unwrap();
        match token {
            Some(token) => t.insert(method.into(), token),
            None => t.remove(method),
        };
    }

    fn with_token(
        &self,
        message: &ClientJsonRpcMessage,
        mut headers: HashMap<HeaderName, HeaderValue>,
    ) -> HashMap<HeaderName, HeaderValue> {
        let method = serde_json::to_value(message)
            .ok()
            .and_then(|v| v["method"].as_str().map(String::from));
        if let Some(token) = method.and_then(|m| self.tokens.lock().unwrap().get(&m).cloned()) {
            headers.insert(
                HeaderName::from_static("x-agentarea-context"),
                HeaderValue::from_str(&token).unwrap(),
            );
        }
        headers
    }
}

type Post = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;
type Stream =
    Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<reqwest::Error>>;

impl StreamableHttpClient for Platform {
    type Error = reqwest::Error;

    fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Post> + Send + '_ {
        let headers = self.with_token(&message, custom_headers);
        self.http
            .post_message(uri, message, session_id, auth_header, headers)
    }

    fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> impl Future<Output = Post> + Send + '_ {
        let headers = self.with_token(&message, custom_headers);
        self.http.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            headers,
            limits,
        )
    }

    fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<(), StreamableHttpError<reqwest::Error>>> + Send + '_ {
        self.http
            .delete_session(uri, session_id, auth_header, custom_headers)
    }

    fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Stream> + Send + '_ {
        self.http
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
    }

    fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max: usize,
    ) -> impl Future<Output = Stream> + Send + '_ {
        self.http.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max,
        )
    }
}

/// A client that records the progress notifications it gets.
#[derive(Clone, Default)]
struct Client {
    progress: Arc<Mutex<Vec<f64>>>,
}

impl ClientHandler for Client {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params.progress);
    }
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    /// rmcp's stateless mode, a 2025-11-25 client (initialize, then calls).
    Stateless,
    /// A 2026-07-28 client (`server/discover`, per-request metadata).
    Discover,
    /// rmcp's legacy session mode, a 2025-11-25 client.
    Session,
}

struct Connected {
    server: Server,
    platform: Platform,
    client: Client,
    service: RunningService<RoleClient, Client>,
}

async fn connect(mode: Mode, layer: bool, require_context: bool) -> Connected {
    let server = serve(matches!(mode, Mode::Session), layer, require_context).await;
    let platform = Platform::default();
    // The initialize request carries a token of another task: the tool must
    // see the tools/call's context, never initialize's.
    let init = claims("task-of-initialize", "call-init", "whoami");
    platform.set("initialize", Some(init.mint(SECRET).unwrap()));
    let transport = StreamableHttpClientTransport::with_client(
        platform.clone(),
        StreamableHttpClientTransportConfig::with_uri(server.url.clone()),
    );
    let lifecycle = match mode {
        Mode::Discover => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        Mode::Stateless | Mode::Session => ClientLifecycleMode::Initialize,
    };
    let client = Client::default();
    let service = client
        .clone()
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .unwrap();
    Connected {
        server,
        platform,
        client,
        service,
    }
}

impl Connected {
    /// A `tools/call` with `claims`' token and `_meta` (none: neither).
    async fn call(
        &self,
        tool: &str,
        args: Value,
        claims: Option<&TokenClaims>,
    ) -> Result<CallToolResult, rmcp::ServiceError> {
        self.call_with(tool, args, claims, None).await
    }

    async fn call_with(
        &self,
        tool: &str,
        args: Value,
        claims: Option<&TokenClaims>,
        progress_token: Option<u64>,
    ) -> Result<CallToolResult, rmcp::ServiceError> {
        let mut params = CallToolRequestParams::new(tool.to_string())
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        self.platform
            .set("tools/call", claims.map(|c| c.mint(SECRET).unwrap()));
        if let Some(c) = claims {
            let meta: serde_json::Map<String, Value> =
                serde_json::from_str(&c.context.meta_json()).unwrap();
            params.meta = Some(RequestMetaObject(rmcp::model::MetaObject(meta)));
        }
        if let Some(t) = progress_token {
            params
                .meta
                .get_or_insert_with(Default::default)
                .0
                 .0
                .insert("progressToken".into(), json!(t));
        }
        self.service.call_tool(params).await
    }
}

fn structured(r: &CallToolResult) -> &Value {
    r.structured_content.as_ref().expect("structured content")
}

/// The refusal's JSON-RPC error as the client saw it.
fn refusal(e: &rmcp::ServiceError) -> String {
    format!("{e:?}")
}

async fn wiring(mode: Mode) {
    let c = connect(mode, true, true).await;
    // Accepted: the tool sees this call's own context.
    let a = claims("task-a", "call-1", "whoami");
    let r = c.call("whoami", json!({}), Some(&a)).await.unwrap();
    assert_eq!(structured(&r)["task_id"], "task-a", "{mode:?}");
    assert_eq!(structured(&r)["jti"], a.jti.as_str(), "{mode:?}");
    // A second call on the same connection/session, another context.
    let b = claims("task-b", "call-2", "whoami");
    let r = c.call("whoami", json!({}), Some(&b)).await.unwrap();
    assert_eq!(structured(&r)["task_id"], "task-b", "{mode:?}");

    // Refused before the tool: no token, the same token again, a wrong tool.
    let before = c.server.runs.load(Ordering::SeqCst);
    let e = c.call("whoami", json!({}), None).await.unwrap_err();
    assert!(
        refusal(&e).contains("token_missing") || refusal(&e).contains("context token missing"),
        "{mode:?}: {e:?}"
    );
    let replay = c.platform.tokens.lock().unwrap().get("tools/call").cloned();
    assert!(replay.is_none());
    // The replay guard: the same token twice.
    let t = claims("task-c", "call-3", "whoami");
    let token = t.mint(SECRET).unwrap();
    let meta: serde_json::Map<String, Value> =
        serde_json::from_str(&t.context.meta_json()).unwrap();
    for round in 0..2 {
        c.platform.set("tools/call", Some(token.clone()));
        let mut params = CallToolRequestParams::new("whoami").with_arguments(Default::default());
        params.meta = Some(RequestMetaObject(rmcp::model::MetaObject(meta.clone())));
        let got = c.service.call_tool(params).await;
        if round == 0 {
            assert!(got.is_ok(), "{mode:?}: {got:?}");
        } else {
            assert!(
                refusal(&got.unwrap_err()).contains("already used"),
                "{mode:?}"
            );
        }
    }
    let wrong = claims("task-d", "call-4", "maybe");
    let e = c.call("whoami", json!({}), Some(&wrong)).await.unwrap_err();
    assert!(refusal(&e).contains("another tool"), "{mode:?}: {e:?}");
    assert_eq!(
        c.server.runs.load(Ordering::SeqCst),
        before + 1,
        "{mode:?}: only the first use of the token ran"
    );

    // The helpers in real calls: one run per idempotency key, progress.
    let first = claims("task-e", "call-5", "once");
    let r1 = c
        .call("once", json!({"order": "A-1"}), Some(&first))
        .await
        .unwrap();
    let retry = claims("task-e", "call-5", "once"); // a retry: same key, new token
    let r2 = c
        .call("once", json!({"order": "A-1"}), Some(&retry))
        .await
        .unwrap();
    assert_eq!(structured(&r1), structured(&r2), "{mode:?}");
    assert_eq!(
        r2.meta.as_ref().and_then(|m| m.0.get(REPLAYED)),
        Some(&json!(true)),
        "{mode:?}"
    );
    assert!(r1.meta.as_ref().and_then(|m| m.0.get(REPLAYED)).is_none());
    let conflict = claims("task-e", "call-5", "once");
    let r3 = c
        .call("once", json!({"order": "B-2"}), Some(&conflict))
        .await
        .unwrap();
    assert_eq!(r3.is_error, Some(true), "{mode:?}");

    let p = claims("task-f", "call-6", "report");
    let r = c
        .call_with("report", json!({}), Some(&p), Some(99))
        .await
        .unwrap();
    assert!(
        format!("{:?}", r.content).contains("sent 2"),
        "{mode:?}: {r:?}"
    );
    // Coalesced: the first report at once, the final one always; 2 to 4 dropped.
    for _ in 0..100 {
        if c.client.progress.lock().unwrap().len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        *c.client.progress.lock().unwrap(),
        vec![1.0, 5.0],
        "{mode:?}"
    );
    c.service.cancel().await.unwrap();
}

#[tokio::test]
async fn stateless_mode_with_rmcps_client() {
    wiring(Mode::Stateless).await;
}

#[tokio::test]
async fn a_2026_07_28_client_with_rmcps_client() {
    wiring(Mode::Discover).await;
}

#[tokio::test]
async fn legacy_session_mode_with_rmcps_client() {
    wiring(Mode::Session).await;
}

#[tokio::test]
async fn without_the_layer_the_extractors_refuse_the_call() {
    let c = connect(Mode::Stateless, false, true).await;
    let a = claims("task-a", "call-1", "whoami");
    let e = c.call("whoami", json!({}), Some(&a)).await.unwrap_err();
    assert!(
        refusal(&e).contains("did not pass through ToolctxLayer"),
        "{e:?}"
    );
    let e = c.call("maybe", json!({}), None).await.unwrap_err();
    assert!(
        refusal(&e).contains("did not pass through ToolctxLayer"),
        "{e:?}"
    );
}

#[tokio::test]
async fn a_call_without_context_when_not_required() {
    let c = connect(Mode::Stateless, true, false).await;
    let r = c.call("maybe", json!({}), None).await.unwrap();
    assert_eq!(structured(&r)["task_id"], Value::Null);
    // `Verified` insists on a context; `once` refuses to guess a key.
    let e = c.call("whoami", json!({}), None).await.unwrap_err();
    assert!(refusal(&e).contains("needs a verified context"), "{e:?}");
    let r = c.call("once", json!({"order": "X"}), None).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(
        r.meta.as_ref().and_then(|m| m.0.get("toolctx/idempotency")),
        Some(&json!("unverified"))
    );
}
