//! The Redis stores on the topologies users run at scale, driven by
//! tests/redis/rust.py, which starts them (tests/redis/topology.py: TLS
//! with an ACL user, a 3x2 Redis Cluster, a Sentinel set) on 127.0.0.1,
//! hands their store addresses here, and acts on them (moves a slot, kills
//! a primary) when this program asks. Not run by `cargo test` alone
//! (`harness = false`, no scenario given: nothing to do).
//!
//!   topology serve ADDRESS         a token accepted once across two
//!                                  layers; 20 concurrent retries at two
//!                                  idempotency guards run once
//!   topology refuse ADDRESS...     each address refused at connect; no
//!                                  message quotes a password
//!   topology short ADDRESS         durable claims no replica can meet:
//!                                  every call refused, nothing ran, the
//!                                  idempotency claim released
//!   topology load ADDRESS TAG [--no-failure] [--none-twice] [--no-replica-after]
//!                                  calls on keys of one slot ({TAG}) while
//!                                  the driver acts (`ACTION` on stdout,
//!                                  `done` on stdin); then every accepted
//!                                  token is sent again and every completed
//!                                  call run again: `RESULT {json}` counts
//!                                  those accepted or run twice
//!                                  (--no-replica-after: durable claims
//!                                  the promoted primary cannot meet, its
//!                                  calls refused from then on)
//!   topology bench ADDRESS CALLS   CALLS guarded calls one after the
//!                                  other (the replay guard through the
//!                                  layer, then the idempotency helper):
//!                                  `BENCH {json}`, microseconds per call
//!                                  (bench/redis-rust.sh)
//!
//! Prints `ok - ...` / `FAIL - ...` lines; exits 1 on a failure.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolResponse, CallToolResult};
use serde_json::json;
use support::*;
use tokio_util::sync::CancellationToken;
use toolctx_tower::helpers::Idempotent;
use toolctx_tower::{Redis, RedisReplayStore, RedisStore, Toolctx, ToolctxLayer, DEFAULT_TIMEOUT};
use tower_layer::Layer;

static FAILED: AtomicBool = AtomicBool::new(false);

fn check(what: &str, ok: bool, detail: impl std::fmt::Debug) {
    if ok {
        println!("ok - {what}");
    } else {
        FAILED.store(true, Ordering::SeqCst);
        println!("FAIL - {what}: {detail:?}");
    }
}

fn unique() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{}-{t}", std::process::id())
}

fn layer(redis: &Redis, inner: &Inner) -> Toolctx<Inner> {
    ToolctxLayer::new(config(""))
        .clock(|| NOW)
        .replay_guard(RedisReplayStore::new(redis.clone()))
        .layer(inner.clone())
}

/// Sends a call with a new token whose jti is `jti`: its HTTP status.
async fn send<S>(svc: &mut S, jti: &str) -> (u16, String)
where
    S: tower_service::Service<
        http::Request<http_body_util::Full<bytes::Bytes>>,
        Response = http::Response<toolctx_tower::ResponseBody<http_body_util::Full<bytes::Bytes>>>,
        Error = std::convert::Infallible,
    >,
{
    let c = claims(jti);
    let token = c.mint(SECRET).unwrap();
    answer(
        svc,
        post(&call_body(&c, ""), &[("x-agentarea-context", &token)]),
    )
    .await
}

/// An accepted context (the idempotency helper needs one).
fn context(key: &str) -> toolctx_core::Context {
    let verifier = config("");
    let c = claims(&format!("ctx-{}", unique()));
    let headers = vec![
        ("x-agentarea-context".to_string(), c.mint(SECRET).unwrap()),
        ("content-type".to_string(), "application/json".to_string()),
    ];
    match verifier.check("POST", &headers, call_body(&c, "").as_bytes(), NOW) {
        toolctx_core::Verdict::Accept(ctx) => toolctx_core::Context {
            idempotency_key: key.into(),
            ..*ctx
        },
        other => panic!("{other:?}"),
    }
}

type Runs = Arc<Mutex<HashMap<String, u64>>>;

/// Runs the idempotent call `key` at `guard`, counting the tool's runs.
async fn run(guard: &Idempotent, key: &str, runs: &Runs) -> Result<(), String> {
    let ctx = context(key);
    let ct = CancellationToken::new();
    let (runs, k) = (runs.clone(), key.to_string());
    guard
        .run(
            Some(&ctx),
            "2025-11-25",
            &json!({"k": key}),
            &ct,
            || async move {
                *runs.lock().unwrap().entry(k).or_default() += 1;
                Ok::<CallToolResponse, rmcp::ErrorData>(
                    CallToolResult::structured(json!({})).into(),
                )
            },
        )
        .await
        .map(|_| ())
        .map_err(|e| e.message.to_string())
}

