//! The settings vectors (`tests/vectors/settings.json`) through the core's
//! table; ends `N passed, N failed` (`-- --nocapture` shows it).
#![forbid(unsafe_code)]
#![allow(clippy::panic)]

#[test]
fn settings_vectors_pass() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/settings.json"
    );
    if let Err(e) = toolctx_vectors::settings::run_files(
        &[file.to_string()],
        toolctx_vectors::settings::core_reading,
    ) {
        panic!("{e}");
    }
}
