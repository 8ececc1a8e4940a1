//! The helper vectors (`tests/vectors/helpers.json`, and the cancellation
//! keys in `tests/vectors/cancel/`) through the core's helper rules; ends
//! `N passed, N failed` (`-- --nocapture` shows it).
#![forbid(unsafe_code)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// Runs the vector file at `path` (from the repository's root) through the core.
fn run(path: &str) {
    let file = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
    if let Err(e) =
        toolctx_vectors::helpers::run_files(&[file], toolctx_vectors::helpers::core_case)
    {
        panic!("{e}");
    }
}

#[test]
fn helper_vectors_pass() {
    run("tests/vectors/helpers.json");
}

#[test]
fn cancel_key_vectors_pass() {
    run("tests/vectors/cancel/call_keys.json");
}
