//! The result limits and the progress coalescing rule of the server helpers
//! (CONTRACT §5), as the core decides them (`toolctx_core::helpers`), for
//! the npm package's `toolctx/helpers` (`npm/src/results.ts`,
//! `npm/src/progress.ts`). Here, not in the verifier's module: only the
//! helpers subpath loads this module.
//!
//! - `resultLimits()`: the core's limits and codes as JSON.
//! - `checkResult(resultJson)`: the findings as a JSON array; throws
//!   `"<code>\n<message>"` for a result the core cannot read.
//! - `ProgressCoalescer`: one call's coalescing state. Its answers are
//!   strings whose first character is a tag: `s` + the report to send as
//!   JSON (`progress`, and `total`, `message` when present), `h` + the
//!   flush time (held; a timer already waits), `a` + the flush time (held:
//!   arm a timer for then), `d` + why it is dropped, `w` + the time to tick
//!   again, `i` nothing held (the timer is done), `` nothing to flush.
//!   Times are milliseconds, as numbers.

use toolctx_core::helpers::progress::{Coalescer, Report, Step, Tick, INTERVAL_MS};
use toolctx_core::helpers::results::{self, LimitCode};
use toolctx_core::json::write_str;
use toolctx_wasm_boundary::js_error;
use wasm_bindgen::prelude::*;

use crate::codes_json;

/// `{"textChars","structuredChars","imageBytes","images","imageTypes",
/// "codes","progressIntervalMs"}`.
#[wasm_bindgen(js_name = resultLimits)]
pub fn result_limits() -> String {
    let mut out = format!(
        "{{\"textChars\":{},\"structuredChars\":{},\"imageBytes\":{},\"images\":{},\"progressIntervalMs\":{},\"imageTypes\":",
        results::TEXT_CHARS,
        results::STRUCTURED_CHARS,
        results::IMAGE_BYTES,
        results::IMAGES,
        INTERVAL_MS
    );
    codes_json(results::IMAGE_TYPES.iter().copied(), &mut out);
    out.push_str(",\"codes\":");
    codes_json(LimitCode::ALL.iter().map(|c| c.as_str()), &mut out);
    out.push('}');
    out
}

/// The limits the result (a `tools/call` result as JSON) runs into, as a
/// JSON array of `{"code","message","size","limit","index"?}`.
#[wasm_bindgen(js_name = checkResult)]
pub fn check_result(result_json: &str) -> Result<String, JsValue> {
    let findings = results::check(result_json.as_bytes()).map_err(|e| js_error(e.code(), e))?;
    let mut out = String::from("[");
    for (i, f) in findings.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        f.write_json(&mut out);
    }
    out.push(']');
    Ok(out)
}

/// One call's progress coalescing (the core's `Coalescer`).
#[wasm_bindgen]
pub struct ProgressCoalescer {
    core: Coalescer,
}

#[wasm_bindgen]
impl ProgressCoalescer {
    #[wasm_bindgen(constructor)]
    pub fn new(interval_ms: f64) -> ProgressCoalescer {
        ProgressCoalescer {
            core: Coalescer::new(ms(interval_ms)),
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
        match self.core.report(ms(now), progress, total, message) {
            Step::Send(r) => send(&r),
            Step::Hold { flush_at, arm } => format!("{}{flush_at}", if arm { 'a' } else { 'h' }),
            Step::Drop(why) => format!("d{}", why.as_str()),
        }
    }

    /// A timer fired: `s` + report, `w` + time, or `i`.
    pub fn tick(&mut self, now: f64) -> String {
        match self.core.tick(ms(now)) {
            Tick::Send(r) => send(&r),
            Tick::Wait(at) => format!("w{at}"),
            Tick::Idle => String::from("i"),
        }
    }

    /// `s` + the held report, to send now, or `` when nothing is held.
    pub fn flush(&mut self, now: f64) -> String {
        self.core
            .flush(ms(now))
            .map_or_else(String::new, |r| send(&r))
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

/// `s` + `{"progress":P,"total":T,"message":M}`, numbers as JavaScript
/// writes them (the core only sends finite ones).
fn send(r: &Report) -> String {
    let mut out = String::from("s{\"progress\":");
    number(r.progress, &mut out);
    if let Some(total) = r.total {
        out.push_str(",\"total\":");
        number(total, &mut out);
    }
    if let Some(message) = &r.message {
        out.push_str(",\"message\":");
        write_str(message, &mut out);
    }
    out.push('}');
    out
}

/// A finite number as JavaScript writes it (the core's RFC 8785 writer);
/// anything else as `null`.
fn number(v: f64, out: &mut String) {
    let mut text = String::new();
    match toolctx_core::jcs::write_double(v, &mut text) {
        Ok(()) => out.push_str(&text),
        Err(_) => out.push_str("null"),
    }
}
