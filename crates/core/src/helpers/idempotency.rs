//! Idempotent tools (CONTRACT §5): a retry carries the same idempotency key
//! and arguments with a new token; the first call's result is stored under
//! the verified key and a retry is answered from the store, with
//! `_meta["agentarea/replayed"] = true`, without the tool running again.
//!
//! Every rule of the helper is here, so that servers in different languages
//! sharing one store agree on every entry:
//!
//! - where an entry lives: [`store_key`] (namespace escaped, `:`, key) and
//!   [`redis_key`] (a prefix, [`DEFAULT_KEY_PREFIX`] by default);
//! - what the arguments hash to: [`argument_hash`] (SHA-256 hex of the
//!   RFC 8785 form);
//! - what an entry is: [`running`] and [`done`] write it, [`Entry::read`]
//!   reads it; anything else under a key is [`EntryInvalid`]
//!   (`idempotency_entry_invalid`). A finished call's result is stored
//!   era-neutral: without `resultType`, its members in one canonical order;
//! - what a held entry means for this call: [`held`] (conflict, in flight,
//!   or the replay as JSON, written for the retrying request's protocol
//!   revision), then [`wait`] while it is in flight;
//! - the refusals: [`refusal`] (`conflict`, `in_progress`, `unverified`);
//! - the Redis commands and what each reply means: [`redis`];
//! - the defaults (`DEFAULT_*`).
//!
//! The front end's loop: hash the arguments, claim the key with a
//! [`running`] entry (`None` held: run the tool, then store [`done`] or,
//! if it failed, release the claim); otherwise act on [`held`]: refuse a
//! conflict, return a replay, or [`wait`] and claim again.

use alloc::borrow::Cow;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use sha2::{Digest, Sha256};

use super::revision::{self, COMPLETE, RESULT_TYPE};
use crate::jcs;
use crate::json::{self, write_str, JsonError, Value};

/// The defaults of the helper's settings (the settings table's rows
/// `idempotency_*`, with their ranges): the Redis key prefix, how long a
/// result is kept, how long a claim lasts, how long a duplicate waits, the
/// entries an in-memory store keeps.
pub use crate::settings::{
    DEFAULT_LEASE_MS, DEFAULT_MEMORY_ENTRIES, DEFAULT_TTL_MS, DEFAULT_WAIT_MS,
    IDEMPOTENCY_KEY_PREFIX as DEFAULT_KEY_PREFIX,
};
/// How long one store command may wait for its reply before the store
/// counts as failed (a paused Redis fails calls, it never holds them).
pub const DEFAULT_STORE_TIMEOUT_MS: u64 = crate::redis::TIMEOUT_MS;
/// How many times a claim is tried when the held entry expires between the
/// `SET NX` and the `GET`; then the store counts as failed.
pub const CLAIM_ROUNDS: u32 = 3;
/// The first pause of a duplicate waiting for the first call.
pub const FIRST_PAUSE_MS: u64 = 10;
/// The longest pause (the pause doubles up to it).
pub const MAX_PAUSE_MS: u64 = 250;
/// The `_meta` key the platform reads on a replayed result.
pub const REPLAYED: &str = "agentarea/replayed";
/// The `_meta` key naming why the helper refused a call.
pub const OUTCOME_KEY: &str = "toolctx/idempotency";
/// The machine code of an entry that is not one.
pub const ENTRY_INVALID: &str = "idempotency_entry_invalid";
/// The machine code of a store that failed before the tool ran.
pub const STORE_FAILED: &str = "idempotency_store_failed";

/// The store key of an idempotency key in a namespace: the namespace with
/// `%` and `:` percent-escaped (`%25`, `%3A`), then `:`, then the key. The
/// first `:` ends the namespace, so two namespaces never share a store key
/// (`"a"` + `"b:c"` is `a:b:c`, `"a:b"` + `"c"` is `a%3Ab:c`).
pub fn store_key(namespace: &str, key: &str) -> String {
    let mut out = String::with_capacity(namespace.len() + key.len() + 1);
    for c in namespace.chars() {
        match c {
            '%' => out.push_str("%25"),
            ':' => out.push_str("%3A"),
            c => out.push(c),
        }
    }
    out.push(':');
    out.push_str(key);
    out
}

