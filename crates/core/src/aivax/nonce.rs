//! `_aiv_nonce`: the bcrypt check against the hook key and the cache of
//! nonces that passed it.

use alloc::string::String;
use alloc::vec::Vec;

use super::config::{AivaxConfig, MIN_BCRYPT_COST};
use crate::b64;
use crate::envelope::ct_eq;

/// Nonces that verified against one hook key: bounded, oldest out first.
/// Bound to the key it was first used with; used with another key it
/// starts empty again, so a cache can never vouch across accounts. A ring
/// searched linearly: a scan of even a thousand 60-byte nonces is far
/// cheaper than one bcrypt, and the code stays small in wasm builds.
#[derive(Debug, Clone)]
pub struct NonceCache {
    key: Option<[u8; 32]>,
    entries: Vec<Vec<u8>>,
    next: usize,
    capacity: usize,
}

impl NonceCache {
    pub fn new(capacity: usize) -> NonceCache {
        NonceCache {
            key: None,
            entries: Vec::new(),
            next: 0,
            capacity,
        }
    }

    pub(super) fn bind(&mut self, digest: [u8; 32]) {
        if self.key != Some(digest) {
            self.entries.clear();
            self.next = 0;
            self.key = Some(digest);
        }
    }

    fn contains(&self, nonce: &[u8]) -> bool {
        self.entries.iter().any(|e| e.as_slice() == nonce)
    }

    fn insert(&mut self, nonce: &[u8]) {
        if self.capacity == 0 || self.contains(nonce) {
            return;
        }
        if self.entries.len() < self.capacity {
            self.entries.push(nonce.to_vec());
        } else if let Some(slot) = self.entries.get_mut(self.next) {
            *slot = nonce.to_vec();
            self.next = (self.next + 1) % self.capacity;
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// `$2a$`/`$2b$`/`$2y$`, two cost digits, `$`, 22 salt and 31 hash symbols.
pub(super) fn nonce_matches(
    config: &AivaxConfig,
    nonce: &[u8],
    cache: Option<&mut NonceCache>,
) -> bool {
    let (Some(prefix), Some(cost), Some(b'$'), Some(salt), Some(hash)) = (
        nonce.get(..4),
        nonce.get(4..6),
        nonce.get(6),
        nonce.get(7..29),
        nonce.get(29..),
    ) else {
        return false;
    };
    if !matches!(prefix, b"$2a$" | b"$2b$" | b"$2y$") || hash.len() != 31 {
        return false;
    }
    let cost = match cost {
        &[a @ b'0'..=b'9', b @ b'0'..=b'9'] => u32::from(a - b'0') * 10 + u32::from(b - b'0'),
        _ => return false,
    };
    // The caller picks the cost: refuse expensive ones before any work.
    if !(MIN_BCRYPT_COST..=config.max_bcrypt_cost).contains(&cost) {
        return false;
    }
    // Only well-formed nonces within the cost cap reach the cache.
    if cache.as_ref().is_some_and(|c| c.contains(nonce)) {
        return true;
    }
    let Some(salt) = b64::BCRYPT
        .decode_unpadded_lenient(salt)
        .and_then(|s| <[u8; 16]>::try_from(s).ok())
    else {
        return false;
    };
    // bcrypt hashes the key with its NUL terminator, at most 72 bytes.
    let mut key = Vec::with_capacity(config.hook_key.len() + 1);
    key.extend_from_slice(&config.hook_key);
    key.push(0);
    key.truncate(72);
    let digest = bcrypt::bcrypt(cost, salt, &key);
    let mut expected = String::with_capacity(31);
    b64::BCRYPT.encode_unpadded(digest.get(..23).unwrap_or(&[]), &mut expected);
    let ok = ct_eq(expected.as_bytes(), hash);
    if let (true, Some(cache)) = (ok, cache) {
        cache.insert(nonce);
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hash made by Python's `bcrypt` (see tests/vectors/generate.py).
    #[test]
    fn nonce_checks_cost_before_work() {
        let config = AivaxConfig::new(b"correctbatteryhorsestapler".to_vec());
        let good = b"$2b$04$EGdrhbKUv8Oc9vGiXX0HQOxSg445d458Muh7DAHskb6QbtCvdxcie";
        assert!(nonce_matches(&config, good, None));
        assert!(!nonce_matches(
            &AivaxConfig::new(b"wrong".to_vec()),
            good,
            None
        ));
        let mut costly = *good;
        costly[4..6].copy_from_slice(b"31");
        assert!(
            !nonce_matches(&config, &costly, None),
            "cost 31 is over the cap: refused without hashing"
        );
        assert!(!nonce_matches(&config, &good[..59], None));
    }

    fn digest(c: &AivaxConfig) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        Sha256::digest(&c.hook_key).into()
    }

    #[test]
    fn nonce_cache_is_bound_to_its_key() {
        let good = b"$2b$04$EGdrhbKUv8Oc9vGiXX0HQOxSg445d458Muh7DAHskb6QbtCvdxcie";
        let right = AivaxConfig::new(b"correctbatteryhorsestapler".to_vec());
        let wrong = AivaxConfig::new(b"wrong".to_vec());
        let mut cache = NonceCache::new(2);
        cache.bind(digest(&right));
        assert!(nonce_matches(&right, good, Some(&mut cache)));
        assert_eq!(cache.len(), 1);
        assert!(nonce_matches(&right, good, Some(&mut cache)), "a hit");
        // The same cache used with another key forgets what it knew.
        cache.bind(digest(&wrong));
        assert!(cache.is_empty());
        assert!(!nonce_matches(&wrong, good, Some(&mut cache)));
        assert!(cache.is_empty(), "failures are never cached");
        // Over the cost cap is refused before the cache is consulted.
        cache.bind(digest(&right));
        assert!(nonce_matches(&right, good, Some(&mut cache)));
        let mut capped = right.clone();
        capped.max_bcrypt_cost = 4;
        let mut costly = *good;
        costly[4..6].copy_from_slice(b"05");
        assert!(!nonce_matches(&capped, &costly, Some(&mut cache)));
    }
}
