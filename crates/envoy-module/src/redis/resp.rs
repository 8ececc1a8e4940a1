#![forbid(unsafe_code)]
//! RESP, as far as the replay guard speaks it: commands as arrays of bulk
//! strings, replies parsed incrementally (a partial reply waits for more).

use std::fmt::Write as _;

use toolctx_core::replay::redis::claim_answer as core_claim_answer;
use toolctx_core::ClaimAnswer;

/// The longest reply (or line) read: a claim's reply is a few bytes.
pub(crate) const MAX_REPLY_BYTES: usize = 64 * 1024;
/// Nested arrays read at most.
const MAX_DEPTH: usize = 4;

/// One RESP reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `+OK`
    Simple(Vec<u8>),
    /// `-ERR ...`
    Error(Vec<u8>),
    /// `:1`
    Integer(i64),
    /// `$3\r\nabc`
    Bulk(Vec<u8>),
    /// `$-1`, `*-1` (RESP2) or `_` (RESP3).
    Nil,
    Array(Vec<Reply>),
}

/// A command as RESP: an array of bulk strings.
pub fn command<A: AsRef<[u8]>>(args: &[A]) -> Vec<u8> {
    let mut head = String::new();
    let _ = write!(head, "*{}\r\n", args.len());
    let mut out = head.into_bytes();
    for a in args {
        let a = a.as_ref();
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// The first reply in `buf` and the bytes it took; `Ok(None)` while it is
/// incomplete; `Err` for what is not RESP (or is larger than any reply a
/// claim gets): the connection cannot be read any further.
pub fn parse(buf: &[u8]) -> Result<Option<(Reply, usize)>, String> {
    parse_at(buf, 0, 0)
}

fn line(buf: &[u8], from: usize) -> Result<Option<(&[u8], usize)>, String> {
    let rest = buf.get(from..).unwrap_or_default();
    match rest.windows(2).position(|w| w == b"\r\n") {
        Some(end) => Ok(rest.get(..end).map(|l| (l, from + end + 2))),
        None if rest.len() > MAX_REPLY_BYTES => Err("a RESP line too long".into()),
        None => Ok(None),
    }
}

fn integer(text: &[u8]) -> Result<i64, String> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| "a RESP length or integer that is not a number".into())
}

/// A length, `None` for -1 (nil).
fn length(text: &[u8], max: usize) -> Result<Option<usize>, String> {
    match integer(text)? {
        -1 => Ok(None),
        n => usize::try_from(n)
            .ok()
            .filter(|n| *n <= max)
            .map(Some)
            .ok_or_else(|| "a RESP length out of range".into()),
    }
}

fn parse_at(buf: &[u8], at: usize, depth: usize) -> Result<Option<(Reply, usize)>, String> {
    let Some(&kind) = buf.get(at) else {
        return Ok(None);
    };
    let Some((text, next)) = line(buf, at + 1)? else {
        return Ok(None);
    };
    let reply = match kind {
        b'+' => Reply::Simple(text.to_vec()),
        b'-' => Reply::Error(text.to_vec()),
        b':' => Reply::Integer(integer(text)?),
        b'_' if text.is_empty() => Reply::Nil,
        b'$' => {
            let Some(n) = length(text, MAX_REPLY_BYTES)? else {
                return Ok(Some((Reply::Nil, next)));
            };
            let end = next + n;
            let (Some(data), Some(crlf)) = (buf.get(next..end), buf.get(end..end + 2)) else {
                return Ok(None);
            };
            if crlf != b"\r\n" {
                return Err("a RESP bulk string without its CRLF".into());
            }
            return Ok(Some((Reply::Bulk(data.to_vec()), end + 2)));
        }
        b'*' => {
            let Some(n) = length(text, MAX_REPLY_BYTES)? else {
                return Ok(Some((Reply::Nil, next)));
            };
            if depth >= MAX_DEPTH {
                return Err("RESP arrays nested too deep".into());
            }
            let mut items = Vec::new();
            let mut at = next;
            for _ in 0..n {
                let Some((item, after)) = parse_at(buf, at, depth + 1)? else {
                    return Ok(None);
                };
                items.push(item);
                at = after;
            }
            return Ok(Some((Reply::Array(items), at)));
        }
        _ => return Err("not a RESP reply".into()),
    };
    Ok(Some((reply, next)))
}

