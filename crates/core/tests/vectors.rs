//! Every committed conformance vector file through the core.
#![forbid(unsafe_code)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

#[test]
fn committed_vectors_pass() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/vectors");
    let list = |dir: &str| -> Vec<String> {
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .expect("vector folder exists")
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        files.sort();
        files
    };
    let mut files = list(dir);
    files.extend(list(&format!("{dir}/conventions")));
    assert!(!files.is_empty(), "no vector files in {dir}");
    let tally = toolctx_vectors::run_files(&files);
    for line in tally.lines() {
        eprintln!("{line}");
    }
    assert!(tally.ok(), "{}", tally.summary());
    assert!(tally.passed >= 150, "only {} cases", tally.passed);
}
