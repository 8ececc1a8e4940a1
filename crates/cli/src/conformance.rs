//! `toolctx conformance URL`: the contract's verdicts checked against a live
//! server, whatever it is written in. Every case mints its token right
//! before it is sent, relative to now.
//!
//! The probe convention: a server may expose a tool named `toolctx_probe`
//! that takes no arguments and returns how many times it has run in this
//! process, this run included, as `structuredContent: {"runs": N}` (or a
//! text item holding that JSON). When it does, the suite calls it (with a
//! valid token) after every case: an accepted case must have run it once,
//! a refused or passed-through one not at all. Without it the `ran` column
//! stays empty and the valid cases use `--tool`.
//!
//! A JSON-RPC batch without `tools/call` is not the contract's business and
//! must be passed on; several SDKs (go-sdk, java-sdk, the Python SDK, rmcp)
//! then refuse any batch themselves. That case passes, marked `ok*` with a
//! note, when the reply is the server's own 4xx (none of the contract's
//! refusals) and the probe counted no run; otherwise it fails.

use std::time::Duration;

use clap::Args;
use serde_json::{json, Map, Value as J};
use toolctx_core::{ContextClaims, Reason, TokenClaims, TOKEN_HEADER};

use crate::common::{
    parse_core_json, parse_header, random_hex, unix_now, usage, uuid_v4, CredentialArgs, Outcome,
    Secret, SecretArgs, EXIT_NEGATIVE, EXIT_OK,
};
use crate::http::{clip, mcp_name_header, Client, Reply};
use crate::jws;
use crate::mint::call_body;
use crate::output::{table, Style};

/// The probe tool's name (see the module documentation).
pub const PROBE_TOOL: &str = "toolctx_probe";

#[derive(Args, Debug)]
pub struct ConformanceArgs {
    /// The MCP endpoint (plain http), e.g. http://127.0.0.1:3000/mcp
    pub url: String,
    /// The server instance id (`aud`)
    #[arg(long, env = "TOOLCTX_INSTANCE_ID", value_name = "ID")]
    pub instance_id: Option<String>,
    /// One secret, or two to check rotation (tokens signed with the second
    /// must be accepted too)
    #[command(flatten)]
    pub secrets: SecretArgs,
    /// A static credential the server requires; adds the 401 credential cases
    #[command(flatten)]
    pub credential: CredentialArgs,
    /// Another request header, `Name: value` (repeatable)
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// The tool for valid calls when the server has no toolctx_probe
    #[arg(long, value_name = "NAME")]
    pub tool: Option<String>,
    /// Arguments for --tool, a JSON object
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub args: String,
    /// The server's max_body_bytes (the 413 case sends one byte more)
    #[arg(long, value_name = "BYTES", default_value_t = toolctx_core::DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// The server's max_token_bytes (the token_too_large case exceeds it)
    #[arg(long, value_name = "BYTES", default_value_t = toolctx_core::DEFAULT_MAX_TOKEN_BYTES)]
    pub max_token_bytes: usize,
    /// Skip `initialize`
    #[arg(long)]
    pub no_initialize: bool,
    /// Seconds to wait for each HTTP exchange
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    pub timeout: u64,
    /// Print the results as JSON
    #[arg(long)]
    pub json: bool,
}

mod cases;

use cases::{Needs, CASES};

/// What a case must get back.
#[derive(Debug, Clone, Copy)]
pub enum Expect {
    /// A verified call: 200 with a result; the tool ran once.
    Accept,
    /// Not the contract's business: a 2xx from the server; nothing ran.
    Pass,
    /// The contract's refusal (status, code and reason from the core's
    /// table); `id` null or the request's own; nothing ran.
    Reject(Reason),
}

impl Expect {
    fn describe(&self) -> String {
        match self {
            Expect::Accept => "200 result".into(),
            Expect::Pass => "2xx".into(),
            Expect::Reject(r) => format!("{} {} {}", r.status(), r.code(), r.as_str()),
        }
    }
    fn runs(&self) -> i64 {
        i64::from(matches!(self, Expect::Accept))
    }
}