impl Reply {
    /// The reply as the core reads replies (text that is not UTF-8 is no
    /// status or error the core knows: `Other`).
    pub fn core(&self) -> toolctx_core::redis::Reply<'_> {
        use toolctx_core::redis::Reply as Core;
        match self {
            Reply::Simple(s) => std::str::from_utf8(s).map_or(Core::Other, Core::Status),
            Reply::Error(e) => std::str::from_utf8(e).map_or(Core::Other, Core::Error),
            Reply::Integer(i) => Core::Integer(*i),
            Reply::Bulk(b) => Core::Bulk(b),
            Reply::Nil => Core::Nil,
            Reply::Array(_) => Core::Other,
        }
    }
}

/// Redis's reply to the core's `SET ... NX` as the store's answer: the
/// core's reading (`toolctx_core::replay::redis::claim_answer`).
pub fn claim_answer(reply: &Reply) -> ClaimAnswer {
    core_claim_answer(reply.core())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_reply_and_waits_for_the_rest() {
        let cases: [(&[u8], Reply); 8] = [
            (b"+OK\r\n", Reply::Simple(b"OK".to_vec())),
            (b"-ERR wrong\r\n", Reply::Error(b"ERR wrong".to_vec())),
            (b":-42\r\n", Reply::Integer(-42)),
            (b"$3\r\na\r\n\r\n", Reply::Bulk(b"a\r\n".to_vec())),
            (b"$0\r\n\r\n", Reply::Bulk(Vec::new())),
            (b"$-1\r\n", Reply::Nil),
            (b"_\r\n", Reply::Nil),
            (
                b"*2\r\n+a\r\n*1\r\n:1\r\n",
                Reply::Array(vec![
                    Reply::Simple(b"a".to_vec()),
                    Reply::Array(vec![Reply::Integer(1)]),
                ]),
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(
                parse(bytes).unwrap(),
                Some((want, bytes.len())),
                "{bytes:?}"
            );
            // Every proper prefix is incomplete, never an error.
            for cut in 0..bytes.len() {
                assert_eq!(
                    parse(&bytes[..cut]).unwrap(),
                    None,
                    "{bytes:?} cut at {cut}"
                );
            }
        }
        // Pipelined replies come one at a time.
        let two = b"+OK\r\n$-1\r\n";
        assert_eq!(
            parse(two).unwrap(),
            Some((Reply::Simple(b"OK".to_vec()), 5))
        );
        assert_eq!(parse(&two[5..]).unwrap(), Some((Reply::Nil, 5)));
        assert_eq!(parse(b"*-1\r\n").unwrap(), Some((Reply::Nil, 5)));
    }

    #[test]
    fn refuses_what_is_not_resp() {
        for bad in [
            &b"OK\r\n"[..],
            b":x\r\n",
            b"$-2\r\n",
            b"$3\r\nabcd\r\n",
            b"$99999999\r\n",
            b"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",
            b"_x\r\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let long = [b'+']
            .into_iter()
            .chain([b'a'; MAX_REPLY_BYTES + 2])
            .collect::<Vec<u8>>();
        assert!(parse(&long).is_err());
    }

    #[test]
    fn each_parsed_reply_is_handed_to_the_core_as_what_it_is() {
        use toolctx_core::redis::Reply as Core;
        let cases = [
            (Reply::Simple(b"OK".to_vec()), Core::Status("OK")),
            (Reply::Simple(b"\xff".to_vec()), Core::Other),
            (Reply::Error(b"NOAUTH".to_vec()), Core::Error("NOAUTH")),
            (Reply::Error(b"\xff".to_vec()), Core::Other),
            (Reply::Integer(1), Core::Integer(1)),
            (Reply::Bulk(b"x".to_vec()), Core::Bulk(b"x")),
            (Reply::Nil, Core::Nil),
            (Reply::Array(vec![Reply::Nil]), Core::Other),
        ];
        for (parsed, core) in &cases {
            assert_eq!(parsed.core(), *core, "{parsed:?}");
        }
        // The answers are the core's (pinned by its own tests).
        assert_eq!(
            claim_answer(&Reply::Simple(b"OK".to_vec())),
            ClaimAnswer::FirstUse
        );
        assert_eq!(claim_answer(&Reply::Nil), ClaimAnswer::Used);
        assert_eq!(
            claim_answer(&Reply::Error(b"OOM command not allowed".to_vec())),
            ClaimAnswer::Failed
        );
    }

    #[test]
    fn commands_are_arrays_of_bulk_strings() {
        assert_eq!(
            command(&["SET", "k", "1", "NX", "PX", "30000"]),
            b"*6\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\n1\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n30000\r\n"
        );
    }
}
