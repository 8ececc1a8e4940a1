//! The helper vectors (`tests/vectors/helpers.json`, written by
//! `tests/vectors/generate_helpers.py`, and `tests/vectors/cancel/`, written
//! by `generate_cancel.py`): rules after the verdict, one `kind` per rule. [`run_files`] reads the files and hands each case to a front end's
//! dispatch; [`core_case`] is the core's own answer for every kind, which
//! the core's runner uses as it is and the tower runner for the kinds it
//! has nothing of its own for.

use serde_json::Value as J;
use toolctx_core::helpers::cancel;
use toolctx_core::helpers::idempotency::{self as idem, redis as idem_redis};
use toolctx_core::redis::Reply;
use toolctx_core::replay::{redis as replay_redis, ClaimAnswer, ReplayClaim};
use toolctx_core::Reason;

use crate::{run_format_files, HELPERS_FORMAT};

/// `input[name]` as a string.
pub fn text<'a>(v: &'a J, name: &str) -> Result<&'a str, String> {
    v.get(name)
        .and_then(J::as_str)
        .ok_or(format!("no string {name}"))
}

/// `input[name]` as an unsigned integer.
pub fn number(v: &J, name: &str) -> Result<u64, String> {
    v.get(name)
        .and_then(J::as_u64)
        .ok_or(format!("no number {name}"))
}

/// `input[name]` as an array.
pub fn array<'a>(v: &'a J, name: &str) -> Result<&'a [J], String> {
    v.get(name)
        .and_then(J::as_array)
        .map(Vec::as_slice)
        .ok_or(format!("no array {name}"))
}

/// Bytes given as `<name>` (text) or `<name>_hex`.
pub fn bytes(v: &J, name: &str) -> Result<Vec<u8>, String> {
    if let Some(t) = v.get(name).and_then(J::as_str) {
        return Ok(t.as_bytes().to_vec());
    }
    let hex = text(v, &format!("{name}_hex"))?;
    (0..hex.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(hex.get(i..i + 2).unwrap_or("zz"), 16).map_err(|e| e.to_string())
        })
        .collect()
}

/// `Ok` when `got` is `want`, else what differs.
pub fn same<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: expected {want:?}, got {got:?}"))
    }
}

/// The expectation of an `idempotency.held` case, for any front end's
/// answer: `"conflict"`, `"in_flight"`, `("replay", text)` or the error code.
pub fn judge_held(
    expect: &J,
    answer: Result<(&str, Option<String>), String>,
) -> Result<(), String> {
    match (expect.get("error").and_then(J::as_str), answer) {
        (Some(code), Err(got)) => same("error", got.as_str(), code),
        (Some(code), Ok((got, _))) => Err(format!("expected {code}, got {got}")),
        (None, Err(e)) => Err(format!("expected an answer, got {e}")),
        (None, Ok((got, replayed))) => {
            same("answer", got, text(expect, "answer")?)?;
            same(
                "replayed",
                replayed.as_deref(),
                expect.get("replayed").and_then(J::as_str),
            )
        }
    }
}