/// One request to send.
pub struct Req {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    id: J,
}

/// What every case is built from.
pub struct Env {
    instance: String,
    secrets: Vec<Secret>,
    tool: String,
    arguments: J,
    credential: Option<(String, String)>,
    max_body: usize,
    max_token: usize,
}

impl Env {
    fn claims(&self, now: u64) -> TokenClaims {
        TokenClaims {
            instance_id: self.instance.clone(),
            tool: Some(self.tool.clone()),
            jti: uuid_v4(),
            iat: now,
            context: ContextClaims {
                protocol: "1".into(),
                task_id: format!("task-{}", random_hex(4)),
                tool_call_id: format!("call-{}", random_hex(4)),
                workspace_id: "workspace-conformance".into(),
                agent_id: None,
                end_user_id: None,
                metadata: None,
            },
        }
    }

    fn secret(&self, i: usize) -> &[u8] {
        self.secrets.get(i).map(Secret::bytes).unwrap_or_default()
    }

    /// Minted by the core with secret `i`.
    fn token(&self, c: &TokenClaims, i: usize) -> String {
        c.mint(self.secret(i)).unwrap_or_default()
    }

    /// The core's payload for `c`, edited, signed with secret 0.
    fn edited_token(
        &self,
        c: &TokenClaims,
        header: &str,
        edit: impl FnOnce(&mut Map<String, J>),
    ) -> String {
        let mut payload = match parse_core_json(&c.payload_json()) {
            J::Object(m) => m,
            _ => Map::new(),
        };
        edit(&mut payload);
        jws::sign(header, &J::Object(payload).to_string(), self.secret(0))
    }

    fn meta(&self, c: &TokenClaims) -> Map<String, J> {
        match parse_core_json(&c.context.meta_json()) {
            J::Object(m) => m,
            _ => Map::new(),
        }
    }

    /// The headers of a call: credential, MCP headers, then the tokens given.
    fn headers(&self, tokens: &[&str]) -> Vec<(String, String)> {
        let mut h = Vec::new();
        if let Some(c) = &self.credential {
            h.push(c.clone());
        }
        h.push(("mcp-method".into(), "tools/call".into()));
        h.push(("mcp-name".into(), mcp_name_header(&self.tool)));
        for t in tokens {
            h.push((TOKEN_HEADER.into(), (*t).to_string()));
        }
        h
    }

    /// A `tools/call` body with this `_meta` and arguments text.
    fn body(&self, id: &J, arguments: &str, meta: &Map<String, J>) -> String {
        self.body_text(id, arguments, &J::Object(meta.clone()).to_string())
    }

    /// A `tools/call` body from the arguments and `_meta` as JSON text.
    fn body_text(&self, id: &J, arguments: &str, meta: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":{},"arguments":{arguments},"_meta":{meta}}}}}"#,
            J::from(self.tool.as_str()),
        )
    }
}

/// How a reply reads in the table, and whether it meets `expect`.
fn judge(expect: Expect, reply: &Reply, id: &J) -> (bool, String) {
    let response = reply.response();
    let result = response.and_then(|r| r.get("result"));
    let error = response.and_then(|r| r.get("error"));
    let code = error.and_then(|e| e.get("code")).and_then(J::as_i64);
    let reason = error
        .and_then(|e| e.pointer("/data/reason"))
        .and_then(J::as_str);
    let got = match (result, code) {
        (Some(r), _) if r.get("isError").and_then(J::as_bool) == Some(true) => {
            format!("{} result isError", reply.status)
        }
        (Some(_), _) => format!("{} result", reply.status),
        (None, Some(c)) => match reason {
            Some(why) => format!("{} {c} {why}", reply.status),
            None => format!("{} {c}", reply.status),
        },
        (None, None) if reply.text.trim().is_empty() => format!("{} (empty)", reply.status),
        (None, None) => format!("{} {}", reply.status, clip(reply.text.trim(), 40)),
    };
    let ok = match expect {
        Expect::Accept => {
            reply.status == 200
                && result.is_some_and(|r| r.get("isError").and_then(J::as_bool) != Some(true))
        }
        Expect::Pass => (200..300).contains(&reply.status),
        Expect::Reject(r) => {
            let want_id = cases::expected_id(r, id);
            let id_ok = response.and_then(|m| m.get("id")) == Some(&want_id);
            reply.status == r.status()
                && code == Some(i64::from(r.code()))
                && reason.is_none_or(|why| why == r.as_str())
                && id_ok
        }
    };
    let got = match expect {
        Expect::Reject(r)
            if !ok && reply.status == r.status() && code == Some(i64::from(r.code())) =>
        {
            format!(
                "{got} (id {})",
                response
                    .and_then(|m| m.get("id"))
                    .map(J::to_string)
                    .unwrap_or_else(|| "absent".into())
            )
        }
        _ => got,
    };
    (ok, got)
}

