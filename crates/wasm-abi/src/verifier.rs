//! The verifier's operations (feature `verifier`): the check, the
//! upstream outcome, the replay claim and its settling, the core's codes.
#![forbid(unsafe_code)]

use toolctx_core::digits::u64_text;
use toolctx_core::replay::{self, redis as replay_redis};
use toolctx_core::settings;
use toolctx_core::{
    ClaimAnswer, Reason, Refusal, ReplayCache, ReplayClaim, DEFAULT_REPLAY_CAPACITY,
};
use toolctx_wasm_boundary::{
    accepted, described, redis_claim_answer, refusal, AgentArea, Boundary, Error,
};

use crate::state::{bad, exact, ticket, utf8, Answer, State};

impl State {
    fn verifier(&mut self) -> Result<&mut Boundary<AgentArea>, Error> {
        self.verifier
            .as_mut()
            .ok_or_else(|| bad("no verifier: call toolctx_configure first"))
    }
}

/// `lens` as `u32` little-endian numbers.
fn lengths(lens: &[u8]) -> Result<Vec<u32>, Error> {
    let chunks = lens.chunks_exact(4);
    if !chunks.remainder().is_empty() {
        return Err(bad("lengths are not whole u32s"));
    }
    Ok(chunks
        .map(|c| c.try_into().map_or(0, u32::from_le_bytes))
        .collect())
}

/// `toolctx_configure`'s flags: refusals carry `data.reason` (read only
/// with [`INCLUDE_REASON_GIVEN`]).
pub const INCLUDE_REASON: i32 = 1;
/// The host was given `include_reason` (its value in [`INCLUDE_REASON`]);
/// without this bit, the settings table's default applies.
pub const INCLUDE_REASON_GIVEN: i32 = 8;
/// A shared replay store answers the claims (`c`, `toolctx_settle`).
pub const SHARED_STORE: i32 = 2;
/// The in-memory replay guard, of `replay_capacity` ids.
pub const MEMORY_GUARD: i32 = 4;
/// The flags by name, as `toolctx_configure_flags` answers them: the one
/// place their bits are written; the Go and Java hosts read them from the
/// module when they load.
const FLAGS: [(&str, i32); 4] = [
    ("include_reason", INCLUDE_REASON),
    ("include_reason_given", INCLUDE_REASON_GIVEN),
    ("shared_store", SHARED_STORE),
    ("memory_guard", MEMORY_GUARD),
];

pub fn configure(s: &mut State, input: &[u8], flags: i32, capacity: i64) -> Result<Answer, Error> {
    let [config] = exact(input)?;
    // The in-memory guard, sized by the core from the host's number.
    let memory = (flags & MEMORY_GUARD != 0)
        .then(|| replay::capacity(capacity))
        .transpose()
        .map_err(|e| Error::config(&e))?;
    let profile = AgentArea::new(config, memory, flags & SHARED_STORE != 0, accepted)?;
    let mut list = vec![
        u64_text(profile.max_body_bytes() as u64).into_bytes(),
        // For a host's HTTP request-head limit (Spring raises Tomcat's by it).
        u64_text(profile.max_token_bytes() as u64).into_bytes(),
    ];
    list.extend(profile.removed().iter().map(|n| n.clone().into_bytes()));
    // `include_reason` as the host was given it; not given, the settings
    // table's default.
    let given = flags & INCLUDE_REASON_GIVEN != 0;
    let reason = settings::INCLUDE_REASON.flag(given.then_some(flags & INCLUDE_REASON != 0));
    s.verifier = Some(Boundary::new(profile, reason));
    Ok(Answer::List(list))
}

/// `toolctx_configure_flags`: each flag's name and its bit (decimal), in turn.
pub fn configure_flags(_: &mut State, _: &[u8]) -> Result<Answer, Error> {
    let mut list = Vec::with_capacity(2 * FLAGS.len());
    for (name, bit) in FLAGS {
        list.push(name.as_bytes().to_vec());
        list.push(u64_text(bit.unsigned_abs().into()).into_bytes());
    }
    Ok(Answer::List(list))
}

pub fn describe(s: &mut State, _: &[u8]) -> Result<Answer, Error> {
    Ok(s.verifier()?.profile.describe().into())
}

pub fn check_headers(s: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [lens, heads] = exact(input)?;
    Ok(s.verifier()?.check_headers(heads, &lengths(lens)?)?.into())
}

