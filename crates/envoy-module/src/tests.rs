//! The stream logic driven through a stand-in for Envoy (the real Envoy
//! runs in tests/envoy/*, with --module).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::borrow::Cow;
use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::filter::{BodyStatus, Filter, Headers, HeadersStatus, Stream};
use crate::module::{Level, Module};

const SECRET: &str = "0123456789abcdef0123456789abcdef-module";

#[derive(Default)]
struct Fake {
    headers: Vec<(String, String)>,
    /// The body as Envoy holds it, in chunks.
    chunks: Vec<Vec<u8>>,
    sent: Option<(u16, String)>,
    bumps: Vec<usize>,
    logs: RefCell<Vec<String>>,
    /// Envoy cannot give the body.
    body_fails: bool,
}

impl Stream for Fake {
    fn request_headers(&self) -> Option<Headers<'_>> {
        Some(
            self.headers
                .iter()
                .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
                .collect(),
        )
    }
    fn remove_request_header(&mut self, name: &str) -> bool {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        true
    }
    fn add_request_header(&mut self, name: &str, value: &str) -> bool {
        self.headers.push((name.into(), value.into()));
        true
    }
    fn body_size(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum()
    }
    fn request_body(&self, max: usize) -> Option<Cow<'_, [u8]>> {
        if self.body_fails {
            return None;
        }
        match self.chunks.as_slice() {
            [one] => Some(Cow::Borrowed(&one[..max.min(one.len())])),
            many => Some(Cow::Owned(many.concat().into_iter().take(max).collect())),
        }
    }
    fn send_response(&mut self, status: u16, body: &[u8]) {
        self.sent = Some((status, String::from_utf8(body.to_vec()).unwrap()));
    }
    fn bump(&mut self, counter: usize) {
        self.bumps.push(counter);
    }
    fn log(&self, _level: Level, message: &str) {
        self.logs.borrow_mut().push(message.into());
    }
}

/// Counter ids are their index in the order the module defines them:
/// 0 passed, 1 accepted, 2 errors, then one per reason.
fn module(extra: &str) -> Module {
    let text = format!(
        r#"{{"instance_id":"i","secret_env":["S"],"max_body_bytes":4096,
            "headers":{{"task_id":"x-task"}},"meta_headers":{{"sessionId":"x-session-id"}}{extra}}}"#
    );
    let mut next = 0;
    let mut define = |_: &str| {
        next += 1;
        Ok(next - 1)
    };
    Module::load(
        text.as_bytes(),
        &|n| (n == "S").then(|| SECRET.to_string()),
        &mut define,
        &|_, _| {},
    )
    .unwrap()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn call(jti: &str) -> (String, Vec<u8>) {
    let now = now();
    let claims = format!(
        r#"{{"iss":"agentarea","aud":"i","iat":{now},"exp":{},"jti":"{jti}","protocol":"1","task_id":"t 1","tool_call_id":"c","workspace_id":"w","idempotency_key":"t 1:c"}}"#,
        now + 300
    );
    let token = toolctx_core::sign_compact(
        br#"{"alg":"HS256","typ":"JWT"}"#,
        claims.as_bytes(),
        SECRET.as_bytes(),
    );
    let body = br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t","_meta":{"agentarea/protocol":"1","agentarea/task_id":"t 1","agentarea/tool_call_id":"c","agentarea/workspace_id":"w","agentarea/idempotency_key":"t 1:c","sessionId":"s"}}}"#;
    (token, body.to_vec())
}

fn request(token: Option<&str>, extra: &[(&str, &str)]) -> Fake {
    let mut headers = vec![
        (":method".to_string(), "POST".to_string()),
        ("content-type".to_string(), "application/json".to_string()),
        ("x-request-id".to_string(), "req-1".to_string()),
    ];
    if let Some(t) = token {
        headers.push(("x-agentarea-context".into(), t.into()));
    }
    headers.extend(extra.iter().map(|(n, v)| (n.to_string(), v.to_string())));
    Fake {
        headers,
        ..Fake::default()
    }
}

fn header<'f>(f: &'f Fake, name: &str) -> Vec<&'f str> {
    f.headers
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .collect()
}

#[test]
fn an_accepted_call_is_forwarded_with_its_verified_headers_only() {
    let m = module("");
    let (token, body) = call("j-1");
    let mut s = request(
        Some(&token),
        &[("X-Task", "spoofed"), ("x-session-id", "spoofed")],
    );
    let mut f = Filter::default();
    assert_eq!(f.on_request_headers(&m, &mut s, false), HeadersStatus::Stop);
    // Spoofed copies are gone before the body arrives.
    assert!(header(&s, "X-Task").is_empty() && header(&s, "x-session-id").is_empty());
    s.chunks = vec![body[..10].to_vec()];
    assert_eq!(f.on_request_body(&m, &mut s, false), BodyStatus::Buffer);
    s.chunks.push(body[10..].to_vec());
    assert_eq!(f.on_request_body(&m, &mut s, true), BodyStatus::Continue);
    assert_eq!(s.sent, None);
    // Values come encoded (the space of "t 1").
    assert_eq!(header(&s, "x-task"), vec!["t%201"]);
    assert_eq!(header(&s, "x-session-id"), vec!["s"]);
    assert_eq!(s.bumps, vec![1]);
    // Later hooks of a decided stream change nothing.
    assert_eq!(f.on_request_body(&m, &mut s, true), BodyStatus::Continue);
    assert_eq!(f.on_request_trailers(&m, &mut s), HeadersStatus::Continue);
}

