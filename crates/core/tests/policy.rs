//! The policy vectors (`tests/vectors/policy.json`) through the core's
//! verifier; ends `N passed, N failed` (`-- --nocapture` shows it).
#![forbid(unsafe_code)]
#![allow(clippy::panic)]

#[test]
fn policy_vectors_pass() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/policy.json"
    );
    if let Err(e) = toolctx_vectors::policy::run_files(&[file.to_string()]) {
        panic!("{e}");
    }
}
