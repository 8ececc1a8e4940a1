//! Benchmark server for bench/rust-server.sh (not shipped, not a test): one
//! rmcp 3.11 server (stateless, JSON answers) with one tool, served three
//! ways on 127.0.0.1 so the driver can take each one's CPU per request:
//!
//! ```text
//! TOOLCTX_INSTANCE_ID=... TOOLCTX_SECRET=... toolctx-bench-rust-server VARIANT [--port N]
//! ```
//!
//!   plain        rmcp alone: the floor both others are measured over
//!   toolctx      behind `toolctx_tower::ToolctxLayer`
//!   handwritten  behind the middleware a Rust developer would write instead:
//!                an axum `from_fn` that buffers the body, parses it with
//!                `serde_json`, decodes the `X-AgentArea-Context` JWT with
//!                `jsonwebtoken` (HS256, issuer, audience, exp with 30 s
//!                leeway) and binds its claims to the `agentarea/*` keys of
//!                `params._meta`, then hands the claims to the tool in the
//!                request's extensions
//!
//! The tool answers with the task id it was handed, so each variant's
//! context hand-off is exercised. Prints `listening http://127.0.0.1:PORT/mcp`.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::{IntoResponse, Response};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ErrorData, ServerCapabilities, ServerConfig};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_handler, tool_router, ServerHandler};
use serde::Deserialize;
use serde_json::{json, Value};
use toolctx_core::{Config, Verifier};
use toolctx_tower::{ToolctxLayer, Verification};
use tower_layer::Layer;

/// What the hand-written middleware decodes from the token.
#[derive(Debug, Deserialize)]
struct Claims {
    protocol: String,
    task_id: String,
    tool_call_id: String,
    workspace_id: String,
    idempotency_key: String,
    agent_id: Option<String>,
    end_user_id: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    query: String,
}

#[derive(Clone)]
struct Bench;

#[tool_router]
impl Bench {
    #[tool(description = "Searches documents; says which task asked")]
    async fn search_documents(
        &self,
        Parameters(args): Parameters<SearchArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let parts = ctx.extensions.get::<http::request::Parts>();
        let task = parts
            .and_then(|p| {
                p.extensions
                    .get::<Verification>()
                    .and_then(|v| v.context().map(|c| c.task_id.clone()))
                    .or_else(|| p.extensions.get::<Arc<Claims>>().map(|c| c.task_id.clone()))
            })
            .unwrap_or_else(|| "none".into());
        Ok(CallToolResult::success(vec![ContentBlock::text(format!(
            "{} results for task {task}",
            args.query.len() % 7
        ))]))
    }
}

#[tool_handler]
impl ServerHandler for Bench {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

struct Keys {
    key: jsonwebtoken::DecodingKey,
    validation: jsonwebtoken::Validation,
}

fn refuse(status: u16, id: &Value, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": message}});
    (
        http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::BAD_REQUEST),
        [(http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The hand-written peer: what a developer writes with the usual crates.
async fn handwritten(State(keys): State<Arc<Keys>>, req: Request, next: Next) -> Response {
    if req.method() != http::Method::POST {
        return next.run(req).await;
    }
    let (mut parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 4 << 20).await else {
        return refuse(413, &Value::Null, "body too large");
    };
    let Ok(msg) = serde_json::from_slice::<Value>(&bytes) else {
        return refuse(400, &Value::Null, "parse error");
    };
    if msg.get("method").and_then(Value::as_str) == Some("tools/call") {
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        let Some(token) = parts
            .headers
            .get("x-agentarea-context")
            .and_then(|v| v.to_str().ok())
        else {
            return refuse(401, &id, "missing context token");
        };
        let claims = match jsonwebtoken::decode::<Claims>(token, &keys.key, &keys.validation) {
            Ok(data) => data.claims,
            Err(_) => return refuse(401, &id, "invalid context token"),
        };
        let meta = msg.pointer("/params/_meta");
        let bound = [
            ("agentarea/protocol", Some(&claims.protocol)),
            ("agentarea/task_id", Some(&claims.task_id)),
            ("agentarea/tool_call_id", Some(&claims.tool_call_id)),
            ("agentarea/workspace_id", Some(&claims.workspace_id)),
            ("agentarea/idempotency_key", Some(&claims.idempotency_key)),
            ("agentarea/agent_id", claims.agent_id.as_ref()),
            ("agentarea/end_user_id", claims.end_user_id.as_ref()),
        ];
        for (key, claim) in bound {
            let sent = meta.and_then(|m| m.get(key)).and_then(Value::as_str);
            if sent != claim.map(String::as_str) {
                return refuse(403, &id, "context does not match the token");
            }
        }
        parts.extensions.insert(Arc::new(claims));
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let variant = args.first().cloned().unwrap_or_default();
    let port: u16 = match args.iter().position(|a| a == "--port") {
        Some(i) => args
            .get(i + 1)
            .and_then(|p| p.parse().ok())
            .ok_or("--port N")?,
        None => 0,
    };
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let instance = var("TOOLCTX_INSTANCE_ID").ok_or("TOOLCTX_INSTANCE_ID is not set")?;
    let secret = var("TOOLCTX_SECRET").ok_or("TOOLCTX_SECRET is not set")?;

    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let mcp = StreamableHttpService::new(
        || Ok(Bench),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = match variant.as_str() {
        "plain" => axum::Router::new().route_service("/mcp", mcp),
        "toolctx" => {
            let verifier = Verifier::new(Config::new(instance, vec![secret.into_bytes()]))
                .map_err(|e| format!("toolctx configuration: {e}"))?;
            axum::Router::new().route_service("/mcp", ToolctxLayer::new(verifier).layer(mcp))
        }
        "handwritten" => {
            let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
            validation.set_issuer(&["agentarea"]);
            validation.set_audience(&[instance]);
            validation.leeway = 30;
            let keys = Arc::new(Keys {
                key: jsonwebtoken::DecodingKey::from_secret(secret.as_bytes())
                    .map_err(|e| format!("jsonwebtoken key: {e}"))?,
                validation,
            });
            axum::Router::new()
                .route_service("/mcp", mcp)
                .layer(from_fn_with_state(keys, handwritten))
        }
        other => return Err(format!("variant {other:?}: plain, toolctx or handwritten")),
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| format!("listen on 127.0.0.1:{port}: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    println!("listening http://127.0.0.1:{port}/mcp");
    axum::serve(listener, router)
        .await
        .map_err(|e| e.to_string())
}