/// The core's answer to one helper case (every kind), compared with
/// `expect`. An unknown kind fails.
pub fn core_case(kind: &str, input: &J, expect: &J) -> Result<(), String> {
    match kind {
        "idempotency.store_key" => {
            let key = idem::store_key(text(input, "namespace")?, text(input, "key")?);
            same("store_key", key.as_str(), text(expect, "store_key")?)?;
            let redis_key = idem::redis_key(text(input, "prefix")?, &key);
            same("redis_key", redis_key.as_str(), text(expect, "redis_key")?)
        }
        "idempotency.argument_hash" => {
            let got = idem::argument_hash(text(input, "arguments_json")?.as_bytes());
            match (got, expect.get("error").is_some()) {
                (Ok(hash), false) => same("hash", hash.as_str(), text(expect, "hash")?),
                (Err(_), true) => Ok(()),
                (got, _) => Err(format!("expected {expect}, got {got:?}")),
            }
        }
        "idempotency.entry" => {
            let hash = text(input, "hash")?;
            let got = match text(input, "state")? {
                "running" => Ok(idem::running(hash, text(input, "owner")?)),
                _ => idem::done(hash, text(input, "result_json")?.as_bytes())
                    .map_err(|_| idem::ENTRY_INVALID.to_string()),
            };
            match got {
                Ok(t) => same(
                    "text",
                    Some(t.as_str()),
                    expect.get("text").and_then(J::as_str),
                ),
                Err(code) => same(
                    "error",
                    Some(code.as_str()),
                    expect.get("error").and_then(J::as_str),
                ),
            }
        }
        "idempotency.held" => {
            let held = bytes(input, "held")?;
            let answer = idem::held(&held, text(input, "hash")?, text(input, "revision")?)
                .map(|h| match h {
                    idem::Held::Conflict => ("conflict", None),
                    idem::Held::InFlight => ("in_flight", None),
                    idem::Held::Replay(r) => ("replay", Some(r)),
                })
                .map_err(|_| idem::ENTRY_INVALID.to_string());
            judge_held(expect, answer)
        }
        "idempotency.wait" => {
            let round = u32::try_from(number(input, "round")?).map_err(|e| e.to_string())?;
            let got = idem::wait(
                number(input, "now_ms")?,
                number(input, "deadline_ms")?,
                round,
            );
            match got {
                idem::Wait::Refuse => same(
                    "answer",
                    expect.get("answer").and_then(J::as_str),
                    Some("in_progress"),
                ),
                idem::Wait::Sleep(ms) => same(
                    "sleep_ms",
                    Some(ms),
                    expect.get("sleep_ms").and_then(J::as_u64),
                ),
            }
        }
        "idempotency.refusal" => {
            let outcome =
                idem::Outcome::from_name(text(input, "outcome")?).ok_or("unknown outcome")?;
            let got = idem::refusal(outcome, text(input, "key")?);
            same("result_json", got.as_str(), text(expect, "result_json")?)
        }
        "idempotency.redis_commands" => judge_commands(input, expect, |k, running, done| {
            let (lease, ttl) = (number(input, "lease_ms")?, number(input, "ttl_ms")?);
            Ok([
                idem_redis::claim_args(k, running, lease).to_vec(),
                idem_redis::read_args(k).to_vec(),
                idem_redis::complete_args(k, done, ttl).to_vec(),
                idem_redis::release_args(k, running).to_vec(),
            ])
        }),
        "idempotency.redis_reply" => {
            let reply = input.get("reply").ok_or("no reply")?;
            let command =
                idem_redis::Command::from_name(text(input, "command")?).ok_or("unknown command")?;
            let value = bytes(reply, "value").ok();
            let r = match text(reply, "type")? {
                "nil" => idem_redis::Reply::Nil,
                "status" => idem_redis::Reply::Status(text(reply, "value")?),
                "bulk" => idem_redis::Reply::Bulk(value.as_deref().ok_or("no bulk value")?),
                "integer" => idem_redis::Reply::Integer(
                    reply.get("value").and_then(J::as_i64).ok_or("no integer")?,
                ),
                "error" => idem_redis::Reply::Error(text(reply, "value")?),
                other => return Err(format!("unknown reply type {other}")),
            };
            judge_meaning(expect, idem_redis::meaning(command, r))
        }
        "result_limits" => crate::helpers_limits::core_result_limits(input, expect),
        "progress" => crate::helpers_limits::core_progress(input, expect),
        "idempotency.defaults" => {
            let core = [
                ("ttl_ms", J::from(idem::DEFAULT_TTL_MS)),
                ("lease_ms", J::from(idem::DEFAULT_LEASE_MS)),
                ("wait_ms", J::from(idem::DEFAULT_WAIT_MS)),
                ("memory_entries", J::from(idem::DEFAULT_MEMORY_ENTRIES)),
                ("store_timeout_ms", J::from(idem::DEFAULT_STORE_TIMEOUT_MS)),
                ("claim_rounds", J::from(idem::CLAIM_ROUNDS)),
                ("first_pause_ms", J::from(idem::FIRST_PAUSE_MS)),
                ("max_pause_ms", J::from(idem::MAX_PAUSE_MS)),
                ("key_prefix", J::from(idem::DEFAULT_KEY_PREFIX)),
                ("release_script", J::from(idem_redis::RELEASE_SCRIPT)),
                ("replayed_key", J::from(idem::REPLAYED)),
                ("outcome_key", J::from(idem::OUTCOME_KEY)),
            ];
            core.into_iter().try_for_each(|(name, got)| {
                same(name, got, expect.get(name).cloned().unwrap_or(J::Null))
            })
        }
        "replay.redis_claim" => {
            let claim = replay_claim(input)?;
            let got =
                replay_redis::claim_args(text(input, "prefix")?, &claim, number(input, "now")?);
            judge_claim_args(expect, got.to_vec())
        }
        "replay.redis_reply" => {
            let reply = input.get("reply").ok_or("no reply")?;
            let value = match reply.get("value") {
                Some(J::Number(n)) => n.to_string().into_bytes(),
                Some(_) => bytes(reply, "value")?,
                None => Vec::new(),
            };
            let kind = text(reply, "type")?;
            let r = Reply::from_parts(kind, &value).ok_or(format!("reply {reply}"))?;
            judge_claim_answer(expect, replay_redis::claim_answer(r))
        }
        "cancel.call_key" => {
            let token = input.get("token").and_then(J::as_str);
            let got = cancel::call_key(text(input, "id_json")?.as_bytes(), token);
            same("key", got.as_deref(), expect.get("key").and_then(J::as_str))
        }
        other => Err(format!("unknown kind {other:?}")),
    }
}

