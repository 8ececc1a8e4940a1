//! The request headers as the core sees them: read from Envoy's header
//! block, without the headers this filter writes (a caller's copies are
//! removed from the request first), and the test-crash build's hook.

use crate::host;
#[cfg(feature = "test-crash")]
use crate::settings::request;
use crate::settings::request::header;
use crate::settings::Settings;

/// Request headers borrowed from their block: `(name, value)`.
pub type Headers<'b> = Vec<(&'b [u8], &'b [u8])>;

/// The headers of `block` that the core sees: all but those this filter
/// writes (a caller never sets them).
pub fn visible<'b>(settings: &Settings, block: &'b [u8]) -> Option<Headers<'b>> {
    let mut headers = host::pairs(block)?;
    headers.retain(|(n, _)| !written(settings, n));
    Some(headers)
}

fn written(settings: &Settings, name: &[u8]) -> bool {
    settings
        .removed_headers()
        .iter()
        .any(|w| name.eq_ignore_ascii_case(w.as_bytes()))
}

/// The headers of `block` that the core sees, after removing from the
/// request those this filter writes (one host call per name present).
pub fn take_headers<'b>(settings: &Settings, block: &'b [u8]) -> Result<Headers<'b>, &'static str> {
    let mut headers = host::pairs(block).ok_or("cannot read the request headers")?;
    #[cfg(feature = "test-crash")]
    crash_if_asked(&headers, "headers");
    for name in settings.removed_headers() {
        if header(&headers, name).is_some() {
            host::remove_request_header(name).map_err(|_| "cannot remove a mapped header")?;
        }
    }
    headers.retain(|(n, _)| !written(settings, n));
    Ok(headers)
}

/// Test builds only: panics when the request asks for it in `callback`
/// (`headers` or `body`), so the tests can watch a VM crash inside Envoy.
#[cfg(feature = "test-crash")]
// The one deliberate panic of the crate, only in the test-crash build.
#[allow(clippy::panic)]
pub fn crash_if_asked(headers: &[(&[u8], &[u8])], callback: &str) {
    if request::crash_asked(headers, callback) {
        // The message stands for a request's data: the tests check that
        // the panic hook never logs it.
        panic!(
            "test crash in on_http_request_{callback} ({}): toolctx-panic-payload-5f1c",
            request::TEST_CRASH_HEADER
        );
    }
}
