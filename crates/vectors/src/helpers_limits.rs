//! The helper vectors' `result_limits` and `progress` kinds (written by
//! `tests/vectors/helpers_limits_cases.py`): reading a case's input, the
//! core's answer, and judging any front end's answer against `expect`.
//!
//! - `result_limits`: `input.result_json_parts` (`[piece, times]` to
//!   concatenate) is the result's JSON; `expect` is `{"findings": [...]}`
//!   or `{"error": code}`.
//! - `progress`: `input.interval_ms` and `input.events` (`report`,
//!   `flush`, `close` at times in ms); a timer armed for a held report
//!   fires at its flush time, before an event at that same time. `expect`
//!   is `{"answers": [...], "sent": [{"at","progress","total","message"}]}`.

use serde_json::Value as J;
use toolctx_core::helpers::progress::{Coalescer, Report, Step, Tick};
use toolctx_core::helpers::results::{self, Finding};
use toolctx_core::settings::Raw;

use crate::helpers::{array, number, same};

/// The result's JSON text of a `result_limits` case.
pub fn result_json(input: &J) -> Result<String, String> {
    let parts = array(input, "result_json_parts")?;
    let mut out = String::new();
    for part in parts {
        let piece = part.get(0).and_then(J::as_str).ok_or("bad part")?;
        let times = part.get(1).and_then(J::as_u64).ok_or("bad part")?;
        out.push_str(&piece.repeat(usize::try_from(times).map_err(|e| e.to_string())?));
    }
    Ok(out)
}

/// A finding as the vectors write it.
pub fn finding_json(f: &Finding) -> J {
    let mut o = serde_json::Map::new();
    o.insert("code".into(), f.code.as_str().into());
    o.insert("message".into(), f.message.clone().into());
    o.insert("size".into(), f.size.into());
    o.insert("limit".into(), f.limit.into());
    if let Some(index) = f.index {
        o.insert("index".into(), index.into());
    }
    J::Object(o)
}

/// Judges a front end's findings (as vector JSON, numbers compared by
/// value) or its error. `exact_error`: whether the front end reports the
/// core's error code (the npm and Python packages raise `invalid_argument`
/// for any of them).
pub fn judge_result_limits(
    expect: &J,
    got: Result<Vec<J>, String>,
    exact_error: bool,
) -> Result<(), String> {
    match (expect.get("error").and_then(J::as_str), got) {
        (Some(code), Err(e)) if exact_error => same("error", e.as_str(), code),
        (Some(_), Err(_)) => Ok(()),
        (Some(code), Ok(f)) => Err(format!("expected error {code}, got {f:?}")),
        (None, Err(e)) => Err(format!("expected findings, got error {e}")),
        (None, Ok(found)) => {
            let want = array(expect, "findings")?;
            let norm = |v: &[J]| v.iter().map(normalize).collect::<Vec<_>>();
            same("findings", norm(&found), norm(want))
        }
    }
}

/// Numbers as f64, so `1` and `1.0` (from any writer) compare equal.
fn normalize(v: &J) -> J {
    match v {
        J::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(J::Null, J::Number),
        J::Array(a) => J::Array(a.iter().map(normalize).collect()),
        J::Object(o) => J::Object(o.iter().map(|(k, v)| (k.clone(), normalize(v))).collect()),
        other => other.clone(),
    }
}

/// The core's answer to a `result_limits` case.
pub fn core_result_limits(input: &J, expect: &J) -> Result<(), String> {
    let text = result_json(input)?;
    let got = results::check(text.as_bytes())
        .map(|f| f.iter().map(finding_json).collect())
        .map_err(|e| e.code().to_string());
    judge_result_limits(expect, got, true)
}

/// One event of a `progress` case.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Report(f64, Option<f64>, Option<String>),
    Flush,
    Close,
}

