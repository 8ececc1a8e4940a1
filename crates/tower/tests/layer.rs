//! The layer as a tower service: what it reads, what it hands on, what it
//! answers. The inner service records what reached it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::sync::atomic::Ordering;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use support::*;
use toolctx_core::{ClaimAnswer, ReplayClaim};
use toolctx_tower::{ClaimFuture, MemoryReplayStore, ReplayStore, ToolctxLayer};
use tower_layer::Layer;
use tower_service::Service;

#[tokio::test]
async fn a_wrong_credential_is_refused_before_a_byte_of_body_is_read() {
    let inner = Inner::default();
    let layer = ToolctxLayer::new(config(
        r#","credential":{"header":"authorization","values":["Bearer k"]}"#,
    ));
    let mut svc = layer.layer(inner.clone());
    let polls = Untouchable::default();
    let req = Request::builder()
        .method("POST")
        .header("authorization", "Bearer wrong")
        .body(polls.clone())
        .unwrap();
    let res = svc.call(req).await.unwrap();
    assert_eq!(res.status(), 401);
    assert_eq!(polls.0.load(Ordering::SeqCst), 0, "the body was polled");
    assert!(inner.0.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_get_passes_unread() {
    let inner = Inner::default();
    let mut svc = ToolctxLayer::new(config("")).layer(inner.clone());
    let req = Request::builder()
        .method("GET")
        .body(Full::new(Bytes::from_static(b"\0not json")))
        .unwrap();
    let (status, _) = answer(&mut svc, req).await;
    assert_eq!(status, 200);
    let seen = inner.0.lock().unwrap();
    assert_eq!(seen[0].body, b"\0not json");
    assert!(seen[0].verification.as_ref().unwrap().context().is_none());
}

#[tokio::test]
async fn an_accepted_call_goes_on_with_its_body_and_context() {
    let inner = Inner::default();
    let mut svc = ToolctxLayer::new(config(""))
        .clock(|| NOW)
        .layer(inner.clone());
    let c = claims("j1");
    let body = call_body(&c, "");
    let (status, text) = answer(
        &mut svc,
        post(&body, &[("x-agentarea-context", &c.mint(SECRET).unwrap())]),
    )
    .await;
    assert_eq!((status, text.as_str()), (200, "inner"));
    let seen = inner.0.lock().unwrap();
    assert_eq!(seen[0].body, body.as_bytes(), "replayed byte for byte");
    assert_eq!(
        seen[0]
            .verification
            .as_ref()
            .unwrap()
            .context()
            .unwrap()
            .task_id,
        "task-1"
    );
}

#[tokio::test]
async fn refusals_are_the_cores_and_nothing_goes_on() {
    let inner = Inner::default();
    let mut svc = ToolctxLayer::new(config(r#","max_body_bytes":400"#))
        .clock(|| NOW)
        .layer(inner.clone());
    let (status, text) = answer(&mut svc, post(&call_body(&claims("j"), ""), &[])).await;
    assert_eq!(status, 401);
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"context token missing","data":{"reason":"token_missing"}}}"#
    );
    // Over the limit: refused, never a truncated read handed on.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","pad":"{}"}}"#,
        "x".repeat(500)
    );
    let res = svc.call(post(&big, &[])).await.unwrap();
    assert_eq!(res.status(), 413);
    assert_eq!(res.headers()["connection"], "close");
    assert!(inner.0.lock().unwrap().is_empty());
    // Without the reason, if so configured.
    let mut quiet = ToolctxLayer::new(config(""))
        .include_reason(false)
        .layer(Inner::default());
    let (_, text) = answer(&mut quiet, post("[", &[])).await;
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#
    );
}