/// The Redis key of a store key: `prefix` then the store key.
pub fn redis_key(prefix: &str, store_key: &str) -> String {
    format!("{prefix}{store_key}")
}

/// Arguments that cannot be hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashError {
    /// Not JSON (the core's strict reader).
    Json(JsonError),
    /// A number RFC 8785 cannot write.
    NotCanonicalizable,
}

impl core::fmt::Display for HashError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            HashError::Json(e) => write!(f, "the arguments are not JSON ({e})"),
            HashError::NotCanonicalizable => {
                f.write_str("the arguments hold a number out of the double range")
            }
        }
    }
}

impl core::error::Error for HashError {}

/// The hash a retry's arguments are compared by: lowercase hex SHA-256 of
/// the UTF-8 bytes of the arguments' RFC 8785 form. Member order and
/// whitespace never change it; any other change does.
pub fn argument_hash(arguments_json: &[u8]) -> Result<String, HashError> {
    let value = json::parse(arguments_json).map_err(HashError::Json)?;
    let canonical = jcs::canonicalize(&value).map_err(|_| HashError::NotCanonicalizable)?;
    Ok(hex(&Sha256::digest(canonical.as_bytes())))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        for nibble in [b >> 4, b & 0x0f] {
            out.push(char::from(
                DIGITS.get(usize::from(nibble)).copied().unwrap_or(b'0'),
            ));
        }
    }
    out
}

/// What a key holds that is not an entry (another program's value, a
/// truncated write): never replayed, never taken for a running call
/// (`idempotency_entry_invalid`; the tool does not run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryInvalid;

impl core::fmt::Display for EntryInvalid {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(
            "idempotent: the store holds something under this key that is not an idempotency entry; the tool did not run",
        )
    }
}

impl core::error::Error for EntryInvalid {}

/// What a store holds under a key.
#[derive(Debug, Clone)]
pub enum Entry<'a> {
    /// A claim while the first call runs: the arguments' hash and the
    /// claiming call's random id (only it releases the claim).
    Running {
        hash: Cow<'a, str>,
        owner: Cow<'a, str>,
    },
    /// The finished call: the arguments' hash and the result (a
    /// `CallToolResult`, a JSON object; as [`done`] writes it, era-neutral).
    Done {
        hash: Cow<'a, str>,
        result: Value<'a>,
    },
}

impl<'a> Entry<'a> {
    /// Reads an entry: a JSON object with `"state"` `"running"` (and string
    /// `"hash"`, `"owner"`) or `"done"` (string `"hash"`, object
    /// `"result"`), in any member order and spacing, other members ignored.
    /// A result holding a `resultType` other than `"complete"` (an entry
    /// written before results were stored era-neutral) is no finished call.
    /// Anything else, non-UTF-8 bytes included, is [`EntryInvalid`].
    pub fn read(bytes: &'a [u8]) -> Result<Entry<'a>, EntryInvalid> {
        let Ok(Value::Object(members)) = json::parse(bytes) else {
            return Err(EntryInvalid);
        };
        let mut state = None;
        let mut hash = None;
        let mut owner = None;
        let mut result = None;
        for (name, value) in members {
            match (&*name, value) {
                ("state", Value::String(s)) => state = Some(s),
                ("hash", Value::String(s)) => hash = Some(s),
                ("owner", Value::String(s)) => owner = Some(s),
                ("result", v @ Value::Object(_)) => result = Some(v),
                _ => {}
            }
        }
        let hash = hash.ok_or(EntryInvalid)?;
        match state.as_deref() {
            Some("running") => Ok(Entry::Running {
                hash,
                owner: owner.ok_or(EntryInvalid)?,
            }),
            Some("done") => Ok(Entry::Done {
                hash,
                result: without_result_type(result.ok_or(EntryInvalid)?)?,
            }),
            _ => Err(EntryInvalid),
        }
    }

    /// The arguments' hash the entry was written for.
    pub fn hash(&self) -> &str {
        match self {
            Entry::Running { hash, .. } | Entry::Done { hash, .. } => hash,
        }
    }

    /// The entry as stored: compact JSON, members `state`, `hash`, then
    /// `owner` or `result`, in that order, so that a release compares the
    /// exact text the claim wrote.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        match self {
            Entry::Running { hash, owner } => {
                out.push_str("{\"state\":\"running\",\"hash\":");
                write_str(hash, &mut out);
                out.push_str(",\"owner\":");
                write_str(owner, &mut out);
            }
            Entry::Done { hash, result } => {
                out.push_str("{\"state\":\"done\",\"hash\":");
                write_str(hash, &mut out);
                out.push_str(",\"result\":");
                result.write(&mut out);
            }
        }
        out.push('}');
        out
    }
}

