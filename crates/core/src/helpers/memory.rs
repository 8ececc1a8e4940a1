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
//!
//! No B-tree, as in the replay cache (issue 32: a `BTreeMap` per key and
//! value type costs kilobytes of every wasm module that holds the store):
//! the entries sit in the places of a vector (a place freed is reused),
//! found through an open-addressing table of their places (linear probing,
//! backward-shift removal, at most half full) and linked in order of use;
//! they expire through a binary heap of `(expiry, stamp, place)`, whose
//! items for an entry since replaced or removed are skipped when they come
//! up (the place holds another stamp) and swept once they outnumber the
//! entries. The keys are store keys of verified idempotency keys: no
//! caller without the platform's secret chooses them to collide.

use alloc::collections::BinaryHeap;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Reverse;

use crate::replay::key_hash;
use crate::settings::{self, Raw, SettingError};

/// No place: an empty table slot, the end of the use order.
const NIL: usize = usize::MAX;

/// One entry: its key and stored text, when it stops holding the key, the
/// put it came from (unique: its expiry item's stamp), and its neighbours
/// in the order of use (`older` toward the least recently used).
#[derive(Debug, Clone)]
struct Slot {
    key: String,
    entry: String,
    expires: u64,
    stamp: u64,
    older: usize,
    newer: usize,
}

/// The entries of one process, at most [`MemoryStore::capacity`] of them.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    /// The entries' places; `None` a free one (listed in `free`).
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    len: usize,
    /// Places in `slots`, by key hash: a power of two long (or empty),
    /// never more than half full, so a probe always meets an empty slot.
    table: Vec<usize>,
    /// The least and the most recently used entry.
    oldest: usize,
    newest: usize,
    /// `(expiry, stamp, place)` of every put, soonest first.
    expiry: BinaryHeap<Reverse<(u64, u64, usize)>>,
    stamp: u64,
    capacity: usize,
}

