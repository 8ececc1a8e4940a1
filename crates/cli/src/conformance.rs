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

use std::time::Duration;

use clap::Args;
use serde_json::{json, Map, Value as J};
use toolctx_core::{ContextClaims, Reason, TokenClaims, TOKEN_HEADER};

use crate::common::{
    core_value, parse_core_json, parse_header, random_hex, unix_now, usage, uuid_v4,
    CredentialArgs, Outcome, Secret, SecretArgs, EXIT_NEGATIVE, EXIT_OK,
};
use crate::http::{clip, mcp_name_header, Client, Reply};
use crate::jws;
use crate::mint::call_body;
use crate::output::{table, Style};

/// The probe tool's name (see the module documentation).
pub const PROBE_TOOL: &str = "toolctx_probe";
const JWT_HEADER: &str = r#"{"alg":"HS256","typ":"JWT"}"#;

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

/// What a case must get back.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// A verified call: 200 with a result; the tool ran once.
    Accept,
    /// Not the contract's business: a 2xx from the server; nothing ran.
    Pass,
    /// The contract's refusal (status, code and reason from the core's
    /// table); `id` null or the request's own; nothing ran.
    Reject(Reason),
}

/// Refusals before the body can be trusted answer with `id: null`.
fn id_null(r: Reason) -> bool {
    matches!(
        r,
        Reason::CredentialMissing
            | Reason::CredentialInvalid
            | Reason::BodyTooLarge
            | Reason::ParseError
            | Reason::DuplicateMember
            | Reason::TooDeep
            | Reason::BatchWithToolsCall
    )
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
struct Req {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    id: J,
}

/// What every case is built from.
struct Env {
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

    /// A valid call but for what `tweak` changes in the claims and `token`
    /// makes of them.
    fn call(
        &self,
        id: J,
        now: u64,
        tweak: impl FnOnce(&mut TokenClaims),
        token: impl FnOnce(&Env, &TokenClaims) -> String,
    ) -> Req {
        let mut c = self.claims(now);
        tweak(&mut c);
        let t = token(self, &c);
        Req {
            headers: self.headers(&[&t]),
            body: call_body(&c, &id, &self.tool, &self.arguments, &[]).into_bytes(),
            id,
        }
    }

    fn valid(&self, id: J, now: u64) -> Req {
        self.call(id, now, |_| {}, |e, c| e.token(c, 0))
    }

    /// A valid token with the `_meta` that `edit` makes.
    fn with_meta(&self, id: J, now: u64, edit: impl FnOnce(&mut Map<String, J>)) -> Req {
        let c = self.claims(now);
        let t = self.token(&c, 0);
        let mut meta = self.meta(&c);
        edit(&mut meta);
        Req {
            headers: self.headers(&[&t]),
            body: self
                .body(&id, &self.arguments.to_string(), &meta)
                .into_bytes(),
            id,
        }
    }

    /// A valid token with a body that `make` writes from the valid body.
    fn with_body(&self, id: J, now: u64, make: impl FnOnce(String) -> String) -> Req {
        let mut r = self.valid(id, now);
        r.body = make(String::from_utf8_lossy(&r.body).into_owned()).into_bytes();
        r
    }
}

type Build = Box<dyn Fn(&Env, J, u64) -> Req>;

struct Case {
    class: &'static str,
    name: &'static str,
    expect: Expect,
    build: Build,
}

fn case(
    class: &'static str,
    name: &'static str,
    expect: Expect,
    build: impl Fn(&Env, J, u64) -> Req + 'static,
) -> Case {
    Case {
        class,
        name,
        expect,
        build: Box::new(build),
    }
}

fn cases(env: &Env) -> Vec<Case> {
    use Expect::{Accept, Pass, Reject};
    use Reason as R;
    let mut out = vec![
        case("valid", "valid token", Accept, |e, id, now| {
            e.valid(id, now)
        }),
        case("valid", "every optional claim", Accept, |e, id, now| {
            e.call(
                id,
                now,
                |c| {
                    c.context.agent_id = Some("agent-conformance".into());
                    c.context.end_user_id = Some("user-42".into());
                    c.context.metadata =
                        core_value(&json!({"source": "toolctx conformance", "n": 1})).ok();
                },
                |e, c| e.token(c, 0),
            )
        }),
        case("valid", "no tool claim", Accept, |e, id, now| {
            e.call(id, now, |c| c.tool = None, |e, c| e.token(c, 0))
        }),
    ];
    if env.secrets.len() >= 2 {
        out.push(case(
            "rotation",
            "signed with the second secret",
            Accept,
            |e, id, now| e.call(id, now, |_| {}, |e, c| e.token(c, 1)),
        ));
    }
    out.push(case(
        "pass",
        "tools/list without a token",
        Pass,
        |e, id, _| {
            let mut headers = Vec::new();
            headers.extend(e.credential.clone());
            let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}});
            Req {
                headers,
                body: body.to_string().into_bytes(),
                id,
            }
        },
    ));
    out.push(case(
        "pass",
        "batch without tools/call",
        Pass,
        |e, id, _| {
            let mut headers = Vec::new();
            headers.extend(e.credential.clone());
            let body = json!([{"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}}]);
            Req {
                headers,
                body: body.to_string().into_bytes(),
                id,
            }
        },
    ));
    if env.credential.is_some() {
        out.push(case(
            "401",
            "credential missing",
            Reject(R::CredentialMissing),
            |e, id, now| {
                let mut r = e.valid(id, now);
                if let Some((name, _)) = &e.credential {
                    r.headers.retain(|(n, _)| n != name);
                }
                r
            },
        ));
        out.push(case(
            "401",
            "credential wrong",
            Reject(R::CredentialInvalid),
            |e, id, now| {
                let mut r = e.valid(id, now);
                if let Some((name, _)) = &e.credential {
                    for (n, v) in r.headers.iter_mut() {
                        if n == name {
                            v.push_str("-wrong");
                        }
                    }
                }
                r
            },
        ));
    }
    out.extend([
        case(
            "401",
            "no token (string id)",
            Reject(R::TokenMissing),
            |e, _, now| {
                let id = J::from("conformance-string-id");
                let mut r = e.valid(id.clone(), now);
                r.headers.retain(|(n, _)| n != TOKEN_HEADER);
                r
            },
        ),
        case(
            "401",
            "token sent twice",
            Reject(R::TokenDuplicated),
            |e, id, now| {
                let mut r = e.valid(id, now);
                let again = r.headers.iter().find(|(n, _)| n == TOKEN_HEADER).cloned();
                r.headers.extend(again);
                r
            },
        ),
        case(
            "401",
            "token over max_token_bytes",
            Reject(R::TokenTooLarge),
            |e, id, now| {
                let pad = "x".repeat(e.max_token);
                e.call(
                    id,
                    now,
                    |c| c.context.metadata = core_value(&json!({ "pad": pad })).ok(),
                    |e, c| e.token(c, 0),
                )
            },
        ),
        case(
            "401",
            "not a JWS",
            Reject(R::TokenMalformed),
            |e, id, now| e.call(id, now, |_| {}, |_, _| "not-a-token".into()),
        ),
        case("401", "alg none", Reject(R::AlgNotAllowed), |e, id, now| {
            e.call(
                id,
                now,
                |_| {},
                |e, c| e.edited_token(c, r#"{"alg":"none","typ":"JWT"}"#, |_| {}),
            )
        }),
        case(
            "401",
            "crit header",
            Reject(R::CritNotSupported),
            |e, id, now| {
                e.call(
                    id,
                    now,
                    |_| {},
                    |e, c| {
                        e.edited_token(c, r#"{"alg":"HS256","typ":"JWT","crit":["exp"]}"#, |_| {})
                    },
                )
            },
        ),
        case(
            "401",
            "signed with an unknown secret",
            Reject(R::SignatureInvalid),
            |e, id, now| {
                e.call(
                    id,
                    now,
                    |_| {},
                    |_, c| {
                        c.mint(format!("unknown-{}", random_hex(24)).as_bytes())
                            .unwrap_or_default()
                    },
                )
            },
        ),
        case(
            "401",
            "another issuer",
            Reject(R::IssuerInvalid),
            |e, id, now| {
                e.call(
                    id,
                    now,
                    |_| {},
                    |e, c| {
                        e.edited_token(c, JWT_HEADER, |p| {
                            p.insert("iss".into(), J::from("not-agentarea"));
                        })
                    },
                )
            },
        ),
        case(
            "401",
            "another instance",
            Reject(R::AudienceInvalid),
            |e, id, now| {
                e.call(
                    id,
                    now,
                    |c| c.instance_id = format!("other-{}", random_hex(4)),
                    |e, c| e.token(c, 0),
                )
            },
        ),
        case(
            "401",
            "exp is a string",
            Reject(R::ClaimInvalid),
            |e, id, now| {
                e.call(
                    id,
                    now,
                    |_| {},
                    |e, c| {
                        e.edited_token(c, JWT_HEADER, |p| {
                            let exp = p.get("exp").map(J::to_string).unwrap_or_default();
                            p.insert("exp".into(), J::from(exp));
                        })
                    },
                )
            },
        ),
        case(
            "401",
            "expired (iat 400 s ago)",
            Reject(R::TokenExpired),
            |e, id, now| {
                e.call(
                    id,
                    now,
                    |c| c.iat = now.saturating_sub(400),
                    |e, c| e.token(c, 0),
                )
            },
        ),
        case(
            "401",
            "issued 5 min in the future",
            Reject(R::TokenIssuedInFuture),
            |e, id, now| e.call(id, now, |c| c.iat = now + 300, |e, c| e.token(c, 0)),
        ),
        case(
            "401",
            "issued 700 s ago, not expired",
            Reject(R::TokenTooOld),
            |e, id, now| {
                e.call(
                    id,
                    now,
                    |_| {},
                    |e, c| {
                        e.edited_token(c, JWT_HEADER, |p| {
                            p.insert("iat".into(), J::from(now.saturating_sub(700)));
                            p.insert("exp".into(), J::from(now + 300));
                        })
                    },
                )
            },
        ),
        case(
            "401",
            "nbf 5 min ahead",
            Reject(R::TokenNotYetValid),
            |e, id, now| {
                e.call(
                    id,
                    now,
                    |_| {},
                    |e, c| {
                        e.edited_token(c, JWT_HEADER, |p| {
                            p.insert("nbf".into(), J::from(now + 300));
                        })
                    },
                )
            },
        ),
        case(
            "403",
            "token for another tool",
            Reject(R::ToolMismatch),
            |e, id, now| {
                e.call(
                    id,
                    now,
                    |c| c.tool = Some("another_tool".into()),
                    |e, c| e.token(c, 0),
                )
            },
        ),
        case(
            "403",
            "protocol major 99",
            Reject(R::ProtocolUnsupported),
            |e, id, now| {
                e.call(
                    id,
                    now,
                    |c| c.context.protocol = "99".into(),
                    |e, c| e.token(c, 0),
                )
            },
        ),
        case(
            "403",
            "_meta task_id differs",
            Reject(R::MetaMismatch),
            |e, id, now| {
                e.with_meta(id, now, |m| {
                    m.insert("agentarea/task_id".into(), J::from("another-task"));
                })
            },
        ),
        case(
            "403",
            "_meta lacks workspace_id",
            Reject(R::MetaMissing),
            |e, id, now| {
                e.with_meta(id, now, |m| {
                    m.remove("agentarea/workspace_id");
                })
            },
        ),
        case(
            "403",
            "_meta key the token lacks",
            Reject(R::ClaimMissing),
            |e, id, now| {
                e.with_meta(id, now, |m| {
                    m.insert("agentarea/role".into(), J::from("admin"));
                })
            },
        ),
        case(
            "400",
            "truncated JSON",
            Reject(R::ParseError),
            |e, id, now| e.with_body(id, now, |b| b.chars().take(b.len() / 2).collect()),
        ),
        case(
            "400",
            "duplicate \"method\" (smuggling)",
            Reject(R::DuplicateMember),
            |e, id, now| {
                e.with_body(id, now, |b| {
                    b.replacen(
                        r#""method":"tools/call""#,
                        r#""method":"tools/list","method":"tools/call""#,
                        1,
                    )
                })
            },
        ),
        case(
            "400",
            "arguments nested 70 deep",
            Reject(R::TooDeep),
            |e, id, now| {
                let c = e.claims(now);
                let t = e.token(&c, 0);
                let deep = format!("{{\"deep\":{}{}}}", "[".repeat(70), "]".repeat(70));
                Req {
                    headers: e.headers(&[&t]),
                    body: e.body(&id, &deep, &e.meta(&c)).into_bytes(),
                    id,
                }
            },
        ),
        case(
            "400",
            "_meta is an array",
            Reject(R::InvalidParams),
            |e, id, now| {
                let mut r = e.valid(id.clone(), now);
                r.body = e
                    .body_text(&id, &e.arguments.to_string(), "[]")
                    .into_bytes();
                r
            },
        ),
        case(
            "400",
            "Mcp-Name names another tool",
            Reject(R::HeaderMismatch),
            |e, id, now| {
                let mut r = e.valid(id, now);
                for (n, v) in r.headers.iter_mut() {
                    if n == "mcp-name" {
                        *v = "another_tool".into();
                    }
                }
                r
            },
        ),
        case(
            "400",
            "idempotency_key not task:call",
            Reject(R::ContextMalformed),
            |e, id, now| {
                let c = e.claims(now);
                let t = e.edited_token(&c, JWT_HEADER, |p| {
                    p.insert("idempotency_key".into(), J::from("not-the-composition"));
                });
                let mut meta = e.meta(&c);
                meta.insert(
                    "agentarea/idempotency_key".into(),
                    J::from("not-the-composition"),
                );
                Req {
                    headers: e.headers(&[&t]),
                    body: e.body(&id, &e.arguments.to_string(), &meta).into_bytes(),
                    id,
                }
            },
        ),
        case(
            "batch",
            "batch with a tools/call",
            Reject(R::BatchWithToolsCall),
            |e, id, now| e.with_body(id, now, |b| format!("[{b}]")),
        ),
        case(
            "413",
            "body over max_body_bytes",
            Reject(R::BodyTooLarge),
            |e, id, now| {
                let c = e.claims(now);
                let t = e.token(&c, 0);
                let meta = e.meta(&c);
                let empty = e.body(&id, r#"{"pad":""}"#, &meta).len();
                let pad = "x".repeat((e.max_body + 1).saturating_sub(empty));
                Req {
                    headers: e.headers(&[&t]),
                    body: e
                        .body(&id, &format!(r#"{{"pad":"{pad}"}}"#), &meta)
                        .into_bytes(),
                    id,
                }
            },
        ),
    ]);
    out
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
            let want_id = if id_null(r) { J::Null } else { id.clone() };
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
    class: &'static str,
    name: &'static str,
    expect: String,
    got: String,
    ran: Option<i64>,
    ran_ok: bool,
    want_runs: i64,
    ok: bool,
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
    for (n, c) in cases(&env).iter().enumerate() {
        let id = J::from(n as u64 + 1);
        let req = (c.build)(&env, id, unix_now());
        let (ok, got) = match client.post(&req.headers, req.body, &mut |_| {}) {
            Ok(reply) => judge(c.expect, &reply, &req.id),
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
        rows.push(Row {
            class: c.class,
            name: c.name,
            expect: c.expect.describe(),
            got,
            ran,
            ran_ok,
            want_runs: c.expect.runs(),
            ok: ok && ran_ok,
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
                    if r.ok { "ok".into() } else { "FAIL".into() },
                    r.class.to_string(),
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
        println!("{passed} passed, {failed} failed");
    }
    Ok(if failed == 0 { EXIT_OK } else { EXIT_NEGATIVE })
}
