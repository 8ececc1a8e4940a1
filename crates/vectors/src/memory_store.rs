//! The in-memory idempotency store vectors (`tests/vectors/memory-store.json`,
//! written by `tests/vectors/generate_memory_store.py`): each case makes a
//! store of the capacity a user gave (or none) and runs its operations in
//! order, each at its `now`. [`run_files`] hands each case to a front end's
//! store ([`Store`]); the core's [`MemoryStore`] is one.

use serde_json::Value as J;
use toolctx_core::helpers::memory::MemoryStore;
use toolctx_core::settings::Raw;

use crate::{run_format_files, MEMORY_STORE_FORMAT};

/// A store under test, as its front end exposes it.
pub trait Store {
    fn capacity(&self) -> usize;
    fn claim(&mut self, key: &str, entry: &str, ms: u64, now: u64) -> Option<String>;
    fn read(&mut self, key: &str, now: u64) -> Option<String>;
    fn complete(&mut self, key: &str, entry: &str, ms: u64, now: u64);
    fn release(&mut self, key: &str, entry: &str, now: u64) -> bool;
    /// Entries held (the vectors' `len`).
    fn entries(&self) -> usize;
}

impl Store for MemoryStore {
    fn capacity(&self) -> usize {
        MemoryStore::capacity(self)
    }
    fn claim(&mut self, key: &str, entry: &str, ms: u64, now: u64) -> Option<String> {
        MemoryStore::claim(self, key, entry, ms, now)
    }
    fn read(&mut self, key: &str, now: u64) -> Option<String> {
        MemoryStore::read(self, key, now)
    }
    fn complete(&mut self, key: &str, entry: &str, ms: u64, now: u64) {
        MemoryStore::complete(self, key, entry, ms, now)
    }
    fn release(&mut self, key: &str, entry: &str, now: u64) -> bool {
        MemoryStore::release(self, key, entry, now)
    }
    fn entries(&self) -> usize {
        MemoryStore::len(self)
    }
}

/// The result of making a store for a case's capacity.
pub type Made = Result<Box<dyn Store>, String>;

/// The core's store for the user's capacity (`None`: not given).
pub fn core_store(capacity: Option<&J>) -> Made {
    let raw = match capacity {
        None | Some(J::Null) => Raw::Absent,
        Some(J::Number(n)) => Raw::Number(n.as_f64().unwrap_or(f64::NAN)),
        Some(_) => Raw::Other,
    };
    MemoryStore::with_entries(raw)
        .map(|s| Box::new(s) as Box<dyn Store>)
        .map_err(|e| e.to_string())
}

fn run_case(case: &J, store: &mut dyn Store) -> Result<(), String> {
    let want_cap = case["expect_capacity"].as_u64().unwrap_or(0);
    if store.capacity() as u64 != want_cap {
        return Err(format!(
            "capacity {}, expected {want_cap}",
            store.capacity()
        ));
    }
    let ops = case["ops"].as_array().cloned().unwrap_or_default();
    for (i, op) in ops.iter().enumerate() {
        let s = |k: &str| op[k].as_str().unwrap_or("");
        let n = |k: &str| op[k].as_u64().unwrap_or(0);
        let text = |t: Option<String>| t.map_or(J::Null, J::from);
        let got = match s("op") {
            "claim" => text(store.claim(s("key"), s("entry"), n("ms"), n("now"))),
            "read" => text(store.read(s("key"), n("now"))),
            "complete" => {
                store.complete(s("key"), s("entry"), n("ms"), n("now"));
                continue;
            }
            "release" => J::Bool(store.release(s("key"), s("entry"), n("now"))),
            "len" => J::from(store.entries()),
            other => return Err(format!("op {i}: unknown operation {other:?}")),
        };
        if got != op["expect"] {
            return Err(format!(
                "op {i} ({}): expected {}, got {got}",
                s("op"),
                op["expect"]
            ));
        }
    }
    Ok(())
}

/// Every case of the memory store vector files `paths` on stores made by
/// `make`, printing one line per failure and the closing `N passed, N
/// failed`; `Err` when anything failed or no case ran.
pub fn run_files(paths: &[String], mut make: impl FnMut(Option<&J>) -> Made) -> Result<(), String> {
    run_format_files(paths, MEMORY_STORE_FORMAT, |case| {
        make(case.get("capacity")).and_then(|mut store| run_case(case, &mut *store))
    })
}
