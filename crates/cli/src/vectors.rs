//! `toolctx vectors`: the conformance vector runner of the core
//! (crates/core/examples/vectors.rs, compiled in as `crate::runner`), with
//! the same output contract: one line per failed case, then
//! `N passed, N failed`, and a non-zero exit on any failure.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use crate::common::{Outcome, EXIT_NEGATIVE, EXIT_OK};
use crate::runner;

#[derive(Args, Debug)]
pub struct VectorsArgs {
    /// Vector files (docs/VECTORS.md)
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Print `{"passed", "failed", "failures"}` instead of lines
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &VectorsArgs) -> Outcome {
    let mut tally = runner::Tally::default();
    for f in &args.files {
        runner::run_file(&f.to_string_lossy(), &mut tally);
    }
    let failed = tally.failed + tally.broken.len();
    if args.json {
        let failures: Vec<&String> = tally.failures.iter().chain(&tally.broken).collect();
        println!(
            "{}",
            json!({"passed": tally.passed, "failed": failed, "failures": failures})
        );
    } else {
        for line in tally.failures.iter().chain(&tally.broken) {
            println!("{line}");
        }
        println!("{} passed, {} failed", tally.passed, failed);
    }
    Ok(if tally.ok() { EXIT_OK } else { EXIT_NEGATIVE })
}
