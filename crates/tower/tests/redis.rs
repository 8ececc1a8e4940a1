//! The Redis stores against a real redis-server on 127.0.0.1 (started and
//! stopped here; the tests are skipped when there is none, unless
//! TOOLCTX_REQUIRE_REDIS=1): the replay guard shared by two layers, the
//! idempotency store shared by two guards, and Redis paused (SIGSTOP) and
//! killed mid-run: every call is refused or fails, none runs unguarded or
//! twice.
#![cfg(all(feature = "redis", feature = "rmcp"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolResponse, CallToolResult};
use serde_json::json;
use support::*;
use tokio_util::sync::CancellationToken;
use toolctx_tower::helpers::{Idempotent, REPLAYED};
use toolctx_tower::{Redis, RedisReplayStore, RedisStore, ToolctxLayer};
use tower_layer::Layer;

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.signal("CONT");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start() -> Option<Server> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .spawn();
        let child = match child {
            Ok(c) => c,
            Err(_) if std::env::var("TOOLCTX_REQUIRE_REDIS").as_deref() != Ok("1") => return None,
            Err(e) => panic!("redis-server: {e}"),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Server { child, port })
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn signal(&self, sig: &str) {
        let _ = Command::new("kill")
            .args([&format!("-{sig}"), &self.child.id().to_string()])
            .stderr(Stdio::null())
            .status();
    }
}

const TIMEOUT: Duration = Duration::from_millis(300);
/// Far above the stores' own timeout: only a call held forever trips it.
const HELD: Duration = Duration::from_secs(30);

fn layer(redis: &Redis) -> ToolctxLayer {
    ToolctxLayer::new(config(""))
        .clock(|| NOW)
        .replay_guard(RedisReplayStore::new(redis.clone()))
}

