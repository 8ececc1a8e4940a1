//! The gRPC service: `envoy.service.auth.v3.Authorization/Check`, gRPC
//! health checking (`grpc.health.v1.Health`), Prometheus counters, one log
//! line per refusal, bounded concurrency and graceful shutdown.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use envoy_types::ext_authz::v3::pb::{
    Authorization, AuthorizationServer, CheckRequest, CheckResponse,
};
use tokio::sync::{Notify, Semaphore};
use tonic::transport::server::TcpIncoming;
use tonic::transport::Server;
use toolctx_gateway_config::request as gateway_request;
use toolctx_gateway_config::{
    error_line, load_for, printable, refusal_line, Host, Settings, MAX_LOGGED_ID,
};

use crate::decide::{decide, Outcome};
use crate::metrics::{self, Counted, Metrics};
use crate::replay::Store;
use crate::request::{self, Request};
use crate::response;

/// How the service runs (the settings themselves are the filter's JSON).
#[derive(Debug, Clone)]
pub struct Options {
    /// Where the gRPC service (Check and Health) listens.
    pub listen: SocketAddr,
    /// Where `GET /metrics` is served, if anywhere.
    pub metrics: Option<SocketAddr>,
    /// Checks decided at once; more wait for a slot (Envoy's timeout,
    /// `grpc_service.timeout`, bounds the wait).
    pub max_concurrency: usize,
    /// How long in-flight checks may finish after SIGTERM or SIGINT.
    pub shutdown_grace: Duration,
}

