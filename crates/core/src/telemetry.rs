//! The names every front end records its verdicts under: one counter, one
//! histogram, one span, their attributes, and their Prometheus spelling.
//! Front ends read them from here (Rust directly, Python through the
//! binding, npm through a mirror that `npm/test/telemetry.test.mjs` holds
//! to this list), so an operator's dashboard works whatever front end
//! answered.

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
/// Histogram bucket bounds in seconds: a check takes microseconds, a
/// body read over a slow link or a shared replay store milliseconds.
pub const DURATION_BUCKETS_S: [f64; 14] = [
    0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025,
    0.05, 0.1, 1.0,
];

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
