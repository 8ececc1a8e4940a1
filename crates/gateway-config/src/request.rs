//! What every gateway reads from a request besides what the core decides
//! on: a header's first value, the request time (the gateway's clock, or in
//! test-clock builds the test header), and the test-only headers.

use std::time::{SystemTime, UNIX_EPOCH};

/// Test-clock builds only (feature `test-clock`): the request header that
/// carries `now` (Unix seconds), so the conformance vectors (fixed
/// `iat`/`exp`) run through a real Envoy. The release builds must never
/// contain it: `scripts/test-envoy` and `scripts/test-ext-authz` look for
/// this name in what they build.
#[cfg(feature = "test-clock")]
pub const TEST_NOW_HEADER: &str = "x-toolctx-test-now";

/// Test-crash builds only (feature `test-crash`): a request carrying this
/// header makes the Envoy filter or module panic in the callback its value
/// names (`headers`, `body`, the module's `scheduled`). Never in a release
/// build; `scripts/test-envoy` checks that.
#[cfg(feature = "test-crash")]
pub const TEST_CRASH_HEADER: &str = "x-toolctx-test-crash";

/// The first value of the header `name` (any case) in `(name, value)` pairs.
pub fn header<'h>(headers: &[(&'h [u8], &'h [u8])], name: &str) -> Option<&'h [u8]> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
        .map(|(_, v)| *v)
}

/// The request time in Unix seconds: `clock` (the gateway's own), or in
/// test-clock builds the value of `TEST_NOW_HEADER` when `header` finds
/// one (`None`, and so no clock, when that value is not a number).
pub fn now<'h>(
    header: impl FnOnce(&str) -> Option<&'h [u8]>,
    clock: impl FnOnce() -> Option<u64>,
) -> Option<u64> {
    #[cfg(feature = "test-clock")]
    if let Some(v) = header(TEST_NOW_HEADER) {
        return std::str::from_utf8(v).ok().and_then(|s| s.parse().ok());
    }
    #[cfg(not(feature = "test-clock"))]
    let _ = header;
    clock()
}

/// The system clock in Unix seconds (the module's and the service's).
pub fn system_now() -> Option<u64> {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs())
}

/// Whether a test-crash build must panic in `callback`: the request's
/// [`TEST_CRASH_HEADER`] names it.
#[cfg(feature = "test-crash")]
pub fn crash_asked(headers: &[(&[u8], &[u8])], callback: &str) -> bool {
    header(headers, TEST_CRASH_HEADER) == Some(callback.as_bytes())
}
