//! The replay guard's store: token ids in Envoy's shared data, which every
//! worker thread's VM (same `vm_id`) reads and writes, so a token is
//! accepted once per process whichever worker gets it.
//!
//! Bounded: `slots` buckets, chosen by the first bytes of SHA-256(jti),
//! each one shared-data entry holding at most `ways` records of
//! `(until, SHA-256(jti))`, 40 bytes each. Records whose `until` has passed
//! are dropped on the next write to their bucket. A bucket full of live
//! records answers [`ClaimAnswer::Full`] for every new token that hashes to
//! it, which the core refuses `replay_guard_full` (503, retryable; never a
//! replay): size `slots * ways` well above the live tokens.
//!
//! Updates are compare-and-swap on the entry's `cas`, retried on conflict.
//! Envoy's `set_shared_data` with no `cas` overwrites, and with a `cas` on
//! a missing key creates it, so a missing bucket is created with a `cas`
//! value known to belong to another key (the scratch entry): it creates
//! the bucket when absent and fails when another worker created it first.

use sha2::{Digest, Sha256};

use toolctx_core::ClaimAnswer;

use crate::settings::ReplayGuard;

/// Shared data as the proxy-wasm ABI offers it.
pub trait Store {
    /// The value and its `cas`; `(None, None)` when the key is absent.
    fn get(&mut self, key: &str) -> Result<(Option<Vec<u8>>, Option<u32>), String>;
    /// Writes `value` if `cas` is `None` or still the entry's; `Ok(false)`
    /// on a `cas` mismatch.
    fn set(&mut self, key: &str, value: &[u8], cas: Option<u32>) -> Result<bool, String>;
}

/// Leading byte of every bucket (format version).
const VERSION: u8 = 1;
const RECORD: usize = 8 + 32;
/// Compare-and-swap attempts before giving up with an error.
const TRIES: usize = 16;

/// Why the store could not answer (the request is refused with a 500).
pub type Error = String;

/// The shared-data table of a [`ReplayGuard::Table`].
struct Table<'g> {
    slots: u32,
    ways: u32,
    prefix: &'g str,
}

impl<'g> Table<'g> {
    fn of(guard: &'g ReplayGuard) -> Result<Table<'g>, Error> {
        match guard {
            ReplayGuard::Table {
                slots,
                ways,
                prefix,
            } => Ok(Table {
                slots: *slots,
                ways: *ways,
                prefix,
            }),
            ReplayGuard::Redis(_) => Err("replay guard: the filter has no Redis store".into()),
        }
    }

    fn bucket_of(&self, digest: &[u8; 32]) -> String {
        let mut first = [0u8; 8];
        first.copy_from_slice(digest.get(..8).unwrap_or(&[0; 8]));
        let index = u64::from_le_bytes(first) % u64::from(self.slots.max(1));
        format!("{}{index}", self.prefix)
    }
}

/// The live records of a bucket.
fn records(value: &[u8], now: u64) -> Result<Vec<(u64, [u8; 32])>, Error> {
    let (Some(&VERSION), Some(body)) = (value.first(), value.get(1..)) else {
        return Err("replay guard: a shared-data bucket has an unknown format".into());
    };
    if body.len() % RECORD != 0 {
        return Err("replay guard: a shared-data bucket has a bad length".into());
    }
    Ok(body
        .chunks_exact(RECORD)
        .filter_map(|r| {
            let until = u64::from_le_bytes(r.get(..8)?.try_into().ok()?);
            let digest: [u8; 32] = r.get(8..)?.try_into().ok()?;
            (until > now).then_some((until, digest))
        })
        .collect())
}

fn encode(records: &[(u64, [u8; 32])]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + records.len() * RECORD);
    out.push(VERSION);
    for (until, digest) in records {
        out.extend_from_slice(&until.to_le_bytes());
        out.extend_from_slice(digest);
    }
    out
}

/// Creates `key` as an empty bucket unless it exists.
fn create(store: &mut dyn Store, table: &Table<'_>, key: &str) -> Result<(), Error> {
    let scratch = format!("{}cas", table.prefix);
    store.set(&scratch, &[VERSION], None)?;
    let (_, taken) = store.get(&scratch)?;
    let taken = taken.ok_or("replay guard: shared data returned no cas")?;
    // `taken` is the cas of the scratch entry, never of a bucket: this
    // creates the bucket, or fails because another worker just did.
    store.set(key, &[VERSION], Some(taken))?;
    Ok(())
}

/// Records `jti` as used until `until` (Unix seconds) and says how that
/// went; `Err` when shared data could not answer (the core refuses that
/// `internal_error`).
pub fn first_use(
    store: &mut dyn Store,
    guard: &ReplayGuard,
    jti: &str,
    until: u64,
    now: u64,
) -> Result<ClaimAnswer, Error> {
    let table = Table::of(guard)?;
    let digest: [u8; 32] = Sha256::digest(jti.as_bytes()).into();
    let key = table.bucket_of(&digest);
    for _ in 0..TRIES {
        let (value, cas) = store.get(&key)?;
        let (Some(value), Some(cas)) = (value, cas) else {
            create(store, &table, &key)?;
            continue;
        };
        let mut live = records(&value, now)?;
        if live.iter().any(|(_, d)| *d == digest) {
            return Ok(ClaimAnswer::Used);
        }
        if live.len() >= table.ways as usize {
            return Ok(ClaimAnswer::Full);
        }
        live.push((until, digest));
        if store.set(&key, &encode(&live), Some(cas))? {
            return Ok(ClaimAnswer::FirstUse);
        }
    }
    Err("replay guard: shared data kept changing under the filter".into())
}