impl Options {
    pub fn new(listen: SocketAddr) -> Options {
        Options {
            listen,
            metrics: None,
            max_concurrency: 64,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

struct Inner {
    settings: Settings,
    store: Option<Store>,
    metrics: Arc<Metrics>,
    permits: Arc<Semaphore>,
    /// Decide on the async worker: nothing in the check can take long
    /// (AgentArea: HMAC and the JSON reader, microseconds; the replay
    /// guard, if any, in process).
    inline: bool,
}

/// The `Authorization` service.
#[derive(Clone)]
pub struct Service(Arc<Inner>);

/// The request time: the service's clock, or in test builds the test header.
fn now(req: &Request) -> Option<u64> {
    gateway_request::now(|name| req.header(name), gateway_request::system_now)
}

impl Inner {
    fn judge(&self, check: CheckRequest) -> CheckResponse {
        let started = Instant::now();
        let (outcome, req) = match request::read(check) {
            Err(why) => (Outcome::Error(why.to_string()), Request::default()),
            Ok(req) => match now(&req) {
                None => (Outcome::Error("no clock".into()), req),
                Some(now) => (decide(&self.settings, self.store.as_ref(), &req, now), req),
            },
        };
        self.record(&outcome, &req, started.elapsed());
        response::build(
            &outcome,
            self.settings.removed_headers(),
            self.settings.include_reason,
        )
    }

    /// Counters and the log line: the reason, status, Envoy's request id
    /// and the JSON-RPC id; never a token, credential or secret.
    fn record(&self, outcome: &Outcome, req: &Request, took: Duration) {
        let request_id = (!req.id.is_empty()).then_some(req.id.as_bytes());
        match outcome {
            Outcome::Pass => self.metrics.record(Counted::Pass, took),
            Outcome::Accept(_) => self.metrics.record(Counted::Accept, took),
            Outcome::Refuse(r) => {
                self.metrics.record(Counted::Refuse(r.reason()), took);
                eprintln!("toolctx: {}", refusal_line(r, request_id));
            }
            Outcome::Error(why) => {
                self.metrics.record(Counted::Error, took);
                let request_id =
                    request_id.map_or_else(|| "-".into(), |v| printable(v, MAX_LOGGED_ID));
                eprintln!("toolctx: {} request_id={request_id}", error_line(why));
            }
        }
    }
}

#[tonic::async_trait]
impl Authorization for Service {
    async fn check(
        &self,
        request: tonic::Request<CheckRequest>,
    ) -> Result<tonic::Response<CheckResponse>, tonic::Status> {
        let inner = Arc::clone(&self.0);
        let permit = Arc::clone(&inner.permits)
            .acquire_owned()
            .await
            .map_err(|_| tonic::Status::unavailable("shutting down"))?;
        let check = request.into_inner();
        if inner.inline {
            let response = inner.judge(check);
            drop(permit);
            return Ok(tonic::Response::new(response));
        }
        let judging = Arc::clone(&inner);
        // Off the async workers: AIVAX's bcrypt takes up to a second, and
        // the Redis guard waits for its answer.
        let judged = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            judging.judge(check)
        })
        .await;
        let response = judged.unwrap_or_else(|_| {
            inner.metrics.record(Counted::Error, Duration::ZERO);
            eprintln!("toolctx: request refused with 500: the check stopped unexpectedly");
            response::denied(&response::internal_error(), inner.settings.include_reason)
        });
        Ok(tonic::Response::new(response))
    }
}

/// Reads the configuration (the filter's JSON; secrets from this process's
/// environment). `Err` says what is wrong, never a secret.
pub fn load(config: &[u8]) -> Result<Settings, String> {
    let loaded = load_for(Host::Service, config, &|name| std::env::var(name).ok())
        .map_err(|e| format!("configuration refused: {e}"))?;
    for note in &loaded.notes {
        eprintln!("toolctx: warning: {note}");
    }
    Ok(loaded.settings)
}

async fn signalled() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Serves until SIGTERM or SIGINT, then stops accepting, reports
/// NOT_SERVING, and lets in-flight checks finish (up to the grace period).
pub async fn serve(settings: Settings, options: Options) -> Result<(), String> {
    let store = match &settings.profile {
        toolctx_gateway_config::Profile::AgentArea {
            replay: Some(guard),
            ..
        } => Some(Store::open(guard).await?),
        _ => None,
    };
    eprintln!("toolctx: configured: {}", settings.summary());
    let metrics = Arc::new(Metrics::default());
    let inline = matches!(
        settings.profile,
        toolctx_gateway_config::Profile::AgentArea { .. }
    ) && !matches!(store, Some(Store::Redis { .. }));
    let inner = Arc::new(Inner {
        inline,
        settings,
        store,
        metrics: Arc::clone(&metrics),
        permits: Arc::new(Semaphore::new(options.max_concurrency.max(1))),
    });
    if let Some(addr) = options.metrics {
        let listener = metrics::bind(addr).await?;
        eprintln!("toolctx: metrics on http://{addr}/metrics");
        tokio::spawn(metrics::serve(listener, metrics));
    }
    let (reporter, health) = tonic_health::server::health_reporter();
    reporter.set_serving::<AuthorizationServer<Service>>().await;
    let incoming = TcpIncoming::bind(options.listen)
        .map_err(|e| format!("cannot listen on {}: {e}", options.listen))?
        .with_nodelay(Some(true));
    eprintln!(
        "toolctx: ext_authz listening on {} (grpc envoy.service.auth.v3.Authorization, grpc.health.v1.Health), \
         {} checks at once",
        options.listen,
        options.max_concurrency.max(1)
    );
    let stopping = Arc::new(Notify::new());
    let stop = Arc::clone(&stopping);
    let shutdown = async move {
        signalled().await;
        eprintln!("toolctx: shutting down: no new checks, finishing the ones in flight");
        reporter
            .set_not_serving::<AuthorizationServer<Service>>()
            .await;
        // The whole server too: Envoy's grpc_health_check asks for "".
        reporter
            .set_service_status("", tonic_health::ServingStatus::NotServing)
            .await;
        stop.notify_one();
    };
    let server = Server::builder()
        .concurrency_limit_per_connection(options.max_concurrency.max(1).saturating_mul(4))
        .add_service(health)
        .add_service(AuthorizationServer::new(Service(inner)))
        .serve_with_incoming_shutdown(incoming, shutdown);
    let grace = options.shutdown_grace;
    tokio::select! {
        r = server => r.map_err(|e| format!("the gRPC server failed: {e}"))?,
        _ = async { stopping.notified().await; tokio::time::sleep(grace).await } => {
            eprintln!("toolctx: checks still in flight after {} s; stopping anyway", grace.as_secs());
        }
    }
    eprintln!("toolctx: stopped");
    Ok(())
}

/// [`serve`] on a runtime of its own, for the command line.
pub fn run(config: &[u8], options: Options) -> Result<(), String> {
    let settings = load(config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(serve(settings, options))
}
