//! The server helpers' operations (feature `helpers`): idempotency,
//! result limits, progress coalescing (CONTRACT §5).
#![forbid(unsafe_code)]

use toolctx_wasm_boundary::helpers::{self as h, Progress};
use toolctx_wasm_boundary::Error;

use crate::state::{bad, exact, ticket, utf8, Answer, State};

impl State {
    fn progress(&mut self, handle: i32) -> Result<&mut Progress, Error> {
        self.progress
            .get_mut(ticket(handle))
            .ok_or_else(|| bad("no such progress handle"))
    }
}

/// `toolctx_setting`: a setting of the core's table read from the user's
/// raw value (`kind`: `toolctx_wasm_boundary::settings`'s ABSENT .. OTHER;
/// `number` for a number, the input's second field for a text); the value
/// to use as text (`true`/`false`, decimal digits, the text), or the core's
/// refusal. In the helpers' module only: the verifier's has no room for
/// the table (its hosts hand it their raw values instead: `flags`).
pub fn setting(_: &mut State, input: &[u8], kind: i32, number: f64) -> Result<Answer, Error> {
    use toolctx_wasm_boundary::settings;
    let [name, text] = exact(input)?;
    let raw = settings::raw(kind, number, utf8(text)?);
    Ok(settings::read(utf8(name)?, raw)?.into())
}

pub fn idem_defaults(_: &mut State, _: &[u8]) -> Result<Answer, Error> {
    Ok(h::idem_defaults().into())
}

pub fn idem_store_key(_: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [namespace, key] = exact(input)?;
    Ok(h::idem_store_key(utf8(namespace)?, utf8(key)?).into())
}

pub fn idem_redis_key(_: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [prefix, key] = exact(input)?;
    Ok(h::idem_redis_key(utf8(prefix)?, utf8(key)?).into())
}

pub fn canonical_json(_: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [text] = exact(input)?;
    Ok(h::canonical_json(text)?.into())
}

pub fn idem_argument_hash(_: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [arguments] = exact(input)?;
    Ok(h::idem_argument_hash(arguments)?.into())
}

pub fn idem_running(_: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [hash, owner] = exact(input)?;
    Ok(h::idem_running(utf8(hash)?, utf8(owner)?).into())
}

pub fn idem_done(_: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [hash, result] = exact(input)?;
    Ok(h::idem_done(utf8(hash)?, result)?.into())
}

pub fn idem_read_entry(_: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [raw] = exact(input)?;
    Ok(h::idem_read_entry(raw)?.into())
}

pub fn idem_held(_: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [raw, hash, revision] = exact(input)?;
    Ok(h::idem_held(raw, utf8(hash)?, utf8(revision)?)?.into())
}

pub fn idem_wait(now_ms: i64, deadline_ms: i64, round: i32) -> i64 {
    let ms = |v: i64| u64::try_from(v).unwrap_or(0);
    let round = u32::try_from(round).unwrap_or(0);
    h::idem_wait(ms(now_ms), ms(deadline_ms), round)
        .map_or(-1, |pause| i64::try_from(pause).unwrap_or(i64::MAX))
}

pub fn idem_refusal(_: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [outcome, key] = exact(input)?;
    Ok(h::idem_refusal(utf8(outcome)?, utf8(key)?)?.into())
}

pub fn idem_redis_args(_: &mut State, input: &[u8], ms: i64) -> Result<Answer, Error> {
    let [command, key, entry] = exact(input)?;
    let ms = u64::try_from(ms).unwrap_or(0);
    let args = h::idem_redis_args(utf8(command)?, utf8(key)?, utf8(entry)?, ms);
    Ok(Answer::List(
        args.into_iter().map(String::into_bytes).collect(),
    ))
}

pub fn idem_redis_meaning(_: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [command, kind, value] = exact(input)?;
    Ok(String::from(h::idem_redis_meaning(utf8(command)?, utf8(kind)?, value)).into())
}

pub fn result_limits(_: &mut State, _: &[u8]) -> Result<Answer, Error> {
    Ok(h::result_limits().into())
}

pub fn check_result(_: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [result] = exact(input)?;
    Ok(h::check_result(result)?.into())
}

/// `toolctx_core_codes`: the core's reason codes, configuration error codes
/// and telemetry names (here, not in the verifier's module: it has no room
/// for them, and the hosts ask once).
pub fn codes(_: &mut State, _: &[u8]) -> Result<Answer, Error> {
    Ok(toolctx_wasm_boundary::core_codes().into())
}

pub fn progress_new(s: &mut State, interval_ms: i64) -> i32 {
    let p = Progress::new(u64::try_from(interval_ms).unwrap_or(0));
    s.progress.hold(p) as i32
}

pub fn progress_report(
    s: &mut State,
    input: &[u8],
    handle: i32,
    now_ms: i64,
    progress: f64,
    total: f64,
    has_message: i32,
) -> Result<Answer, Error> {
    let [message] = exact(input)?;
    let message = (has_message != 0)
        .then(|| utf8(message).map(String::from))
        .transpose()?;
    let total = (!total.is_nan()).then_some(total);
    let now = u64::try_from(now_ms).unwrap_or(0);
    Ok(s.progress(handle)?
        .report(now, progress, total, message)
        .into())
}

pub fn progress_tick(s: &mut State, _: &[u8], handle: i32, now_ms: i64) -> Result<Answer, Error> {
    let now = u64::try_from(now_ms).unwrap_or(0);
    Ok(s.progress(handle)?.tick(now).into())
}

pub fn progress_flush(s: &mut State, _: &[u8], handle: i32, now_ms: i64) -> Result<Answer, Error> {
    let now = u64::try_from(now_ms).unwrap_or(0);
    Ok(s.progress(handle)?.flush(now).into())
}

pub fn progress_close(s: &mut State, handle: i32) {
    if let Ok(p) = s.progress(handle) {
        p.close();
    }
}

pub fn progress_free(s: &mut State, handle: i32) {
    let _ = s.progress.take(ticket(handle));
}

pub fn progress_sent(s: &mut State, handle: i32) -> i64 {
    s.progress(handle)
        .map_or(-1, |p| i64::try_from(p.sent()).unwrap_or(i64::MAX))
}