/// The claim this call stores while it runs.
pub fn running(hash: &str, owner: &str) -> String {
    Entry::Running {
        hash: Cow::Borrowed(hash),
        owner: Cow::Borrowed(owner),
    }
    .encode()
}

/// The finished call as stored: `result_json` (the result as sent) must be
/// a JSON object. It is stored era-neutral, so that a retry of any protocol
/// revision, on any server, gets the same replay: a top-level `resultType`
/// is dropped (`"complete"`; any other, such as a multi-round-trip call's
/// `"input_required"`, is no finished call and is refused), and the members
/// of every object are put in RFC 8785 order (sorted by the UTF-16 code
/// units of their names) with number texts and strings kept as they are.
pub fn done(hash: &str, result_json: &[u8]) -> Result<String, EntryInvalid> {
    match json::parse(result_json) {
        Ok(result @ Value::Object(_)) => Ok(Entry::Done {
            hash: Cow::Borrowed(hash),
            result: neutral(result)?,
        }
        .encode()),
        _ => Err(EntryInvalid),
    }
}

/// A result without its revision's member, in canonical member order.
fn neutral(result: Value<'_>) -> Result<Value<'_>, EntryInvalid> {
    let mut result = without_result_type(result)?;
    sort_members(&mut result);
    Ok(result)
}

/// A result object without its top-level `resultType`, which may only be
/// `"complete"`.
fn without_result_type(result: Value<'_>) -> Result<Value<'_>, EntryInvalid> {
    let Value::Object(mut members) = result else {
        return Err(EntryInvalid);
    };
    if let Some(at) = members.iter().position(|(k, _)| k == RESULT_TYPE) {
        match members.remove(at) {
            (_, Value::String(kind)) if kind == COMPLETE => {}
            _ => return Err(EntryInvalid),
        }
    }
    Ok(Value::Object(members))
}

/// Puts the members of every object in `v` in RFC 8785 order, recursively;
/// values, number texts included, stay as they are.
fn sort_members(v: &mut Value<'_>) {
    match v {
        Value::Array(items) => items.iter_mut().for_each(sort_members),
        Value::Object(members) => {
            jcs::sort_members(members);
            members.iter_mut().for_each(|(_, v)| sort_members(v));
        }
        _ => {}
    }
}

/// What a held entry means for a call whose arguments hash to `hash`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// The key was used with other arguments: refuse ([`Outcome::Conflict`]),
    /// never replay.
    Conflict,
    /// The first call still runs: [`wait`], then claim again.
    InFlight,
    /// The first call's result to answer with, as JSON ([`replayed`]).
    Replay(String),
}

/// Reads what a key holds (`bytes`, as the store gave it) and decides for
/// this call: a conflict when the hashes differ (whatever the state), else
/// in flight or the replay, written for `revision`, the retrying request's
/// protocol revision ([`replayed`]).
pub fn held(bytes: &[u8], hash: &str, revision: &str) -> Result<Held, EntryInvalid> {
    let entry = Entry::read(bytes)?;
    if entry.hash() != hash {
        return Ok(Held::Conflict);
    }
    Ok(match entry {
        Entry::Running { .. } => Held::InFlight,
        Entry::Done { result, .. } => Held::Replay(replayed(result, revision)),
    })
}

/// A stored result as replayed to a request of protocol revision
/// `revision` (`""` when the request names none): the stored result with
/// `_meta["agentarea/replayed"] = true` (its other `_meta` members kept; a
/// `_meta` that is not an object is replaced) and, where the revision
/// requires it ([`revision::result_type_required`]), `resultType:
/// "complete"`; every object's members in RFC 8785 order, as stored, with
/// the two added at their places in it. The same entry and revision give
/// the same bytes, whichever server stored the entry.
pub fn replayed(result: Value<'_>, revision: &str) -> String {
    let mut members = match result {
        Value::Object(members) => members,
        _ => Vec::new(),
    };
    members.retain(|(k, _)| k != RESULT_TYPE);
    let flag = || (Cow::Borrowed(REPLAYED), Value::Bool(true));
    match members.iter_mut().find(|(k, _)| k == "_meta") {
        Some((_, Value::Object(meta))) => match meta.iter_mut().find(|(k, _)| k == REPLAYED) {
            Some((_, v)) => *v = Value::Bool(true),
            None => meta.push(flag()),
        },
        Some((_, other)) => *other = Value::Object(alloc::vec![flag()]),
        None => members.push((Cow::Borrowed("_meta"), Value::Object(alloc::vec![flag()]))),
    }
    if revision::result_type_required(revision) {
        members.push((
            Cow::Borrowed(RESULT_TYPE),
            Value::String(Cow::Borrowed(COMPLETE)),
        ));
    }
    let mut out = Value::Object(members);
    sort_members(&mut out);
    out.to_json()
}

/// A duplicate's next step while the first call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// The wait is over: refuse ([`Outcome::InProgress`]).
    Refuse,
    /// Sleep this many milliseconds, then claim again.
    Sleep(u64),
}

