//! An MCP server on rmcp (the official Rust SDK) and axum whose
//! `tools/call` requests are verified by `toolctx-tower` before any tool
//! runs: the Rust twin of examples/node-server, with the same tools,
//! options, environment and output.
//!
//! ```text
//! TOOLCTX_INSTANCE_ID=... TOOLCTX_SECRET=... toolctx-example-rust-server [--port N]
//! ```
//!
//! Options:
//!   --port N             listen on 127.0.0.1:N (default $PORT, else a free port)
//!   --no-verify          no toolctx at all (the unprotected copy)
//!   --context-optional   `require_context: false`: a tools/call with no token
//!                        and no agentarea/* keys in _meta passes without context
//!   --stateless          rmcp's stateless mode for 2025-era clients (default:
//!                        its legacy session mode; 2026-07-28 clients are
//!                        always served statelessly)
//!   --json-response      application/json answers where rmcp can (it falls
//!                        back to SSE when a tool sends progress)
//!   --exit-with-stdin    exit when standard input closes (test drivers)
//!   --record FILE        one JSON line per request handed on to rmcp,
//!                        {"handed_on": method, "headers": [[name, value], ...],
//!                        "context": verified context or null}, and one per tool
//!                        run, {"run": tool, "headers": [...]}, each written
//!                        before the request goes on or the tool runs
//!   --redis URL          the replay guard and create_invoice's results in
//!                        Redis (a store address: `redis://127.0.0.1:PORT`,
//!                        `rediss://`, `redis-cluster://`, `redis-sentinel://`), shared with other
//!                        replicas and with the Node and Python examples
//!
//! Environment: TOOLCTX_INSTANCE_ID and TOOLCTX_SECRET (required unless
//! --no-verify), TOOLCTX_SECRET_PREVIOUS (accepted too: rotation),
//! TOOLCTX_CREDENTIAL (a static credential in `authorization`).
//!
//! Tools: get_order, export_report (sends progress), create_invoice (an
//! idempotent tool: a retry gets the first result back), whoami (the
//! verified context and the x-toolctx-* headers a proxy added) and
//! toolctx_probe (how many times it ran, for `toolctx conformance`). Prints
//! `listening http://127.0.0.1:PORT/mcp` once it accepts connections.

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ErrorData, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_handler, tool_router, ServerHandler};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toolctx_core::{Config, Credential, Verifier};
use toolctx_tower::helpers::{Idempotent, Progress};
use toolctx_tower::rmcp::{protocol_revision, MaybeVerified};
use toolctx_tower::{
    Redis, RedisReplayStore, RedisStore, ToolctxLayer, Verification, DEFAULT_TIMEOUT,
};
use tower_layer::Layer;
use tower_service::Service;

struct Options {
    port: u16,
    verify: bool,
    context_optional: bool,
    stateless: bool,
    json_response: bool,
    exit_with_stdin: bool,
    record: Option<String>,
    redis: Option<String>,
}

fn options() -> Result<Options, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    let option = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let port = option("--port")
        .or_else(|| std::env::var("PORT").ok())
        .unwrap_or_else(|| "0".into());
    Ok(Options {
        port: port
            .parse()
            .map_err(|_| format!("--port {port}: not a port"))?,
        verify: !flag("--no-verify"),
        context_optional: flag("--context-optional"),
        stateless: flag("--stateless"),
        json_response: flag("--json-response"),
        exit_with_stdin: flag("--exit-with-stdin"),
        record: option("--record"),
        redis: option("--redis"),
    })
}

/// --record: one line per entry, written (and flushed) before anything answers.
#[derive(Clone, Default)]
struct Recorder(Option<Arc<Mutex<File>>>);

impl Recorder {
    fn write(&self, entry: Value) {
        if let Some(file) = &self.0 {
            if let Ok(mut f) = file.lock() {
                let _ = writeln!(f, "{entry}");
            }
        }
    }
}

