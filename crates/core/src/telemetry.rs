//! The names every front end records its verdicts under: one counter, one
//! histogram, one span, their attributes, and their Prometheus spelling.
//! Front ends read them from here (Rust directly, Python through the
//! binding, npm written into the package at build from the conventions
//! module's `coreCodes`), so an operator's dashboard works whatever front
//! end answered.

use alloc::string::String;

use crate::envelope::{get_str, reads_body, TOOLS_CALL};
use crate::json::{self, Keep, Kind};
use crate::reason::Reason;
use crate::verdict::Verdict;

/// The OpenTelemetry meter and tracer name (with the package's version).
pub const SCOPE: &str = "toolctx";
/// Counter: one per request a front end answered or handed on.
pub const VERDICTS: &str = "toolctx.verdicts";
/// Histogram, in seconds: from the start of the check to the verdict,
/// reading the body included.
pub const CHECK_DURATION: &str = "toolctx.check.duration";
/// The histogram's unit (UCUM).
pub const CHECK_DURATION_UNIT: &str = "s";
/// Attribute: [`OUTCOMES`], on the counter, the histogram and the span.
pub const OUTCOME: &str = "toolctx.outcome";
/// Attribute: the refusal's reason ([`Reason::as_str`](crate::Reason::as_str)),
/// on refusals only: absent, never empty, otherwise.
pub const REASON: &str = "toolctx.reason";
/// Attribute: the policy rule (CONTRACT §8) that denied the call, on
/// `policy_denied` refusals only ([`Refusal::rule`](crate::Refusal::rule)),
/// and on an accepted call the rule that would have denied it in `audit`
/// mode (`Context::policy_audit`).
pub const POLICY_RULE: &str = "toolctx.policy.rule";
/// The span, one per checked request, child of the request's span.
pub const SPAN: &str = "toolctx.verify";
/// Span attribute: the JSON-RPC method (OpenTelemetry's MCP conventions).
pub const MCP_METHOD: &str = "mcp.method.name";
/// Span attribute: the tool (OpenTelemetry's GenAI conventions).
pub const TOOL: &str = "gen_ai.tool.name";
/// Span attributes on an accepted call: the verified task and workspace.
pub const TASK_ID: &str = "toolctx.task_id";
pub const WORKSPACE_ID: &str = "toolctx.workspace_id";
/// The values of [`OUTCOME`].
pub const OUTCOMES: [&str; 3] = ["accept", "pass", "reject"];
/// [`VERDICTS`] in the Prometheus text format, labels `outcome` and `reason`.
pub const PROMETHEUS_VERDICTS: &str = "toolctx_verdicts_total";
/// [`CHECK_DURATION`] in the Prometheus text format, label `outcome`.
pub const PROMETHEUS_CHECK_DURATION: &str = "toolctx_check_duration_seconds";
/// The Prometheus labels of [`OUTCOME`] and [`REASON`].
pub const PROMETHEUS_OUTCOME: &str = "outcome";
pub const PROMETHEUS_REASON: &str = "reason";
/// The Prometheus label of [`POLICY_RULE`].
pub const PROMETHEUS_POLICY_RULE: &str = "rule";
/// Histogram bucket bounds in seconds: a check takes microseconds, a
/// body read over a slow link or a shared replay store milliseconds.
pub const DURATION_BUCKETS_S: [f64; 14] = [
    0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025,
    0.05, 0.1, 1.0,
];

/// Longest method or tool name [`describe`] gives, in bytes: a longer one
/// is left out, not cut (a cut name would name another tool), so that a
/// caller cannot make each refusal's log line a megabyte long.
pub const MAX_DESCRIBED_BYTES: usize = 256;

/// What a verdict's span, refusal log line and event say of the request,
/// as the core read it ([`describe`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Described {
    /// [`MCP_METHOD`]: the JSON-RPC `method`.
    pub method: Option<String>,
    /// [`TOOL`]: `params.name`, when the method is `tools/call`.
    pub tool: Option<String>,
}

/// The JSON-RPC method of a request (HTTP `method`, `body`) whose verdict
/// is `refused` (`None`: it was not refused), and the tool when that
/// method is `tools/call`, for telemetry only: front ends call it when a
/// span, a log line or a hook will use it, never to decide. The body is
/// read as the verifier reads it (strict JSON): nothing when the verifier
/// did not read it (not a POST, refused on its credential or its size),
/// for a batch, a body that is not strict JSON, or a method that is not a
/// string; no tool when `params.name` is not a string. A name over
/// [`MAX_DESCRIBED_BYTES`] is left out.
pub fn describe(method: &str, body: &[u8], refused: Option<Reason>) -> Described {
    let mut out = Described::default();
    if !reads_body(method, refused) {
        return out;
    }
    let Ok(doc) = json::read(body, Keep::Request) else {
        return out;
    };
    let Some(request) = doc.root().filter(|r| r.kind() == Kind::Object) else {
        return out;
    };
    let named = |name: Option<&str>| {
        name.filter(|n| n.len() <= MAX_DESCRIBED_BYTES)
            .map(String::from)
    };
    let Some(rpc) = get_str(request, "method") else {
        return out;
    };
    if rpc == TOOLS_CALL {
        out.tool = named(request.get("params").and_then(|p| get_str(p, "name")));
    }
    out.method = named(Some(rpc));
    out
}