/// After `round` claims found the first call running (`round` 0 for the
/// first), at `now_ms`, with the wait ending at `deadline_ms` (the first
/// claim's time plus the wait): the pause starts at [`FIRST_PAUSE_MS`] and
/// doubles up to [`MAX_PAUSE_MS`], never past the deadline, at least 1 ms.
pub fn wait(now_ms: u64, deadline_ms: u64, round: u32) -> Wait {
    if now_ms >= deadline_ms {
        return Wait::Refuse;
    }
    let pause = FIRST_PAUSE_MS
        .checked_shl(round.min(32))
        .unwrap_or(MAX_PAUSE_MS)
        .min(MAX_PAUSE_MS);
    Wait::Sleep(pause.min(deadline_ms - now_ms).max(1))
}

/// Why the helper refused a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The same key with other arguments.
    Conflict,
    /// The first call still running after the wait.
    InProgress,
    /// No verified context, so no key (a front end may be told to run such
    /// calls unguarded instead).
    Unverified,
}

impl Outcome {
    pub const ALL: [Outcome; 3] = [Outcome::Conflict, Outcome::InProgress, Outcome::Unverified];

    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Conflict => "conflict",
            Outcome::InProgress => "in_progress",
            Outcome::Unverified => "unverified",
        }
    }

    /// The outcome named `name`.
    pub fn from_name(name: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == name)
    }
}

/// The default answer to a refused call (`key` the idempotency key, `""`
/// for `unverified`), as JSON: an `isError` `CallToolResult` naming the
/// reason, with `_meta["toolctx/idempotency"]` set to the outcome.
pub fn refusal(outcome: Outcome, key: &str) -> String {
    let text = match outcome {
        Outcome::Conflict => {
            format!("idempotency conflict: key {key} was already used with different arguments")
        }
        Outcome::InProgress => format!("call {key} is still running; retry later"),
        Outcome::Unverified => String::from(
            "refused: this tool is idempotent and the call carries no verified toolctx context, so it \
             cannot be guarded (is toolctx in front of the MCP server, and its context handed to the tool?)",
        ),
    };
    let mut out = String::from("{\"content\":[{\"type\":\"text\",\"text\":");
    write_str(&text, &mut out);
    out.push_str("}],\"isError\":true,\"_meta\":{");
    write_str(OUTCOME_KEY, &mut out);
    out.push(':');
    write_str(outcome.as_str(), &mut out);
    out.push_str("}}");
    out
}