#[tokio::test]
async fn the_replay_guard_in_redis_paused_and_killed() {
    let Some(mut server) = Server::start() else {
        return;
    };
    let (a, b) = (
        Redis::connect(&server.url(), TIMEOUT).await.unwrap(),
        Redis::connect(&server.url(), TIMEOUT).await.unwrap(),
    );
    let inner = Inner::default();
    let (mut one, mut two) = (
        layer(&a).layer(inner.clone()),
        layer(&b).layer(inner.clone()),
    );
    let c = claims(&format!("jti-{}", std::process::id()));
    let (body, token) = (call_body(&c, ""), c.mint(SECRET).unwrap());
    let send = |t: &str| post(&body, &[("x-agentarea-context", t)]);
    assert_eq!(answer(&mut one, send(&token)).await.0, 200);
    // The other replica shares the store: the same token is a replay there.
    let (status, text) = answer(&mut two, send(&token)).await;
    assert_eq!(
        (status, text.contains("token_replayed")),
        (401, true),
        "{text}"
    );

    // Paused: each call is refused within the timeout, never run.
    server.signal("STOP");
    let fresh = |i: u32| {
        let c = claims(&format!("jti-{}-{i}", std::process::id()));
        c.mint(SECRET).unwrap()
    };
    let before = inner.0.lock().unwrap().len();
    for i in 0..5 {
        // The store's own timeout refuses the call; the outer bound only
        // catches a call held forever (no speed is judged here).
        let (status, text) = tokio::time::timeout(HELD, answer(&mut one, send(&fresh(i))))
            .await
            .expect("a paused Redis held the call");
        assert_eq!(
            (status, text.contains("internal_error")),
            (500, true),
            "paused: {text}"
        );
    }
    assert_eq!(
        inner.0.lock().unwrap().len(),
        before,
        "a call ran while Redis was paused"
    );
    server.signal("CONT");
    // Back: a fresh token is accepted once (the paused claims may have
    // landed late; those tokens stay refused, which is the safe side).
    let t = fresh(100);
    let mut ok = false;
    for _ in 0..20 {
        let (status, _) = answer(&mut one, send(&t)).await;
        if status == 200 {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ok, "no recovery after SIGCONT");
    assert_eq!(answer(&mut two, send(&t)).await.0, 401);

    // Killed: refused, never run.
    let _ = server.child.kill();
    let _ = server.child.wait();
    let before = inner.0.lock().unwrap().len();
    for i in 200..203 {
        let (status, _) = answer(&mut one, send(&fresh(i))).await;
        assert_eq!(status, 500);
    }
    assert_eq!(inner.0.lock().unwrap().len(), before);
}

#[tokio::test]
async fn a_reply_other_than_ok_or_nil_is_internal_error() {
    let Some(server) = Server::start() else {
        return;
    };
    let redis = Redis::connect(&server.url(), TIMEOUT).await.unwrap();
    let inner = Inner::default();
    let mut guarded = layer(&redis).layer(inner.clone());
    // Over its memory limit, Redis answers the claim `-OOM ...`: not a
    // first use, not a replay; the core refuses internal_error.
    let set = |limit: &str| {
        ["CONFIG", "SET", "maxmemory", limit]
            .map(String::from)
            .to_vec()
    };
    redis.query::<()>(&set("1")).await.unwrap();
    let c = claims(&format!("jti-oom-{}", std::process::id()));
    let (body, token) = (call_body(&c, ""), c.mint(SECRET).unwrap());
    let (status, text) = answer(
        &mut guarded,
        post(&body, &[("x-agentarea-context", token.as_str())]),
    )
    .await;
    assert_eq!(
        (status, text.contains("internal_error")),
        (500, true),
        "{text}"
    );
    assert!(inner.0.lock().unwrap().is_empty(), "a call ran unguarded");
    // Within its limit again, the same token is a first use.
    redis.query::<()>(&set("0")).await.unwrap();
    let (status, _) = answer(
        &mut guarded,
        post(&body, &[("x-agentarea-context", token.as_str())]),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn the_idempotency_store_in_redis_paused() {
    let Some(server) = Server::start() else {
        return;
    };
    let ctx = {
        let verifier = config("");
        let c = claims("j-idem");
        let mut headers = vec![("x-agentarea-context".to_string(), c.mint(SECRET).unwrap())];
        headers.push(("content-type".into(), "application/json".into()));
        match verifier.check("POST", &headers, call_body(&c, "").as_bytes(), NOW) {
            toolctx_core::Verdict::Accept(ctx) => *ctx,
            other => panic!("{other:?}"),
        }
    };
    let runs = Arc::new(AtomicU64::new(0));
    let redis = Redis::connect(&server.url(), TIMEOUT).await.unwrap();
    let namespace = format!("t{}:", std::process::id());
    let guard = || {
        Idempotent::new(RedisStore::new(redis.clone()))
            .namespace(namespace.clone())
            .wait(Duration::from_millis(200))
            .unwrap()
    };
    let (first, second) = (guard(), guard());
    let ct = CancellationToken::new();
    let run = |g: Idempotent, args: serde_json::Value| {
        let (runs, ct, ctx) = (runs.clone(), ct.clone(), ctx.clone());
        async move {
            g.run(Some(&ctx), "2025-11-25", &args, &ct, || async {
                let n = runs.fetch_add(1, Ordering::SeqCst) + 1;
                Ok::<CallToolResponse, rmcp::ErrorData>(
                    CallToolResult::structured(json!({ "runs": n })).into(),
                )
            })
            .await
        }
    };
    let complete = |r: CallToolResponse| match r {
        CallToolResponse::Complete(r) => r,
        other => panic!("{other:?}"),
    };
    let r1 = complete(run(first.clone(), json!({"a": 1})).await.unwrap());
    let r2 = complete(run(second.clone(), json!({"a": 1})).await.unwrap());
    assert_eq!(r1.structured_content, r2.structured_content);
    assert_eq!(r2.meta.unwrap().0.get(REPLAYED), Some(&json!(true)));
    let r3 = complete(run(second.clone(), json!({"a": 2})).await.unwrap());
    assert_eq!(r3.is_error, Some(true), "other arguments: a conflict");
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // 20 concurrent retries of a new key at both guards: one run.
    let ctx2 = toolctx_core::Context {
        idempotency_key: "task-1:call-2".into(),
        ..ctx.clone()
    };
    let mut tasks = Vec::new();
    for i in 0..20 {
        let g = if i % 2 == 0 {
            first.clone()
        } else {
            second.clone()
        };
        let (runs, ct, ctx2) = (runs.clone(), ct.clone(), ctx2.clone());
        tasks.push(tokio::spawn(async move {
            g.wait(Duration::from_secs(5))
                .unwrap()
                .run(Some(&ctx2), "2025-11-25", &json!({"b": 1}), &ct, || async {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    runs.fetch_add(1, Ordering::SeqCst);
                    Ok::<CallToolResponse, rmcp::ErrorData>(
                        CallToolResult::structured(json!({})).into(),
                    )
                })
                .await
        }));
    }
    for t in tasks {
        assert!(t.await.unwrap().is_ok());
    }
    assert_eq!(
        runs.load(Ordering::SeqCst),
        2,
        "the concurrent retries ran once"
    );

    // Paused: the call fails, the tool does not run.
    server.signal("STOP");
    let ctx3 = toolctx_core::Context {
        idempotency_key: "task-1:call-3".into(),
        ..ctx.clone()
    };
    let g = first.clone();
    let got = tokio::time::timeout(
        HELD,
        g.run(Some(&ctx3), "2025-11-25", &json!({}), &ct, || async {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok::<CallToolResponse, rmcp::ErrorData>(CallToolResult::structured(json!({})).into())
        }),
    )
    .await
    .expect("a paused Redis held the call");
    assert!(got.is_err(), "{got:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 2, "ran while Redis was paused");
    server.signal("CONT");
}

#[tokio::test]
async fn the_timeout_is_the_cores_to_read() {
    // Out of range: refused before anything is dialled, with the core's
    // message. In range (zero the default): taken, so connecting is tried
    // and fails otherwise (nothing listens on port 1).
    for (timeout, refused) in [
        (Duration::from_micros(400), true),
        (Duration::from_millis(60_001), true),
        (Duration::from_secs(3600), true),
        (Duration::ZERO, false),
        (Duration::from_millis(1), false),
        (Duration::from_secs(60), false),
    ] {
        let e = Redis::connect("redis://127.0.0.1:1", timeout)
            .await
            .unwrap_err();
        let out_of_range = e == "setting `store_timeout_ms` is out of range";
        assert_eq!(out_of_range, refused, "{timeout:?}: {e}");
    }
}
