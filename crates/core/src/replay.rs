//! The replay guard's stores: the `first_use` callback
//! [`crate::Verifier::check_once`] takes, and a ready one for one process.

use alloc::collections::BTreeMap;
use alloc::string::String;

/// The replay guard's store: records a token id as used until a Unix
/// second and says whether it was unused.
pub type FirstUse<'a> = &'a mut dyn FnMut(&str, u64) -> bool;

/// Token ids seen within their lifetime, for one process: bounded, and
/// forgetting each id once its token could no longer be accepted anyway.
#[derive(Debug, Clone)]
pub struct ReplayCache {
    /// jti -> Unix second from which the token is expired.
    until: BTreeMap<String, u64>,
    capacity: usize,
}

impl ReplayCache {
    /// A cache for at most `capacity` live token ids (size it for the call
    /// rate times the token lifetime: 1000 calls/s x 330 s is 330,000).
    pub fn new(capacity: usize) -> ReplayCache {
        ReplayCache {
            until: BTreeMap::new(),
            capacity,
        }
    }

    /// Records `jti` until `until`; whether it was unused. When the cache
    /// is full of live ids it answers `false`: refusing is the safe side.
    pub fn first_use(&mut self, jti: &str, until: u64, now: u64) -> bool {
        if let Some(&t) = self.until.get(jti) {
            if t > now {
                return false;
            }
        }
        if self.until.len() >= self.capacity {
            self.until.retain(|_, t| *t > now);
            if self.until.len() >= self.capacity {
                return false;
            }
        }
        self.until.insert(String::from(jti), until);
        true
    }

    pub fn len(&self) -> usize {
        self.until.len()
    }

    pub fn is_empty(&self) -> bool {
        self.until.is_empty()
    }
}
