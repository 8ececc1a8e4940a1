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
use toolctx_core::json;
use toolctx_core::{Config, ContextClaims, TokenClaims, Verdict, Verifier};

const INSTANCE: &str = "0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f";
const SECRET: &[u8] = b"bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz";
const NOW: u64 = 1_767_225_600;

/// A token with every optional claim, about 800 characters.
fn claims() -> TokenClaims {
    TokenClaims {
        instance_id: INSTANCE.into(),
        tool: Some("search_documents".into()),
        jti: "2c5e7a4e-1f2b-4c3d-9e8f-0a1b2c3d4e5f".into(),
        iat: NOW - 5,
        context: ContextClaims {
            protocol: "1".into(),
            task_id: "6f1c9a52-7d3e-4b8a-9c2f-1e0d3b5a7c9e".into(),
            tool_call_id: "call_Xk92bLq0vTzR4mNp".into(),
            workspace_id: "1b2e4c6d-8f0a-4b2c-9d4e-6f8a0b2c4d6e".into(),
            agent_id: Some("9d4a1c3e-5b7d-4f9a-8c2e-4a6b8d0f2c4e".into()),
            end_user_id: Some("user-42@example.com".into()),
            metadata: Some(
                json::parse(br#"{"chatId":"c-9f3b2a","channel":"web","locale":"en-GB","plan":"team","tags":["beta","eu"]}"#)
                    .unwrap()
                    .into_owned(),
            ),
        },
    }
}

fn body(c: &TokenClaims) -> Vec<u8> {
    let meta = c.context.meta_json();
    let meta = meta.trim_start_matches('{');
    format!(
        r#"{{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{{"name":"search_documents","arguments":{{"query":"quarterly revenue by region","limit":25,"filters":{{"year":2026,"types":["pdf","xlsx"]}},"cursor":"eyJvZmZzZXQiOjUwfQ"}},"_meta":{{"progressToken":17,{meta}}}}}"#
    )
    .into_bytes()
}

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
