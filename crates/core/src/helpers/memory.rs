//! The in-memory idempotency store (CONTRACT §5.1): the store of one
//! process, for a server that runs as one replica. Every front end keeps
//! its entries here, so that expiry, capacity and the release rule are the
//! same in every language, and the same as the Redis store's:
//!
//! - a claim takes a key that holds no live entry, for its lease; a key
//!   that holds one answers it (the caller reads it with
//!   [`held`](super::idempotency::held));
//! - a stored result replaces the claim for its time to live;
//! - a release deletes the key only while it still holds exactly the
//!   caller's running entry (the Redis release script's rule: a claim that
//!   expired and was taken by another call is left alone);
//! - an entry whose time has come is gone: it holds nothing, counts for
//!   nothing, and is the first to leave when the store is full; past the
//!   capacity, the least recently used entry leaves next (a claim or a
//!   read that finds a key uses it; a release does not);
//! - durations of 0 ms count as 1 ms, as `PX` has them.
//!
//! The front end holds the store behind its own lock and passes `now` (Unix
//! milliseconds, or any clock that only moves forward) into every call.

use alloc::collections::BTreeMap;
use alloc::string::String;

use crate::settings::{self, Raw, SettingError};

/// One entry: its stored text, when it stops holding the key, and its last
/// use (the key of its place in [`MemoryStore::recency`]).
#[derive(Debug, Clone)]
struct Slot {
    entry: String,
    expires: u64,
    used: u64,
}

/// The entries of one process, at most [`MemoryStore::capacity`] of them.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    entries: BTreeMap<String, Slot>,
    /// last use -> key, least recent first.
    recency: BTreeMap<u64, String>,
    /// (expiry, last use) -> key, soonest first.
    expiry: BTreeMap<(u64, u64), String>,
    tick: u64,
    capacity: usize,
}

impl MemoryStore {
    /// A store for at most `capacity` entries (at least 1).
    pub fn new(capacity: usize) -> MemoryStore {
        MemoryStore {
            entries: BTreeMap::new(),
            recency: BTreeMap::new(),
            expiry: BTreeMap::new(),
            tick: 0,
            capacity: capacity.max(1),
        }
    }

