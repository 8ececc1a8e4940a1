//! `toolctx serve ext-authz`: Envoy's external authorization service
//! (`crates/ext-authz`), for gateways that load no wasm.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use crate::common::{usage, Outcome, EXIT_OK};

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(subcommand)]
    pub service: Service,
}

#[derive(Subcommand, Debug)]
pub enum Service {
    /// Envoy's ext_authz gRPC service (envoy.service.auth.v3.Authorization/Check)
    #[command(after_help = "\
Examples:
  TOOLCTX_SECRET=... toolctx serve ext-authz --config toolctx.json --listen 127.0.0.1:9001
  toolctx serve ext-authz --config toolctx.json --listen 0.0.0.0:9001 --metrics 0.0.0.0:9002

The configuration is the Envoy filter's JSON (crates/envoy-filter/README.md):
secrets, credential values, the AIVAX hook key and a Redis URL are named by
environment variable (secret_env, credential.values_env, hook_key_env,
replay_guard.redis_url_env), never written in the file. The ext_authz filter
must send the body as bytes (with_request_body, pack_as_bytes: true) and the
raw headers (encode_raw_headers: true), and fail closed
(failure_mode_allow: false): see crates/ext-authz/README.md.

Stops on SIGTERM or SIGINT: health turns NOT_SERVING, checks in flight finish.
Exit 2 when the configuration is refused or the address cannot be bound.")]
    ExtAuthz(ExtAuthzArgs),
}

#[derive(Args, Debug)]
pub struct ExtAuthzArgs {
    /// The configuration file (JSON, the filter's settings)
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// Address of the gRPC service (Check and grpc.health.v1.Health)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9001")]
    pub listen: SocketAddr,
    /// Address of the Prometheus endpoint (GET /metrics); off when absent
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,
    /// Checks decided at once; further ones wait
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub max_concurrency: usize,
    /// Seconds in-flight checks may take to finish after SIGTERM
    #[arg(long, value_name = "S", default_value_t = 10)]
    pub shutdown_grace: u64,
}

pub fn run(args: &ServeArgs) -> Outcome {
    match &args.service {
        Service::ExtAuthz(a) => {
            let config = std::fs::read(&a.config)
                .map_err(|e| usage(format!("cannot read {}: {e}", a.config.display())))?;
            let mut options = toolctx_ext_authz::Options::new(a.listen);
            options.metrics = a.metrics;
            options.max_concurrency = a.max_concurrency;
            options.shutdown_grace = Duration::from_secs(a.shutdown_grace);
            toolctx_ext_authz::run(&config, options).map_err(usage)?;
            Ok(EXIT_OK)
        }
    }
}
