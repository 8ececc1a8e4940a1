//! Conformance vector runner for the Rust core (format: docs/VECTORS.md).
//!
//! ```text
//! cargo run -q -p toolctx-core --example vectors -- tests/vectors/*.json
//! ```
//!
//! Prints one line per failed case and ends with `N passed, N failed`; exits
//! non-zero when a case failed or a file could not be read. The runner
//! itself is the `toolctx-vectors` crate (crates/vectors), which
//! `toolctx vectors` runs too.
#![forbid(unsafe_code)]

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: vectors FILE...");
        std::process::exit(2);
    }
    let tally = toolctx_vectors::run_files(&paths);
    for line in tally.lines() {
        println!("{line}");
    }
    println!("{}", tally.summary());
    std::process::exit(if tally.ok() { 0 } else { 1 });
}
