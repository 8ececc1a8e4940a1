//! The conformance vector runner for the Rust core (format: docs/VECTORS.md),
//! one copy for its three users:
//!
//! ```text
//! cargo run -q -p toolctx-core --example vectors -- tests/vectors/*.json
//! toolctx vectors tests/vectors/*.json
//! cargo test -p toolctx-core --test vectors
//! ```
//!
//! [`run_file`] runs every case of a file into a [`Tally`]; its
//! [`Tally::lines`] are one line per failed case or unreadable file and
//! [`Tally::summary`] the closing `N passed, N failed`. The files are read
//! with serde_json, not with the reader under test, and with its
//! `arbitrary_precision`: numbers stay exactly as written, and every
//! expectation is compared by value through the core's JSON equality.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use base64::Engine as _;
use serde_json::{Map, Value as J};
use toolctx_core::aivax::AivaxVerifier;
use toolctx_core::forward::Upstream;
use toolctx_core::{jcs, json, names, Accepted, Config, UnknownSettings, Verdict, Verifier};

/// The outcome of a set of vector files.
#[derive(Default)]
pub struct Tally {
    pub passed: usize,
    pub failed: usize,
    /// One line per failed case, `file: case: expected ..., got ...`.
    pub failures: Vec<String>,
    /// Files that could not be read or are not vector files.
    pub broken: Vec<String>,
    /// Files of another format (helpers, settings, ...), left to their own
    /// runners: a note each, not a failure, so `tests/vectors/*.json` runs.
    pub skipped: Vec<String>,
}

impl Tally {
    pub fn ok(&self) -> bool {
        self.failed == 0 && self.broken.is_empty()
    }

    /// Failed cases and unreadable files together, as the summary counts them.
    pub fn failed_total(&self) -> usize {
        self.failed + self.broken.len()
    }

    /// The lines to print before the summary: skipped files, failures,
    /// then broken files.
    pub fn lines(&self) -> impl Iterator<Item = &String> {
        self.skipped
            .iter()
            .chain(&self.failures)
            .chain(&self.broken)
    }

    /// Counts one case's result.
    pub fn count(&mut self, path: &str, name: &str, result: Result<(), String>) {
        match result {
            Ok(()) => self.passed += 1,
            Err(e) => {
                self.failed += 1;
                self.failures.push(format!("{path}: {name}: {e}"));
            }
        }
    }

    /// `N passed, N failed`.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failed_total())
    }

    /// Prints one line per failure and the summary; `Err` when anything
    /// failed or no case ran (`nothing`: the error for the latter).
    pub fn finish(&self, nothing: &str) -> Result<(), String> {
        for line in self.lines() {
            println!("{line}");
        }
        println!("{}", self.summary());
        if self.passed == 0 {
            return Err(nothing.into());
        }
        if self.ok() {
            Ok(())
        } else {
            Err(self.summary())
        }
    }
}