#[tokio::test]
async fn forwarded_headers_are_the_cores_spoofed_copies_removed() {
    let inner = Inner::default();
    let forward = r#","forward":{"headers":{"task_id":"x-toolctx-task-id"},"tuix":true}"#;
    let mut svc = ToolctxLayer::new(config(forward))
        .clock(|| NOW)
        .layer(inner.clone());
    let c = claims("j2");
    let body = call_body(&c, r#""sessionId":"s 1","#);
    let token = c.mint(SECRET).unwrap();
    let spoof = [
        ("x-agentarea-context", token.as_str()),
        ("X-Toolctx-Task-Id", "evil"),
        ("x-session-id", "evil"),
        ("x-idempotency-key", "evil"),
    ];
    let (status, _) = answer(&mut svc, post(&body, &spoof)).await;
    assert_eq!(status, 200);
    // A request that passes: the spoofed copies go, nothing is added.
    let (status, _) = answer(
        &mut svc,
        post(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            &spoof[1..],
        ),
    )
    .await;
    assert_eq!(status, 200);
    let get = Request::builder()
        .method("GET")
        .header("x-session-id", "evil")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let _ = answer(&mut svc, get).await;
    let seen = inner.0.lock().unwrap();
    let values = |i: usize, n: &str| {
        seen[i]
            .headers
            .get_all(n)
            .iter()
            .map(|v| v.to_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(values(0, "x-toolctx-task-id"), ["task-1"]);
    assert_eq!(values(0, "x-session-id"), ["s%201"], "encoded by the core");
    assert!(
        values(0, "x-idempotency-key").is_empty(),
        "absent from _meta: nothing forwarded"
    );
    for i in [1, 2] {
        for n in ["x-toolctx-task-id", "x-session-id", "x-idempotency-key"] {
            assert!(values(i, n).is_empty(), "request {i}: {n} kept");
        }
    }
}

/// A store that always gives one answer.
struct Answers(ClaimAnswer);

impl ReplayStore for Answers {
    fn claim<'a>(&'a self, _: &'a ReplayClaim, _: u64) -> ClaimFuture<'a> {
        Box::pin(std::future::ready(self.0))
    }
}

#[test]
fn the_memory_stores_capacity_is_the_cores_to_read() {
    // 0 is the core's default; 1 to 4294967295 itself.
    for ok in [0, 1, 4_294_967_295] {
        assert!(MemoryReplayStore::new(ok).is_ok(), "{ok}");
    }
    // Anything else is refused with the core's code and message.
    for refused in [-1, 4_294_967_296, i64::MIN, i64::MAX] {
        let e = MemoryReplayStore::new(refused).err().unwrap();
        assert_eq!(
            (e.code(), e.to_string().as_str()),
            (
                "limit_out_of_range",
                "setting `replay_capacity` is out of range"
            ),
            "{refused}"
        );
    }
}

#[tokio::test]
async fn the_replay_guard_settles_as_the_core_says() {
    let c = claims("j3");
    let body = call_body(&c, "");
    let token = c.mint(SECRET).unwrap();
    let once = ToolctxLayer::new(config(""))
        .clock(|| NOW)
        .replay_guard(MemoryReplayStore::new(10).unwrap());
    let mut svc = once.layer(Inner::default());
    assert_eq!(
        answer(&mut svc, post(&body, &[("x-agentarea-context", &token)]))
            .await
            .0,
        200
    );
    let (status, text) = answer(&mut svc, post(&body, &[("x-agentarea-context", &token)])).await;
    assert_eq!(status, 401);
    assert!(text.contains("token_replayed"));
    for (store, status, reason) in [
        (ClaimAnswer::Used, 401, "token_replayed"),
        (ClaimAnswer::Full, 503, "replay_guard_full"),
        (ClaimAnswer::Failed, 500, "internal_error"),
    ] {
        let inner = Inner::default();
        let mut svc = ToolctxLayer::new(config(""))
            .clock(|| NOW)
            .replay_guard(Answers(store))
            .layer(inner.clone());
        let (got, text) = answer(&mut svc, post(&body, &[("x-agentarea-context", &token)])).await;
        assert_eq!(
            (got, text.contains(reason)),
            (status, true),
            "{store:?}: {text}"
        );
        assert!(inner.0.lock().unwrap().is_empty());
    }
    // A token without jti cannot be guarded.
    let mut svc = ToolctxLayer::new(config(""))
        .clock(|| NOW)
        .replay_guard(Answers(ClaimAnswer::FirstUse))
        .layer(Inner::default());
    let payload = format!(
        r#"{{"iss":"agentarea","aud":"{INSTANCE}","iat":{NOW},"exp":{},"protocol":"1","task_id":"task-1","tool_call_id":"call-1","workspace_id":"ws-1","idempotency_key":"task-1:call-1"}}"#,
        NOW + 300
    );
    let no_jti = toolctx_core::sign_compact(br#"{"alg":"HS256"}"#, payload.as_bytes(), SECRET);
    let (status, text) = answer(&mut svc, post(&body, &[("x-agentarea-context", &no_jti)])).await;
    assert_eq!(status, 401);
    assert!(text.contains("claim_invalid"), "{text}");
}
