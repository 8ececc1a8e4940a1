//! Every committed conformance vector file through the core.
#![forbid(unsafe_code)]

#[test]
fn committed_vectors_pass() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/vectors");
    let mut files = toolctx_vectors::verdict_files(dir.as_ref());
    files.extend(toolctx_vectors::verdict_files(
        format!("{dir}/conventions").as_ref(),
    ));
    assert!(!files.is_empty(), "no vector files in {dir}");
    let tally = toolctx_vectors::run_files(&files);
    for line in tally.lines() {
        eprintln!("{line}");
    }
    assert!(tally.ok(), "{}", tally.summary());
    assert!(tally.passed >= 150, "only {} cases", tally.passed);
}
