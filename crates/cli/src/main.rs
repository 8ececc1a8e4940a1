#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
// Shipped code may not panic; unit tests may (clippy.toml).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod call;
mod common;
mod conformance;
mod http;
mod inspect;
mod jws;
mod mint;
mod output;
mod serve;
mod vectors;
mod verify;

const AFTER_HELP: &str = "\
Examples:
  export TOOLCTX_INSTANCE_ID=0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f
  export TOOLCTX_SECRET=\"$(cat /run/secrets/toolctx)\"
  toolctx mint --tool get_order --end-user-id user-42
  toolctx inspect eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9...
  toolctx mint --tool get_order --request | toolctx verify
  toolctx call http://127.0.0.1:3000/mcp export_report '{\"pages\": 3}'
  toolctx conformance http://127.0.0.1:3000/mcp
  toolctx vectors tests/vectors/*.json
  toolctx serve ext-authz --config toolctx.json --listen 127.0.0.1:9001

Secrets are read from an environment variable (--secret-env NAME, default
TOOLCTX_SECRET) or a file (--secret-file PATH), never from a plain argument,
and are never printed.

Exit codes:
  0  success: accepted or passed, every case passed, the tool returned a result
  1  a negative answer: refused, a case failed, a check failed, a tool error
  2  usage or input error: flags, files, secrets, configuration
  3  the server could not be reached or did not answer like an MCP server";

/// Mint, inspect and verify MCP tool-call context tokens (X-AgentArea-Context),
/// call a server as the platform would, and check a live server against the
/// contract.
#[derive(Parser, Debug)]
#[command(name = "toolctx", version, after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Mint a token and the matching `_meta`, as JSON
    #[command(after_help = "\
Examples:
  TOOLCTX_SECRET=... toolctx mint --instance-id inst-1 --tool get_order
  toolctx mint --secret-file ./secret --claims claims.json --end-user-id user-42
  toolctx mint --tool get_order --request --arguments '{\"orderId\":\"A-1\"}' | toolctx verify

Prints {\"token\", \"header\", \"claims\", \"_meta\"} (and \"request\" with --request).
exp is always iat + 300.")]
    Mint(mint::MintArgs),
    /// Show a token's header, claims and times, and which checks it would fail
    #[command(after_help = "\
Examples:
  toolctx inspect \"$TOKEN\"
  toolctx inspect \"$TOKEN\" --instance-id inst-1 --secret-env TOOLCTX_SECRET

Without a secret every check but the signature runs (the core re-runs them on
the token's exact bytes); with one, the full verdict. Exit 1 when a check fails.")]
    Inspect(inspect::InspectArgs),
    /// Run a request (headers and body) through the core: verdict and refusal body
    #[command(after_help = "\
Examples:
  toolctx verify request.http --instance-id inst-1 --secret-env TOOLCTX_SECRET
  toolctx mint --tool t --request | toolctx verify --json
  toolctx verify --config server-config.json case.json

request.http is raw HTTP:
  POST /mcp HTTP/1.1
  content-type: application/json
  x-agentarea-context: eyJ...

  {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",...}

Exit 0 for accept or pass, 1 for a refusal.")]
    Verify(verify::VerifyArgs),
    /// Act as the platform: a fresh token, a real tools/call, progress, the result
    #[command(after_help = "\
Examples:
  toolctx call http://127.0.0.1:3000/mcp get_order '{\"orderId\":\"A-1\"}'
  toolctx call http://127.0.0.1:3000/mcp export_report '{\"pages\":3}' --end-user-id user-42
  toolctx call http://127.0.0.1:10000/mcp whoami --credential-env TOOLCTX_CREDENTIAL --json

Sends initialize (unless --no-initialize), then the tools/call with the
X-AgentArea-Context token, Mcp-Method/Mcp-Name headers and _meta (agentarea/*
keys and a progressToken). Handles application/json and text/event-stream
answers. Exit 0 for a result, 1 for a refusal, a JSON-RPC error or isError.")]
    Call(call::CallArgs),
    /// Check a live server, in any language, against the contract
    #[command(after_help = "\
Examples:
  toolctx conformance http://127.0.0.1:3000/mcp
  toolctx conformance http://127.0.0.1:3000/mcp --secret-env NEW --secret-env OLD
  toolctx conformance http://127.0.0.1:10000/mcp --credential-env TOOLCTX_CREDENTIAL --max-body-bytes 262144

Sends about 35 cases, each with a token minted just before: valid calls, every
401, 403, 400 and 413 class, batches, and rotation when two secrets are given.
Checks the status, the JSON-RPC code, data.reason (when present) and the id.

The probe: a server that exposes a tool named toolctx_probe (no arguments,
returning how many times it ran in this process, this run included, as
structuredContent {\"runs\": N} or text {\"runs\": N}) lets the suite prove that
no refused call ran: it calls the probe after every case.

Prints a table and `N passed, N failed`; exit 1 when a case failed.")]
    Conformance(conformance::ConformanceArgs),
    /// Run conformance vector files through the core
    #[command(after_help = "\
Example:
  toolctx vectors tests/vectors/*.json

One line per failed case, then `N passed, N failed`; exit 1 on any failure.")]
    Vectors(vectors::VectorsArgs),
    /// Run a long-lived service: `ext-authz`, Envoy's external authorization
    Serve(serve::ServeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match &cli.command {
        Command::Mint(a) => mint::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Call(a) => call::run(a),
        Command::Conformance(a) => conformance::run(a),
        Command::Vectors(a) => vectors::run(a),
        Command::Serve(a) => serve::run(a),
    };
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("toolctx: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    #[test]
    fn cli_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
