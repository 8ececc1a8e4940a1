//! The helpers' names the npm package writes again are the same (one set
//! of rules, CONTRACT §5): compared with its sources, as the Python
//! package's are (tests/python/test_mirrors.py). The result limits and the
//! progress rule are the core's (`toolctx_core::helpers`), not compared.
#![cfg(feature = "rmcp")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use toolctx_tower::helpers::{Outcome, REPLAYED};

fn npm(file: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../npm/src")
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The quoted members of `export type NAME = 'a' | 'b' ...;`.
fn union(text: &str, name: &str) -> Vec<String> {
    let start = text.find(&format!("export type {name} = ")).expect(name);
    let decl = &text[start..];
    let decl = &decl[..decl.find(';').unwrap()];
    decl.split('\'')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

#[test]
fn idempotency_outcomes_and_marker_are_the_npm_packages() {
    let text = npm("idempotency.ts");
    let outcomes: Vec<String> = Outcome::ALL
        .iter()
        .map(|o| o.as_str().to_string())
        .collect();
    assert_eq!(outcomes, union(&text, "IdempotencyOutcome"));
    assert!(text.contains(&format!("export const REPLAYED = '{REPLAYED}';")));
}
