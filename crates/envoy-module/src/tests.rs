//! The stream logic driven through a stand-in for Envoy (the real Envoy
//! runs in tests/envoy/*, with --module).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::borrow::Cow;
use std::cell::RefCell;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::filter::Filter;
use crate::module::{Level, Module};
use crate::redis::Log;
use crate::stream::{BodyStatus, Headers, HeadersStatus, Resume, Stream};

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
    /// Envoy refuses to add a header, whatever its value.
    add_fails: bool,
    /// Times the stream was resumed from another thread.
    resumed: Arc<AtomicUsize>,
    /// Envoy gives no scheduler.
    no_scheduler: bool,
    /// continue_decoding was called.
    continued: bool,
}

struct FakeResume(Arc<AtomicUsize>);

impl Resume for FakeResume {
    fn resume(self: Box<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
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
        // Envoy 1.40's ABI refuses an empty value too.
        if self.add_fails || value.is_empty() {
            return false;
        }
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
    fn resumer(&mut self) -> Option<Box<dyn Resume>> {
        (!self.no_scheduler).then(|| Box::new(FakeResume(self.resumed.clone())) as Box<dyn Resume>)
    }
    fn continue_request(&mut self) {
        self.continued = true;
    }
}

fn quiet() -> Log {
    Arc::new(|_, _| {})
}

/// Counter ids are their index in the order the module defines them:
/// 0 passed, 1 accepted, 2 errors, then one per reason.
fn module(extra: &str) -> Module {
    module_env(extra, &|n| (n == "S").then(|| SECRET.to_string()))
}

fn module_env(extra: &str, env: &dyn Fn(&str) -> Option<String>) -> Module {
    let text = format!(
        r#"{{"instance_id":"i","secret_env":["S"],"max_body_bytes":4096,
            "headers":{{"task_id":"x-task"}},"meta_headers":{{"sessionId":"x-session-id"}}{extra}}}"#
    );
    let mut next = 0;
    let mut define = |_: &str| {
        next += 1;
        Ok(next - 1)
    };
    Module::load(text.as_bytes(), env, &mut define, &quiet()).unwrap()
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
fn an_empty_forwarded_value_adds_no_header_and_the_spoofed_copy_stays_removed() {
    let m = module("");
    let (token, body) = call("j-6");
    let body = String::from_utf8(body)
        .unwrap()
        .replace(r#""sessionId":"s""#, r#""sessionId":"""#);
    let mut s = request(Some(&token), &[("x-session-id", "spoofed")]);
    let mut f = Filter::default();
    f.on_request_headers(&m, &mut s, false);
    s.chunks = vec![body.into_bytes()];
    assert_eq!(f.on_request_body(&m, &mut s, true), BodyStatus::Continue);
    assert_eq!(s.sent, None);
    assert!(header(&s, "x-session-id").is_empty());
    assert_eq!(header(&s, "x-task"), vec!["t%201"]);
    assert_eq!(s.bumps, vec![1]);
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

/// A signed call that Envoy fails as `breaks` says: refused 500
/// `internal_error` and counted as an error, never handed on.
fn fails_closed(m: &Module, jti: &str, breaks: impl FnOnce(&mut Fake)) {
    let (token, body) = call(jti);
    let mut s = request(Some(&token), &[]);
    let mut f = Filter::default();
    f.on_request_headers(m, &mut s, false);
    s.chunks = vec![body];
    breaks(&mut s);
    assert_eq!(f.on_request_body(m, &mut s, true), BodyStatus::Stop);
    let (status, reply) = s.sent.clone().unwrap();
    assert!(status == 500 && reply.contains("internal_error"));
    assert_eq!(s.bumps, vec![2]);
}

#[test]
fn what_envoy_cannot_give_fails_closed() {
    let m = module("");
    fails_closed(&m, "j-5", |s| s.body_fails = true);
    // Envoy refusing a forwarded header: never handed on without it.
    fails_closed(&m, "j-7", |s| s.add_fails = true);
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
        &quiet(),
    )
    .unwrap_err();
    assert!(e.contains("inline `secrets`"), "{e}");
    let e = Module::load(
        br#"{"instance_id":"i","secret_env":["UNSET"]}"#,
        &|_| None,
        &mut define,
        &quiet(),
    )
    .unwrap_err();
    assert!(e.contains("environment of the Envoy process"), "{e}");
    for (url, says) in [
        ("rediss://:pw@127.0.0.1", "needs TLS (rediss)"),
        (
            "redis://:pw@127.0.0.1:99999",
            "the Redis URL in R: the store address is invalid: a port",
        ),
    ] {
        let e = Module::load(
            br#"{"instance_id":"i","secret_env":["S"],"replay_guard":{"redis_url_env":"R"}}"#,
            &|n| Some(if n == "R" { url.into() } else { SECRET.into() }),
            &mut define,
            &quiet(),
        )
        .unwrap_err();
        assert!(e.contains(says) && !e.contains("pw"), "{e}");
    }
}

/// A Redis stand-in on 127.0.0.1 for the stream logic: answers each
/// command with the next of `replies` (`None`: never answers), keeps a
/// record of every key claimed.
fn redis(replies: Vec<Option<&'static [u8]>>) -> (u16, mpsc::Receiver<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut replies = replies.into_iter();
        let mut held = Vec::new();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut buf = Vec::new();
            let mut chunk = [0u8; 2048];
            'conn: loop {
                while let Ok(Some((crate::redis::Reply::Array(_), used))) =
                    crate::redis::parse(&buf)
                {
                    let _ = tx.send(buf.drain(..used).collect());
                    match replies.next() {
                        Some(Some(r)) => stream.write_all(r).unwrap(),
                        Some(None) => {}
                        None => break 'conn,
                    }
                }
                match stream.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            held.push(stream);
        }
    });
    (port, rx)
}