/// Whether a reply is one of the contract's refusals: a `data.reason` of
/// the core's table, or a row's status, JSON-RPC code and message (a
/// refusal without its reason, `include_reason` off).
fn is_contract_refusal(reply: &Reply) -> bool {
    let error = reply.response().and_then(|r| r.get("error"));
    let code = error.and_then(|e| e.get("code")).and_then(J::as_i64);
    let message = error.and_then(|e| e.get("message")).and_then(J::as_str);
    let reason = error
        .and_then(|e| e.pointer("/data/reason"))
        .and_then(J::as_str);
    reason.is_some_and(|why| Reason::from_code(why).is_some())
        || Reason::ALL.iter().any(|r| {
            reply.status == r.status()
                && code == Some(i64::from(r.code()))
                && message == Some(r.message())
        })
}

/// The note for a batch that toolctx passed on and the server then refused
/// itself: its own 4xx, none of the contract's refusals, and the probe's
/// count showing that nothing ran. `None` (the case fails) otherwise, and
/// always when runs are not counted: then nothing shows that nothing ran.
fn own_batch_refusal(case: &cases::Case, reply: &Reply, ran: Option<i64>) -> Option<String> {
    let own = case.is_passed_batch()
        && (400..500).contains(&reply.status)
        && !is_contract_refusal(reply)
        && ran == Some(0);
    own.then(|| {
        format!(
            "{}: the server refused the batch itself ({}, not a toolctx refusal), nothing ran",
            case.name, reply.status
        )
    })
}

/// The probe's run count after one more (valid) run of it.
fn probe_count(client: &Client, env: &Env) -> Option<i64> {
    let mut c = env.claims(unix_now());
    c.tool = Some(PROBE_TOOL.into());
    let t = env.token(&c, 0);
    let mut headers = Vec::new();
    headers.extend(env.credential.clone());
    headers.push(("mcp-method".into(), "tools/call".into()));
    headers.push(("mcp-name".into(), PROBE_TOOL.into()));
    headers.push((TOKEN_HEADER.into(), t));
    let body = call_body(&c, &J::from("probe"), PROBE_TOOL, &json!({}), &[]);
    let reply = client.post(&headers, body.into_bytes(), &mut |_| {}).ok()?;
    let result = reply.response()?.get("result")?;
    let runs = result
        .pointer("/structuredContent/runs")
        .and_then(J::as_i64);
    runs.or_else(|| {
        let text = result.pointer("/content/0/text")?.as_str()?;
        serde_json::from_str::<J>(text).ok()?.get("runs")?.as_i64()
    })
}

struct Row {
    class: String,
    name: &'static str,
    expect: String,
    got: String,
    ran: Option<i64>,
    ran_ok: bool,
    want_runs: i64,
    ok: bool,
    /// Why a case passed although its reply was not the expected one.
    note: Option<String>,
}