impl<C> Verdict<C> {
    /// The verdict's [`OUTCOME`] value: `"accept"`, `"pass"` or `"reject"`.
    pub fn outcome(&self) -> &'static str {
        match self {
            Verdict::Accept(_) => "accept",
            Verdict::Pass => "pass",
            Verdict::Reject(_) => "reject",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Reason, Refusal};

    #[test]
    fn outcomes_are_the_verdicts() {
        let verdicts: [Verdict<()>; 3] = [
            Verdict::Accept(alloc::boxed::Box::new(())),
            Verdict::Pass,
            Verdict::Reject(Refusal::new(Reason::TokenExpired, None)),
        ];
        let names: alloc::vec::Vec<_> = verdicts.iter().map(Verdict::outcome).collect();
        assert_eq!(names, OUTCOMES);
    }

    fn described(
        method: &str,
        body: &str,
        refused: Option<Reason>,
    ) -> (Option<String>, Option<String>) {
        let d = describe(method, body.as_bytes(), refused);
        (d.method, d.tool)
    }

    fn some(method: &str, tool: Option<&str>) -> (Option<String>, Option<String>) {
        (Some(method.into()), tool.map(String::from))
    }

    #[test]
    fn describe_names_the_method_and_the_tool_of_a_single_request() {
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{}}}"#;
        assert_eq!(
            described("POST", call, None),
            some("tools/call", Some("get_order"))
        );
        // After the body was read, refusals and store failures alike.
        for reason in [
            Reason::TokenMissing,
            Reason::InvalidParams,
            Reason::InternalError,
        ] {
            assert_eq!(
                described("POST", call, Some(reason)),
                some("tools/call", Some("get_order"))
            );
        }
        assert_eq!(
            described(
                "POST",
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
                None
            ),
            some("tools/list", None)
        );
        assert_eq!(
            described(
                "POST",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                None
            ),
            some("notifications/initialized", None)
        );
        // Escapes are read as the verifier reads them.
        let escaped = r#"{"method":"tools\/call","params":{"name":"caf\u00e9 \"x\""}}"#;
        assert_eq!(
            described("POST", escaped, None),
            some("tools/call", Some("café \"x\""))
        );
        // The tool of a tools/call only, and only a string.
        for (body, tool) in [
            (r#"{"method":"tools/call","params":{"name":7}}"#, None),
            (r#"{"method":"tools/call","params":[]}"#, None),
            (r#"{"method":"tools/call"}"#, None),
            (r#"{"method":"prompts/get","params":{"name":"p"}}"#, None),
        ] {
            let method = body.split('"').nth(3).unwrap();
            assert_eq!(
                described("POST", body, Some(Reason::InvalidParams)),
                some(method, tool)
            );
        }
    }

    #[test]
    fn describe_gives_nothing_the_verifier_did_not_read() {
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#;
        let none = (None, None);
        // Not a POST (step 0), refused on the credential or the size (steps 1 and 2).
        assert_eq!(described("GET", call, None), none);
        assert_eq!(described("post", call, None), none);
        for reason in [
            Reason::CredentialMissing,
            Reason::CredentialInvalid,
            Reason::BodyTooLarge,
        ] {
            assert_eq!(described("POST", call, Some(reason)), none);
        }
        for body in [
            "",
            "{",
            r#"[{"method":"tools/call","params":{"name":"t"}}]"#,
            r#"{"method":"tools/call","method":"tools/call","params":{"name":"t"}}"#,
            r#"{"method":7,"params":{"name":"t"}}"#,
            r#"{"method":null}"#,
            r#""tools/call""#,
        ] {
            assert_eq!(described("POST", body, None), none, "{body}");
        }
        let not_utf8 = b"{\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}";
        assert_eq!(describe("POST", not_utf8, None), Described::default());
        let deep = alloc::format!("{}{}", "[".repeat(70), "]".repeat(70));
        assert_eq!(described("POST", &deep, None), none);
    }

    #[test]
    fn describe_leaves_out_a_name_too_long_to_log() {
        let at = "n".repeat(MAX_DESCRIBED_BYTES);
        let over = "n".repeat(MAX_DESCRIBED_BYTES + 1);
        let body = |method: &str, tool: &str| {
            alloc::format!(r#"{{"method":"{method}","params":{{"name":"{tool}"}}}}"#)
        };
        assert_eq!(
            described("POST", &body("tools/call", &at), None),
            some("tools/call", Some(&at))
        );
        assert_eq!(
            described("POST", &body("tools/call", &over), None),
            some("tools/call", None)
        );
        assert_eq!(described("POST", &body(&at, "t"), None), some(&at, None));
        assert_eq!(described("POST", &body(&over, "t"), None), (None, None));
    }

    #[test]
    fn prometheus_names_spell_the_opentelemetry_ones() {
        // OpenTelemetry's Prometheus exporter: dots become underscores,
        // counters gain `_total`, a unit `s` gains `_seconds`.
        assert_eq!(PROMETHEUS_VERDICTS, "toolctx_verdicts_total");
        assert_eq!(
            alloc::format!("{}_seconds", CHECK_DURATION.replace('.', "_")),
            PROMETHEUS_CHECK_DURATION
        );
        assert_eq!(
            alloc::format!("{}_total", VERDICTS.replace('.', "_")),
            PROMETHEUS_VERDICTS
        );
        assert!(DURATION_BUCKETS_S.windows(2).all(|w| w[0] < w[1]));
    }
}
