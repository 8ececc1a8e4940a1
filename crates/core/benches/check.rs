//! `cargo bench -p toolctx-core`: the full check of the 756-byte
//! `tools/call` with an 871-character token (toolctx-fixture), side by
//! side with the `jsonwebtoken`
//! crate's HS256 `decode` of the same token (token only, same iss/aud/exp
//! validation, no `_meta` binding). Compare the two figures of one run;
//! on a shared machine, `-- --rounds 21 20000` runs the sides in turn and
//! gives the median of the rounds' ratios.
#![forbid(unsafe_code)]
// A bench is no test to clippy: its setup may panic too.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use criterion::Criterion;
use std::hint::black_box;
use toolctx_core::{Config, Verdict, Verifier};

use toolctx_fixture::{body, claims, INSTANCE, NOW, SECRET};

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

struct Sides {
    verifier: Verifier,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    key: jsonwebtoken::DecodingKey,
    validation: jsonwebtoken::Validation,
    peer_token: String,
}

impl Sides {
    fn new() -> Sides {
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
        let key = jsonwebtoken::DecodingKey::from_secret(SECRET).unwrap();
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        validation.set_issuer(&["agentarea"]);
        validation.set_audience(&[INSTANCE]);
        validation.leeway = 30;
        validation.validate_exp = true;
        // jsonwebtoken reads the clock itself: the peer's token is minted
        // relative to the real time, the same length as toolctx's.
        let mut peer_claims = claims.clone();
        peer_claims.iat = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            - 5;
        let peer_token = peer_claims.mint(SECRET).unwrap();
        assert_eq!(peer_token.len(), token.len());
        let sides = Sides {
            verifier,
            headers,
            body,
            key,
            validation,
            peer_token,
        };
        assert!(matches!(sides.toolctx(), Verdict::Accept(_)));
        assert!(sides.peer().is_ok());
        sides
    }

    fn toolctx(&self) -> Verdict {
        self.verifier
            .check("POST", black_box(&self.headers), black_box(&self.body), NOW)
    }

    fn peer(&self) -> jsonwebtoken::errors::Result<jsonwebtoken::TokenData<PeerClaims>> {
        jsonwebtoken::decode::<PeerClaims>(black_box(&self.peer_token), &self.key, &self.validation)
    }
}

fn bench(c: &mut Criterion, sides: &Sides) {
    let mut group = c.benchmark_group("hs256");
    group.bench_function("toolctx full check (token + body + _meta binding)", |b| {
        b.iter(|| black_box(sides.toolctx()))
    });
    group.bench_function("jsonwebtoken decode (token only)", |b| {
        b.iter(|| black_box(sides.peer()))
    });
    group.finish();
}

/// The two sides in turn, `rounds` rounds of `calls` calls each (the side
/// that goes first alternates), so that a burst of load on a shared machine
/// hits both alike: each side's median time per call, and the median of
/// the rounds' own ratios.
fn alternate(sides: &Sides, rounds: usize, calls: u32) {
    let time = |f: &dyn Fn()| {
        let start = std::time::Instant::now();
        for _ in 0..calls {
            f();
        }
        start.elapsed().as_secs_f64() * 1e6 / f64::from(calls)
    };
    let ours = || drop(black_box(sides.toolctx()));
    let peer = || drop(black_box(sides.peer()));
    time(&ours);
    time(&peer);
    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (x, y) = if round % 2 == 0 {
            let x = time(&ours);
            (x, time(&peer))
        } else {
            let y = time(&peer);
            (time(&ours), y)
        };
        a.push(x);
        b.push(y);
        ratios.push(x / y);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let round_ratios: Vec<String> = ratios.iter().map(|r| format!("{r:.3}")).collect();
    println!(
        "toolctx full check {:.3} us, jsonwebtoken decode {:.3} us (medians of {rounds} rounds of {calls} calls)",
        median(&mut a),
        median(&mut b)
    );
    println!(
        "ratio: {:.3} (median of the rounds' ratios: {})",
        median(&mut ratios),
        round_ratios.join(", ")
    );
}

/// `check --calls <toolctx|jsonwebtoken> <n>` runs one side n times and
/// nothing else, for instruction counts under `valgrind --tool=callgrind`
/// (scripts/bench-instructions); `check --rounds <r> <calls>`, the sides in
/// turn ([`alternate`]); otherwise criterion.
fn main() {
    let sides = Sides::new();
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--rounds") {
        let number = |at: usize, default: u32| args.get(at).map_or(default, |n| n.parse().unwrap());
        alternate(&sides, number(i + 1, 21) as usize, number(i + 2, 20_000));
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--calls") {
        let n: u64 = args.get(i + 2).map_or(0, |n| n.parse().unwrap());
        match args.get(i + 1).map(String::as_str) {
            Some("toolctx") => (0..n).for_each(|_| drop(black_box(sides.toolctx()))),
            Some("jsonwebtoken") => (0..n).for_each(|_| drop(black_box(sides.peer()))),
            other => panic!("--calls toolctx|jsonwebtoken <n>, not {other:?}"),
        }
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &sides);
    c.final_summary();
}