/// A `replay.redis_claim` case's token id and expiry.
pub fn replay_claim(input: &J) -> Result<ReplayClaim, String> {
    Ok(ReplayClaim {
        jti: text(input, "jti")?.to_string(),
        until: number(input, "until")?,
    })
}

/// A `replay.redis_claim` case's expectation against the command sent.
pub fn judge_claim_args(expect: &J, got: Vec<String>) -> Result<(), String> {
    let want: Vec<String> = serde_json::from_value(expect.get("args").cloned().unwrap_or(J::Null))
        .map_err(|e| e.to_string())?;
    same("args", got, want)
}

/// A `replay.redis_reply` case's expectation against the core's answer and
/// the reason it refuses with.
pub fn judge_claim_answer(expect: &J, got: ClaimAnswer) -> Result<(), String> {
    same(
        "answer",
        Some(got.as_str()),
        expect.get("answer").and_then(J::as_str),
    )?;
    let reason = got.verdict().err().map(Reason::as_str);
    same("reason", reason, expect.get("reason").and_then(J::as_str))
}

/// An `idempotency.redis_commands` case: `commands(redis key, running
/// entry, done entry)` gives claim, read, complete and release, in order.
pub fn judge_commands(
    input: &J,
    expect: &J,
    commands: impl FnOnce(&str, &str, &str) -> Result<[Vec<String>; 4], String>,
) -> Result<(), String> {
    let key = idem::redis_key(
        text(input, "prefix")?,
        &idem::store_key(text(input, "namespace")?, text(input, "key")?),
    );
    let hash = text(input, "hash")?;
    let running = idem::running(hash, text(input, "owner")?);
    let done =
        idem::done(hash, text(input, "result_json")?.as_bytes()).map_err(|e| e.to_string())?;
    let got = commands(&key, &running, &done)?;
    for (name, args) in ["claim", "read", "complete", "release"].iter().zip(got) {
        let want: Vec<String> =
            serde_json::from_value(expect.get(*name).cloned().unwrap_or(J::Null))
                .map_err(|e| e.to_string())?;
        same(name, args, want)?;
    }
    Ok(())
}

/// An `idempotency.redis_reply` case's expectation against a meaning.
pub fn judge_meaning(expect: &J, got: idem_redis::Meaning<'_>) -> Result<(), String> {
    same(
        "meaning",
        Some(got.as_str()),
        expect.get("meaning").and_then(J::as_str),
    )?;
    if let idem_redis::Meaning::Held(held) = got {
        same("held", held.to_vec(), bytes(expect, "held")?)?;
    }
    Ok(())
}

/// Runs the helper vector files through `dispatch(kind, input, expect)`,
/// prints each failure and the closing `N passed, N failed`; `Err` when any
/// failed or none ran.
pub fn run_files(
    paths: &[String],
    mut dispatch: impl FnMut(&str, &J, &J) -> Result<(), String>,
) -> Result<(), String> {
    run_format_files(paths, HELPERS_FORMAT, |case| {
        let none = J::Null;
        let kind = case.get("kind").and_then(J::as_str).unwrap_or("");
        let input = case.get("input").unwrap_or(&none);
        let expect = case.get("expect").unwrap_or(&none);
        dispatch(kind, input, expect)
    })
}