/// Case config merged over the file's, one level deep.
pub fn merged(file: &J, case: &J) -> J {
    let mut out: Map<String, J> = file
        .get("config")
        .and_then(J::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(over) = case.get("config").and_then(J::as_object) {
        for (k, v) in over {
            out.insert(k.clone(), v.clone());
        }
    }
    J::Object(out)
}

/// JSON equality as the contract defines it, through the core's own
/// comparison (numbers by value: `1 == 1.0`).
fn json_eq(a: &J, b_text: &str) -> bool {
    let a_text = a.to_string();
    match (
        json::parse(a_text.as_bytes()),
        json::parse(b_text.as_bytes()),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn describe<C: Accepted>(v: &Verdict<C>) -> String {
    match v {
        Verdict::Pass => "pass".into(),
        Verdict::Accept(c) => format!("accept {}", c.to_json()),
        Verdict::Reject(r) => format!(
            "reject {} {} {} id={}",
            r.status(),
            r.code(),
            r.reason().as_str(),
            r.id_json()
        ),
    }
}

/// Checks one verdict of either profile against `expect`; `Err` says
/// what differs. An expected context field must be present with that
/// value (`null`: absent or null).
pub fn judge<C: Accepted>(expect: &J, verdict: &Verdict<C>) -> Result<(), String> {
    let outcome = expect.get("outcome").and_then(J::as_str).unwrap_or("");
    let bad = |what: &str| Err(format!("expected {what}, got {}", describe(verdict)));
    match (outcome, verdict) {
        ("pass", Verdict::Pass) => Ok(()),
        ("accept", Verdict::Accept(ctx)) => {
            let got: J = serde_json::from_str(&ctx.to_json()).map_err(|e| e.to_string())?;
            if let Some(fields) = expect.get("context").and_then(J::as_object) {
                for (k, v) in fields {
                    let g = got
                        .get(k)
                        .map(J::to_string)
                        .unwrap_or_else(|| "null".into());
                    let present = got.get(k).is_some() || v.is_null();
                    if !present || !json_eq(v, &g) {
                        return bad(&format!("context.{k} = {v}"));
                    }
                }
            }
            Ok(())
        }
        ("reject", Verdict::Reject(r)) => {
            let by_value =
                |key: &str, got: String| expect.get(key).is_some_and(|v| json_eq(v, &got));
            if !by_value("status", r.status().to_string())
                || !by_value("code", r.code().to_string())
            {
                return bad(&format!("reject {} {}", expect["status"], expect["code"]));
            }
            if let Some(reason) = expect.get("reason").and_then(J::as_str) {
                if reason != r.reason().as_str() {
                    return bad(&format!("reason {reason}"));
                }
            }
            if let Some(id) = expect.get("id") {
                if !json_eq(id, r.id_json()) {
                    return bad(&format!("id {id}"));
                }
            }
            // The rendered body must say the same as the verdict.
            let body: J = serde_json::from_str(&r.body(true))
                .map_err(|e| format!("refusal body not JSON: {e}"))?;
            let consistent = body["jsonrpc"] == "2.0"
                && body["error"]["code"].as_i64() == Some(i64::from(r.code()))
                && body["error"]["message"].as_str() == Some(r.message())
                && body["error"]["data"]["reason"].as_str() == Some(r.reason().as_str())
                && json_eq(&body["id"], r.id_json());
            if !consistent {
                return Err(format!("refusal body inconsistent: {}", r.body(true)));
            }
            Ok(())
        }
        _ => bad(outcome),
    }
}

/// A case's request as a front end receives it.
pub struct Request {
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Decodes a case's request.
pub fn request(case: &J) -> Result<Request, String> {
    let req = case.get("request").ok_or("no request")?;
    let method = req
        .get("method")
        .and_then(J::as_str)
        .unwrap_or("POST")
        .to_string();
    let mut headers = Vec::new();
    for pair in req
        .get("headers")
        .and_then(J::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
    {
        match (
            pair.get(0).and_then(J::as_str),
            pair.get(1).and_then(J::as_str),
        ) {
            (Some(n), Some(v)) => headers.push((n.to_string(), v.to_string())),
            _ => return Err(format!("bad header pair {pair}")),
        }
    }
    let body = if let Some(b) = req.get("body").and_then(J::as_str) {
        b.as_bytes().to_vec()
    } else if let Some(b) = req.get("body_b64").and_then(J::as_str) {
        base64::engine::general_purpose::STANDARD
            .decode(b)
            .map_err(|e| format!("body_b64: {e}"))?
    } else {
        Vec::new()
    };
    Ok(Request {
        method,
        headers,
        body,
    })
}

/// One case of a small per-feature table (`tests/vectors/conventions`).
fn table_case(case: &J) -> Option<Result<(), String>> {
    let s = |k: &str| case.get(k).and_then(J::as_str);
    let expected = s("expected")?;
    let got = if let (Some(instance), Some(tool)) = (s("instance"), s("tool")) {
        Ok(names::qualified_tool_name(instance, tool))
    } else if let (Some(session), Some(turn), Some(tool)) = (s("session_id"), s("turn"), s("tool"))
    {
        let parsed = json::parse(s("arguments").unwrap_or("{}").as_bytes());
        match parsed {
            Ok(v) => jcs::tuix_idempotency_key(session, turn, tool, &v).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        }
    } else {
        return None;
    };
    Some(match got {
        Ok(g) if g == expected => Ok(()),
        Ok(g) => Err(format!("expected {expected}, got {g}")),
        Err(e) => Err(format!("expected {expected}, got error {e}")),
    })
}

/// Runs every case of one file into `tally`.
pub fn run_file(path: &str, tally: &mut Tally) {
    run_file_with(path, tally, |file, case| {
        let aivax = file.get("profile").and_then(J::as_str) == Some("aivax");
        if let Some(r) = table_case(case) {
            return r;
        }
        if aivax {
            let verifier = AivaxVerifier::from_json(
                merged(file, case).to_string().as_bytes(),
                UnknownSettings::Ignore,
            )
            .map_err(|e| format!("config: {e}"))?;
            let r = request(case)?;
            let expect = case.get("expect").unwrap_or(&J::Null);
            let verdict = verifier.check(&r.method, &r.headers, &r.body);
            judge(expect, &verdict)?;
            return judge_forward(
                expect,
                &upstream_headers(&r.headers, verifier.upstream(&verdict)),
            );
        }
        let verifier = verifier(file, case)?;
        let now = case_now(file, case)?;
        let r = request(case)?;
        let verdict = verifier.check(&r.method, &r.headers, &r.body, now);
        let expect = case.get("expect").unwrap_or(&J::Null);
        judge(expect, &verdict)?;
        // The check reads only `read_headers`: a front end that passes those
        // alone (npm's, for fetch's `Headers`) gets the same verdict.
        let read: Vec<&str> = verifier.read_headers().into_iter().flatten().collect();
        let only: Vec<(String, String)> = r
            .headers
            .iter()
            .filter(|(n, _)| read.iter().any(|h| n.eq_ignore_ascii_case(h)))
            .cloned()
            .collect();
        let alone = verifier.check(&r.method, &only, &r.body, now);
        judge(expect, &alone).map_err(|e| format!("with only the headers it reads: {e}"))?;
        judge_forward(
            expect,
            &upstream_headers(&r.headers, verifier.upstream(&verdict)),
        )
    });
}

/// The request's headers as they would reach the upstream: every copy of a
/// removed name dropped (any letter case), then the added pairs.
pub fn upstream_headers(
    headers: &[(String, String)],
    upstream: Option<Upstream<'_>>,
) -> Vec<(String, String)> {
    let Some(up) = upstream else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = headers
        .iter()
        .filter(|(n, _)| !up.remove.iter().any(|r| r.eq_ignore_ascii_case(n)))
        .cloned()
        .collect();
    out.extend(up.set.iter().cloned());
    out
}

/// Checks `expect.forward` (header name -> value, or `null` for a header
/// that must not arrive) against the headers that reached the upstream;
/// `Err` names the header, what was expected and what arrived.
pub fn judge_forward(expect: &J, arrived: &[(String, String)]) -> Result<(), String> {
    let Some(want) = expect.get("forward").and_then(J::as_object) else {
        return Ok(());
    };
    for (name, value) in want {
        let got: Vec<&str> = arrived
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect();
        let ok = match value.as_str() {
            Some(v) => got == [v],
            None => got.is_empty(),
        };
        if !ok {
            let got = match got.as_slice() {
                [] => "nothing".to_string(),
                vs => vs
                    .iter()
                    .map(|v| format!("{v:?}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            return Err(format!("forward {name}: expected {value}, got {got}"));
        }
    }
    Ok(())
}

/// The AgentArea verifier of a case: its config merged over the file's.
pub fn verifier(file: &J, case: &J) -> Result<Verifier, String> {
    let config = Config::from_json(
        merged(file, case).to_string().as_bytes(),
        UnknownSettings::Ignore,
    )
    .map_err(|e| format!("config: {e}"))?;
    Verifier::new(config).map_err(|e| format!("config: {e}"))
}

/// The case's `now` (or the file's; 0 when neither has one).
pub fn case_now(file: &J, case: &J) -> Result<u64, String> {
    match case.get("now").or_else(|| file.get("now")) {
        None => Ok(0),
        Some(n) => n.as_u64().ok_or(format!("now {n} is not Unix seconds")),
    }
}

/// Whether a case is a row of a per-feature table (`tests/vectors/conventions`)
/// rather than a request.
pub fn is_table_case(case: &J) -> bool {
    table_case(case).is_some()
}

/// The `"format"` of the helper vectors (`tests/vectors/helpers.json`):
/// rules after the verdict, not requests, so a verdict runner refuses them.
pub const HELPERS_FORMAT: &str = "toolctx-helpers";

/// Whether a vector file is helper vectors (its top-level `"format"`).
pub fn is_helper_file(file: &J) -> bool {
    file.get("format").and_then(J::as_str) == Some(HELPERS_FORMAT)
}

/// The `"format"` of the settings vectors (`tests/vectors/settings.json`).
pub const SETTINGS_FORMAT: &str = "toolctx-settings";

/// The `format` of the in-memory idempotency store vectors.
pub const MEMORY_STORE_FORMAT: &str = "toolctx-memory-store";

/// The `format` of the store address vectors.
pub const STORE_ADDRESS_FORMAT: &str = "toolctx-store-address";

/// The `format` of the policy vectors (`tests/vectors/policy.json`).
pub const POLICY_FORMAT: &str = "toolctx-policy";

/// Whether a vector file is not verdict vectors: it names a `"format"`
/// (the helper vectors, the settings vectors).
pub fn is_other_format(file: &J) -> bool {
    file.get("format").is_some()
}

/// The verdict vector files of a folder (`*.json`, helper vectors left
/// out), sorted: what `tests/vectors/*.json` means to a verdict runner.
pub fn verdict_files(dir: &std::path::Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .filter(|p| {
                    let text = std::fs::read_to_string(p).unwrap_or_default();
                    !serde_json::from_str(&text).is_ok_and(|f: J| is_other_format(&f))
                })
                .map(|p| p.to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Why a file is another format's, not verdict vectors (its top-level
/// `"format"`), naming the runner that reads it; `None` for verdict vectors.
pub fn other_format_note(path: &str, file: &J) -> Option<String> {
    let format = file.get("format")?;
    let runner = match format.as_str().unwrap_or("") {
        HELPERS_FORMAT => "cargo test -p toolctx-core --test helpers",
        SETTINGS_FORMAT => "cargo test -p toolctx-core --test settings",
        MEMORY_STORE_FORMAT => "cargo test -p toolctx-core --test memory_store",
        STORE_ADDRESS_FORMAT => "cargo test -p toolctx-core --test store_address",
        POLICY_FORMAT => "cargo test -p toolctx-core --test policy",
        _ => "not this runner",
    };
    Some(format!(
        "skipped: {path}: \"format\": {format} is not verdict vectors (run by {runner})"
    ))
}

/// What [`load`] found in a file: verdict cases, or a file of another
/// format ([`other_format_note`]).
pub enum Loaded {
    Cases(J, Vec<(String, J)>),
    Other(String),
}

/// A vector file and its cases, each with its name (`#i` when it has
/// none), or the note of a file of another format; `Err` says why the
/// file cannot be read.
pub fn load(path: &str) -> Result<Loaded, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let file: J = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    if let Some(note) = other_format_note(path, &file) {
        return Ok(Loaded::Other(note));
    }
    let cases = file
        .get("cases")
        .and_then(J::as_array)
        .ok_or(format!("{path}: no cases"))?
        .iter()
        .enumerate()
        .map(|(i, case)| {
            let name = case
                .get("name")
                .and_then(J::as_str)
                .map(String::from)
                .unwrap_or_else(|| format!("#{i}"));
            (name, case.clone())
        })
        .collect();
    Ok(Loaded::Cases(file, cases))
}

/// Runs `check(file, case)` on every case of one file into `tally`: the
/// loop every runner shares (reading the file, naming cases, counting).
pub fn run_file_with(
    path: &str,
    tally: &mut Tally,
    mut check: impl FnMut(&J, &J) -> Result<(), String>,
) {
    let (file, cases) = match load(path) {
        Ok(Loaded::Cases(file, cases)) => (file, cases),
        Ok(Loaded::Other(note)) => return tally.skipped.push(note),
        Err(e) => return tally.broken.push(e),
    };
    for (name, case) in &cases {
        tally.count(path, name, check(&file, case));
    }
}

/// Runs every case of every file.
pub fn run_files<P: AsRef<str>>(paths: impl IntoIterator<Item = P>) -> Tally {
    let mut tally = Tally::default();
    for p in paths {
        run_file(p.as_ref(), &mut tally);
    }
    tally
}

/// Runs every case of the vector file `path`, which must name `format`
/// (the helper, settings, memory store and store address vectors), through
/// `case` into `tally`: a file that cannot be read, names another format or
/// holds no case is broken.
pub fn run_format_file(
    path: &str,
    format: &str,
    tally: &mut Tally,
    case: &mut dyn FnMut(&J) -> Result<(), String>,
) {
    let read = std::fs::read_to_string(path)
        .map_err(|e| format!("{path}: {e}"))
        .and_then(|text| serde_json::from_str::<J>(&text).map_err(|e| format!("{path}: {e}")));
    let file = match read {
        Ok(file) if file.get("format").and_then(J::as_str) == Some(format) => file,
        Ok(_) => return tally.broken.push(format!("{path}: not {format} vectors")),
        Err(e) => return tally.broken.push(e),
    };
    let cases = file
        .get("cases")
        .and_then(J::as_array)
        .cloned()
        .unwrap_or_default();
    if cases.is_empty() {
        return tally.broken.push(format!("{path}: no cases"));
    }
    for c in &cases {
        let name = c.get("name").and_then(J::as_str).unwrap_or("?");
        tally.count(path, name, case(c));
    }
}

/// [`run_format_file`] over `paths`, printing one line per failure and the
/// closing `N passed, N failed`; `Err` when anything failed or no case ran.
pub fn run_format_files(
    paths: &[String],
    format: &str,
    mut case: impl FnMut(&J) -> Result<(), String>,
) -> Result<(), String> {
    let mut tally = Tally::default();
    for path in paths {
        run_format_file(path, format, &mut tally, &mut case);
    }
    tally.finish(&format!("no {format} case ran"))
}

pub mod helpers;
pub mod helpers_limits;
pub mod memory_store;
pub mod policy;
pub mod settings;
pub mod store_address;
