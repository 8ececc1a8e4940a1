//! The core's machine codes and telemetry names as one JSON text, for the
//! hosts' tests that hold their hand-copied unions and names to the core.

use toolctx_core::aivax::AIVAX_FIELDS;
use toolctx_core::json::write_str;
use toolctx_core::{jcs, ConfigError, Reason, FORWARD_FIELDS, TUIX_HEADERS};

/// The core's machine codes, for the npm package's test that its
/// hand-written unions still match them (`npm/test/codes.test.mjs`):
/// `{"reasons":[...],"config_errors":[...],"tuix_headers":[...],
/// "forward_fields":[...],"aivax_forward_fields":[...]}`, every
/// `Reason::as_str` in `Reason::ALL` order, every `ConfigError::CODES`
/// entry, the Tuix headers' `_meta` members and names (`member`, `header`
/// in turn), and the context fields a `forward` configuration can map.
pub fn core_codes() -> String {
    let mut out = String::from("{\"reasons\":");
    codes_json(Reason::ALL.iter().map(|r| r.as_str()), &mut out);
    out.push_str(",\"config_errors\":");
    codes_json(ConfigError::CODES.iter().copied(), &mut out);
    out.push_str(",\"tuix_headers\":");
    codes_json(TUIX_HEADERS.iter().flat_map(|(m, h)| [*m, *h]), &mut out);
    out.push_str(",\"forward_fields\":");
    codes_json(FORWARD_FIELDS.iter().map(|(n, _)| *n), &mut out);
    out.push_str(",\"aivax_forward_fields\":");
    codes_json(AIVAX_FIELDS.iter().map(|(n, _)| *n), &mut out);
    telemetry_json(&mut out);
    out.push('}');
    out
}

/// `,"telemetry":{...}`: the names the npm package's build writes into
/// `npm/src/generated/telemetry.ts`.
fn telemetry_json(out: &mut String) {
    use toolctx_core::telemetry as t;
    out.push_str(",\"telemetry\":{");
    let names = [
        ("scope", t::SCOPE),
        ("verdicts", t::VERDICTS),
        ("checkDuration", t::CHECK_DURATION),
        ("checkDurationUnit", t::CHECK_DURATION_UNIT),
        ("outcome", t::OUTCOME),
        ("reason", t::REASON),
        ("span", t::SPAN),
        ("mcpMethod", t::MCP_METHOD),
        ("tool", t::TOOL),
        ("taskId", t::TASK_ID),
        ("workspaceId", t::WORKSPACE_ID),
    ];
    for (key, value) in names {
        write_str(key, out);
        out.push(':');
        write_str(value, out);
        out.push(',');
    }
    out.push_str("\"outcomes\":");
    codes_json(t::OUTCOMES.iter().copied(), out);
    out.push_str(",\"durationBucketsSeconds\":[");
    for (i, bound) in t::DURATION_BUCKETS_S.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        // As JavaScript writes them (the core's RFC 8785 number writer),
        // rather than pulling `core::fmt`'s float code into the module. The
        // bounds are finite constants: nothing to refuse.
        let _ = jcs::write_double(*bound, out);
    }
    out.push_str("]}");
}

pub fn codes_json<'a>(codes: impl Iterator<Item = &'a str>, out: &mut String) {
    out.push('[');
    for (i, code) in codes.enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(code, out);
    }
    out.push(']');
}
