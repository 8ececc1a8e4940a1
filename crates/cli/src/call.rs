//! `toolctx call`: act as the platform. Mint a fresh token, send a real
//! Streamable HTTP `tools/call` with the `_meta` keys and a `progressToken`,
//! print progress as it arrives, then the result.

use std::io::Write as _;
use std::time::Duration;

use clap::Args;
use serde_json::{json, Value as J};
use toolctx_core::{TOKEN_HEADER, TOKEN_TTL_S};

use crate::common::{
    parse_header, random_hex, unix_now, usage, ClaimArgs, CredentialArgs, Error, Outcome,
    SecretArgs, EXIT_NEGATIVE, EXIT_OK, EXIT_UNREACHABLE,
};
use crate::http::{clip, mcp_name_header, one_line, Client, Reply};
use crate::mint::call_body;
use crate::output::{duration, Style};

#[derive(Args, Debug)]
pub struct CallArgs {
    /// The MCP endpoint (plain http), e.g. http://127.0.0.1:3000/mcp
    pub url: String,
    /// The tool to call
    pub tool: String,
    /// The tool's arguments: a JSON object, or @FILE
    #[arg(default_value = "{}")]
    pub args: String,
    /// The server instance id (`aud`)
    #[arg(long, env = "TOOLCTX_INSTANCE_ID", value_name = "ID")]
    pub instance_id: Option<String>,
    #[command(flatten)]
    pub claims: ClaimArgs,
    #[command(flatten)]
    pub secrets: SecretArgs,
    /// Leave out the `tool` claim (by default the token is good for TOOL only)
    #[arg(long)]
    pub no_tool_claim: bool,
    #[command(flatten)]
    pub credential: CredentialArgs,
    /// Another request header, `Name: value` (repeatable)
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Send the tools/call alone, without `initialize` first
    #[arg(long)]
    pub no_initialize: bool,
    /// Seconds to wait for each HTTP exchange, the whole call included
    #[arg(long, default_value_t = 60, value_name = "SECONDS")]
    pub timeout: u64,
    /// Print one JSON object at the end instead of lines as they arrive
    #[arg(long)]
    pub json: bool,
}

fn read_arguments(text: &str) -> Result<J, Error> {
    let (origin, text) = match text.strip_prefix('@') {
        Some(path) => (
            path.to_string(),
            std::fs::read_to_string(path).map_err(|e| usage(format!("cannot read {path}: {e}")))?,
        ),
        None => ("ARGS".to_string(), text.to_string()),
    };
    match serde_json::from_str::<J>(&text) {
        Ok(v @ J::Object(_)) => Ok(v),
        Ok(_) => Err(usage(format!(
            "{origin}: the tool arguments must be a JSON object"
        ))),
        Err(e) => Err(usage(format!("{origin}: {e}"))),
    }
}

