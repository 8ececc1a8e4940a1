//! The in-memory idempotency store vectors (`tests/vectors/memory-store.json`)
//! through the core's store; ends `N passed, N failed` (`-- --nocapture`
//! shows it).
#![forbid(unsafe_code)]
#![allow(clippy::panic)]

#[test]
fn memory_store_vectors_pass() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/memory-store.json"
    );
    if let Err(e) = toolctx_vectors::memory_store::run_files(
        &[file.to_string()],
        toolctx_vectors::memory_store::core_store,
    ) {
        panic!("{e}");
    }
}