pub fn run(args: &ConformanceArgs) -> Outcome {
    let style = Style::stdout();
    let instance = args
        .instance_id
        .clone()
        .ok_or_else(|| usage("no instance id: pass --instance-id or set TOOLCTX_INSTANCE_ID"))?;
    let secrets = args.secrets.load()?;
    let headers = args
        .headers
        .iter()
        .map(|h| parse_header(h))
        .collect::<Result<Vec<_>, _>>()?;
    let credential = args.credential.load()?;
    let arguments: J =
        serde_json::from_str(&args.args).map_err(|e| usage(format!("--args: {e}")))?;
    if !arguments.is_object() {
        return Err(usage("--args must be a JSON object"));
    }
    let mut client = Client::new(&args.url, Duration::from_secs(args.timeout), headers)?;
    let cred: Vec<(String, String)> = credential.iter().cloned().collect();
    if !args.no_initialize {
        client.must_initialize(&cred)?;
    }
    let tools = client.tool_names(&cred)?;
    let has_probe = tools.iter().any(|t| t == PROBE_TOOL);
    let tool = match (&args.tool, has_probe) {
        (Some(t), _) => t.clone(),
        (None, true) => PROBE_TOOL.to_string(),
        (None, false) => {
            client.close();
            return Err(usage(format!(
                "{} lists no `{PROBE_TOOL}` tool: pass --tool NAME (and --args JSON) for the valid calls \
                 (without the probe the suite cannot tell whether a refused call ran)",
                args.url
            )));
        }
    };
    let env = Env {
        instance,
        secrets,
        tool: tool.clone(),
        arguments: if tool == PROBE_TOOL && args.tool.is_none() {
            json!({})
        } else {
            arguments
        },
        credential,
        max_body: args.max_body_bytes,
        max_token: args.max_token_bytes,
    };
    // The count proves something only when the cases call the probe itself.
    let counting = has_probe && tool == PROBE_TOOL;
    let mut last = if counting {
        probe_count(&client, &env)
    } else {
        None
    };
    let probe_note = match (has_probe, counting, last) {
        (true, true, Some(_)) => format!("{PROBE_TOOL} counts runs"),
        (true, true, None) => {
            format!("{PROBE_TOOL} listed but a valid call to it failed: runs not counted")
        }
        (true, false, _) => format!("--tool {tool} is not {PROBE_TOOL}: runs not counted"),
        (false, _, _) => format!("no {PROBE_TOOL}: runs not counted"),
    };
    if !args.json {
        println!(
            "conformance  {}  (tool {}, {} secret{}{}, {probe_note})",
            client.url(),
            tool,
            env.secrets.len(),
            if env.secrets.len() == 1 { "" } else { "s" },
            if env.credential.is_some() {
                ", static credential"
            } else {
                ""
            }
        );
    }

    let mut rows = Vec::new();
    let runs_here = |c: &&cases::Case| match c.needs {
        Needs::Nothing => true,
        Needs::Credential => env.credential.is_some(),
        Needs::TwoSecrets => env.secrets.len() >= 2,
    };
    for (n, c) in CASES.iter().filter(runs_here).enumerate() {
        let id = J::from(n as u64 + 1);
        let req = c.build(&env, id, unix_now());
        let reply = client.post(&req.headers, req.body, &mut |_| {});
        let (ok, got) = match &reply {
            Ok(reply) => judge(c.expect, reply, &req.id),
            Err(e) => (false, format!("no answer: {}", clip(&e.to_string(), 60))),
        };
        let now_count = if last.is_some() {
            probe_count(&client, &env)
        } else {
            None
        };
        let ran = match (last, now_count) {
            (Some(a), Some(b)) => Some(b - a - 1),
            _ => None,
        };
        if now_count.is_some() {
            last = now_count;
        }
        let ran_ok = ran.is_none_or(|r| r == c.expect.runs());
        let note = match &reply {
            Ok(reply) if !ok => own_batch_refusal(c, reply, ran),
            _ => None,
        };
        rows.push(Row {
            class: c.class(),
            name: c.name,
            expect: c.expect.describe(),
            got,
            ran,
            ran_ok,
            want_runs: c.expect.runs(),
            ok: (ok || note.is_some()) && ran_ok,
            note,
        });
    }
    client.close();
    let passed = rows.iter().filter(|r| r.ok).count();
    let failed = rows.len() - passed;

    if args.json {
        let out = json!({
            "url": args.url,
            "tool": tool,
            "probe": has_probe,
            "cases": rows.iter().map(|r| json!({
                "class": r.class,
                "case": r.name,
                "ok": r.ok,
                "expected": r.expect,
                "got": r.got,
                "ran": r.ran,
                "note": r.note,
            })).collect::<Vec<_>>(),
            "passed": passed,
            "failed": failed,
        });
        println!("{out}");
    } else {
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                let ran = match r.ran {
                    None => "-".to_string(),
                    Some(n) if r.ran_ok => n.to_string(),
                    Some(n) => format!("{n} (must be {})", r.want_runs),
                };
                vec![
                    match (r.ok, &r.note) {
                        (true, None) => "ok".into(),
                        (true, Some(_)) => "ok*".into(),
                        (false, _) => "FAIL".into(),
                    },
                    r.class.clone(),
                    r.name.to_string(),
                    r.expect.clone(),
                    r.got.clone(),
                    ran,
                ]
            })
            .collect();
        let paint = |row: usize, col: usize, s: String| -> String {
            let ok = rows.get(row).is_some_and(|r| r.ok);
            match col {
                0 if ok => style.good(&s),
                0 => style.bad(&s),
                4 | 5 if !ok => style.warn(&s),
                _ => s,
            }
        };
        print!(
            "{}",
            table(
                &["", "class", "case", "expected", "got", "ran"],
                &cells,
                &paint
            )
        );
        for note in rows.iter().filter_map(|r| r.note.as_ref()) {
            println!("* {note}");
        }
        println!("{passed} passed, {failed} failed");
    }
    Ok(if failed == 0 { EXIT_OK } else { EXIT_NEGATIVE })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: u16, body: &str) -> Reply {
        let parsed: Option<J> = serde_json::from_str(body).ok();
        Reply {
            status,
            content_type: "application/json".into(),
            messages: parsed.into_iter().collect(),
            text: body.into(),
            session_id: None,
        }
    }

    fn batch_case() -> &'static cases::Case {
        CASES
            .iter()
            .find(|c| c.is_passed_batch())
            .unwrap_or_else(|| unreachable!("the batch case is in the table"))
    }

    #[test]
    fn an_sdks_own_batch_refusal_passes_when_nothing_ran() {
        let c = batch_case();
        // go-sdk's and java-sdk's 400, rmcp's 415, the Python SDK's error.
        for r in [
            reply(400, "batch requests are not supported"),
            reply(415, ""),
            reply(
                400,
                r#"{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Batch requests are not supported"}}"#,
            ),
        ] {
            let note = own_batch_refusal(c, &r, Some(0));
            assert!(
                note.as_deref()
                    .is_some_and(|n| n.contains("refused the batch itself")),
                "{note:?}"
            );
        }
    }

    #[test]
    fn a_batch_refusal_fails_unless_it_shows_nothing_ran_and_is_not_toolctxs() {
        let c = batch_case();
        let own = reply(400, "batch requests are not supported");
        // Runs not counted, or a run: nothing shows that nothing ran.
        assert_eq!(own_batch_refusal(c, &own, None), None);
        assert_eq!(own_batch_refusal(c, &own, Some(1)), None);
        // Not a refusal: a 5xx.
        assert_eq!(own_batch_refusal(c, &reply(500, ""), Some(0)), None);
        // toolctx's own refusal, with its reason and without it.
        let r = Reason::BatchWithToolsCall;
        let with_reason = format!(
            r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":{},"message":"{}","data":{{"reason":"{}"}}}}}}"#,
            r.code(),
            r.message(),
            r.as_str()
        );
        let without = format!(
            r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":{},"message":"{}"}}}}"#,
            r.code(),
            r.message()
        );
        for body in [with_reason, without] {
            assert_eq!(
                own_batch_refusal(c, &reply(r.status(), &body), Some(0)),
                None
            );
        }
        // Any other case: never.
        let other = CASES
            .iter()
            .find(|c| c.name == "tools/list without a token")
            .unwrap_or_else(|| unreachable!("the case is in the table"));
        assert_eq!(own_batch_refusal(other, &own, Some(0)), None);
    }
}
