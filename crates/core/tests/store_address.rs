//! The store address vectors (`tests/vectors/store-address.json`) through
//! the core's reading; ends `N passed, N failed` (`-- --nocapture` shows it).
#![forbid(unsafe_code)]
#![allow(clippy::panic)]

#[test]
fn store_address_vectors_pass() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/store-address.json"
    );
    if let Err(e) = toolctx_vectors::store_address::run_files(
        &[file.to_string()],
        toolctx_vectors::store_address::core_reading,
    ) {
        panic!("{e}");
    }
}