fn guard(redis: &Redis, prefix: &str, namespace: &str) -> Idempotent {
    Idempotent::new(RedisStore::with_prefix(redis.clone(), prefix))
        .namespace(namespace.to_string())
        .wait(Duration::from_millis(300))
        .unwrap()
}

async fn serve(address: &str) {
    let (a, b) = (
        Redis::connect(address, DEFAULT_TIMEOUT).await.unwrap(),
        Redis::connect(address, DEFAULT_TIMEOUT).await.unwrap(),
    );
    let inner = Inner::default();
    let (mut one, mut two) = (layer(&a, &inner), layer(&b, &inner));
    let jti = format!("serve-{}", unique());
    let first = send(&mut one, &jti).await;
    let second = send(&mut two, &jti).await;
    let third = send(&mut one, &jti).await;
    check(
        "a token is accepted by one layer and refused token_replayed by the other and by itself",
        first.0 == 200
            && second.0 == 401
            && second.1.contains("token_replayed")
            && third.0 == 401
            && inner.0.lock().unwrap().len() == 1,
        (first.0, second, third.0),
    );
    let runs: Runs = Runs::default();
    let ns = format!("serve-{}:", unique());
    let (g1, g2) = (
        guard(&a, "toolctx:idem:", &ns),
        guard(&b, "toolctx:idem:", &ns),
    );
    let mut tasks = Vec::new();
    for i in 0..20 {
        let (g, runs) = (
            if i % 2 == 0 { g1.clone() } else { g2.clone() },
            runs.clone(),
        );
        tasks.push(tokio::spawn(async move {
            g.wait(Duration::from_secs(5))
                .unwrap()
                .run(
                    Some(&context("k-serve")),
                    "2025-11-25",
                    &json!({"b": 1}),
                    &CancellationToken::new(),
                    || async move {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        *runs.lock().unwrap().entry("k".into()).or_default() += 1;
                        Ok::<CallToolResponse, rmcp::ErrorData>(
                            CallToolResult::structured(json!({})).into(),
                        )
                    },
                )
                .await
                .is_ok()
        }));
    }
    let mut ok = 0;
    for t in tasks {
        ok += u32::from(t.await.unwrap());
    }
    let ran = runs.lock().unwrap().get("k").copied();
    check(
        "20 concurrent retries at two idempotency guards: all answered, the tool ran once",
        ok == 20 && ran == Some(1),
        (ok, ran),
    );
}

async fn refuse(addresses: &[String]) {
    let secret = std::env::var("TOOLCTX_TOPOLOGY_PASSWORD").unwrap_or_default();
    for (i, address) in addresses.iter().enumerate() {
        // A guard against a hang, not a speed claim: a connect that never
        // answers fails the check instead of stalling the run.
        let got = tokio::time::timeout(
            Duration::from_secs(60),
            Redis::connect(address, DEFAULT_TIMEOUT),
        )
        .await
        .unwrap_or_else(|_| Err(String::from("connect never answered")));
        let said = got.as_ref().err().cloned().unwrap_or_default();
        check(
            &format!("address {i} is refused at connect, quoting no password: {said}"),
            got.is_err()
                && said != "connect never answered"
                && (secret.is_empty() || !said.contains(&secret))
                && !said.contains("wrong-pw"),
            &said,
        );
    }
}

async fn short(address: &str) {
    let redis = Redis::connect(address, DEFAULT_TIMEOUT).await.unwrap();
    let inner = Inner::default();
    let mut svc = layer(&redis, &inner);
    let (status, text) = send(&mut svc, &format!("short-{}", unique())).await;
    check(
        "a replay claim no replica acknowledged: refused internal_error, the call never ran",
        status == 500 && text.contains("internal_error") && inner.0.lock().unwrap().is_empty(),
        (status, text),
    );
    let runs: Runs = Runs::default();
    let ns = format!("short-{}:", unique());
    let got = run(&guard(&redis, "toolctx:idem:", &ns), "k-short", &runs).await;
    check(
        "an idempotency claim no replica acknowledged: the call fails, the tool did not run",
        got.is_err() && runs.lock().unwrap().is_empty(),
        &got,
    );
    // Released: the same key, claimed without durable claims, runs now
    // (a claim left behind would answer in flight, then fail).
    let plain = without_wait(address);
    let again = Redis::connect(&plain, DEFAULT_TIMEOUT).await.unwrap();
    let got = run(&guard(&again, "toolctx:idem:", &ns), "k-short", &runs).await;
    check(
        "the claim was released: the same call without durable claims runs once",
        got.is_ok() && runs.lock().unwrap().get("k-short") == Some(&1),
        &got,
    );
}

