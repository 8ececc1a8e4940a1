//! The context fields a profile can forward, and AgentArea's.

use alloc::string::String;

use super::header::canonical_text;
use crate::context::Context;
use crate::digits::push_u64;

/// A verified context field that a profile can forward as a header.
pub trait Field: Copy + PartialEq + 'static {
    /// The accepted context the field is read from.
    type Context;
    /// Every field, by its configuration name.
    const TABLE: &'static [(&'static str, Self)];
    /// Appends the field's text to `out` (before encoding); `false` when
    /// the context does not have it.
    fn write(self, ctx: &Self::Context, out: &mut String) -> bool;
}

/// A field of the AgentArea context ([`Context`]) that can be forwarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardField {
    TaskId,
    ToolCallId,
    WorkspaceId,
    IdempotencyKey,
    Protocol,
    AgentId,
    EndUserId,
    /// The `metadata` claim, as canonical JSON.
    Metadata,
    Tool,
    Jti,
    Iat,
    Exp,
    SecretIndex,
    /// The whole verified context, as [`Context::to_json`] writes it
    /// (numbers exactly as the token has them).
    Context,
}

/// Every [`ForwardField`] by the name configurations use.
pub const FORWARD_FIELDS: [(&str, ForwardField); 14] = [
    ("task_id", ForwardField::TaskId),
    ("tool_call_id", ForwardField::ToolCallId),
    ("workspace_id", ForwardField::WorkspaceId),
    ("idempotency_key", ForwardField::IdempotencyKey),
    ("protocol", ForwardField::Protocol),
    ("agent_id", ForwardField::AgentId),
    ("end_user_id", ForwardField::EndUserId),
    ("metadata", ForwardField::Metadata),
    ("tool", ForwardField::Tool),
    ("jti", ForwardField::Jti),
    ("iat", ForwardField::Iat),
    ("exp", ForwardField::Exp),
    ("secret_index", ForwardField::SecretIndex),
    ("context", ForwardField::Context),
];

impl Field for ForwardField {
    type Context = Context;
    const TABLE: &'static [(&'static str, Self)] = &FORWARD_FIELDS;

    fn write(self, ctx: &Context, out: &mut String) -> bool {
        let text = |v: &Option<String>, out: &mut String| match v {
            Some(v) => {
                out.push_str(v);
                true
            }
            None => false,
        };
        match self {
            ForwardField::TaskId => out.push_str(&ctx.task_id),
            ForwardField::ToolCallId => out.push_str(&ctx.tool_call_id),
            ForwardField::WorkspaceId => out.push_str(&ctx.workspace_id),
            ForwardField::IdempotencyKey => out.push_str(&ctx.idempotency_key),
            ForwardField::Protocol => out.push_str(&ctx.protocol),
            ForwardField::AgentId => return text(&ctx.agent_id, out),
            ForwardField::EndUserId => return text(&ctx.end_user_id, out),
            ForwardField::Metadata => {
                return ctx
                    .metadata
                    .as_ref()
                    .is_some_and(|m| canonical_text(m.as_str(), out))
            }
            ForwardField::Tool => return text(&ctx.tool, out),
            ForwardField::Jti => return text(&ctx.jti, out),
            ForwardField::Iat => push_u64(ctx.iat, out),
            ForwardField::Exp => push_u64(ctx.exp, out),
            ForwardField::SecretIndex => push_u64(ctx.secret_index as u64, out),
            ForwardField::Context => ctx.write_json(out),
        }
        true
    }
}