/// The Redis store: the commands a front end sends, and what each reply
/// means ([`meaning`](redis::meaning)), for every client.
pub mod redis {
    use alloc::string::String;

    /// Deletes the claim only while the key still holds exactly it (the
    /// owner's own running entry): a claim that expired and was taken by
    /// another call is left alone.
    pub const RELEASE_SCRIPT: &str =
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

    fn ms(ms: u64) -> String {
        alloc::format!("{}", ms.max(1))
    }

    /// `SET <key> <running entry> NX PX <lease>`: the claim, atomic (one
    /// call of many wins).
    pub fn claim_args(key: &str, entry: &str, lease_ms: u64) -> [String; 6] {
        [
            "SET".into(),
            key.into(),
            entry.into(),
            "NX".into(),
            "PX".into(),
            ms(lease_ms),
        ]
    }

    /// `GET <key>`: what holds the key when the claim found it taken.
    pub fn read_args(key: &str) -> [String; 2] {
        ["GET".into(), key.into()]
    }

    /// `SET <key> <done entry> PX <ttl>`: the result, replacing the claim.
    pub fn complete_args(key: &str, entry: &str, ttl_ms: u64) -> [String; 5] {
        [
            "SET".into(),
            key.into(),
            entry.into(),
            "PX".into(),
            ms(ttl_ms),
        ]
    }

    /// `EVAL <RELEASE_SCRIPT> 1 <key> <running entry>`: drops the claim of
    /// a call that failed, only while the key still holds exactly it.
    pub fn release_args(key: &str, entry: &str) -> [String; 5] {
        [
            "EVAL".into(),
            RELEASE_SCRIPT.into(),
            "1".into(),
            key.into(),
            entry.into(),
        ]
    }

