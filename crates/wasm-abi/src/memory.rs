//! The in-memory idempotency store (feature `helpers`): the core's
//! `MemoryStore` held by an instance of its own (`toolctx_idem_memory`),
//! as `toolctx_replay_memory` holds the replay guard. The host calls it
//! under one lock per store and passes `now` from its clock; expiry,
//! capacity and the release rule are the core's (CONTRACT §5.1).
#![forbid(unsafe_code)]

use toolctx_core::digits::u64_text;
use toolctx_core::helpers::memory::MemoryStore;
use toolctx_wasm_boundary::{settings, Error};

use crate::state::{bad, exact, utf8, Answer, State};

fn ms(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// `h` + the live entry that holds the key, or `n`: none.
fn held(entry: Option<String>) -> Answer {
    entry
        .map_or_else(|| String::from("n"), |e| format!("h{e}"))
        .into()
}

impl State {
    fn memory(&mut self) -> Result<&mut MemoryStore, Error> {
        self.idem_memory
            .as_mut()
            .ok_or_else(|| bad("no idempotency store: call toolctx_idem_memory first"))
    }
}

/// `toolctx_idem_memory`: this instance now holds a store sized by the
/// settings table's `idempotency_memory_entries` from the user's raw value
/// (`kind` and `number` as `toolctx_setting`'s, the text the input's one
/// field); answers the capacity, or the core's refusal.
pub fn open(s: &mut State, input: &[u8], kind: i32, number: f64) -> Result<Answer, Error> {
    let [text] = exact(input)?;
    let store = MemoryStore::with_entries(settings::raw(kind, number, utf8(text)?))
        .map_err(|e| Error::new(e.code(), e))?;
    let capacity = u64_text(store.capacity() as u64);
    s.idem_memory = Some(store);
    Ok(capacity.into())
}

/// `toolctx_idem_memory_claim`: `n` when the claim took the key, else `h`
/// + the entry that holds it.
pub fn claim(s: &mut State, input: &[u8], lease_ms: i64, now: i64) -> Result<Answer, Error> {
    let [key, entry] = exact(input)?;
    let got = s
        .memory()?
        .claim(utf8(key)?, utf8(entry)?, ms(lease_ms), ms(now));
    Ok(held(got))
}

/// `toolctx_idem_memory_read`: `h` + the live entry, or `n`.
pub fn read(s: &mut State, input: &[u8], now: i64) -> Result<Answer, Error> {
    let [key] = exact(input)?;
    let got = s.memory()?.read(utf8(key)?, ms(now));
    Ok(held(got))
}

/// `toolctx_idem_memory_complete`: the done entry stored for its ttl.
pub fn complete(s: &mut State, input: &[u8], ttl_ms: i64, now: i64) -> Result<Answer, Error> {
    let [key, entry] = exact(input)?;
    s.memory()?
        .complete(utf8(key)?, utf8(entry)?, ms(ttl_ms), ms(now));
    Ok(String::new().into())
}

/// `toolctx_idem_memory_release`: `r` when the key held exactly the
/// caller's running entry and is gone, else `n`.
pub fn release(s: &mut State, input: &[u8], now: i64) -> Result<Answer, Error> {
    let [key, entry] = exact(input)?;
    let gone = s.memory()?.release(utf8(key)?, utf8(entry)?, ms(now));
    Ok(String::from(if gone { "r" } else { "n" }).into())
}

/// `toolctx_idem_memory_len`: entries held (-1: no store).
pub fn len(s: &mut State) -> i64 {
    s.memory()
        .map_or(-1, |m| i64::try_from(m.len()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(items: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        for item in items {
            out.extend_from_slice(&(item.len() as u32).to_le_bytes());
            out.extend_from_slice(item.as_bytes());
        }
        out
    }

    fn text(answer: Result<Answer, Error>) -> String {
        match answer {
            Ok(Answer::Text(t)) => t,
            Ok(Answer::List(_)) => String::from("list"),
            Err(e) => format!("!{}", e.as_str()),
        }
    }

    #[test]
    fn the_cores_store_behind_the_exports() {
        let mut s = State::new();
        let none = fields(&["k"]);
        assert!(text(read(&mut s, &none, 0)).starts_with("!internal\n"));
        assert_eq!(len(&mut s), -1);
        // The settings table sizes it: 0 its default, -1 refused.
        assert_eq!(
            text(open(&mut s, &fields(&[""]), settings::NUMBER, 0.0)),
            "10000"
        );
        let refused = text(open(&mut s, &fields(&[""]), settings::NUMBER, -1.0));
        assert!(refused.starts_with("!limit_out_of_range\n"), "{refused}");
        assert_eq!(
            text(open(&mut s, &fields(&[""]), settings::ABSENT, 0.0)),
            "10000"
        );
        assert_eq!(
            text(open(&mut s, &fields(&[""]), settings::NUMBER, 2.0)),
            "2"
        );
        let (r1, r2) = (fields(&["k", "r1"]), fields(&["k", "r2"]));
        assert_eq!(text(claim(&mut s, &r1, 10, 0)), "n");
        assert_eq!(text(claim(&mut s, &r2, 10, 5)), "hr1");
        assert_eq!(text(release(&mut s, &r2, 6)), "n");
        assert_eq!(text(release(&mut s, &r1, 6)), "r");
        assert_eq!(text(read(&mut s, &none, 6)), "n");
        assert_eq!(text(complete(&mut s, &fields(&["k", "d"]), 100, 7)), "");
        assert_eq!(text(read(&mut s, &none, 106)), "hd");
        assert_eq!(len(&mut s), 1);
        assert_eq!(text(read(&mut s, &none, 107)), "n");
        assert_eq!(len(&mut s), 0);
    }
}
