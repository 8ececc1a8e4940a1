//! The settings vectors (`tests/vectors/settings.json`) through
//! toolctx-tower: each value its API can take (a `Duration` for the
//! idempotency helper's ttl/lease/wait and `Redis::connect`'s timeout, a
//! count for the memory stores, a flag for `include_reason`) goes through
//! the reading the builders use (`toolctx_tower::settings`) and
//! `MemoryReplayStore`'s capacity; a value its types cannot hold (a
//! negative or fractional count, a text for a number, settings it has no
//! option for) never reaches tower, and takes the core's answer.
//! Ends `N passed, N failed` (`-- --nocapture` shows it).
#![allow(clippy::panic)]

use serde_json::Value as J;
use std::time::Duration;
use toolctx_core::settings::{self as table, Kind};
use toolctx_tower::settings;
use toolctx_vectors::settings::{core_reading, run_files, Answer};

fn refusal(e: impl std::fmt::Display, code: &str) -> (String, String) {
    (code.to_string(), e.to_string())
}

fn tower_reading(name: &str, raw: Option<&J>) -> Answer {
    let Some(row) = table::setting(name) else {
        return core_reading(name, raw);
    };
    match (row.kind, name, raw) {
        // The builders and `Redis::connect` take a `Duration`: not given is
        // the builder not called (the row's default), any number >= 0 one.
        (
            Kind::Millis,
            "idempotency_ttl_ms"
            | "idempotency_lease_ms"
            | "idempotency_wait_ms"
            | "store_timeout_ms",
            None | Some(J::Null),
        ) => Ok(J::from(
            settings::duration_or_default(row).as_millis() as u64
        )),
        (
            Kind::Millis,
            "idempotency_ttl_ms"
            | "idempotency_lease_ms"
            | "idempotency_wait_ms"
            | "store_timeout_ms",
            Some(J::Number(n)),
        ) if n
            .as_f64()
            .is_some_and(|x| x >= 0.0 && x.is_finite() && x < 1e12) =>
        {
            let d = Duration::from_secs_f64(n.as_f64().unwrap_or(0.0) / 1000.0);
            settings::duration(row, d)
                .map(|d| J::from(d.as_millis() as u64))
                .map_err(|e| refusal(&e, e.code()))
        }
        (Kind::Count, "idempotency_memory_entries", None | Some(J::Null)) => {
            Ok(J::from(settings::count_or_default(row) as u64))
        }
        (Kind::Count, "idempotency_memory_entries", Some(J::Number(n))) if n.as_u64().is_some() => {
            let n = usize::try_from(n.as_u64().unwrap_or(0)).unwrap_or(usize::MAX);
            toolctx_tower::helpers::MemoryStore::new(n).map_err(|e| refusal(&e, e.code()))?;
            settings::count(row, n)
                .map(|n| J::from(n as u64))
                .map_err(|e| refusal(&e, e.code()))
        }
        // `MemoryReplayStore::new` takes an `i64` and reads it by the core.
        (Kind::Count, "replay_capacity", Some(J::Number(n))) if n.as_i64().is_some() => {
            let n = n.as_i64().unwrap_or(0);
            toolctx_tower::MemoryReplayStore::new(n).map_err(|e| refusal(&e, e.code()))?;
            toolctx_core::replay::capacity(n)
                .map(|n| J::from(n as u64))
                .map_err(|e| refusal(&e, e.code()))
        }
        (Kind::Flag, "include_reason", None | Some(J::Null)) => {
            Ok(J::Bool(settings::flag(row, None)))
        }
        (Kind::Flag, "include_reason", Some(J::Bool(b))) => {
            Ok(J::Bool(settings::flag(row, Some(*b))))
        }
        _ => core_reading(name, raw),
    }
}

#[test]
fn settings_vectors_pass() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/settings.json"
    );
    if let Err(e) = run_files(&[file.to_string()], tower_reading) {
        panic!("{e}");
    }
}