    /// A store sized by the settings table's `idempotency_memory_entries`
    /// from the value a user gave (absent or 0: the default; out of range:
    /// refused).
    pub fn with_entries(raw: Raw<'_>) -> Result<MemoryStore, SettingError> {
        match settings::MEMORY_ENTRIES.read(raw)? {
            settings::Value::Number(n) => {
                Ok(MemoryStore::new(usize::try_from(n).unwrap_or(usize::MAX)))
            }
            _ => Err(SettingError::Type(settings::MEMORY_ENTRIES.name)),
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Entries held (expired ones leave at the next call).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Claims `key` with `running` for `lease_ms` at `now`: `None` when
    /// the claim is this caller's, else the live entry that holds the key.
    pub fn claim(&mut self, key: &str, running: &str, lease_ms: u64, now: u64) -> Option<String> {
        self.expire(now);
        if let Some(held) = self.touch(key) {
            return Some(held);
        }
        self.put(key, running, lease_ms, now);
        None
    }

    /// The live entry under `key` at `now`, if any.
    pub fn read(&mut self, key: &str, now: u64) -> Option<String> {
        self.expire(now);
        self.touch(key)
    }

    /// Stores `done` under `key` for `ttl_ms` at `now`, replacing whatever
    /// held it.
    pub fn complete(&mut self, key: &str, done: &str, ttl_ms: u64, now: u64) {
        self.expire(now);
        self.put(key, done, ttl_ms, now);
    }

    /// Deletes `key` if it holds exactly `running` at `now`; `true` when it
    /// did.
    pub fn release(&mut self, key: &str, running: &str, now: u64) -> bool {
        self.expire(now);
        let mine = self.entries.get(key).is_some_and(|s| s.entry == running);
        if mine {
            self.remove(key);
        }
        mine
    }

    /// Marks the entry under `key` as just used; its text.
    fn touch(&mut self, key: &str) -> Option<String> {
        let slot = self.entries.get_mut(key)?;
        self.tick += 1;
        let (old, new) = (slot.used, self.tick);
        slot.used = new;
        let (entry, expires) = (slot.entry.clone(), slot.expires);
        if let Some(k) = self.recency.remove(&old) {
            self.recency.insert(new, k);
        }
        if let Some(k) = self.expiry.remove(&(expires, old)) {
            self.expiry.insert((expires, new), k);
        }
        Some(entry)
    }

    fn put(&mut self, key: &str, entry: &str, ms: u64, now: u64) {
        self.remove(key);
        self.tick += 1;
        let expires = now.saturating_add(ms.max(1));
        self.recency.insert(self.tick, String::from(key));
        self.expiry.insert((expires, self.tick), String::from(key));
        self.entries.insert(
            String::from(key),
            Slot {
                entry: String::from(entry),
                expires,
                used: self.tick,
            },
        );
        while self.entries.len() > self.capacity {
            let Some((_, oldest)) = self.recency.pop_first() else {
                break;
            };
            self.remove(&oldest);
        }
    }

    fn remove(&mut self, key: &str) {
        if let Some(slot) = self.entries.remove(key) {
            self.recency.remove(&slot.used);
            self.expiry.remove(&(slot.expires, slot.used));
        }
    }

    /// Drops every entry whose expiry is at or before `now`.
    fn expire(&mut self, now: u64) {
        while let Some(entry) = self.expiry.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let key = entry.remove();
            self.remove(&key);
        }
    }
}

impl Default for MemoryStore {
    /// The settings table's default size.
    fn default() -> MemoryStore {
        MemoryStore::new(settings::DEFAULT_MEMORY_ENTRIES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_holds_until_its_lease_ends() {
        let mut s = MemoryStore::new(10);
        assert_eq!(s.claim("k", "r1", 100, 0), None);
        assert_eq!(s.claim("k", "r2", 100, 99).as_deref(), Some("r1"));
        // At 100 the lease has ended: the key is free again.
        assert_eq!(s.claim("k", "r2", 100, 100), None);
        assert_eq!(s.read("k", 150).as_deref(), Some("r2"));
    }

    #[test]
    fn a_result_replaces_the_claim_for_its_ttl() {
        let mut s = MemoryStore::new(10);
        assert_eq!(s.claim("k", "r", 10, 0), None);
        s.complete("k", "d", 1000, 5);
        assert_eq!(s.claim("k", "r2", 10, 500).as_deref(), Some("d"));
        assert_eq!(s.read("k", 1005), None);
        assert!(s.is_empty());
    }

    #[test]
    fn release_deletes_only_the_callers_own_claim() {
        let mut s = MemoryStore::new(10);
        assert_eq!(s.claim("k", "r1", 10, 0), None);
        // r1's lease ended and r2 took the key: r1's release leaves it.
        assert_eq!(s.claim("k", "r2", 10, 20), None);
        assert!(!s.release("k", "r1", 21));
        assert_eq!(s.read("k", 21).as_deref(), Some("r2"));
        assert!(s.release("k", "r2", 22));
        assert_eq!(s.read("k", 22), None);
        // A stored result is never released.
        s.complete("k", "d", 100, 30);
        assert!(!s.release("k", "r2", 31));
        assert!(!s.release("absent", "r2", 31));
    }

    #[test]
    fn zero_durations_are_one_millisecond() {
        let mut s = MemoryStore::new(10);
        assert_eq!(s.claim("k", "r", 0, 7), None);
        assert_eq!(s.read("k", 7).as_deref(), Some("r"));
        assert_eq!(s.read("k", 8), None);
    }

    #[test]
    fn full_drops_expired_then_least_recently_used() {
        let mut s = MemoryStore::new(2);
        assert_eq!(s.claim("a", "ra", 100, 0), None);
        assert_eq!(s.claim("b", "rb", 100, 1), None);
        // `a` used after `b`: `b` is the least recently used.
        assert_eq!(s.claim("a", "x", 100, 2).as_deref(), Some("ra"));
        assert_eq!(s.claim("c", "rc", 100, 3), None);
        assert_eq!(s.len(), 2);
        assert_eq!(s.read("b", 3), None);
        assert_eq!(s.read("a", 3).as_deref(), Some("ra"));
        // `c` is now the least recently used: a new entry pushes it out.
        s.complete("d", "dd", 5, 4);
        assert_eq!(s.read("c", 4), None);
        // At 9 `d` has expired: it leaves before any live entry.
        assert_eq!(s.claim("e", "re", 100, 9), None);
        assert_eq!(s.read("a", 9).as_deref(), Some("ra"));
        assert_eq!(s.read("e", 9).as_deref(), Some("re"));
        assert_eq!(s.read("d", 9), None);
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn the_size_is_the_settings_tables() {
        assert_eq!(MemoryStore::default().capacity(), 10_000);
        let s = MemoryStore::with_entries(Raw::Absent).map(|s| s.capacity());
        assert_eq!(s, Ok(10_000));
        let s = MemoryStore::with_entries(Raw::Number(0.0)).map(|s| s.capacity());
        assert_eq!(s, Ok(10_000));
        let s = MemoryStore::with_entries(Raw::Number(3.0)).map(|s| s.capacity());
        assert_eq!(s, Ok(3));
        for bad in [Raw::Number(-1.0), Raw::Number(1.5), Raw::Text("3")] {
            assert!(MemoryStore::with_entries(bad).is_err(), "{bad:?}");
        }
    }
}
