//! The suite's cases as data: each is a valid call and the edits that make
//! it the case, in one table ([`CASES`]). A refusal's class is its HTTP
//! status and its expected status, code and `id` come from the core.

use serde_json::{json, Map, Value as J};
use toolctx_core::{Reason, TokenClaims, TOKEN_HEADER};

use super::{Env, Expect, Req};
use crate::common::{core_value, random_hex};
use crate::mint::call_body;

const JWT_HEADER: &str = r#"{"alg":"HS256","typ":"JWT"}"#;

/// Which servers a case is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    Nothing,
    /// `--credential`: the server requires a static credential.
    Credential,
    /// Two `--secret`s: rotation.
    TwoSecrets,
}

/// A value written into the token's payload.
#[derive(Debug, Clone, Copy)]
pub enum Value {
    Str(&'static str),
    /// Now plus this many seconds.
    Now(i64),
    /// `exp` as a JSON string instead of a number.
    ExpAsString,
}

/// One edit of the valid call. Edits are applied in phases, whatever their
/// order: the claims, the token, the body, then the headers and the body
/// text.
#[derive(Debug, Clone, Copy)]
pub enum Edit {
    // The claims, before the token is minted.
    AgentId(&'static str),
    EndUserId(&'static str),
    /// The `metadata` claim, as JSON text.
    Metadata(&'static str),
    /// A `metadata` claim padded to `--max-token-bytes`.
    MetadataOverMaxToken,
    NoToolClaim,
    ToolClaim(&'static str),
    Protocol(&'static str),
    /// `aud`: a random other instance.
    OtherInstance,
    /// `iat` this many seconds from now.
    Iat(i64),
    // The token.
    SecondSecret,
    /// Signed with a random secret the server does not know.
    UnknownSecret,
    /// This text instead of a token.
    TokenText(&'static str),
    /// The core's payload signed under this JWS header.
    JwsHeader(&'static str),
    /// The core's payload with this member set, signed with secret 0.
    Payload(&'static str, Value),
    // The body.
    /// The request id, a string.
    StringId(&'static str),
    /// A `_meta` member set to a string.
    MetaSet(&'static str, &'static str),
    MetaRemove(&'static str),
    /// `params._meta` as this JSON text.
    MetaText(&'static str),
    /// `{"deep": ...}` arguments nested this deep.
    DeepArguments(usize),
    /// Arguments padded until the body is one byte over `--max-body-bytes`.
    BodyOverMaxBody,
    /// A `tools/list` request (in a batch when `true`) with only the
    /// credential header.
    ToolsList {
        batch: bool,
    },
    // The headers and the body text, last.
    DropCredential,
    WrongCredential,
    DropToken,
    TokenTwice,
    McpName(&'static str),
    /// The first half of the body.
    Truncate,
    /// The first `from` in the body replaced by `to`.
    Replace(&'static str, &'static str),
    /// The body inside a JSON array.
    Batch,
}

/// One case of the suite.
pub struct Case {
    /// The table's class column; `None` is the refusal's HTTP status.
    class: Option<&'static str>,
    pub name: &'static str,
    pub expect: Expect,
    pub needs: Needs,
    edits: &'static [Edit],
}

impl Case {
    /// Whether the request is a JSON-RPC batch that toolctx passes on:
    /// several SDKs (go-sdk, java-sdk, the Python SDK, rmcp) answer any
    /// batch with an error of their own, after toolctx let it through.
    pub fn is_passed_batch(&self) -> bool {
        self.edits
            .iter()
            .any(|e| matches!(e, E::ToolsList { batch: true }))
    }

    pub fn class(&self) -> String {
        match (self.class, self.expect) {
            (Some(c), _) => c.to_string(),
            (None, Expect::Reject(r)) => r.status().to_string(),
            (None, _) => String::new(),
        }
    }
}

const fn case(
    class: &'static str,
    name: &'static str,
    expect: Expect,
    edits: &'static [Edit],
) -> Case {
    Case {
        class: Some(class),
        name,
        expect,
        needs: Needs::Nothing,
        edits,
    }
}

/// A refusal whose class is its status.
const fn refused(name: &'static str, reason: Reason, edits: &'static [Edit]) -> Case {
    Case {
        class: None,
        name,
        expect: Expect::Reject(reason),
        needs: Needs::Nothing,
        edits,
    }
}

const fn needs(needs: Needs, c: Case) -> Case {
    Case { needs, ..c }
}

use Edit as E;
use Expect::{Accept, Pass};
use Reason as R;

/// Every case, in the order they run.
#[rustfmt::skip]
pub const CASES: &[Case] = &[
    case("valid", "valid token", Accept, &[]),
    case("valid", "every optional claim", Accept, &[
        E::AgentId("agent-conformance"),
        E::EndUserId("user-42"),
        E::Metadata(r#"{"source":"toolctx conformance","n":1}"#),
    ]),
    case("valid", "no tool claim", Accept, &[E::NoToolClaim]),
    needs(Needs::TwoSecrets, case("rotation", "signed with the second secret", Accept, &[E::SecondSecret])),
    case("pass", "tools/list without a token", Pass, &[E::ToolsList { batch: false }]),
    case("pass", "batch without tools/call", Pass, &[E::ToolsList { batch: true }]),
    needs(Needs::Credential, refused("credential missing", R::CredentialMissing, &[E::DropCredential])),
    needs(Needs::Credential, refused("credential wrong", R::CredentialInvalid, &[E::WrongCredential])),
    refused("no token (string id)", R::TokenMissing, &[E::StringId("conformance-string-id"), E::DropToken]),
    refused("token sent twice", R::TokenDuplicated, &[E::TokenTwice]),
    refused("token over max_token_bytes", R::TokenTooLarge, &[E::MetadataOverMaxToken]),
    refused("not a JWS", R::TokenMalformed, &[E::TokenText("not-a-token")]),
    refused("alg none", R::AlgNotAllowed, &[E::JwsHeader(r#"{"alg":"none","typ":"JWT"}"#)]),
    refused("crit header", R::CritNotSupported, &[E::JwsHeader(r#"{"alg":"HS256","typ":"JWT","crit":["exp"]}"#)]),
    refused("signed with an unknown secret", R::SignatureInvalid, &[E::UnknownSecret]),
    refused("another issuer", R::IssuerInvalid, &[E::Payload("iss", Value::Str("not-agentarea"))]),
    refused("another instance", R::AudienceInvalid, &[E::OtherInstance]),
    refused("exp is a string", R::ClaimInvalid, &[E::Payload("exp", Value::ExpAsString)]),
    refused("expired (iat 400 s ago)", R::TokenExpired, &[E::Iat(-400)]),
    refused("issued 5 min in the future", R::TokenIssuedInFuture, &[E::Iat(300)]),
    refused("issued 700 s ago, not expired", R::TokenTooOld, &[
        E::Payload("iat", Value::Now(-700)),
        E::Payload("exp", Value::Now(300)),
    ]),
    refused("nbf 5 min ahead", R::TokenNotYetValid, &[E::Payload("nbf", Value::Now(300))]),
    refused("token for another tool", R::ToolMismatch, &[E::ToolClaim("another_tool")]),
    refused("protocol major 99", R::ProtocolUnsupported, &[E::Protocol("99")]),
    refused("_meta task_id differs", R::MetaMismatch, &[E::MetaSet("agentarea/task_id", "another-task")]),
    refused("_meta lacks workspace_id", R::MetaMissing, &[E::MetaRemove("agentarea/workspace_id")]),
    refused("_meta key the token lacks", R::ClaimMissing, &[E::MetaSet("agentarea/role", "admin")]),
    refused("truncated JSON", R::ParseError, &[E::Truncate]),
    refused("duplicate \"method\" (smuggling)", R::DuplicateMember, &[
        E::Replace(r#""method":"tools/call""#, r#""method":"tools/list","method":"tools/call""#),
    ]),
    refused("arguments nested 70 deep", R::TooDeep, &[E::DeepArguments(70)]),
    refused("_meta is an array", R::InvalidParams, &[E::MetaText("[]")]),
    refused("Mcp-Name names another tool", R::HeaderMismatch, &[E::McpName("another_tool")]),
    refused("idempotency_key not task:call", R::ContextMalformed, &[
        E::Payload("idempotency_key", Value::Str("not-the-composition")),
        E::MetaSet("agentarea/idempotency_key", "not-the-composition"),
    ]),
    case("batch", "batch with a tools/call", Expect::Reject(R::BatchWithToolsCall), &[E::Batch]),
    refused("body over max_body_bytes", R::BodyTooLarge, &[E::BodyOverMaxBody]),
];

/// `now` moved by `by` seconds.
fn at(now: u64, by: i64) -> u64 {
    now.saturating_add_signed(by)
}

impl Case {
    /// The request this case sends, with `id` unless it names its own.
    pub fn build(&self, env: &Env, id: J, now: u64) -> Req {
        let mut id = id;
        for e in self.edits {
            if let E::StringId(s) = e {
                id = J::from(*s);
            }
        }
        if let Some(E::ToolsList { batch }) =
            self.edits.iter().find(|e| matches!(e, E::ToolsList { .. }))
        {
            let list = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}});
            let body = if *batch { json!([list]) } else { list };
            return Req {
                headers: env.credential.iter().cloned().collect(),
                body: body.to_string().into_bytes(),
                id,
            };
        }
        let mut c = env.claims(now);
        let token = self.token(env, &mut c, now);
        let mut headers = env.headers(&[&token]);
        let mut body = self.body(env, &c, &id);
        for e in self.edits {
            match e {
                E::DropCredential => {
                    if let Some((name, _)) = &env.credential {
                        headers.retain(|(n, _)| n != name);
                    }
                }
                E::WrongCredential => {
                    if let Some((name, _)) = &env.credential {
                        for (_, v) in headers.iter_mut().filter(|(n, _)| n == name) {
                            v.push_str("-wrong");
                        }
                    }
                }
                E::DropToken => headers.retain(|(n, _)| n != TOKEN_HEADER),
                E::TokenTwice => {
                    let again = headers.iter().find(|(n, _)| n == TOKEN_HEADER).cloned();
                    headers.extend(again);
                }
                E::McpName(name) => {
                    for (_, v) in headers.iter_mut().filter(|(n, _)| n == "mcp-name") {
                        *v = (*name).to_string();
                    }
                }
                E::Truncate => body = body.chars().take(body.len() / 2).collect(),
                E::Replace(from, to) => body = body.replacen(from, to, 1),
                E::Batch => body = format!("[{body}]"),
                _ => {}
            }
        }
        Req {
            headers,
            body: body.into_bytes(),
            id,
        }
    }

    /// The claims edited, then the token made of them.
    fn token(&self, env: &Env, c: &mut TokenClaims, now: u64) -> String {
        for e in self.edits {
            match e {
                E::AgentId(s) => c.context.agent_id = Some((*s).into()),
                E::EndUserId(s) => c.context.end_user_id = Some((*s).into()),
                E::Metadata(text) => {
                    c.context.metadata = serde_json::from_str::<J>(text)
                        .ok()
                        .and_then(|v| core_value(&v).ok());
                }
                E::MetadataOverMaxToken => {
                    c.context.metadata =
                        core_value(&json!({ "pad": "x".repeat(env.max_token) })).ok();
                }
                E::NoToolClaim => c.tool = None,
                E::ToolClaim(t) => c.tool = Some((*t).into()),
                E::Protocol(p) => c.context.protocol = (*p).into(),
                E::OtherInstance => c.instance_id = format!("other-{}", random_hex(4)),
                E::Iat(by) => c.iat = at(now, *by),
                _ => {}
            }
        }
        let mut header = None;
        let mut payload: Vec<(&str, Value)> = Vec::new();
        for e in self.edits {
            match e {
                E::SecondSecret => return env.token(c, 1),
                E::UnknownSecret => {
                    return c
                        .mint(format!("unknown-{}", random_hex(24)).as_bytes())
                        .unwrap_or_default()
                }
                E::TokenText(t) => return (*t).to_string(),
                E::JwsHeader(h) => header = Some(*h),
                E::Payload(name, v) => payload.push((name, *v)),
                _ => {}
            }
        }
        if header.is_none() && payload.is_empty() {
            return env.token(c, 0);
        }
        env.edited_token(c, header.unwrap_or(JWT_HEADER), |p| {
            for (name, v) in payload {
                let value = match v {
                    Value::Str(s) => J::from(s),
                    Value::Now(by) => J::from(at(now, by)),
                    Value::ExpAsString => {
                        J::from(p.get("exp").map(J::to_string).unwrap_or_default())
                    }
                };
                p.insert(name.into(), value);
            }
        })
    }

    /// The `tools/call` body: the core's (`call_body`) unless the case
    /// edits `_meta` or the arguments, which are then written around them.
    fn body(&self, env: &Env, c: &TokenClaims, id: &J) -> String {
        let mut meta: Option<Map<String, J>> = None;
        let mut meta_text = None;
        let mut arguments = None;
        for e in self.edits {
            match e {
                E::MetaSet(k, v) => {
                    meta.get_or_insert_with(|| env.meta(c))
                        .insert((*k).into(), J::from(*v));
                }
                E::MetaRemove(k) => {
                    meta.get_or_insert_with(|| env.meta(c)).remove(*k);
                }
                E::MetaText(t) => meta_text = Some((*t).to_string()),
                E::DeepArguments(n) => {
                    arguments = Some(format!("{{\"deep\":{}{}}}", "[".repeat(*n), "]".repeat(*n)))
                }
                E::BodyOverMaxBody => {
                    let empty = env.body(id, r#"{"pad":""}"#, &env.meta(c)).len();
                    let pad = "x".repeat((env.max_body + 1).saturating_sub(empty));
                    arguments = Some(format!(r#"{{"pad":"{pad}"}}"#));
                }
                _ => {}
            }
        }
        if meta.is_none() && meta_text.is_none() && arguments.is_none() {
            return call_body(c, id, &env.tool, &env.arguments, &[]);
        }
        let arguments = arguments.unwrap_or_else(|| env.arguments.to_string());
        match meta_text {
            Some(text) => env.body_text(id, &arguments, &text),
            None => env.body(id, &arguments, &meta.unwrap_or_else(|| env.meta(c))),
        }
    }
}

/// The suite's id for a refusal: `null` where the core answers `null`
/// (the body was not read or cannot be trusted), else the request's own.
pub fn expected_id(reason: Reason, id: &J) -> J {
    if reason.answers_null_id() {
        J::Null
    } else {
        id.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case named once, 35 in all (32 without a credential or a second secret).
    #[test]
    fn names_are_unique() {
        for (i, c) in CASES.iter().enumerate() {
            assert!(
                CASES.iter().skip(i + 1).all(|o| o.name != c.name),
                "{}",
                c.name
            );
        }
        assert_eq!(CASES.len(), 35);
    }

    #[test]
    fn only_the_batch_without_tools_call_is_a_passed_batch() {
        let batches: Vec<&str> = CASES
            .iter()
            .filter(|c| c.is_passed_batch())
            .map(|c| c.name)
            .collect();
        assert_eq!(batches, ["batch without tools/call"]);
    }

    #[test]
    fn refusal_classes_are_the_core_statuses() {
        let c = CASES.iter().find(|c| c.name == "expired (iat 400 s ago)");
        assert_eq!(c.map(Case::class).as_deref(), Some("401"));
        let c = CASES.iter().find(|c| c.name == "batch with a tools/call");
        assert_eq!(c.map(Case::class).as_deref(), Some("batch"));
    }
}