/// One line for a `notifications/progress`.
fn progress_line(p: &J) -> String {
    let num = |k: &str| match p.get(k) {
        Some(J::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let mut s = num("progress").unwrap_or_else(|| "?".into());
    if let Some(t) = num("total") {
        s = format!("{s}/{t}");
    }
    if let Some(m) = p.get("message").and_then(J::as_str) {
        s = format!("{s}  {m}");
    }
    s
}

/// Human lines for a tool result.
fn print_result(result: &J, style: Style) {
    let is_error = result.get("isError").and_then(J::as_bool) == Some(true);
    let label = if is_error {
        style.bad("tool error ")
    } else {
        style.good("result     ")
    };
    let items = result
        .get("content")
        .and_then(J::as_array)
        .cloned()
        .unwrap_or_default();
    if items.is_empty() {
        println!("{label}(no content)");
    }
    for item in &items {
        let text = match item.get("type").and_then(J::as_str) {
            Some("text") => item
                .get("text")
                .and_then(J::as_str)
                .unwrap_or("")
                .to_string(),
            Some("image") | Some("audio") => format!(
                "[{} {}, {} base64 chars]",
                item.get("type").and_then(J::as_str).unwrap_or(""),
                item.get("mimeType").and_then(J::as_str).unwrap_or("?"),
                item.get("data").and_then(J::as_str).map_or(0, str::len)
            ),
            _ => item.to_string(),
        };
        println!("{label}{text}");
    }
    if let Some(s) = result.get("structuredContent") {
        // Often the same as the text; shown when it says something else.
        let dup = items.iter().any(|i| {
            i.get("text")
                .and_then(J::as_str)
                .and_then(|t| serde_json::from_str::<J>(t).ok())
                .as_ref()
                == Some(s)
        });
        if !dup {
            println!("structured {s}");
        }
    }
}

pub fn run(args: &CallArgs) -> Outcome {
    let style = Style::stdout();
    let arguments = read_arguments(&args.args)?;
    let secrets = args.secrets.load()?;
    let secret = secrets
        .first()
        .ok_or_else(|| usage("no secret to sign with"))?;
    let mut headers = args
        .headers
        .iter()
        .map(|h| parse_header(h))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(c) = args.credential.load()? {
        headers.push(c);
    }
    // Checked before any request goes out.
    let tool_claim = (!args.no_tool_claim).then_some(args.tool.as_str());
    args.claims
        .build(args.instance_id.as_deref(), tool_claim, unix_now())?;

    let mut client = Client::new(&args.url, Duration::from_secs(args.timeout), headers)?;
    if !args.no_initialize {
        if let Some(reply) = client.initialize(&[])? {
            let context = json!(null);
            return Ok(report(
                args,
                style,
                "initialize",
                &reply,
                context,
                Vec::new(),
                Vec::new(),
            ));
        }
    }
    // Fresh, right before sending.
    let claims = args
        .claims
        .build(args.instance_id.as_deref(), tool_claim, unix_now())?;
    let token = claims
        .mint(secret.bytes())
        .map_err(|e| usage(format!("cannot mint: {e}")))?;
    let progress_token = format!("toolctx-{}", random_hex(4));
    let id = J::from(1);
    let body = call_body(
        &claims,
        &id,
        &args.tool,
        &arguments,
        &[("progressToken", J::from(progress_token.clone()))],
    );
    let extra = vec![
        (TOKEN_HEADER.to_string(), token),
        ("mcp-method".to_string(), "tools/call".to_string()),
        ("mcp-name".to_string(), mcp_name_header(&args.tool)),
    ];
    if !args.json {
        println!("call       {} at {}", style.bold(&args.tool), client.url());
        println!(
            "context    task {}, call {}, workspace {}; token expires in {}",
            claims.context.task_id,
            claims.context.tool_call_id,
            claims.context.workspace_id,
            duration(TOKEN_TTL_S)
        );
    }
    let mut progress = Vec::new();
    let mut logs = Vec::new();
    let json_mode = args.json;
    let reply = client.post(&extra, body.into_bytes(), &mut |m| {
        let params = m.get("params").cloned().unwrap_or(J::Null);
        match m.get("method").and_then(J::as_str) {
            Some("notifications/progress") => {
                if !json_mode {
                    println!("progress   {}", progress_line(&params));
                    let _ = std::io::stdout().flush();
                }
                progress.push(params);
            }
            Some("notifications/message") => {
                if !json_mode {
                    println!(
                        "log        {}: {}",
                        params.get("level").and_then(J::as_str).unwrap_or("info"),
                        params.get("data").map(J::to_string).unwrap_or_default()
                    );
                }
                logs.push(params);
            }
            _ => {}
        }
    });
    client.close();
    let reply = reply?;
    let context = json!({
        "task_id": claims.context.task_id,
        "tool_call_id": claims.context.tool_call_id,
        "workspace_id": claims.context.workspace_id,
        "idempotency_key": claims.context.idempotency_key(),
        "jti": claims.jti,
        "iat": claims.iat,
        "exp": claims.iat.saturating_add(TOKEN_TTL_S),
        "progress_token": progress_token,
    });
    Ok(report(
        args,
        style,
        "tools/call",
        &reply,
        context,
        progress,
        logs,
    ))
}

/// Prints what came back (a result, a refusal, an error) and gives the exit
/// code. `stage` says which request it answered.
fn report(
    args: &CallArgs,
    style: Style,
    stage: &str,
    reply: &Reply,
    context: J,
    progress: Vec<J>,
    logs: Vec<J>,
) -> u8 {
    let response = reply.response().cloned();
    let result = response.as_ref().and_then(|r| r.get("result")).cloned();
    let error = response.as_ref().and_then(|r| r.get("error")).cloned();
    let refused_reason = error
        .as_ref()
        .and_then(|e| e.pointer("/data/reason"))
        .and_then(J::as_str)
        .map(str::to_string);
    let is_error = result
        .as_ref()
        .and_then(|r| r.get("isError"))
        .and_then(J::as_bool)
        == Some(true);
    let ok = stage == "tools/call" && reply.status == 200 && result.is_some() && !is_error;
    let code = match (ok, &response) {
        (true, _) => EXIT_OK,
        (false, Some(_)) => EXIT_NEGATIVE,
        // Not a JSON-RPC answer at all: not an MCP server at this URL.
        (false, None) => EXIT_UNREACHABLE,
    };

    if args.json {
        let out = json!({
            "url": args.url,
            "tool": args.tool,
            "stage": stage,
            "status": reply.status,
            "content_type": reply.content_type,
            "context": context,
            "progress": progress,
            "logs": logs,
            "result": if stage == "tools/call" { result } else { None },
            "error": error,
            "refused": refused_reason.is_some(),
            "body": if response.is_none() { J::from(clip(&reply.text, 2000)) } else { J::Null },
        });
        println!("{out}");
        return code;
    }
    let at = if stage == "tools/call" {
        String::new()
    } else {
        format!(" (answering {stage})")
    };
    match (&result, &error) {
        (Some(r), _) if stage == "tools/call" => print_result(r, style),
        (_, Some(e)) => {
            let rpc = e.get("code").map(J::to_string).unwrap_or_default();
            let message = e.get("message").and_then(J::as_str).unwrap_or("");
            match &refused_reason {
                Some(reason) => println!(
                    "{}    {} {rpc} {reason}: {message}{at}",
                    style.bad("refused"),
                    reply.status
                ),
                None => println!(
                    "{}      {} {rpc}: {message}{at}",
                    style.bad("error"),
                    reply.status
                ),
            }
            println!("body       {}", reply.body_text());
        }
        _ => {
            println!(
                "{}      HTTP {} {}{at}",
                style.bad("error"),
                reply.status,
                clip(&one_line(&reply.body_text()), 300)
            );
        }
    }
    code
}