fn header_pairs(headers: &http::HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

fn context_json(v: Option<&Verification>) -> Value {
    v.and_then(Verification::context)
        .and_then(|c| serde_json::from_str(&c.to_json()).ok())
        .unwrap_or(Value::Null)
}

/// Records each request handed on to rmcp, then hands it on.
#[derive(Clone)]
struct Recorded<S> {
    inner: S,
    record: Recorder,
}

impl<S, B> Service<http::Request<B>> for Recorded<S>
where
    S: Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> S::Future {
        if self.record.0.is_some() {
            self.record.write(json!({
                "handed_on": req.method().as_str(),
                "headers": header_pairs(req.headers()),
                "context": context_json(req.extensions().get::<Verification>()),
            }));
        }
        self.inner.call(req)
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct OrderArgs {
    order_id: String,
}

fn three() -> u32 {
    3
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ReportArgs {
    #[serde(default = "three")]
    #[schemars(range(min = 1, max = 20))]
    pages: u32,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct NoArgs {}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct InvoiceArgs {
    amount: i64,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Runs {
    runs: u64,
}

/// Process-wide, across the per-request servers: the probe's run count.
static PROBE_RUNS: AtomicU64 = AtomicU64::new(0);

#[derive(Clone)]
struct Example {
    verify: bool,
    record: Recorder,
    /// create_invoice's guard, process-wide (in memory, or in Redis with --redis).
    invoices: Idempotent,
}

impl Example {
    fn new(verify: bool, record: Recorder, invoices: Idempotent) -> Example {
        Example {
            verify,
            record,
            invoices,
        }
    }

    /// The verified context (none with --no-verify: there is no layer).
    fn context(&self, ctx: &RequestContext<RoleServer>) -> Result<MaybeVerified, ErrorData> {
        if self.verify {
            MaybeVerified::from_request_context(ctx)
        } else {
            Ok(MaybeVerified(None))
        }
    }

    fn headers(ctx: &RequestContext<RoleServer>) -> Vec<(String, String)> {
        ctx.extensions
            .get::<http::request::Parts>()
            .map(|p| header_pairs(&p.headers))
            .unwrap_or_default()
    }

    fn ran(&self, tool: &str, ctx: &RequestContext<RoleServer>) {
        if self.record.0.is_some() {
            self.record
                .write(json!({"run": tool, "headers": Example::headers(ctx)}));
        }
    }
}

#[tool_router]
impl Example {
    #[tool(description = "Looks up an order; says which task asked for it")]
    async fn get_order(
        &self,
        Parameters(args): Parameters<OrderArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.ran("get_order", &ctx);
        let who = match self.context(&ctx)?.context() {
            Some(c) => match &c.end_user_id {
                Some(user) => format!("task {} for {user}", c.task_id),
                None => format!("task {}", c.task_id),
            },
            None => "no verified context".to_string(),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(format!(
            "order {}: 2 items, shipped ({who})",
            args.order_id
        ))]))
    }

    #[tool(description = "Exports a report page by page, reporting progress")]
    async fn export_report(
        &self,
        Parameters(args): Parameters<ReportArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.ran("export_report", &ctx);
        if !(1..=20).contains(&args.pages) {
            return Err(ErrorData::invalid_params("pages must be 1..=20", None));
        }
        // Sends at the platform's relay rate (one per 0.5 s) and always the last.
        let progress = Progress::new(&ctx);
        for page in 1..=args.pages {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(550)) => {}
                _ = ctx.ct.cancelled() => return Err(ErrorData::internal_error("cancelled", None)),
            }
            progress
                .report(
                    f64::from(page),
                    Some(f64::from(args.pages)),
                    Some(format!("page {page} of {}", args.pages)),
                )
                .await;
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(format!(
            "exported {} pages",
            args.pages
        ))]))
    }

    #[tool(
        description = "What this server saw: the verified context and the x-toolctx-* headers a proxy added"
    )]
    async fn whoami(
        &self,
        Parameters(_): Parameters<NoArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.ran("whoami", &ctx);
        let context = match self.context(&ctx)?.context() {
            Some(c) => serde_json::from_str(&c.to_json()).unwrap_or(Value::Null),
            None => Value::Null,
        };
        let forwarded: serde_json::Map<String, Value> = Example::headers(&ctx)
            .into_iter()
            .filter(|(k, _)| k.starts_with("x-toolctx-"))
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let saw =
            json!({"verified_here": self.verify, "context": context, "proxy_headers": forwarded});
        Ok(CallToolResult::structured(saw))
    }

    #[tool(description = "Not safe to run twice: a retry gets the first result back")]
    async fn create_invoice(
        &self,
        Parameters(args): Parameters<InvoiceArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let context = self.context(&ctx)?;
        self.invoices
            .run(context.context(), &protocol_revision(&ctx), &args, &ctx.ct, || async {
                self.ran("create_invoice", &ctx);
                let key = context.context().map(|c| c.idempotency_key.clone());
                let invoice = json!({"invoice": format!("inv-{}", key.unwrap_or_default()), "amount": args.amount});
                Ok(CallToolResult::structured(invoice).into())
            })
            .await
    }

    /// The conformance probe: `toolctx conformance` reads the count around
    /// every refused call to prove the call never ran.
    #[tool(description = "Counts its own runs (toolctx conformance probe)")]
    async fn toolctx_probe(
        &self,
        Parameters(_): Parameters<NoArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<Json<Runs>, ErrorData> {
        self.ran("toolctx_probe", &ctx);
        let runs = PROBE_RUNS.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(Json(Runs { runs }))
    }
}

