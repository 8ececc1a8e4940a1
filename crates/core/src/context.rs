//! What a verified AgentArea `tools/call` may rely on.

use alloc::string::String;

use crate::json::{write_str, Value};
use crate::token::push_u64;

/// What a verified `tools/call` may rely on.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    pub task_id: String,
    pub tool_call_id: String,
    pub workspace_id: String,
    pub idempotency_key: String,
    pub protocol: String,
    pub agent_id: Option<String>,
    pub end_user_id: Option<String>,
    pub metadata: Option<Value<'static>>,
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
}

impl Context {
    /// The context as a JSON object with the field names above.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(256);
        out.push('{');
        let fields = [
            ("task_id", Some(&self.task_id)),
            ("tool_call_id", Some(&self.tool_call_id)),
            ("workspace_id", Some(&self.workspace_id)),
            ("idempotency_key", Some(&self.idempotency_key)),
            ("protocol", Some(&self.protocol)),
            ("agent_id", self.agent_id.as_ref()),
            ("end_user_id", self.end_user_id.as_ref()),
            ("tool", self.tool.as_ref()),
            ("jti", self.jti.as_ref()),
        ];
        for (name, value) in fields {
            if let Some(v) = value {
                if out.len() > 1 {
                    out.push(',');
                }
                write_str(name, &mut out);
                out.push(':');
                write_str(v, &mut out);
            }
        }
        if let Some(m) = &self.metadata {
            out.push_str(",\"metadata\":");
            m.write(&mut out);
        }
        out.push_str(",\"iat\":");
        push_u64(self.iat, &mut out);
        out.push_str(",\"exp\":");
        push_u64(self.exp, &mut out);
        out.push_str(",\"secret_index\":");
        push_u64(self.secret_index as u64, &mut out);
        if let Some(id) = &self.request_id {
            out.push_str(",\"request_id\":");
            out.push_str(id);
        }
        out.push('}');
        out
    }
}
