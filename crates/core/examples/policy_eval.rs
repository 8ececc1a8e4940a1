//! The differential test's Rust side (tests/policy/): one case a line on
//! stdin, `{"expr": "...", "input": {"claims": {...}, "args": {...},
//! "meta": {...}, "tool": "..."}}`, one answer a line on stdout: `REFUSED`
//! when the expression is refused at configuration, `ERROR` when it
//! evaluates to an error, else `VALUE <value>` in the tagged notation of
//! `Program::value_json`.

use std::io::{BufRead, Write};

use toolctx_core::json::{parse, Value};
use toolctx_core::policy::{Input, Program};

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout());
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let answer = answer(&line);
        let _ = writeln!(out, "{answer}");
    }
    let _ = out.flush();
}

fn answer(line: &str) -> String {
    let Ok(case) = parse(line.as_bytes()) else {
        return String::from("BADCASE");
    };
    let Some(expr) = case.get("expr").and_then(Value::as_str) else {
        return String::from("BADCASE");
    };
    let program = match Program::compile_any(expr) {
        Ok(p) => p,
        Err(e) => return format!("REFUSED {}", e.kind),
    };
    // The input read in place, as the verifier reads a request's
    // arguments and `_meta`; with `--tree`, through parsed values.
    if std::env::args().any(|a| a == "--tree") {
        let input = case.get("input");
        let field = |name: &str| input.and_then(|i| i.get(name));
        let input = Input {
            claims: field("claims"),
            args: field("args"),
            meta: field("meta"),
            tool: field("tool").and_then(Value::as_str).unwrap_or(""),
        };
        return match program.value_json(&input) {
            Some(v) => format!("VALUE {v}"),
            None => String::from("ERROR"),
        };
    }
    // The input object's text, written again by serde_json (which keeps
    // numbers as written here: the vectors crate turns on its
    // arbitrary_precision).
    let Ok(full) = serde_json::from_str::<serde_json::Value>(line) else {
        return String::from("BADCASE");
    };
    let text = full
        .get("input")
        .map(ToString::to_string)
        .unwrap_or_default();
    match program.value_json_of(text.as_bytes()) {
        Some(Some(v)) => format!("VALUE {v}"),
        Some(None) => String::from("ERROR"),
        None => String::from("BADCASE"),
    }
}