/// `(interval_ms, [(at, event)])` of a `progress` case.
pub fn progress_events(input: &J) -> Result<(u64, Vec<(u64, Event)>), String> {
    let interval = number(input, "interval_ms")?;
    let events = array(input, "events")?;
    let mut out = Vec::new();
    for e in events {
        let at = number(e, "at")?;
        let event = if let Some(r) = e.get("report") {
            let p = r.get(0).and_then(J::as_f64).ok_or("bad report")?;
            let total = r.get(1).and_then(J::as_f64);
            let message = r.get(2).and_then(J::as_str).map(String::from);
            Event::Report(p, total, message)
        } else if e.get("flush").is_some() {
            Event::Flush
        } else if e.get("close").is_some() {
            Event::Close
        } else {
            return Err(format!("unknown event {e}"));
        };
        out.push((at, event));
    }
    Ok((interval, out))
}

/// A notification as the vectors write it.
pub fn sent_json(at: u64, progress: f64, total: Option<f64>, message: Option<&str>) -> J {
    serde_json::json!({ "at": at, "progress": progress, "total": total, "message": message })
}

/// Judges a front end's answers and notifications.
pub fn judge_progress(expect: &J, answers: &[String], sent: &[J]) -> Result<(), String> {
    let want: Vec<&str> = array(expect, "answers")?
        .iter()
        .filter_map(J::as_str)
        .collect();
    let got: Vec<&str> = answers.iter().map(String::as_str).collect();
    same("answers", got, want)?;
    judge_sent(expect, sent)
}

/// Judges the notifications alone (a front end whose reporter does not
/// tell its answers).
pub fn judge_sent(expect: &J, sent: &[J]) -> Result<(), String> {
    let want = array(expect, "sent")?;
    let norm = |v: &[J]| v.iter().map(normalize).collect::<Vec<_>>();
    same("sent", norm(sent), norm(want))
}

/// The core's answer to a `progress` case: the events through a
/// [`Coalescer`], with the one timer a front end keeps.
pub fn core_progress(input: &J, expect: &J) -> Result<(), String> {
    let (interval, events) = progress_events(input)?;
    // The interval is the user's setting, read by the table (0: the default).
    let mut c = Coalescer::with_setting(Raw::Number(interval as f64)).map_err(|e| e.to_string())?;
    let mut timer: Option<u64> = None;
    let mut answers = Vec::new();
    let mut sent = Vec::new();
    let record = |sent: &mut Vec<J>, at: u64, r: &Report| {
        sent.push(sent_json(at, r.progress, r.total, r.message.as_deref()));
    };
    let fire_until = |c: &mut Coalescer, timer: &mut Option<u64>, sent: &mut Vec<J>, t: u64| {
        while let Some(at) = timer.filter(|&at| at <= t) {
            *timer = None;
            match c.tick(at) {
                Tick::Send(r) => record(sent, at, &r),
                Tick::Wait(next) => *timer = Some(next),
                Tick::Idle => {}
            }
        }
    };
    for (at, event) in events {
        fire_until(&mut c, &mut timer, &mut sent, at);
        let answer = match event {
            Event::Report(p, total, message) => match c.report(at, p, total, message) {
                Step::Send(r) => {
                    timer = None;
                    record(&mut sent, at, &r);
                    "send".to_string()
                }
                Step::Hold { flush_at, arm } => {
                    if arm {
                        timer = Some(flush_at);
                    }
                    "hold".to_string()
                }
                Step::Drop(why) => format!("drop:{}", why.as_str()),
            },
            Event::Flush => match c.flush(at) {
                Some(r) => {
                    timer = None;
                    record(&mut sent, at, &r);
                    "send".to_string()
                }
                None => "none".to_string(),
            },
            Event::Close => {
                c.close();
                timer = None;
                "closed".to_string()
            }
        };
        answers.push(answer);
    }
    fire_until(&mut c, &mut timer, &mut sent, u64::MAX);
    judge_progress(expect, &answers, &sent)
}