fn redis_module(port: u16) -> Module {
    let url = format!("redis://127.0.0.1:{port}");
    module_env(
        r#","replay_guard":{"redis_url_env":"R","redis_key_prefix":"t:"}"#,
        &move |n| Some(if n == "R" { url.clone() } else { SECRET.into() }),
    )
}

/// Waits until the stream was resumed from the I/O thread; `within` only
/// catches a stream held forever (no speed is judged).
fn resumed(s: &Fake, within: Duration) {
    let start = Instant::now();
    while s.resumed.load(Ordering::SeqCst) == 0 {
        assert!(start.elapsed() < within, "not resumed within {within:?}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Sends the call carrying `token` through the held path: the body hook
/// holds it (`Wait`), the I/O thread resumes it, the scheduled hook settles.
fn claimed(m: &Module, token: &str, body: &[u8]) -> Fake {
    let mut s = request(Some(token), &[]);
    let mut f = Filter::default();
    assert_eq!(f.on_request_headers(m, &mut s, false), HeadersStatus::Stop);
    s.chunks = vec![body.to_vec()];
    assert_eq!(f.on_request_body(m, &mut s, true), BodyStatus::Wait);
    assert_eq!(
        (s.sent.clone(), s.continued, s.bumps.len()),
        (None, false, 0)
    );
    resumed(&s, Duration::from_secs(30));
    f.on_claim_answered(m, &mut s);
    // A second event changes nothing.
    f.on_claim_answered(m, &mut s);
    assert_eq!(s.resumed.load(Ordering::SeqCst), 1);
    s
}

#[test]
fn a_redis_claim_holds_the_call_and_the_core_settles_the_answer() {
    let (port, commands) = redis(vec![
        Some(b"+OK\r\n"),
        Some(b"$-1\r\n"),
        Some(b"-ERR busy\r\n"),
    ]);
    let m = redis_module(port);
    let (token, body) = call("r-1");
    // First use: forwarded with the core's headers, once.
    let s = claimed(&m, &token, &body);
    assert!(s.continued && s.sent.is_none());
    assert_eq!(header(&s, "x-task"), vec!["t%201"]);
    assert_eq!(s.bumps, vec![1]);
    let cmd = String::from_utf8(commands.recv().unwrap()).unwrap();
    assert!(
        cmd.starts_with("*6\r\n$3\r\nSET\r\n$5\r\nt:r-1\r\n$1\r\n1\r\n$2\r\nNX\r\n$2\r\nPX\r\n"),
        "{cmd:?}"
    );
    // The same token again: the core's token_replayed, logged and counted.
    let s = claimed(&m, &token, &body);
    assert!(!s.continued);
    let (status, reply) = s.sent.clone().unwrap();
    assert!(status == 401 && reply.contains("token_replayed"), "{reply}");
    assert_eq!(
        s.logs.borrow().as_slice(),
        ["refused token_replayed status=401 request_id=req-1 rpc_id=9"]
    );
    // A Redis error: the core's internal_error, never a pass.
    let s = claimed(&m, &call("r-2").0, &body);
    let (status, reply) = s.sent.clone().unwrap();
    assert!(
        status == 500 && reply.contains("internal_error") && !s.continued,
        "{reply}"
    );
}

#[test]
fn a_silent_or_absent_redis_refuses() {
    let (port, _commands) = redis(vec![None]);
    let m = redis_module(port);
    let (token, body) = call("r-3");
    let s = claimed(&m, &token, &body);
    let (status, reply) = s.sent.clone().unwrap();
    assert!(
        status == 500 && reply.contains("internal_error") && !s.continued,
        "{reply}"
    );
    drop(m);
    // Nothing listening: refused at once.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let m = redis_module(port);
    let s = claimed(&m, &call("r-4").0, &body);
    let (status, reply) = s.sent.clone().unwrap();
    assert!(
        status == 500 && reply.contains("internal_error") && !s.continued,
        "{reply}"
    );
}

#[test]
fn without_a_scheduler_a_claimed_call_is_refused() {
    let (port, _commands) = redis(vec![Some(b"+OK\r\n")]);
    let m = redis_module(port);
    let (token, body) = call("r-5");
    let mut s = request(Some(&token), &[]);
    s.no_scheduler = true;
    let mut f = Filter::default();
    f.on_request_headers(&m, &mut s, false);
    s.chunks = vec![body];
    assert_eq!(f.on_request_body(&m, &mut s, true), BodyStatus::Stop);
    assert_eq!(s.sent.unwrap().0, 500);
    assert_eq!(s.bumps, vec![2]);
}