    /// Which command a reply answers.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Command {
        Claim,
        Read,
        Complete,
        Release,
    }

    impl Command {
        pub const ALL: [Command; 4] = [
            Command::Claim,
            Command::Read,
            Command::Complete,
            Command::Release,
        ];

        pub const fn as_str(self) -> &'static str {
            match self {
                Command::Claim => "claim",
                Command::Read => "read",
                Command::Complete => "complete",
                Command::Release => "release",
            }
        }

        pub fn from_name(name: &str) -> Option<Command> {
            Command::ALL.into_iter().find(|c| c.as_str() == name)
        }
    }

    /// A reply as a binding hands it over: the one shape every Redis reply
    /// toolctx reads takes.
    pub use crate::redis::Reply;

    /// What a reply means.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Meaning<'a> {
        /// Claim: `OK`, this call holds the key: run the tool.
        Claimed,
        /// Claim: nil, the key is held: read it.
        Taken,
        /// Read: the held entry's bytes, for [`held`](super::held).
        Held(&'a [u8]),
        /// Read: nil, the entry expired since the claim: claim again (up to
        /// [`CLAIM_ROUNDS`](super::CLAIM_ROUNDS) rounds).
        Gone,
        /// Complete: `OK`, the result is stored.
        Stored,
        /// Release: `1`, the claim was dropped.
        Released,
        /// Release: `0`, the key no longer held this claim (it expired, or
        /// another call holds it now): nothing to do.
        NotHeld,
        /// Anything else (an error, a reply this command never gives): the
        /// store failed. Before the tool ran, the call fails
        /// (`idempotency_store_failed`), never runs unguarded.
        Failed,
    }

    impl Meaning<'_> {
        pub const fn as_str(self) -> &'static str {
            match self {
                Meaning::Claimed => "claimed",
                Meaning::Taken => "taken",
                Meaning::Held(_) => "held",
                Meaning::Gone => "gone",
                Meaning::Stored => "stored",
                Meaning::Released => "released",
                Meaning::NotHeld => "not_held",
                Meaning::Failed => "failed",
            }
        }
    }

    /// What `reply` means as the answer to `command`; the one reading of a
    /// Redis reply every front end uses. A reply not listed is
    /// [`Meaning::Failed`], never a first use.
    pub fn meaning(command: Command, reply: Reply<'_>) -> Meaning<'_> {
        match (command, reply) {
            (Command::Claim, r) if r.is_ok() => Meaning::Claimed,
            (Command::Claim, Reply::Nil) => Meaning::Taken,
            (Command::Read, Reply::Bulk(bytes)) => Meaning::Held(bytes),
            (Command::Read, Reply::Status(text)) => Meaning::Held(text.as_bytes()),
            (Command::Read, Reply::Nil) => Meaning::Gone,
            (Command::Complete, r) if r.is_ok() => Meaning::Stored,
            (Command::Release, Reply::Integer(1)) => Meaning::Released,
            (Command::Release, Reply::Integer(0)) => Meaning::NotHeld,
            _ => Meaning::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::redis::{meaning, Command, Meaning, Reply};
    use super::*;

    #[test]
    fn store_keys_never_collide() {
        assert_eq!(store_key("a", "b:c"), "a:b:c");
        assert_eq!(store_key("a:b", "c"), "a%3Ab:c");
        assert_eq!(store_key("50%", "k"), "50%25:k");
        assert_eq!(redis_key(DEFAULT_KEY_PREFIX, ":k"), "toolctx:idem::k");
    }

    #[test]
    fn entries_round_trip_and_anything_else_is_invalid() {
        let r = running("h", "o");
        assert_eq!(r, r#"{"state":"running","hash":"h","owner":"o"}"#);
        assert_eq!(Entry::read(r.as_bytes()).unwrap().encode(), r);
        let d = done("h", br#"{ "n": 1.50, "content": [] }"#).unwrap();
        assert_eq!(
            d,
            r#"{"state":"done","hash":"h","result":{"content":[],"n":1.50}}"#
        );
        assert_eq!(Entry::read(d.as_bytes()).unwrap().encode(), d);
        assert_eq!(done("h", b"[]"), Err(EntryInvalid));
        for bad in [
            &b"nope"[..],
            b"{}",
            br#"{"state":"running","hash":"h"}"#,
            br#"{"state":"done","hash":"h","result":[]}"#,
            br#"{"state":"done","hash":1,"result":{}}"#,
            br#"{"state":"done","hash":"h","result":{"resultType":"input_required"}}"#,
            b"\xff",
        ] {
            assert!(Entry::read(bad).is_err());
        }
    }

    #[test]
    fn a_done_entry_is_era_neutral() {
        // The 2026-07-28 answer and the 2025 one, members in any order, store alike.
        let modern = done(
            "h",
            br#"{"resultType":"complete","structuredContent":{"z":1,"a":[{"y":2.0,"b":1e3}]},"content":[],"_meta":{"t":1,"a":2}}"#,
        )
        .unwrap();
        let older = done(
            "h",
            br#"{"_meta":{"a":2,"t":1},"content":[],"structuredContent":{"a":[{"b":1e3,"y":2.0}],"z":1}}"#,
        )
        .unwrap();
        assert_eq!(modern, older);
        assert_eq!(
            modern,
            r#"{"state":"done","hash":"h","result":{"_meta":{"a":2,"t":1},"content":[],"structuredContent":{"a":[{"b":1e3,"y":2.0}],"z":1}}}"#
        );
        // Names sort by UTF-16 code units: U+1F600 (the pair D83D DE00) before U+FF61.
        assert_eq!(
            done("h", "{\"\u{1F600}\":1,\"\u{FF61}\":2,\"a\":3,\"B\":4}".as_bytes()).unwrap(),
            "{\"state\":\"done\",\"hash\":\"h\",\"result\":{\"B\":4,\"a\":3,\"\u{1F600}\":1,\"\u{FF61}\":2}}"
        );
        // A round of a multi-round-trip call, or a resultType not understood, is no finished call.
        for bad in [
            &br#"{"resultType":"input_required","inputRequests":{}}"#[..],
            br#"{"resultType":null}"#,
            br#"{"resultType":"Complete"}"#,
        ] {
            assert_eq!(done("h", bad), Err(EntryInvalid));
        }
    }

    #[test]
    fn a_held_entry_is_a_conflict_a_wait_or_a_replay() {
        let r = running("h", "o");
        assert_eq!(held(r.as_bytes(), "x", ""), Ok(Held::Conflict));
        assert_eq!(held(r.as_bytes(), "h", ""), Ok(Held::InFlight));
        let d = done("h", br#"{"content":[],"_meta":{"z":1}}"#).unwrap();
        assert_eq!(
            held(d.as_bytes(), "h", "2025-11-25"),
            Ok(Held::Replay(
                r#"{"_meta":{"agentarea/replayed":true,"z":1},"content":[]}"#.into()
            ))
        );
        assert_eq!(held(d.as_bytes(), "x", "2025-11-25"), Ok(Held::Conflict));
    }

    #[test]
    fn a_replay_is_written_for_the_retrying_revision() {
        let d = done("h", br#"{"resultType":"complete","structuredContent":{"n":1},"isError":false,"content":[]}"#)
            .unwrap();
        let replay = |revision| match held(d.as_bytes(), "h", revision) {
            Ok(Held::Replay(r)) => r,
            other => panic!("{other:?}"),
        };
        let unstamped = r#"{"_meta":{"agentarea/replayed":true},"content":[],"isError":false,"structuredContent":{"n":1}}"#;
        let stamped = r#"{"_meta":{"agentarea/replayed":true},"content":[],"isError":false,"resultType":"complete","structuredContent":{"n":1}}"#;
        for r in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
            assert_eq!(replay(r), unstamped, "{r}");
        }
        for r in ["2026-07-28", "2027-03-01", "", "unknown"] {
            assert_eq!(replay(r), stamped, "{r:?}");
        }
        // An entry written before entries were era-neutral (a resultType, another order) replays alike.
        let old = br#"{"state":"done","hash":"h","result":{"structuredContent":{"n":1},"resultType":"complete","content":[],"isError":false,"_meta":"x"}}"#;
        assert_eq!(
            held(old, "h", "2025-11-25"),
            Ok(Held::Replay(unstamped.into()))
        );
        assert_eq!(
            held(old, "h", "2026-07-28"),
            Ok(Held::Replay(stamped.into()))
        );
        // A stored flag of false is set; a _meta that is not an object is replaced.
        let f = done(
            "h",
            br#"{"_meta":{"agentarea/replayed":false,"b":null},"content":[]}"#,
        )
        .unwrap();
        assert_eq!(
            held(f.as_bytes(), "h", "2026-07-28"),
            Ok(Held::Replay(
                r#"{"_meta":{"agentarea/replayed":true,"b":null},"content":[],"resultType":"complete"}"#.into()
            ))
        );
    }

    #[test]
    fn the_wait_doubles_and_ends() {
        assert_eq!(wait(0, 100, 0), Wait::Sleep(10));
        assert_eq!(wait(0, 1000, 3), Wait::Sleep(80));
        assert_eq!(wait(0, 1000, 40), Wait::Sleep(250));
        assert_eq!(wait(995, 1000, 5), Wait::Sleep(5));
        assert_eq!(wait(1000, 1000, 0), Wait::Refuse);
    }

    #[test]
    fn a_reply_has_one_meaning() {
        assert_eq!(
            meaning(Command::Claim, Reply::Status("OK")),
            Meaning::Claimed
        );
        assert_eq!(meaning(Command::Claim, Reply::Nil), Meaning::Taken);
        assert_eq!(
            meaning(Command::Claim, Reply::Bulk(b"OK")),
            Meaning::Claimed
        );
        assert_eq!(meaning(Command::Claim, Reply::Integer(1)), Meaning::Failed);
        assert_eq!(meaning(Command::Read, Reply::Error("x")), Meaning::Failed);
        assert_eq!(
            meaning(Command::Release, Reply::Integer(2)),
            Meaning::Failed
        );
    }
}
