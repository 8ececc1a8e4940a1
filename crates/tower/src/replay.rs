//! The replay guard's stores: a token id is accepted once within its
//! lifetime. What a store's answer means is the core's to say.

use std::sync::Mutex;

use toolctx_core::{Checked, ReplayCache, Verdict, Verifier};

/// Token ids in this process's memory (the core's `ReplayCache`): for a
/// server with one process.
#[derive(Debug)]
pub struct MemoryReplayStore {
    cache: Mutex<ReplayCache>,
}

impl MemoryReplayStore {
    /// A store for at most `capacity` live token ids (the call rate times
    /// the token lifetime: 1000 calls/s x 330 s is 330,000).
    pub fn new(capacity: usize) -> MemoryReplayStore {
        MemoryReplayStore {
            cache: Mutex::new(ReplayCache::new(capacity)),
        }
    }
}

pub(crate) enum Guard {
    Memory(MemoryReplayStore),
}

impl Guard {
    pub(crate) fn check_body_once(
        &self,
        verifier: &Verifier,
        checked: Checked,
        headers: &[(&[u8], &[u8])],
        body: &[u8],
        now: u64,
    ) -> Verdict {
        match self {
            Guard::Memory(store) => {
                let Ok(mut cache) = store.cache.lock() else {
                    return Verdict::Reject(crate::decide::internal_error());
                };
                verifier.check_body_once(checked, headers, body, now, &mut |jti, until| {
                    cache.first_use(jti, until, now)
                })
            }
        }
    }
}
