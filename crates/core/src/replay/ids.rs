//! The replay cache's set of live token ids: an open-addressing hash table
//! (linear probing, backward-shift removal, at most half full) rather than a
//! `BTreeMap`, whose insertion, removal and rebalancing cost about 5 KB of
//! the verifier's wasm (issue 32). The ids come from tokens whose signature
//! was verified, so no caller without the secret chooses them to collide.

use alloc::boxed::Box;
use alloc::vec::Vec;

#[derive(Debug, Clone, Default)]
pub(crate) struct IdSet {
    /// A power of two long (or empty); never more than half full, so a
    /// probe always meets an empty slot.
    slots: Vec<Option<Box<str>>>,
    len: usize,
}

/// FNV-1a, folded to the table's word (the in-memory idempotency store's
/// table too).
pub(crate) fn hash(id: &str) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    (h ^ (h >> 32)) as usize
}

impl IdSet {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn mask(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    /// The slot that holds `id` (`true`) or the empty one where it would go
    /// (`false`); `None` while the table has no slots.
    fn find(&self, id: &str) -> Option<(usize, bool)> {
        let mask = self.mask();
        let mut i = hash(id) & mask;
        loop {
            match self.slots.get(i)? {
                None => return Some((i, false)),
                Some(held) if **held == *id => return Some((i, true)),
                Some(_) => i = (i + 1) & mask,
            }
        }
    }

    pub(crate) fn contains(&self, id: &str) -> bool {
        matches!(self.find(id), Some((_, true)))
    }

    /// Adds `id` (once: an id held already stays as it is).
    pub(crate) fn insert(&mut self, id: &str) {
        if self.contains(id) {
            return;
        }
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        if let Some((i, _)) = self.find(id) {
            if let Some(slot) = self.slots.get_mut(i) {
                *slot = Some(id.into());
                self.len += 1;
            }
        }
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(16);
        let old = core::mem::replace(&mut self.slots, (0..size).map(|_| None).collect());
        for id in old.into_iter().flatten() {
            if let Some((i, _)) = self.find(&id) {
                if let Some(slot) = self.slots.get_mut(i) {
                    *slot = Some(id);
                }
            }
        }
    }

    /// Removes `id` if held, moving back the ids of its probe run that
    /// would no longer be found past the emptied slot.
    pub(crate) fn remove(&mut self, id: &str) {
        let Some((mut hole, true)) = self.find(id) else {
            return;
        };
        if let Some(slot) = self.slots.get_mut(hole) {
            *slot = None;
            self.len -= 1;
        }
        let mask = self.mask();
        let mut i = hole;
        loop {
            i = (i + 1) & mask;
            let Some(Some(held)) = self.slots.get(i) else {
                return;
            };
            let home = hash(held) & mask;
            // It may move to the hole when the hole lies on its way from
            // its home slot to where it is.
            if i.wrapping_sub(home) & mask >= i.wrapping_sub(hole) & mask {
                let moved = self.slots.get_mut(i).and_then(Option::take);
                if let Some(slot) = self.slots.get_mut(hole) {
                    *slot = moved;
                }
                hole = i;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeSet;
    use alloc::format;
    use alloc::string::String;

    #[test]
    fn agrees_with_a_set_through_inserts_and_removals() {
        let mut ids = IdSet::default();
        let mut model = BTreeSet::new();
        // A small linear congruential generator: a fixed, varied sequence.
        let mut x: u64 = 1;
        for round in 0..20_000u32 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            // Few distinct ids, so that inserts meet held ids and removals
            // cut through long probe runs.
            let id: String = format!("jti-{}", (x >> 33) % 700);
            if round % 3 == 0 {
                ids.remove(&id);
                model.remove(&id);
            } else {
                ids.insert(&id);
                model.insert(id.clone());
            }
            assert_eq!(ids.contains(&id), model.contains(&id));
            assert_eq!(ids.len(), model.len());
        }
        for n in 0..700 {
            let id = format!("jti-{n}");
            assert_eq!(ids.contains(&id), model.contains(&id), "{id}");
        }
        assert!(!ids.contains(""));
        ids.remove("never held");
        assert_eq!(ids.len(), model.len());
    }

    #[test]
    fn an_empty_set_holds_nothing() {
        let mut ids = IdSet::default();
        assert!(!ids.contains("a"));
        ids.remove("a");
        assert_eq!(ids.len(), 0);
        ids.insert("");
        assert!(ids.contains(""));
        assert_eq!(ids.len(), 1);
    }
}
