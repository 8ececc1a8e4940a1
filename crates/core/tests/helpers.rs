//! The helper vectors (`tests/vectors/helpers.json`, and the cancellation
//! keys in `tests/vectors/cancel/`) through the core's helper rules; ends `N passed, N failed` (`-- --nocapture` shows it).
#![forbid(unsafe_code)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[test]
fn helper_vectors_pass() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/helpers.json"
    );
    if let Err(e) = toolctx_vectors::helpers::run_files(
        &[file.to_string()],
        toolctx_vectors::helpers::core_case,
    ) {
        panic!("{e}");
    }
}

#[test]
fn cancel_key_vectors_pass() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/cancel/call_keys.json"
    );
    if let Err(e) = toolctx_vectors::helpers::run_files(
        &[file.to_string()],
        toolctx_vectors::helpers::core_case,
    ) {
        panic!("{e}");
    }
}
