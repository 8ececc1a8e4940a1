//! `toolctx mint`: a token and its `_meta`, as the platform would send them.

use clap::Args;
use serde_json::{json, Value as J};
use toolctx_core::{TokenClaims, TOKEN_HEADER};

use crate::common::{parse_core_json, usage, ClaimArgs, Outcome, SecretArgs, EXIT_OK};
use crate::output::pretty;

#[derive(Args, Debug)]
pub struct MintArgs {
    /// The server instance id (`aud`)
    #[arg(long, env = "TOOLCTX_INSTANCE_ID", value_name = "ID")]
    pub instance_id: Option<String>,
    /// Limit the token to this tool (`tool` claim)
    #[arg(long, value_name = "NAME")]
    pub tool: Option<String>,
    #[command(flatten)]
    pub claims: ClaimArgs,
    #[command(flatten)]
    pub secrets: SecretArgs,
    /// Also print a whole `tools/call` request (method, headers, body) that
    /// `toolctx verify` reads
    #[arg(long)]
    pub request: bool,
    /// The request's tool arguments, a JSON object (with --request)
    #[arg(long, value_name = "JSON", default_value = "{}", requires = "request")]
    pub arguments: String,
    /// Print compact JSON on one line
    #[arg(long)]
    pub json: bool,
}

/// The `tools/call` body for `claims`, with `arguments` and `_meta` (plus
/// any extra `_meta` members, such as `progressToken`).
pub fn call_body(
    claims: &TokenClaims,
    id: &J,
    tool: &str,
    arguments: &J,
    extra_meta: &[(&str, J)],
) -> String {
    let mut meta = match parse_core_json(&claims.context.meta_json()) {
        J::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    for (k, v) in extra_meta {
        meta.insert((*k).to_string(), v.clone());
    }
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": meta},
    })
    .to_string()
}

pub fn run(args: &MintArgs) -> Outcome {
    let secrets = args.secrets.load()?;
    let secret = secrets
        .first()
        .ok_or_else(|| usage("no secret to sign with"))?;
    let claims = args.claims.build(
        args.instance_id.as_deref(),
        args.tool.as_deref(),
        crate::common::unix_now(),
    )?;
    let token = claims
        .mint(secret.bytes())
        .map_err(|e| usage(format!("cannot mint: {e}")))?;
    let mut out = json!({
        "token": token,
        "header": TOKEN_HEADER,
        "claims": parse_core_json(&claims.payload_json()),
        "_meta": parse_core_json(&claims.context.meta_json()),
    });
    if args.request {
        let arguments: J = serde_json::from_str(&args.arguments)
            .map_err(|e| usage(format!("--arguments: {e}")))?;
        if !arguments.is_object() {
            return Err(usage("--arguments must be a JSON object"));
        }
        let tool = args.tool.clone().unwrap_or_else(|| "tool".into());
        let body = call_body(&claims, &J::from(1), &tool, &arguments, &[]);
        let request = json!({
            "method": "POST",
            "headers": [["content-type", "application/json"], [TOKEN_HEADER, token]],
            "body": body,
        });
        if let J::Object(m) = &mut out {
            m.insert("request".into(), request);
        }
    }
    if args.json {
        println!("{out}");
    } else {
        println!("{}", pretty(&out));
    }
    Ok(EXIT_OK)
}