#[test]
fn a_refusal_is_answered_counted_and_logged() {
    let m = module("");
    let (_, body) = call("j-2");
    let mut s = request(Some("not-a-token"), &[]);
    let mut f = Filter::default();
    assert_eq!(f.on_request_headers(&m, &mut s, false), HeadersStatus::Stop);
    s.chunks = vec![body];
    assert_eq!(f.on_request_body(&m, &mut s, true), BodyStatus::Stop);
    let (status, reply) = s.sent.clone().unwrap();
    assert_eq!(status, 401);
    assert!(reply.contains(r#""reason":"token_malformed""#) && reply.contains(r#""id":9"#));
    let reason = toolctx_core::Reason::ALL
        .iter()
        .position(|r| r.as_str() == "token_malformed")
        .unwrap();
    assert_eq!(s.bumps, vec![3 + reason]);
    assert_eq!(
        s.logs.borrow().as_slice(),
        ["refused token_malformed status=401 request_id=req-1 rpc_id=9"]
    );
}

#[test]
fn passes_what_is_not_a_call_and_refuses_at_the_headers_when_it_can() {
    let m = module("");
    let mut s = request(None, &[]);
    s.headers[0].1 = "GET".into();
    let mut f = Filter::default();
    assert_eq!(
        f.on_request_headers(&m, &mut s, true),
        HeadersStatus::Continue
    );
    assert_eq!((s.sent.clone(), s.bumps.clone()), (None, vec![0]));
    // A POST without a body: decided in the headers hook.
    let mut s = request(None, &[]);
    let mut f = Filter::default();
    assert_eq!(f.on_request_headers(&m, &mut s, true), HeadersStatus::Stop);
    assert_eq!(s.sent.unwrap().0, 400);
}

#[test]
fn an_over_limit_body_is_refused_as_it_grows_and_a_trailer_ends_a_body() {
    let m = module("");
    let (token, body) = call("j-3");
    let mut s = request(Some(&token), &[]);
    let mut f = Filter::default();
    f.on_request_headers(&m, &mut s, false);
    s.chunks = vec![vec![b' '; 5000]];
    assert_eq!(f.on_request_body(&m, &mut s, false), BodyStatus::Stop);
    assert_eq!(s.sent.unwrap().0, 413);

    let mut s = request(Some(&token), &[]);
    let mut f = Filter::default();
    f.on_request_headers(&m, &mut s, false);
    s.chunks = vec![body];
    assert_eq!(f.on_request_body(&m, &mut s, false), BodyStatus::Buffer);
    assert_eq!(f.on_request_trailers(&m, &mut s), HeadersStatus::Continue);
    assert_eq!(header(&s, "x-task"), vec!["t%201"]);
}

#[test]
fn a_replayed_token_is_refused_by_the_shared_table() {
    let m = module(r#","replay_guard":{"slots":64}"#);
    let (token, body) = call("j-4");
    let run = || {
        let mut s = request(Some(&token), &[]);
        let mut f = Filter::default();
        f.on_request_headers(&m, &mut s, false);
        s.chunks = vec![body.clone()];
        (f.on_request_body(&m, &mut s, true), s.sent)
    };
    assert_eq!(run(), (BodyStatus::Continue, None));
    let (status, sent) = run();
    assert_eq!(status, BodyStatus::Stop);
    assert!(sent.unwrap().1.contains("token_replayed"));
}

#[test]
fn what_envoy_cannot_give_fails_closed() {
    let m = module("");
    let (token, body) = call("j-5");
    let mut s = request(Some(&token), &[]);
    let mut f = Filter::default();
    f.on_request_headers(&m, &mut s, false);
    s.chunks = vec![body];
    s.body_fails = true;
    assert_eq!(f.on_request_body(&m, &mut s, true), BodyStatus::Stop);
    let (status, reply) = s.sent.clone().unwrap();
    assert!(status == 500 && reply.contains("internal_error"));
    assert_eq!(s.bumps, vec![2]);
    // A body before any headers: refused too.
    let mut s = request(None, &[]);
    assert_eq!(
        Filter::default().on_request_body(&m, &mut s, true),
        BodyStatus::Stop
    );
    assert_eq!(s.sent.unwrap().0, 500);
}

#[test]
fn a_refused_configuration_says_why_without_the_secret() {
    let mut define = |_: &str| Ok(0);
    let e = Module::load(
        br#"{"instance_id":"i","secrets":["0123456789abcdef0123456789abcdef"]}"#,
        &|_| None,
        &mut define,
        &|_, _| {},
    )
    .unwrap_err();
    assert!(e.contains("inline `secrets`"), "{e}");
    let e = Module::load(
        br#"{"instance_id":"i","secret_env":["UNSET"]}"#,
        &|_| None,
        &mut define,
        &|_, _| {},
    )
    .unwrap_err();
    assert!(e.contains("environment of the Envoy process"), "{e}");
    let e = Module::load(
        br#"{"instance_id":"i","secret_env":["S"],"replay_guard":{"redis_url_env":"R"}}"#,
        &|_| Some(SECRET.into()),
        &mut define,
        &|_, _| {},
    )
    .unwrap_err();
    assert!(e.contains("the module keeps"), "{e}");
}
