//! The policy vectors (`tests/vectors/policy.json`, written by
//! `tests/vectors/generate_policy.py`, CONTRACT §8): `compile` cases read a
//! `policy` setting and expect it taken or refused (with the rule and the
//! position), `call` cases verify a request under a policy and expect its
//! verdict (a refusal naming the rule, or an accepted call with the audit
//! finding). [`run_files`] runs them through the core's verifier.

use serde_json::{Map, Value as J};
use toolctx_core::{Config, ConfigError, UnknownSettings, Verdict, Verifier};

use crate::{Tally, POLICY_FORMAT};

/// The configuration of a case: the file's settings, the case's
/// `settings` over them, and its `policy`.
fn config_text(file: &J, case: &J) -> String {
    let mut out: Map<String, J> = file["config"].as_object().cloned().unwrap_or_default();
    if let Some(more) = case.get("settings").and_then(J::as_object) {
        out.extend(more.clone());
    }
    out.insert("policy".into(), case["policy"].clone());
    J::Object(out).to_string()
}

fn compile_case(file: &J, case: &J) -> Result<(), String> {
    let got = Config::from_json(config_text(file, case).as_bytes(), UnknownSettings::Refuse)
        .and_then(Verifier::new);
    let expect = &case["expect"];
    match (got, expect.get("ok")) {
        (Ok(_), Some(_)) => Ok(()),
        (Ok(_), None) => Err(format!("expected a refusal {expect}, the policy was taken")),
        (Err(e), Some(_)) => Err(format!("expected the policy taken, got {e}")),
        (Err(e), None) => {
            if e.code() != expect["code"].as_str().unwrap_or("") {
                return Err(format!(
                    "expected {}, got {} ({e})",
                    expect["code"],
                    e.code()
                ));
            }
            let Some(rule) = expect.get("rule") else {
                return Ok(());
            };
            let ConfigError::Policy(toolctx_core::policy::PolicyError::Expression {
                rule: got_rule,
                line,
                column,
                ..
            }) = &e
            else {
                return Err(format!("expected an expression's refusal, got {e}"));
            };
            let want = (
                rule.as_str(),
                expect["line"].as_u64(),
                expect["column"].as_u64(),
            );
            let have = (
                Some(got_rule.as_str()),
                Some(*line as u64),
                Some(*column as u64),
            );
            if want == have {
                Ok(())
            } else {
                Err(format!(
                    "expected rule {rule} at {}:{}, got {e}",
                    expect["line"], expect["column"]
                ))
            }
        }
    }
}

fn call_case(file: &J, case: &J) -> Result<(), String> {
    let config = Config::from_json(config_text(file, case).as_bytes(), UnknownSettings::Refuse)
        .and_then(Verifier::new)
        .map_err(|e| format!("configuration refused: {e}"))?;
    let req = &case["request"];
    let headers: Vec<(String, String)> = req["headers"]
        .as_array()
        .map(|hs| {
            hs.iter()
                .map(|h| {
                    (
                        h[0].as_str().unwrap_or("").into(),
                        h[1].as_str().unwrap_or("").into(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let now = file["now"].as_u64().unwrap_or(0);
    let verdict = config.check(
        req["method"].as_str().unwrap_or(""),
        &headers,
        req["body"].as_str().unwrap_or("").as_bytes(),
        now,
    );
    let expect = &case["expect"];
    let got = match &verdict {
        Verdict::Pass => serde_json::json!({"outcome": "pass"}),
        Verdict::Accept(ctx) => {
            serde_json::json!({"outcome": "accept", "policy_audit": ctx.policy_audit})
        }
        Verdict::Reject(r) => {
            let body: J = serde_json::from_str(&r.body(true)).unwrap_or(J::Null);
            let mut out = serde_json::json!({
                "outcome": "reject",
                "status": r.status(),
                "code": r.code(),
                "reason": r.reason().as_str(),
                "id": body["id"],
            });
            // The rule is in the body's data, where a client reads it.
            if let Some(rule) = body["error"]["data"].get("rule") {
                out["rule"] = rule.clone();
            }
            out
        }
    };
    let same = got.as_object().map(|g| g.len()) == expect.as_object().map(|e| e.len())
        && expect.as_object().is_some_and(|e| {
            e.iter()
                .all(|(k, v)| got.get(k).is_some_and(|g| same_value(g, v)))
        });
    if same {
        Ok(())
    } else {
        Err(format!("expected {expect}, got {got}"))
    }
}

/// Numbers by value (arbitrary precision keeps `9` and `9.0` apart).
fn same_value(a: &J, b: &J) -> bool {
    match (a, b) {
        (J::Number(x), J::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Runs every case of the policy vector file `path` into `tally`.
pub fn run_file(path: &str, tally: &mut Tally) {
    let read = std::fs::read_to_string(path)
        .map_err(|e| format!("{path}: {e}"))
        .and_then(|text| serde_json::from_str::<J>(&text).map_err(|e| format!("{path}: {e}")));
    let file = match read {
        Ok(file) if file.get("format").and_then(J::as_str) == Some(POLICY_FORMAT) => file,
        Ok(_) => return tally.broken.push(format!("{path}: not policy vectors")),
        Err(e) => return tally.broken.push(e),
    };
    let cases = file["cases"].as_array().cloned().unwrap_or_default();
    if cases.is_empty() {
        return tally.broken.push(format!("{path}: no cases"));
    }
    for case in &cases {
        let name = case["name"].as_str().unwrap_or("?");
        let outcome = match case["kind"].as_str() {
            Some("compile") => compile_case(&file, case),
            Some("call") => call_case(&file, case),
            other => Err(format!("unknown case kind {other:?}")),
        };
        tally.count(path, name, outcome);
    }
}

/// [`run_file`] over `paths`, printing one line per failure and the
/// closing `N passed, N failed`; `Err` when anything failed or no case ran.
pub fn run_files(paths: &[String]) -> Result<(), String> {
    let mut tally = Tally::default();
    for path in paths {
        run_file(path, &mut tally);
    }
    tally.finish("no policy case ran")
}
