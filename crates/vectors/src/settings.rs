//! The settings vectors (`tests/vectors/settings.json`, written by
//! `tests/vectors/generate_settings.py`): each case names a setting and the
//! value a user gave (or none), and expects the value read or the refusal.
//! [`run_files`] reads the files and hands each case to a front end's
//! reading; [`core_reading`] is the core's own, which the core's runner
//! uses and the Rust front ends' runners wrap.

use serde_json::{json, Value as J};
use toolctx_core::settings::{self, Raw, Value};

use crate::{run_format_files, SETTINGS_FORMAT};

/// What a front end answers for a setting and a raw value (`None`: not
/// given): the value it will use, as JSON, or the refusal's code and message.
pub type Answer = Result<J, (String, String)>;

/// The core's reading of `raw` for `name` (JSON mapped as a host would:
/// `null` as not given, numbers as doubles).
pub fn core_reading(name: &str, raw: Option<&J>) -> Answer {
    let raw = match raw {
        None | Some(J::Null) => Raw::Absent,
        Some(J::Bool(b)) => Raw::Flag(*b),
        Some(J::Number(n)) => Raw::Number(n.as_f64().unwrap_or(f64::NAN)),
        Some(J::String(s)) => Raw::Text(s),
        Some(_) => Raw::Other,
    };
    settings::read(name, raw)
        .map(|v| match v {
            Value::Flag(b) => J::Bool(b),
            Value::Number(n) => J::from(n),
            Value::Text(t) => J::from(t),
        })
        .map_err(|e| (e.code().to_string(), e.to_string()))
}

fn expected(expect: &J) -> Answer {
    match expect.get("value") {
        Some(v) => Ok(v.clone()),
        None => Err((
            expect["error"].as_str().unwrap_or("").to_string(),
            expect["message"].as_str().unwrap_or("").to_string(),
        )),
    }
}

/// One settings case through `reading`.
fn run_case(case: &J, reading: &mut dyn FnMut(&str, Option<&J>) -> Answer) -> Result<(), String> {
    let setting = case["setting"].as_str().unwrap_or("");
    let want = expected(&case["expect"]);
    let got = reading(setting, case.get("raw"));
    // Numbers by value (the file's `1048576` and a front end's `1048576.0`).
    let same = match (&want, &got) {
        (Ok(J::Number(a)), Ok(J::Number(b))) => a.as_f64() == b.as_f64(),
        _ => want == got,
    };
    if same {
        Ok(())
    } else {
        Err(format!("expected {}, got {}", show(&want), show(&got)))
    }
}

fn show(a: &Answer) -> String {
    match a {
        Ok(v) => json!({ "value": v }).to_string(),
        Err((code, message)) => json!({ "error": code, "message": message }).to_string(),
    }
}

/// Every case of the settings vector files `paths` through `reading`,
/// printing one line per failure and the closing `N passed, N failed`;
/// `Err` when anything failed or no case ran.
pub fn run_files(
    paths: &[String],
    mut reading: impl FnMut(&str, Option<&J>) -> Answer,
) -> Result<(), String> {
    run_format_files(paths, SETTINGS_FORMAT, |case| run_case(case, &mut reading))
}