/// Envoy's shared data.
pub struct Host;

impl Store for Host {
    fn get(&mut self, key: &str) -> Result<(Option<Vec<u8>>, Option<u32>), String> {
        proxy_wasm::hostcalls::get_shared_data(key)
            .map_err(|s| format!("get_shared_data failed: {s:?}"))
    }

    fn set(&mut self, key: &str, value: &[u8], cas: Option<u32>) -> Result<bool, String> {
        match proxy_wasm::hostcalls::set_shared_data(key, Some(value), cas) {
            Ok(()) => Ok(true),
            Err(proxy_wasm::types::Status::CasMismatch) => Ok(false),
            Err(s) => Err(format!("set_shared_data failed: {s:?}")),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    type Map = HashMap<String, (Vec<u8>, u32)>;
    type Interfere = Box<dyn FnMut(&mut Map, &mut u32)>;

    /// Envoy's semantics: a global cas counter; `set` with a cas fails on
    /// an existing entry whose cas differs, and creates a missing entry.
    #[derive(Default)]
    struct Fake {
        map: Map,
        next: u32,
        /// Runs before each `set`, to simulate another worker.
        interfere: Option<Interfere>,
    }

    impl Store for Fake {
        fn get(&mut self, key: &str) -> Result<(Option<Vec<u8>>, Option<u32>), String> {
            Ok(self
                .map
                .get(key)
                .map_or((None, None), |(v, c)| (Some(v.clone()), Some(*c))))
        }
        fn set(&mut self, key: &str, value: &[u8], cas: Option<u32>) -> Result<bool, String> {
            if let Some(f) = self.interfere.as_mut() {
                f(&mut self.map, &mut self.next);
            }
            if let (Some((_, have)), Some(want)) = (self.map.get(key), cas) {
                if *have != want {
                    return Ok(false);
                }
            }
            self.next += 1;
            self.map.insert(key.into(), (value.to_vec(), self.next));
            Ok(true)
        }
    }

    fn guard(slots: u32, ways: u32) -> ReplayGuard {
        ReplayGuard::Table {
            slots,
            ways,
            prefix: "t/".into(),
        }
    }

    use ClaimAnswer::{FirstUse, Full, Used};

    #[test]
    fn once_per_jti_until_it_expires() {
        let mut s = Fake::default();
        let g = guard(64, 4);
        assert_eq!(first_use(&mut s, &g, "a", 100, 10).unwrap(), FirstUse);
        assert_eq!(first_use(&mut s, &g, "a", 100, 11).unwrap(), Used);
        assert_eq!(first_use(&mut s, &g, "b", 100, 11).unwrap(), FirstUse);
        // Past `until` the record is gone (the core refuses the token as
        // expired by then anyway).
        assert_eq!(first_use(&mut s, &g, "a", 200, 100).unwrap(), FirstUse);
    }

    #[test]
    fn a_full_bucket_answers_full_and_frees_on_expiry() {
        let mut s = Fake::default();
        let g = guard(1, 2);
        assert_eq!(first_use(&mut s, &g, "a", 100, 0).unwrap(), FirstUse);
        assert_eq!(first_use(&mut s, &g, "b", 50, 0).unwrap(), FirstUse);
        assert_eq!(first_use(&mut s, &g, "c", 100, 0).unwrap(), Full);
        assert_eq!(first_use(&mut s, &g, "c", 100, 60).unwrap(), FirstUse);
        // Bounded: one bucket, at most `ways` records.
        assert_eq!(s.map["t/0"].0.len(), 1 + 2 * RECORD);
    }

    #[test]
    fn a_concurrent_writer_forces_a_retry_and_wins_for_its_jti() {
        let mut s = Fake::default();
        let g = guard(1, 4);
        assert_eq!(first_use(&mut s, &g, "x", 100, 0).unwrap(), FirstUse);
        // Another worker records "y" between our read and our write.
        let digest: [u8; 32] = Sha256::digest(b"y").into();
        let mut done = false;
        s.interfere = Some(Box::new(move |map, next| {
            if !done {
                done = true;
                let (v, _) = map["t/0"].clone();
                let mut v = v;
                v.extend_from_slice(&100u64.to_le_bytes());
                v.extend_from_slice(&digest);
                *next += 1;
                map.insert("t/0".into(), (v, *next));
            }
        }));
        assert_eq!(first_use(&mut s, &g, "y", 100, 0).unwrap(), Used);
    }

    #[test]
    fn creating_a_bucket_never_overwrites_one() {
        let mut s = Fake::default();
        let g = guard(1, 4);
        // Another worker creates the bucket, with a record, just before us.
        let digest: [u8; 32] = Sha256::digest(b"z").into();
        let mut done = false;
        s.interfere = Some(Box::new(move |map, next| {
            if !done && !map.contains_key("t/0") {
                done = true;
                *next += 1;
                map.insert("t/0".into(), (encode(&[(100, digest)]), *next));
            }
        }));
        assert_eq!(first_use(&mut s, &g, "z", 100, 0).unwrap(), Used);
    }

    #[test]
    fn a_foreign_bucket_is_an_error() {
        let mut s = Fake::default();
        let g = guard(1, 4);
        s.map.insert("t/0".into(), (b"junk".to_vec(), 1));
        assert!(first_use(&mut s, &g, "a", 100, 0).is_err());
    }
}
