/// What waits under a ticket, oldest first: one that is never taken waits
/// only until `capacity` newer ones push it out. A ticket is taken once,
/// with what it was issued for, which stays here: a body check cannot be
/// handed other headers, a settled claim another context.
pub struct Tickets<T> {
    waiting: Vec<(u32, T)>,
    capacity: usize,
    next: u32,
}

impl<T> Tickets<T> {
    pub const fn new(capacity: usize) -> Tickets<T> {
        Tickets {
            waiting: Vec::new(),
            capacity: if capacity == 0 { 1 } else { capacity },
            next: 0,
        }
    }

    /// Keeps `item`: the ticket that [`Tickets::take`] gives it back for.
    pub fn hold(&mut self, item: T) -> u32 {
        let ticket = self.next;
        self.next = self.next.wrapping_add(1);
        if self.waiting.len() >= self.capacity {
            self.waiting.remove(0);
        }
        self.waiting.push((ticket, item));
        ticket
    }

    /// What `ticket` holds, once; `None` when it holds nothing (never
    /// issued, taken already, pushed out, or not an issued number at all).
    pub fn take(&mut self, ticket: f64) -> Option<T> {
        let i = self
            .waiting
            .iter()
            .position(|(t, _)| f64::from(*t) == ticket)?;
        Some(self.waiting.remove(i).1)
    }

    /// What `ticket` holds, left in place (a progress coalescer is used
    /// many times).
    pub fn get_mut(&mut self, ticket: f64) -> Option<&mut T> {
        self.waiting
            .iter_mut()
            .find(|(t, _)| f64::from(*t) == ticket)
            .map(|(_, item)| item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_gives_back_what_it_was_issued_for_once() {
        let mut held = Tickets::new(2);
        assert_eq!(held.hold("a"), 0);
        assert_eq!(held.hold("b"), 1);
        assert_eq!(held.take(0.0), Some("a"));
        assert!(held.take(0.0).is_none(), "used once");
        for never in [2.0, 7.0, -1.0, 0.5, f64::NAN, f64::INFINITY, 1e300] {
            assert!(held.take(never).is_none(), "{never}");
        }
        // The ring: a third hold pushes out the oldest waiting one.
        assert_eq!(held.hold("c"), 2);
        assert_eq!(held.hold("d"), 3);
        assert!(held.take(1.0).is_none(), "pushed out");
        assert_eq!(held.get_mut(2.0).map(|s| *s), Some("c"));
        assert_eq!((held.take(2.0), held.take(3.0)), (Some("c"), Some("d")));
    }
}