#[derive(Default)]
struct Tally {
    served: AtomicU64,
    refused: AtomicU64,
    served_after: AtomicU64,
    refused_after: AtomicU64,
    other: AtomicU64,
}

/// `address` without durable claims (the rechecks only read what the
/// store kept).
fn without_wait(address: &str) -> String {
    let (head, primary) = match address.split_once('#') {
        Some((h, p)) => (h, format!("#{p}")),
        None => (address, String::new()),
    };
    let (base, query) = head.split_once('?').unwrap_or((head, ""));
    let kept: Vec<&str> = query
        .split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("wait_"))
        .collect();
    match kept.is_empty() {
        true => format!("{base}{primary}"),
        false => format!("{base}?{}{primary}", kept.join("&")),
    }
}

async fn load(address: &str, tag: &str, no_failure: bool, none_twice: bool, no_replica: bool) {
    const WORKERS: usize = 4;
    let redis = Redis::connect(address, DEFAULT_TIMEOUT).await.unwrap();
    let inner = Inner::default();
    let svc = layer(&redis, &inner);
    let prefix = format!("toolctx:idem:{{{tag}}}:");
    let ns = format!("load-{}:", unique());
    let idem = guard(&redis, &prefix, &ns);
    let runs: Runs = Runs::default();
    let tally = Arc::new(Tally::default());
    let accepted = Arc::new(Mutex::new(Vec::<String>::new()));
    let completed = Arc::new(Mutex::new(Vec::<String>::new()));
    let after = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let run_id = unique();
    let mut workers = Vec::new();
    for w in 0..WORKERS {
        let (mut svc, idem, runs, tally, accepted, completed, after, stop, tag, run_id) = (
            svc.clone(),
            idem.clone(),
            runs.clone(),
            tally.clone(),
            accepted.clone(),
            completed.clone(),
            after.clone(),
            stop.clone(),
            tag.to_string(),
            run_id.clone(),
        );
        workers.push(tokio::spawn(async move {
            let mut i = 0u64;
            while !stop.load(Ordering::SeqCst) {
                i += 1;
                let past = after.load(Ordering::SeqCst);
                let (ok, bad) = match past {
                    true => (&tally.served_after, &tally.refused_after),
                    false => (&tally.served, &tally.refused),
                };
                // The replay guard: a fresh token on the slot of {tag}.
                let jti = format!("{{{tag}}}-{run_id}-{w}-{i}");
                match send(&mut svc, &jti).await {
                    (200, _) => {
                        ok.fetch_add(1, Ordering::SeqCst);
                        accepted.lock().unwrap().push(jti);
                    }
                    (500, t) if t.contains("internal_error") => {
                        bad.fetch_add(1, Ordering::SeqCst);
                    }
                    _ => {
                        tally.other.fetch_add(1, Ordering::SeqCst);
                    }
                }
                // The idempotency helper: a new call on the same slot.
                let key = format!("k-{w}-{i}");
                match run(&idem, &key, &runs).await {
                    Ok(()) => {
                        ok.fetch_add(1, Ordering::SeqCst);
                        completed.lock().unwrap().push(key);
                    }
                    Err(_) => {
                        bad.fetch_add(1, Ordering::SeqCst);
                    }
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    println!("ACTION");
    std::io::stdout().flush().unwrap();
    let line = tokio::task::spawn_blocking(|| {
        let mut l = String::new();
        std::io::stdin().lock().read_line(&mut l).map(|_| l)
    })
    .await
    .unwrap()
    .unwrap_or_default();
    after.store(true, Ordering::SeqCst);
    // Served again: keep going until 40 calls after the action succeeded
    // (or 40 s passed); with no replica left, until 40 were refused.
    let t = Instant::now();
    let enough = || match no_replica {
        false => tally.served_after.load(Ordering::SeqCst) >= 40,
        true => tally.refused_after.load(Ordering::SeqCst) >= 40,
    };
    while !enough() && t.elapsed() < Duration::from_secs(40) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.await.unwrap();
    }
    // Every accepted token again, at a layer on a new connection; every
    // completed call again, at a guard on it: a token accepted again or a
    // tool run again means the store lost the write.
    let fresh = Redis::connect(&without_wait(address), DEFAULT_TIMEOUT)
        .await
        .unwrap();
    let mut other = layer(&fresh, &Inner::default());
    let tokens = accepted.lock().unwrap().clone();
    let mut accepted_twice = 0u64;
    let mut unanswered = 0u64;
    for jti in &tokens {
        match send(&mut other, jti).await.0 {
            200 => accepted_twice += 1,
            401 => {}
            _ => unanswered += 1,
        }
    }
    let keys = completed.lock().unwrap().clone();
    let again = guard(&fresh, &prefix, &ns);
    for key in &keys {
        if run(&again, key, &runs).await.is_err() {
            unanswered += 1;
        }
    }
    let ran_twice = runs.lock().unwrap().values().filter(|n| **n > 1).count() as u64;
    let result = json!({
        "action": line.trim(),
        "served_before": tally.served.load(Ordering::SeqCst),
        "refused_before": tally.refused.load(Ordering::SeqCst),
        "served_after": tally.served_after.load(Ordering::SeqCst),
        "refused_after": tally.refused_after.load(Ordering::SeqCst),
        "other": tally.other.load(Ordering::SeqCst),
        "tokens_accepted": tokens.len(),
        "accepted_twice": accepted_twice,
        "calls_completed": keys.len(),
        "ran_twice": ran_twice,
        "unanswered_recheck": unanswered,
        "durable": redis.durable().is_some(),
    });
    println!("RESULT {result}");
    match no_replica {
        false => check(
            "served again after the action",
            tally.served_after.load(Ordering::SeqCst) >= 40,
            &result,
        ),
        true => check(
            "no replica left to meet the durable claims: every call refused after the action",
            tally.served_after.load(Ordering::SeqCst) == 0
                && tally.refused_after.load(Ordering::SeqCst) >= 40,
            &result,
        ),
    }
    check(
        "no answer but served or refused internal_error",
        tally.other.load(Ordering::SeqCst) == 0 && unanswered == 0,
        &result,
    );
    if no_failure {
        check(
            "no call refused for the action",
            tally.refused.load(Ordering::SeqCst) + tally.refused_after.load(Ordering::SeqCst) == 0,
            &result,
        );
    }
    if none_twice {
        check(
            "no token accepted twice, no call run twice",
            accepted_twice == 0 && ran_twice == 0,
            &result,
        );
    }
}

/// Microseconds per guarded call on `address`: a fresh token through the
/// layer (one claim), and a new idempotent call (a claim and a stored
/// result); every answer checked.
async fn bench(address: &str, calls: u64) {
    let redis = Redis::connect(address, DEFAULT_TIMEOUT).await.unwrap();
    let inner = Inner::default();
    let mut svc = layer(&redis, &inner);
    let idem = guard(&redis, "toolctx:idem:", &format!("bench-{}:", unique()));
    let runs: Runs = Runs::default();
    let id = unique();
    let (mut replay, mut idempotent) = (Duration::ZERO, Duration::ZERO);
    let mut failed = 0u64;
    for i in 0..calls {
        let t = Instant::now();
        failed += u64::from(send(&mut svc, &format!("bench-{id}-{i}")).await.0 != 200);
        replay += t.elapsed();
        let t = Instant::now();
        failed += u64::from(run(&idem, &format!("b-{i}"), &runs).await.is_err());
        idempotent += t.elapsed();
    }
    let per = |d: Duration| d.as_secs_f64() * 1e6 / calls.max(1) as f64;
    println!(
        "BENCH {}",
        json!({"replay_us": per(replay), "idempotent_us": per(idempotent), "failed": failed})
    );
    check("every benchmarked call was served", failed == 0, failed);
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        match args
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice()
        {
            ["serve", address] => serve(address).await,
            ["refuse", addresses @ ..] => refuse(&args[1..addresses.len() + 1]).await,
            ["short", address] => short(address).await,
            ["bench", address, calls] => bench(address, calls.parse().unwrap()).await,
            ["load", address, tag, flags @ ..] => {
                load(
                    address,
                    tag,
                    flags.contains(&"--no-failure"),
                    flags.contains(&"--none-twice"),
                    flags.contains(&"--no-replica-after"),
                )
                .await
            }
            // `cargo test` runs this with no scenario (or libtest's flags).
            _ => println!("no scenario: tests/redis/rust.py runs this"),
        }
    });
    std::io::stdout().flush().unwrap();
    match FAILED.load(Ordering::SeqCst) {
        true => ExitCode::FAILURE,
        false => ExitCode::SUCCESS,
    }
}
