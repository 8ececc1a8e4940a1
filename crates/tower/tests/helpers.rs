//! The helper vectors (`tests/vectors/helpers.json`) through toolctx-tower:
//! its own paths to the core where it has them (the store key, the argument
//! hash, the entry encoding and reading, the refusal as rmcp's result,
//! redis-rs replies as the core's `Reply` (the idempotency store's and the
//! replay guard's), the result limits of an rmcp
//! `CallToolResult`, progress through `Progress` on a paused clock), the
//! core's answer for the rest.
//! Ends `N passed, N failed` (`-- --nocapture` shows it).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use rmcp::model::{CallToolResult, NumberOrString, ProgressToken};
use serde_json::Value as J;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use toolctx_core::helpers::idempotency::redis::{meaning, Command};
use toolctx_core::helpers::idempotency::{self as core, Outcome};
use toolctx_core::replay::redis::claim_answer;
use toolctx_tower::helpers::{
    canonical_hash, refusal, try_check_result, Entry, Idempotent, Progress,
};
use toolctx_vectors::helpers::{
    bytes, core_case, judge_claim_answer, judge_held, judge_meaning, number, same, text,
};
use toolctx_vectors::helpers_limits::{self, Event};

fn tower_case(kind: &str, input: &J, expect: &J) -> Result<(), String> {
    match kind {
        "idempotency.store_key" => {
            let key = Idempotent::default()
                .namespace(text(input, "namespace")?)
                .store_key(text(input, "key")?);
            same("store_key", key.as_str(), text(expect, "store_key")?)?;
            core_case(kind, input, expect)
        }
        "idempotency.argument_hash" => {
            // As rmcp hands arguments over: parsed by serde_json.
            let parsed: Result<J, _> = serde_json::from_str(text(input, "arguments_json")?);
            match (
                parsed.map(|v| canonical_hash(&v)),
                expect.get("error").is_some(),
            ) {
                (Ok(Ok(hash)), false) => same("hash", hash.as_str(), text(expect, "hash")?),
                (Ok(Err(_)) | Err(_), true) => Ok(()),
                // serde_json keeps the last of duplicate members: the core's
                // refusal of the text is checked through the core.
                (Ok(Ok(_)), true) => core_case(kind, input, expect),
                (got, _) => Err(format!("expected {expect}, got {got:?}")),
            }
        }
        "idempotency.entry" => {
            let hash = text(input, "hash")?.to_string();
            let entry = match text(input, "state")? {
                "running" => Entry::Running {
                    hash,
                    owner: text(input, "owner")?.to_string(),
                },
                _ => match serde_json::from_str(text(input, "result_json")?) {
                    Ok(result) => Entry::Done { hash, result },
                    Err(_) => {
                        return same(
                            "error",
                            expect.get("error").and_then(J::as_str),
                            Some(core::ENTRY_INVALID),
                        )
                    }
                },
            };
            match entry.encode() {
                Ok(t) if expect.get("text").is_some() => {
                    // serde_json rewrites numbers and member order of what it
                    // parsed; the exact text is the core's: compare as values.
                    let want: J = serde_json::from_str(text(expect, "text")?).unwrap();
                    same("text", serde_json::from_str::<J>(&t).unwrap(), want)?;
                    core_case(kind, input, expect)
                }
                Ok(t) => Err(format!("expected {expect}, got {t}")),
                Err(e) => same(
                    "error",
                    Some(e.code()),
                    expect.get("error").and_then(J::as_str),
                ),
            }
        }
        "idempotency.held" => {
            let held = bytes(input, "held")?;
            let hash = text(input, "hash")?;
            // Tower's reading of the entry first (what its stores hand back),
            // then the core's decision on the text.
            let answer = Entry::decode(&held)
                .map_err(|e| e.code().to_string())
                .and_then(|_| {
                    core::held(&held, hash, text(input, "revision")?)
                        .map_err(|_| core::ENTRY_INVALID.to_string())
                })
                .map(|h| match h {
                    core::Held::Conflict => ("conflict", None),
                    core::Held::InFlight => ("in_flight", None),
                    core::Held::Replay(r) => ("replay", Some(r)),
                });
            judge_held(expect, answer)
        }
        "idempotency.refusal" => {
            let outcome = Outcome::from_name(text(input, "outcome")?).ok_or("outcome")?;
            let got = serde_json::to_value(refusal(outcome, text(input, "key")?)).unwrap();
            let want: J = serde_json::from_str(text(expect, "result_json")?).unwrap();
            same("result", got, want)
        }
        "idempotency.redis_reply" => {
            let value = parsed_reply(input)?;
            let command = Command::from_name(text(input, "command")?).ok_or("command")?;
            judge_meaning(expect, meaning(command, toolctx_tower::redis_reply(&value)))
        }
        "replay.redis_reply" => {
            let value = parsed_reply(input)?;
            judge_claim_answer(expect, claim_answer(toolctx_tower::redis_reply(&value)))
        }
        "idempotency.defaults" => {
            same(
                "store_timeout_ms",
                number(expect, "store_timeout_ms")?,
                toolctx_tower::DEFAULT_TIMEOUT.as_millis() as u64,
            )?;
            core_case(kind, input, expect)
        }
        "result_limits" => {
            // As a tool hands its result over: an rmcp `CallToolResult`.
            // A result rmcp's types cannot hold is the core's alone.
            let text = helpers_limits::result_json(input)?;
            match serde_json::from_str::<CallToolResult>(&text) {
                Ok(result) => {
                    let got = try_check_result(&result)
                        .map(|f| f.iter().map(helpers_limits::finding_json).collect())
                        .map_err(|e| e.code().to_string());
                    helpers_limits::judge_result_limits(expect, got, true)
                }
                Err(_) => core_case(kind, input, expect),
            }
        }
        "progress" => {
            progress_case(input, expect)?;
            // The answers per report are the core's (tower's reporter
            // returns nothing); the notifications above are tower's.
            core_case(kind, input, expect)
        }
        _ => core_case(kind, input, expect),
    }
}