pub fn verify(s: &mut State, input: &[u8], now: i64) -> Result<Answer, Error> {
    let [lens, heads, body] = exact(input)?;
    let now = seconds(now);
    Ok(s.verifier()?
        .verify(heads, &lengths(lens)?, body, now)?
        .into())
}

pub fn verify_body(s: &mut State, input: &[u8], t: i32, now: i64) -> Result<Answer, Error> {
    let [body] = exact(input)?;
    let now = seconds(now);
    Ok(s.verifier()?.verify_body(ticket(t), body, now)?.into())
}

/// Unix seconds as the boundary takes them (a negative `now` is 0).
fn seconds(now: i64) -> f64 {
    u64::try_from(now).unwrap_or(0) as f64
}

pub fn settle(s: &mut State, input: &[u8], t: i32) -> Result<Answer, Error> {
    let [answer] = exact(input)?;
    let answer = ClaimAnswer::from_name(utf8(answer)?);
    let v = s.verifier()?;
    let include_reason = v.include_reason;
    Ok(v.profile.settle(ticket(t), answer, include_reason).into())
}

pub fn internal_refusal(s: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [code] = exact(input)?;
    let reason = Reason::from_code(utf8(code)?).ok_or_else(|| bad("no such reason"))?;
    // Without a verifier (the host asks a fresh instance after a trap), the
    // settings table's default.
    let include_reason =
        settings::INCLUDE_REASON.flag(s.verifier.as_ref().map(|v| v.include_reason));
    Ok(refusal(&Refusal::new(reason, None), include_reason).into())
}

pub fn describe_request(_: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [method, body, reason] = exact(input)?;
    let list = described(utf8(method)?, body, utf8(reason)?);
    Ok(Answer::List(
        list.into_iter().map(String::into_bytes).collect(),
    ))
}

pub fn replay_defaults(_: &mut State, _: &[u8]) -> Result<Answer, Error> {
    Ok(Answer::List(vec![
        replay_redis::DEFAULT_KEY_PREFIX.as_bytes().to_vec(),
        u64_text(DEFAULT_REPLAY_CAPACITY as u64).into_bytes(),
        u64_text(toolctx_core::redis::TIMEOUT_MS).into_bytes(),
    ]))
}

pub fn redis_claim_args(
    _: &mut State,
    input: &[u8],
    until: i64,
    now: i64,
) -> Result<Answer, Error> {
    let [prefix, jti] = exact(input)?;
    let claim = ReplayClaim {
        jti: utf8(jti)?.into(),
        until: u64::try_from(until).unwrap_or(0),
    };
    let args = replay_redis::claim_args(utf8(prefix)?, &claim, u64::try_from(now).unwrap_or(0));
    Ok(Answer::List(
        args.into_iter().map(String::into_bytes).collect(),
    ))
}

pub fn redis_claim_reply(_: &mut State, input: &[u8]) -> Result<Answer, Error> {
    let [kind, value] = exact(input)?;
    Ok(String::from(redis_claim_answer(utf8(kind)?, value).as_str()).into())
}

/// `toolctx_replay_memory`: this instance holds the core's in-memory replay
/// guard for the host's number of ids (the core's `replay::capacity`: 0 the
/// default), so a host with a pool of verifiers (each configured with a
/// shared store) sends every claim to this one instance. Answers the
/// capacity, or the core's `limit_out_of_range`.
pub fn replay_memory(s: &mut State, _: &[u8], capacity: i64) -> Result<Answer, Error> {
    let cache = ReplayCache::with_capacity(capacity).map_err(|e| Error::config(&e))?;
    let held = u64_text(cache.capacity() as u64);
    s.replay = Some(cache);
    Ok(held.into())
}

/// `toolctx_replay_first_use`: the in-memory guard's answer to a claim.
pub fn replay_first_use(
    s: &mut State,
    input: &[u8],
    until: i64,
    now: i64,
) -> Result<Answer, Error> {
    let [jti] = exact(input)?;
    let guard = s
        .replay
        .as_mut()
        .ok_or_else(|| bad("no replay guard: call toolctx_replay_memory first"))?;
    let answer = guard.first_use(
        utf8(jti)?,
        u64::try_from(until).unwrap_or(0),
        u64::try_from(now).unwrap_or(0),
    );
    Ok(String::from(answer.as_str()).into())
}
