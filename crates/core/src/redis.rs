//! Redis as every front end reaches it: the one shape a reply takes once a
//! binding has converted its client's value ([`Reply`]), and the bound on a
//! command ([`TIMEOUT_MS`]). What a reply means is the command's to say
//! (the replay guard's: [`crate::replay::redis::claim_answer`]).
//!
//! One rule for every client: a command is sent once. A reply that does
//! not come within [`TIMEOUT_MS`] (or a connection that fails) is the
//! store failing, never retried by toolctx: a claim sent twice could read
//! its own first write as a replay, and a late first reply could never be
//! told from the retry's.

use crate::config::ConfigError;

/// How long one store command may wait for its reply, in milliseconds
/// (the settings table's `store_timeout_ms`: why 500, and why at most
/// 60,000, is said there).
pub use crate::settings::{MAX_STORE_TIMEOUT_MS as MAX_TIMEOUT_MS, STORE_TIMEOUT_MS as TIMEOUT_MS};

/// The store timeout a front end's user gave, in milliseconds as the host
/// counts them (a JavaScript number, seconds times 1000, a duration's
/// nanoseconds over 10^6), read by the settings table's one rule
/// (`store_timeout_ms`: 0 the default, rounded to whole milliseconds,
/// else `limit_out_of_range`).
pub fn timeout_ms(raw: f64) -> Result<u64, ConfigError> {
    let row = crate::settings::STORE_TIMEOUT;
    row.number(raw).ok_or(ConfigError::Limit(row.name))
}

/// A Redis reply as a binding hands it over, whatever its client: nil, a
/// status or a string the client decoded, bulk bytes, an integer, an error
/// (the reply's or the client's), or any other shape (an array, a map, a
/// double, a boolean), which no command toolctx sends expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply<'a> {
    /// Nil (`$-1`, `*-1`, `_`; `null`/`undefined`/`None` in clients).
    Nil,
    /// A status (`+OK`) or a string the client decoded.
    Status(&'a str),
    /// A bulk string, as bytes.
    Bulk(&'a [u8]),
    Integer(i64),
    /// An error reply (`-ERR ...`) or the client's error.
    Error(&'a str),
    /// Any other shape.
    Other,
}

impl<'a> Reply<'a> {
    /// `OK`, the answer of a `SET` that wrote: a status, or the same text as
    /// bulk bytes (a client that maps every string to bytes cannot tell
    /// them apart, and no command toolctx sends answers `OK` otherwise).
    pub fn is_ok(&self) -> bool {
        matches!(self, Reply::Status("OK") | Reply::Bulk(b"OK"))
    }

    /// The kinds' names, as bindings and the helper vectors name them.
    pub const KINDS: [&'static str; 6] = ["nil", "status", "bulk", "integer", "error", "other"];

    pub const fn kind(&self) -> &'static str {
        match self {
            Reply::Nil => "nil",
            Reply::Status(_) => "status",
            Reply::Bulk(_) => "bulk",
            Reply::Integer(_) => "integer",
            Reply::Error(_) => "error",
            Reply::Other => "other",
        }
    }

    /// A reply from its kind's name and its value as bytes (a status's or
    /// error's text, a bulk string's bytes, an integer's decimal text;
    /// empty for nil and other), for a binding that cannot hand a typed
    /// value across (wasm). `None` for a name that is no kind, or a value
    /// its kind cannot hold (a status that is not UTF-8, an integer that
    /// is not one): the binding treats that as [`Reply::Other`].
    pub fn from_parts(kind: &str, value: &'a [u8]) -> Option<Reply<'a>> {
        let text = || core::str::from_utf8(value).ok();
        Some(match kind {
            "nil" => Reply::Nil,
            "status" => Reply::Status(text()?),
            "bulk" => Reply::Bulk(value),
            "integer" => Reply::Integer(text()?.parse().ok()?),
            "error" => Reply::Error(text()?),
            "other" => Reply::Other,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn a_store_timeout_is_the_default_or_in_range() {
        for (raw, want) in [
            (0.0, TIMEOUT_MS),
            (-0.0, TIMEOUT_MS),
            (1.0, 1),
            (0.5, 1),
            (250.0, 250),
            (1.1 * 1000.0, 1100),
            (1499.4, 1499),
            (1499.5, 1500),
            (60_000.0, 60_000),
            (60_000.4, 60_000),
        ] {
            assert_eq!(timeout_ms(raw), Ok(want), "{raw}");
        }
        for raw in [
            0.4,
            1e-9,
            -1.0,
            -0.6,
            60_000.5,
            1e300,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let e = timeout_ms(raw).unwrap_err();
            assert_eq!(e.code(), "limit_out_of_range", "{raw}");
            assert_eq!(e.to_string(), "setting `store_timeout_ms` is out of range");
        }
    }

    #[test]
    fn every_kind_reads_back_from_its_parts() {
        let cases: [(&str, &[u8], Reply<'_>); 6] = [
            ("nil", b"", Reply::Nil),
            ("status", b"OK", Reply::Status("OK")),
            ("bulk", b"\xff\x00", Reply::Bulk(b"\xff\x00")),
            ("integer", b"-42", Reply::Integer(-42)),
            ("error", b"ERR x", Reply::Error("ERR x")),
            ("other", b"", Reply::Other),
        ];
        for (i, (kind, value, want)) in cases.into_iter().enumerate() {
            assert_eq!(Reply::from_parts(kind, value), Some(want), "{kind}");
            assert_eq!(want.kind(), kind);
            assert_eq!(Reply::KINDS[i], kind);
        }
        for (kind, value) in [
            ("status", &b"\xff"[..]),
            ("integer", b"1.5"),
            ("integer", b"99999999999999999999"),
            ("error", b"\xc3"),
            ("simple", b"OK"),
            ("", b""),
        ] {
            assert_eq!(Reply::from_parts(kind, value), None, "{kind} {value:?}");
        }
    }
}