impl MemoryStore {
    /// A store for at most `capacity` entries (at least 1).
    pub fn new(capacity: usize) -> MemoryStore {
        MemoryStore {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
            table: Vec::new(),
            oldest: NIL,
            newest: NIL,
            expiry: BinaryHeap::new(),
            stamp: 0,
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
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
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
        match self.place(key) {
            Some(p) if self.slot(p).is_some_and(|s| s.entry == running) => {
                self.remove_place(p);
                true
            }
            _ => false,
        }
    }

    fn slot(&self, p: usize) -> Option<&Slot> {
        self.slots.get(p).and_then(Option::as_ref)
    }

    fn slot_mut(&mut self, p: usize) -> Option<&mut Slot> {
        self.slots.get_mut(p).and_then(Option::as_mut)
    }

    /// The table index holding `key`'s place (`true`) or the empty one
    /// where it would go (`false`); `None` while the table is empty.
    #[inline(never)]
    fn find(&self, key: &str) -> Option<(usize, bool)> {
        let mask = self.table.len().wrapping_sub(1);
        let mut i = key_hash(key) & mask;
        loop {
            let p = *self.table.get(i)?;
            if p == NIL {
                return Some((i, false));
            }
            if self.slot(p).is_some_and(|s| s.key == key) {
                return Some((i, true));
            }
            i = (i + 1) & mask;
        }
    }

    /// Where `key`'s entry sits in `slots`.
    fn place(&self, key: &str) -> Option<usize> {
        match self.find(key)? {
            (i, true) => self.table.get(i).copied(),
            _ => None,
        }
    }

    /// Marks the entry under `key` as just used; its text.
    #[inline(never)]
    fn touch(&mut self, key: &str) -> Option<String> {
        let p = self.place(key)?;
        self.unlink(p);
        self.link_newest(p);
        self.slot(p).map(|s| s.entry.clone())
    }

    fn put(&mut self, key: &str, entry: &str, ms: u64, now: u64) {
        self.remove(key);
        if (self.len + 1) * 2 > self.table.len() {
            self.grow();
        }
        self.stamp += 1;
        let expires = now.saturating_add(ms.max(1));
        let slot = Slot {
            key: String::from(key),
            entry: String::from(entry),
            expires,
            stamp: self.stamp,
            older: NIL,
            newer: NIL,
        };
        let p = match self.free.pop() {
            Some(p) => p,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        if let Some(place) = self.slots.get_mut(p) {
            *place = Some(slot);
        }
        if let Some((i, false)) = self.find(key) {
            self.set(i, p);
        }
        self.len += 1;
        self.link_newest(p);
        self.expiry.push(Reverse((expires, self.stamp, p)));
        while self.len > self.capacity && self.oldest != NIL {
            self.remove_place(self.oldest);
        }
        // Items of entries since replaced or removed, once they outnumber
        // the entries: the heap again from the entries alone.
        if self.expiry.len() > 2 * self.len + 16 {
            self.expiry.clear();
            for (p, s) in self.slots.iter().enumerate() {
                if let Some(s) = s {
                    self.expiry.push(Reverse((s.expires, s.stamp, p)));
                }
            }
        }
    }

    /// The table twice as long (16 at first), every place found again.
    fn grow(&mut self) {
        self.table = vec![NIL; (self.table.len() * 2).max(16)];
        for p in 0..self.slots.len() {
            if let Some((i, false)) = self.slot(p).and_then(|s| self.find(&s.key)) {
                self.set(i, p);
            }
        }
    }

    /// Takes the entry at `p` out of the order of use.
    #[inline(never)]
    fn unlink(&mut self, p: usize) {
        let Some((older, newer)) = self.slot(p).map(|s| (s.older, s.newer)) else {
            return;
        };
        match self.slot_mut(older) {
            Some(s) => s.newer = newer,
            None => self.oldest = newer,
        }
        match self.slot_mut(newer) {
            Some(s) => s.older = older,
            None => self.newest = older,
        }
    }

    /// Puts the entry at `p` last in the order of use.
    #[inline(never)]
    fn link_newest(&mut self, p: usize) {
        let newest = self.newest;
        if let Some(s) = self.slot_mut(p) {
            s.older = newest;
            s.newer = NIL;
        }
        match self.slot_mut(newest) {
            Some(s) => s.newer = p,
            None => self.oldest = p,
        }
        self.newest = p;
    }

    fn remove(&mut self, key: &str) {
        if let Some(p) = self.place(key) {
            self.remove_place(p);
        }
    }

    /// Removes the entry at `p`.
    #[inline(never)]
    fn remove_place(&mut self, p: usize) {
        let Some((mut hole, true)) = self.slot(p).and_then(|s| self.find(&s.key)) else {
            return;
        };
        // The places of the probe run past the hole that would no longer
        // be found move back into it.
        let mask = self.table.len().wrapping_sub(1);
        self.set(hole, NIL);
        let mut i = hole;
        loop {
            i = (i + 1) & mask;
            let q = match self.table.get(i) {
                Some(&q) if q != NIL => q,
                _ => break,
            };
            let home = self.slot(q).map_or(i, |s| key_hash(&s.key) & mask);
            if i.wrapping_sub(home) & mask >= i.wrapping_sub(hole) & mask {
                self.set(hole, q);
                self.set(i, NIL);
                hole = i;
            }
        }
        self.unlink(p);
        if let Some(place) = self.slots.get_mut(p) {
            *place = None;
            self.free.push(p);
            self.len -= 1;
        }
    }

    fn set(&mut self, i: usize, p: usize) {
        if let Some(t) = self.table.get_mut(i) {
            *t = p;
        }
    }

    /// Drops every entry whose expiry is at or before `now`.
    fn expire(&mut self, now: u64) {
        while let Some(&Reverse((expires, stamp, p))) = self.expiry.peek() {
            if expires > now {
                break;
            }
            self.expiry.pop();
            let key = self
                .slot(p)
                .filter(|s| s.stamp == stamp)
                .map(|s| s.key.clone());
            if let Some(key) = key {
                self.remove(&key);
            }
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

    /// The rules written the plainest way: a list scanned on every call.
    #[derive(Default)]
    struct Model {
        /// (key, entry, expires, last use)
        entries: alloc::vec::Vec<(String, String, u64, u64)>,
        tick: u64,
        capacity: usize,
    }

    impl Model {
        fn expire(&mut self, now: u64) {
            self.entries.retain(|e| e.2 > now);
        }
        fn touch(&mut self, key: &str) -> Option<String> {
            self.tick += 1;
            let tick = self.tick;
            let e = self.entries.iter_mut().find(|e| e.0 == key)?;
            e.3 = tick;
            Some(e.1.clone())
        }
        fn put(&mut self, key: &str, entry: &str, ms: u64, now: u64) {
            self.entries.retain(|e| e.0 != key);
            self.tick += 1;
            let e = (key.into(), entry.into(), now + ms.max(1), self.tick);
            self.entries.push(e);
            while self.entries.len() > self.capacity {
                let lru = (0..self.entries.len()).min_by_key(|&i| self.entries[i].3);
                self.entries.remove(lru.unwrap());
            }
        }
    }

    #[test]
    fn agrees_with_the_plain_rules_over_many_keys() {
        let (mut s, mut m) = (MemoryStore::new(150), Model::default());
        m.capacity = 150;
        // A small linear congruential generator: a fixed, varied sequence,
        // over more keys than the capacity, so that the table grows,
        // probe runs shift back and entries move in the vector.
        let mut x: u64 = 7;
        let mut now = 0;
        for round in 0..30_000u32 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let key = alloc::format!("k{}", (x >> 33) % 400);
            let entry = alloc::format!("e{}", (x >> 20) % 3);
            let ms = (x >> 40) % 500;
            now += (x >> 50) % 3;
            match round % 4 {
                0 => {
                    m.expire(now);
                    let want = m.touch(&key);
                    if want.is_none() {
                        m.put(&key, &entry, ms, now);
                    }
                    assert_eq!(s.claim(&key, &entry, ms, now), want, "{round}");
                }
                1 => {
                    m.expire(now);
                    assert_eq!(s.read(&key, now), m.touch(&key), "{round}");
                }
                2 => {
                    m.expire(now);
                    m.put(&key, &entry, ms, now);
                    s.complete(&key, &entry, ms, now);
                }
                _ => {
                    m.expire(now);
                    let mine = m.entries.iter().any(|e| e.0 == key && e.1 == entry);
                    m.entries.retain(|e| !(mine && e.0 == key));
                    assert_eq!(s.release(&key, &entry, now), mine, "{round}");
                }
            }
            assert_eq!(s.len(), m.entries.len(), "{round}");
        }
        // The expiry heap stays near the entries' count.
        assert!(s.expiry.len() <= 2 * s.len() + 17, "{}", s.expiry.len());
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
