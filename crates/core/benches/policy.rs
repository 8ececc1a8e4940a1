//! `cargo bench -p toolctx-core --features policy --bench policy`: the full
//! check of the benchmark's `tools/call` (toolctx-fixture) with ten policy
//! rules for its tool against the same check with no policy, the two in
//! turn (`-- --rounds R CALLS`, default 21 rounds of 20,000 calls): each
//! side's median time per call and the median of the rounds' ratios (the
//! goal: ten rules add at most 15% to a verify). The ten rules read the
//! arguments, `_meta` and the claims, metadata included, and all allow,
//! so every one runs.
#![forbid(unsafe_code)]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::hint::black_box;
use toolctx_core::{Config, UnknownSettings, Verdict, Verifier};

use toolctx_fixture::{body, claims, INSTANCE, NOW, SECRET, TOOL};

const RULES: [&str; 10] = [
    "args.limit <= 100",
    "size(args.query) < 500",
    "has(args.cursor) ? size(args.cursor) < 64 : true",
    "args.filters.year >= 2000 && args.filters.year <= 2100",
    "args.filters.types.all(t, t in ['pdf', 'xlsx', 'docx'])",
    "claims.end_user_id.endsWith('@example.com')",
    "claims.metadata.plan in ['team', 'enterprise']",
    "!claims.metadata.tags.exists(t, t == 'blocked')",
    "tool.startsWith('search_') && !args.query.contains('DROP TABLE')",
    "meta.progressToken == 17 && claims.workspace_id == meta['agentarea/workspace_id']",
];

fn verifier(policy: bool) -> Verifier {
    let secret = std::str::from_utf8(SECRET).unwrap();
    let mut config = serde_json::json!({"instance_id": INSTANCE, "secrets": [secret]});
    if policy {
        let rules: Vec<_> = RULES
            .iter()
            .enumerate()
            .map(|(i, expr)| serde_json::json!({"name": format!("rule-{i}"), "expr": expr}))
            .collect();
        config["policy"] = serde_json::json!({"default": "deny", "rules": {TOOL: rules}});
    }
    let config = Config::from_json(config.to_string().as_bytes(), UnknownSettings::Refuse);
    Verifier::new(config.unwrap()).unwrap()
}

fn main() {
    let claims = claims();
    let token = claims.mint(SECRET).unwrap();
    let body = body(&claims);
    let headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("x-agentarea-context".to_string(), token),
    ];
    let (plain, ruled) = (verifier(false), verifier(true));
    let check = |v: &Verifier| v.check("POST", black_box(&headers), black_box(&body), NOW);
    for v in [&plain, &ruled] {
        let Verdict::Accept(ctx) = check(v) else {
            panic!("the fixture is not accepted: {:?}", check(v));
        };
        assert_eq!(ctx.policy_audit, None);
    }
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == "--rounds");
    let number = |k: usize, default: u32| {
        at.and_then(|i| args.get(i + k))
            .map_or(default, |n| n.parse().unwrap())
    };
    let (rounds, calls) = (number(1, 21) as usize, number(2, 20_000));
    let time = |v: &Verifier| {
        let start = std::time::Instant::now();
        for _ in 0..calls {
            drop(black_box(check(v)));
        }
        start.elapsed().as_secs_f64() * 1e6 / f64::from(calls)
    };
    time(&plain);
    time(&ruled);
    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (x, y) = if round % 2 == 0 {
            let x = time(&plain);
            (x, time(&ruled))
        } else {
            let y = time(&ruled);
            (time(&plain), y)
        };
        a.push(x);
        b.push(y);
        ratios.push(y / x);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "full check: no policy {:.3} us, ten rules {:.3} us (medians of {rounds} rounds of {calls} calls)",
        median(&mut a),
        median(&mut b)
    );
    println!(
        "ten rules / none: {:.3} (median of the rounds' ratios)",
        median(&mut ratios)
    );
}
