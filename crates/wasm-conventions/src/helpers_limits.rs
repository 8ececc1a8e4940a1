//! The result limits and the progress coalescing rule of the server helpers
//! (CONTRACT §5), as the core decides them (in the string forms of
//! `toolctx_wasm_boundary::helpers`), for the npm package's
//! `toolctx/helpers` (`npm/src/results.ts`, `npm/src/progress.ts`). Here,
//! not in the verifier's module: only the helpers subpath loads this module.

use toolctx_wasm_boundary::helpers::{self as h, Progress};
use wasm_bindgen::prelude::*;

/// `{"textChars","structuredChars","imageBytes","images","imageTypes",
/// "codes","progressIntervalMs"}`.
#[wasm_bindgen(js_name = resultLimits)]
pub fn result_limits() -> String {
    h::result_limits()
}

/// The limits the result (a `tools/call` result as JSON) runs into, as a
/// JSON array of `{"code","message","size","limit","index"?}`; throws
/// `"<code>\n<message>"` for a result the core cannot read.
#[wasm_bindgen(js_name = checkResult)]
pub fn check_result(result_json: &str) -> Result<String, JsValue> {
    Ok(h::check_result(result_json.as_bytes())?)
}

/// One call's progress coalescing (the core's `Coalescer`); the answers'
/// tags are `toolctx_wasm_boundary::helpers::Progress`'s.
#[wasm_bindgen]
pub struct ProgressCoalescer {
    core: Progress,
}

#[wasm_bindgen]
impl ProgressCoalescer {
    #[wasm_bindgen(constructor)]
    pub fn new(interval_ms: f64) -> ProgressCoalescer {
        ProgressCoalescer {
            core: Progress::new(ms(interval_ms)),
        }
    }

    /// `s` + report, `h`/`a` + flush time, or `d` + reason.
    pub fn report(
        &mut self,
        now: f64,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> String {
        self.core.report(ms(now), progress, total, message)
    }

    /// A timer fired: `s` + report, `w` + time, or `i`.
    pub fn tick(&mut self, now: f64) -> String {
        self.core.tick(ms(now))
    }

    /// `s` + the held report, to send now, or `` when nothing is held.
    pub fn flush(&mut self, now: f64) -> String {
        self.core.flush(ms(now))
    }

    /// The call ended: nothing more is sent.
    pub fn close(&mut self) {
        self.core.close();
    }

    /// Reports sent so far.
    #[wasm_bindgen(getter)]
    pub fn sent(&self) -> f64 {
        self.core.sent() as f64
    }
}

/// A JavaScript time in milliseconds as the core takes it: whole, and 0 for
/// anything negative or not a number.
fn ms(t: f64) -> u64 {
    if t.is_finite() && t > 0.0 {
        t as u64
    } else {
        0
    }
}
