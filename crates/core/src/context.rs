//! What a verified AgentArea `tools/call` may rely on.

use alloc::string::String;
use alloc::vec::Vec;

use crate::claims::{member, write_claims, Claim, ClaimValue};
use crate::digits::push_u64;
use crate::json::{write_str, JsonText};

/// What a verified `tools/call` may rely on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Context {
    pub task_id: String,
    pub tool_call_id: String,
    pub workspace_id: String,
    pub idempotency_key: String,
    pub protocol: String,
    pub agent_id: Option<String>,
    pub end_user_id: Option<String>,
    /// The `metadata` claim, an object, as compact JSON text.
    pub metadata: Option<JsonText>,
    pub tool: Option<String>,
    pub jti: Option<String>,
    pub iat: u64,
    pub exp: u64,
    /// Index of the configured secret that signed the token (never the secret).
    pub secret_index: usize,
    /// The request's JSON-RPC `id` as JSON text (a string literal or a
    /// number as written); `None` when absent or of another type. Not
    /// vouched for by the token: for answering and logging.
    pub request_id: Option<String>,
    /// The headers to add upstream, `(lower-case name, encoded value)`, as
    /// the configuration's [`Forward`](crate::Forward) decided (see
    /// [`Verifier::upstream`](crate::Verifier::upstream)); not part of the
    /// context's JSON.
    pub upstream: Vec<(String, String)>,
    /// In the policy's `audit` mode (CONTRACT §8), the rule that would
    /// have denied this call (`default` when no rule names the tool and
    /// the default denies); `None` when it is allowed or no policy is
    /// configured. Not part of the context's JSON. Only with the `policy`
    /// feature: a field every context carries costs the npm verifier's
    /// module bytes it has no room for.
    #[cfg(feature = "policy")]
    pub policy_audit: Option<String>,
}

impl Context {
    pub(crate) fn claim(&self, claim: Claim) -> Option<ClaimValue<'_>> {
        match claim {
            Claim::Protocol => Some(ClaimValue::Text(&self.protocol)),
            Claim::TaskId => Some(ClaimValue::Text(&self.task_id)),
            Claim::ToolCallId => Some(ClaimValue::Text(&self.tool_call_id)),
            Claim::WorkspaceId => Some(ClaimValue::Text(&self.workspace_id)),
            Claim::IdempotencyKey => Some(ClaimValue::Text(&self.idempotency_key)),
            Claim::AgentId => self.agent_id.as_deref().map(ClaimValue::Text),
            Claim::EndUserId => self.end_user_id.as_deref().map(ClaimValue::Text),
            Claim::Metadata => self.metadata.as_ref().map(|m| ClaimValue::Raw(m.as_str())),
        }
    }

    /// The context as a JSON object with the field names above: the
    /// context claims, then `tool`, `jti`, `iat`, `exp`, `secret_index` and
    /// `request_id`.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    /// [`Context::to_json`] appended to `out`, which is grown once for it
    /// (the front ends write a verdict tag before it).
    pub fn write_json(&self, out: &mut String) {
        let text = |v: &Option<String>| v.as_ref().map_or(0, String::len);
        let strings = self.task_id.len()
            + self.tool_call_id.len()
            + self.workspace_id.len()
            + self.idempotency_key.len()
            + self.protocol.len()
            + text(&self.agent_id)
            + text(&self.end_user_id)
            + self.metadata.as_ref().map_or(0, |m| m.as_str().len())
            + text(&self.tool)
            + text(&self.jti)
            + text(&self.request_id);
        // Names, quotes and the three integers: under 256 bytes.
        out.reserve(strings + 256);
        out.push('{');
        write_claims("", |c| self.claim(c), out);
        for (name, value) in [("tool", &self.tool), ("jti", &self.jti)] {
            if let Some(v) = value {
                member("", name, out);
                write_str(v, out);
            }
        }
        for (name, value) in [
            ("iat", self.iat),
            ("exp", self.exp),
            ("secret_index", self.secret_index as u64),
        ] {
            member("", name, out);
            push_u64(value, out);
        }
        if let Some(id) = &self.request_id {
            member("", "request_id", out);
            out.push_str(id);
        }
        out.push('}');
    }
}