#[tool_handler]
impl ServerHandler for Example {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn verifier(opts: &Options) -> Result<Verifier, String> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let instance = var("TOOLCTX_INSTANCE_ID").ok_or("TOOLCTX_INSTANCE_ID is not set")?;
    let mut secrets = vec![var("TOOLCTX_SECRET")
        .ok_or("TOOLCTX_SECRET is not set")?
        .into_bytes()];
    secrets.extend(var("TOOLCTX_SECRET_PREVIOUS").map(String::into_bytes));
    let mut config = Config::new(instance, secrets);
    config.credential = var("TOOLCTX_CREDENTIAL").map(|v| Credential {
        header: "authorization".into(),
        values: vec![v],
    });
    config.require_context = !opts.context_optional;
    // The error names the problem, never the secret.
    Verifier::new(config).map_err(|e| format!("toolctx configuration: {e}"))
}

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), String> {
    let opts = options()?;
    let record = match &opts.record {
        None => Recorder::default(),
        Some(path) => Recorder(Some(Arc::new(Mutex::new(
            File::options()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("--record {path}: {e}"))?,
        )))),
    };
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!opts.stateless)
        .with_json_response(opts.json_response);
    // --redis: the replay guard and create_invoice's results in one Redis,
    // shared with the other replicas (and the Node and Python servers).
    let redis = match &opts.redis {
        Some(url) => Some(Redis::connect(url, DEFAULT_TIMEOUT).await?),
        None => None,
    };
    let invoices = match &redis {
        Some(r) => Idempotent::new(RedisStore::new(r.clone())),
        None => Idempotent::default(),
    };
    let (verify, tools_record) = (opts.verify, record.clone());
    let mcp = StreamableHttpService::new(
        move || Ok(Example::new(verify, tools_record.clone(), invoices.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let recorded = Recorded { inner: mcp, record };
    let router = if opts.verify {
        let mut layer = ToolctxLayer::new(verifier(&opts)?);
        if let Some(r) = redis {
            layer = layer.replay_guard(RedisReplayStore::new(r));
        }
        axum::Router::new().route_service("/mcp", layer.layer(recorded))
    } else {
        axum::Router::new().route_service("/mcp", recorded)
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", opts.port))
        .await
        .map_err(|e| format!("listen on 127.0.0.1:{}: {e}", opts.port))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let mode = match (opts.verify, opts.context_optional) {
        (false, _) => " (verification off)",
        (true, true) => " (context optional)",
        (true, false) => "",
    };
    println!("listening http://127.0.0.1:{port}/mcp{mode}");
    if opts.exit_with_stdin {
        tokio::spawn(async {
            let mut sink = Vec::new();
            let _ = tokio::io::AsyncReadExt::read_to_end(&mut tokio::io::stdin(), &mut sink).await;
            std::process::exit(0);
        });
    }
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| e.to_string())
}
