//! Detects the missing `allow_on_headers_stop_iteration`, which no API
//! reveals: without it Envoy never hands the body to a filter that paused
//! on the headers, so held requests would hang. Until a first body arrives,
//! the root context watches held requests (on a one-second tick) and
//! answers any stuck one with a 500 and a log line that names the setting;
//! after that it stops watching.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a request may wait at its headers, before any body was ever
/// delivered to this VM, until the missing setting is assumed.
pub const STUCK_AFTER: Duration = Duration::from_secs(3);

/// How often the root context looks at held requests while it watches.
pub const TICK: Duration = Duration::from_secs(1);

#[derive(Debug, Default)]
pub struct Watch {
    body_seen: bool,
    warned: bool,
    /// Held requests: context id and when they were held.
    held: Vec<(u32, SystemTime)>,
}

/// One watch per VM, shared by the root context and every HTTP context.
pub type SharedWatch = Rc<RefCell<Watch>>;

impl Watch {
    /// Whether a held request's body has reached this VM (then the setting
    /// is there and nothing is watched any more).
    pub fn body_seen(&self) -> bool {
        self.body_seen
    }

    /// A held request's body reached the filter: stop watching. (Bodies of
    /// requests that were not held prove nothing.)
    pub fn saw_body(&mut self) {
        if !self.body_seen {
            self.body_seen = true;
            self.held = Vec::new();
        }
    }

    /// Request `id` is held at its headers.
    pub fn hold(&mut self, id: u32) {
        if !self.body_seen {
            self.held
                .push((id, crate::host::now().unwrap_or(UNIX_EPOCH)));
        }
    }

    /// Request `id` is over.
    pub fn done(&mut self, id: u32) {
        if !self.body_seen {
            self.held.retain(|(held, _)| *held != id);
        }
    }

    /// Takes the requests held for `STUCK_AFTER` or longer at `now`, and
    /// whether this is the first time any was stuck (log it then).
    pub fn take_stuck(&mut self, now: SystemTime) -> (Vec<u32>, bool) {
        let (old, young) = self.held.drain(..).partition::<Vec<_>, _>(|(_, since)| {
            now.duration_since(*since).is_ok_and(|d| d >= STUCK_AFTER)
        });
        self.held = young;
        let stuck: Vec<u32> = old.into_iter().map(|(id, _)| id).collect();
        let first = !stuck.is_empty() && !std::mem::replace(&mut self.warned, true);
        (stuck, first)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stuck_requests_are_taken_once_and_logged_once() {
        let mut w = Watch::default();
        let t0 = UNIX_EPOCH + Duration::from_secs(100);
        w.held.push((1, t0));
        w.held.push((2, t0 + Duration::from_secs(2)));
        assert_eq!(w.take_stuck(t0 + Duration::from_secs(2)), (vec![], false));
        assert_eq!(w.take_stuck(t0 + STUCK_AFTER), (vec![1], true));
        assert_eq!(w.take_stuck(t0 + Duration::from_secs(9)), (vec![2], false));
        w.held.push((3, t0));
        w.saw_body();
        assert!(w.body_seen());
        assert_eq!(w.take_stuck(t0 + Duration::from_secs(9)), (vec![], false));
    }
}
