//! The cancellation key (the core's `helpers::cancel`), for `toolctx/helpers`'
//! `cancellable` and `noticeCancelled`.

use toolctx_core::helpers::cancel;
use wasm_bindgen::prelude::*;

/// The key a call in flight is tracked under, and a
/// `notifications/cancelled` finds it by: `id_json` the id's JSON text,
/// `token` the value of the token header (`cancelHeader`) the request came
/// with. `undefined`: that call cannot be cancelled this way.
#[wasm_bindgen(js_name = cancelKey)]
pub fn cancel_key(id_json: &str, token: Option<String>) -> Option<String> {
    cancel::call_key(id_json.as_bytes(), token.as_deref())
}

/// The header whose exact value the key holds (lower-case): the token's.
#[wasm_bindgen(js_name = cancelHeader)]
pub fn cancel_header() -> String {
    cancel::TOKEN_HEADER.into()
}
