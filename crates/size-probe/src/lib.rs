//! The smallest useful embedding of the core: one exported function that
//! runs the whole check. `scripts/test` builds it for `wasm32-unknown-unknown`
//! and `wasm32-wasip1` and reports its size.
//!
//! The crate is a host shim (an allocator and one exported C function):
//! `unsafe_code` is denied, and allowed only on those three items.
#![cfg_attr(target_arch = "wasm32", no_std)]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use core::cell::RefCell;
use toolctx_core::{Config, Verdict, Verifier};

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOC: Allocator = Allocator;

#[cfg(target_arch = "wasm32")]
struct Allocator;

// A bump allocator over wasm memory growth: enough for a probe, never freed.
// SAFETY: every pointer handed out lies in pages just grown for it, aligned
// to the layout, and never handed out twice; the module has one thread.
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
unsafe impl core::alloc::GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: core::alloc::Layout) -> *mut u8 {
        static mut NEXT: usize = 0;
        static mut END: usize = 0;
        let align = layout.align();
        let start = (NEXT + align - 1) & !(align - 1);
        if start + layout.size() > END {
            let pages = (layout.size() + align).div_ceil(65536);
            let old = core::arch::wasm32::memory_grow(0, pages);
            if old == usize::MAX {
                return core::ptr::null_mut();
            }
            let base = old * 65536;
            NEXT = (base + align - 1) & !(align - 1);
            END = base + pages * 65536;
            let p = NEXT;
            NEXT += layout.size();
            return p as *mut u8;
        }
        NEXT = start + layout.size();
        start as *mut u8
    }
    unsafe fn dealloc(&self, _: *mut u8, _: core::alloc::Layout) {}
}

#[cfg(all(target_arch = "wasm32", not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}

struct Shared(RefCell<Option<Verifier>>);
// SAFETY: wasm modules here are single-threaded.
#[allow(unsafe_code)]
unsafe impl Sync for Shared {}
static VERIFIER: Shared = Shared(RefCell::new(None));

/// Verifies `body` with `token` at `now`: 0 pass, 1 accept, 2 reject,
/// 3 configuration error. The configuration is the JSON form.
///
/// # Safety
/// Each pointer and length must describe readable memory.
#[allow(unsafe_code)]
#[no_mangle]
pub unsafe extern "C" fn toolctx_check(
    config: *const u8,
    config_len: usize,
    token: *const u8,
    token_len: usize,
    body: *const u8,
    body_len: usize,
    now: u64,
) -> u32 {
    // SAFETY: the caller vouches for the ranges (see above).
    let (config, token, body) = unsafe {
        (
            core::slice::from_raw_parts(config, config_len),
            core::slice::from_raw_parts(token, token_len),
            core::slice::from_raw_parts(body, body_len),
        )
    };
    let mut slot = VERIFIER.0.borrow_mut();
    if slot.is_none() {
        match Config::from_json(config, toolctx_core::UnknownSettings::Refuse)
            .and_then(Verifier::new)
        {
            Ok(v) => *slot = Some(v),
            Err(_) => return 3,
        }
    }
    let Some(v) = slot.as_ref() else { return 3 };
    let headers: Vec<(&[u8], &[u8])> = alloc::vec![(b"x-agentarea-context".as_slice(), token)];
    match v.check("POST", &headers, body, now) {
        Verdict::Pass => 0,
        Verdict::Accept(_) => 1,
        _ => 2,
    }
}
