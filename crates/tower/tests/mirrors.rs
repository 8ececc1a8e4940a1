//! The result limits' names and numbers are the npm package's (one set of
//! rules, CONTRACT §5): compared with its sources, as the Python package's
//! are (tests/python/test_mirrors.py). The idempotency helper's rules are
//! the core's, checked by the helper vectors (tests/helpers.rs).
#![cfg(feature = "rmcp")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use toolctx_tower::helpers::{LimitCode, LIMITS};

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

/// The number after `name: ` in npm's LIMITS (products like `5 * 1024 * 1024` too).
fn number(text: &str, name: &str) -> usize {
    let start = text.find(&format!("  {name}: ")).expect(name) + name.len() + 4;
    let expr = &text[start..start + text[start..].find(',').unwrap()];
    expr.split('*')
        .map(|n| n.trim().parse::<usize>().unwrap())
        .product()
}

#[test]
fn limit_codes_and_numbers_are_the_npm_packages() {
    let text = npm("results.ts");
    let codes: Vec<String> = LimitCode::ALL
        .iter()
        .map(|c| c.as_str().to_string())
        .collect();
    assert_eq!(codes, union(&text, "LimitCode"));
    assert_eq!(number(&text, "textChars"), LIMITS.text_chars);
    assert_eq!(number(&text, "structuredChars"), LIMITS.structured_chars);
    assert_eq!(number(&text, "imageBytes"), LIMITS.image_bytes);
    assert_eq!(number(&text, "images"), LIMITS.images);
    let types = &text[text.find("imageTypes: Object.freeze([").unwrap()..];
    let types: Vec<&str> = types[..types.find(']').unwrap()]
        .split('\'')
        .skip(1)
        .step_by(2)
        .collect();
    assert_eq!(types, LIMITS.image_types);
}