/// A case's `reply` as Redis sends it (RESP2), read by redis-rs' own parser.
fn parsed_reply(input: &J) -> Result<redis::Value, String> {
    let reply = input.get("reply").ok_or("no reply")?;
    let mut wire = Vec::new();
    match text(reply, "type")? {
        "nil" => wire.extend_from_slice(b"$-1\r\n"),
        "status" => wire.extend_from_slice(format!("+{}\r\n", text(reply, "value")?).as_bytes()),
        "bulk" => {
            let b = bytes(reply, "value")?;
            wire.extend_from_slice(format!("${}\r\n", b.len()).as_bytes());
            wire.extend_from_slice(&b);
            wire.extend_from_slice(b"\r\n");
        }
        "integer" => wire.extend_from_slice(
            format!(":{}\r\n", reply["value"].as_i64().ok_or("integer")?).as_bytes(),
        ),
        "error" => wire.extend_from_slice(format!("-{}\r\n", text(reply, "value")?).as_bytes()),
        // A shape no command toolctx sends answers: an empty array.
        "other" => wire.extend_from_slice(b"*0\r\n"),
        other => return Err(format!("reply type {other}")),
    }
    redis::parse_redis_value(&wire).map_err(|e| e.to_string())
}

/// The events through tower's `Progress` on a paused clock: its timers,
/// its sends, at the vector's times.
fn progress_case(input: &J, expect: &J) -> Result<(), String> {
    let (interval, events) = helpers_limits::progress_events(input)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .map_err(|e| e.to_string())?;
    let sent = rt.block_on(async move {
        let start = tokio::time::Instant::now();
        let sent = Arc::new(Mutex::new(Vec::new()));
        let log = sent.clone();
        let cancel = CancellationToken::new();
        let p = Progress::with_sender(
            Some(ProgressToken(NumberOrString::Number(1))),
            cancel.clone(),
            move |param| {
                let at = start.elapsed().as_millis() as u64;
                log.lock().unwrap().push(helpers_limits::sent_json(
                    at,
                    param.progress,
                    param.total,
                    param.message.as_deref(),
                ));
                Box::pin(async {})
            },
        )
        .interval(Duration::from_millis(interval))
        .map_err(|e| e.to_string())?;
        for (at, event) in events {
            tokio::time::sleep_until(start + Duration::from_millis(at)).await;
            // A timer due now fires before the event (the vectors' rule).
            for _ in 0..16 {
                tokio::task::yield_now().await;
            }
            match event {
                Event::Report(done, total, message) => p.report(done, total, message).await,
                Event::Flush => p.flush().await,
                Event::Close => cancel.cancel(),
            }
        }
        tokio::time::sleep(Duration::from_secs(3600)).await;
        let sent = sent.lock().unwrap().clone();
        Ok::<_, String>(sent)
    })?;
    helpers_limits::judge_sent(expect, &sent)
}

#[test]
fn helper_vectors_pass() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/helpers.json"
    );
    if let Err(e) = toolctx_vectors::helpers::run_files(&[file.to_string()], tower_case) {
        panic!("{e}");
    }
}
