//! `toolctx vectors`: the conformance vector runner of the core (the
//! `toolctx-vectors` crate, which `cargo run -p toolctx-core --example
//! vectors` runs too), with the same output contract: one line per failed
//! case, then `N passed, N failed`, and a non-zero exit on any failure.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use crate::common::{Outcome, EXIT_NEGATIVE, EXIT_OK};

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
    let tally = toolctx_vectors::run_files(args.files.iter().map(|f| f.to_string_lossy()));
    if args.json {
        let failures: Vec<&String> = tally.lines().collect();
        println!(
            "{}",
            json!({"passed": tally.passed, "failed": tally.failed_total(), "failures": failures})
        );
    } else {
        for line in tally.lines() {
            println!("{line}");
        }
        println!("{}", tally.summary());
    }
    Ok(if tally.ok() { EXIT_OK } else { EXIT_NEGATIVE })
}
