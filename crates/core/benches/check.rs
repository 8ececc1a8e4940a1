//! `cargo bench -p toolctx-core`: the full check of a ~1 KB `tools/call`
//! with a ~800-character token, side by side with the `jsonwebtoken`
//! crate's HS256 `decode` of the same token (token only, same iss/aud/exp
//! validation, no `_meta` binding). Compare the two figures of one run.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use toolctx_core::{Config, Verdict, Verifier};

#[path = "../tests/common/mod.rs"]
mod common;
use common::{body, claims, INSTANCE, NOW, SECRET};

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct PeerClaims {
    iss: String,
    aud: String,
    iat: u64,
    exp: u64,
    jti: String,
    tool: String,
    protocol: String,
    task_id: String,
    tool_call_id: String,
    workspace_id: String,
    idempotency_key: String,
    agent_id: String,
    end_user_id: String,
    metadata: serde_json::Value,
}

fn bench(c: &mut Criterion) {
    let claims = claims();
    let token = claims.mint(SECRET).unwrap();
    let body = body(&claims);
    eprintln!("token {} chars, body {} bytes", token.len(), body.len());
    let headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        (
            "accept".to_string(),
            "application/json, text/event-stream".to_string(),
        ),
        ("x-agentarea-context".to_string(), token.clone()),
    ];
    let verifier = Verifier::new(Config::new(INSTANCE, vec![SECRET.to_vec()])).unwrap();
    assert!(matches!(
        verifier.check("POST", &headers, &body, NOW),
        Verdict::Accept(_)
    ));

    let key = jsonwebtoken::DecodingKey::from_secret(SECRET).unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
    validation.set_issuer(&["agentarea"]);
    validation.set_audience(&[INSTANCE]);
    validation.leeway = 30;
    validation.validate_exp = true;
    // jsonwebtoken reads the clock itself; the token is minted relative to
    // NOW, so move its validation window by not checking exp against a far
    // clock: re-mint relative to the real time for the peer.
    let mut peer_claims = claims.clone();
    peer_claims.iat = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 5;
    let peer_token = peer_claims.mint(SECRET).unwrap();
    assert_eq!(peer_token.len(), token.len());
    jsonwebtoken::decode::<PeerClaims>(&peer_token, &key, &validation).unwrap();

    let mut group = c.benchmark_group("hs256");
    group.bench_function("toolctx full check (token + body + _meta binding)", |b| {
        b.iter(|| black_box(verifier.check("POST", black_box(&headers), black_box(&body), NOW)))
    });
    group.bench_function("jsonwebtoken decode (token only)", |b| {
        b.iter(|| {
            black_box(jsonwebtoken::decode::<PeerClaims>(
                black_box(&peer_token),
                &key,
                &validation,
            ))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
