//! What of an accepted AIVAX call a configuration may forward upstream.

use alloc::string::String;

use super::context::AivaxContext;
use crate::forward::{canonical_text, Field};

/// A field of an accepted AIVAX call that can be forwarded as a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AivaxField {
    NonceVerified,
    ExternalUserId,
    CallSource,
    ConversationToken,
    /// `_aiv_moment` as sent.
    Moment,
    /// The moment in Unix seconds.
    MomentUnix,
    MomentOffsetMinutes,
    /// The flat string metadata as a JSON object (canonical JSON).
    Metadata,
    /// The whole typed context, as [`AivaxContext::to_json`] writes it.
    Context,
}

/// Every [`AivaxField`] by the name configurations use.
pub const AIVAX_FIELDS: [(&str, AivaxField); 9] = [
    ("nonce_verified", AivaxField::NonceVerified),
    ("external_user_id", AivaxField::ExternalUserId),
    ("call_source", AivaxField::CallSource),
    ("conversation_token", AivaxField::ConversationToken),
    ("moment", AivaxField::Moment),
    ("moment_unix", AivaxField::MomentUnix),
    ("moment_offset_minutes", AivaxField::MomentOffsetMinutes),
    ("metadata", AivaxField::Metadata),
    ("context", AivaxField::Context),
];

impl Field for AivaxField {
    type Context = AivaxContext;
    const TABLE: &'static [(&'static str, Self)] = &AIVAX_FIELDS;

    fn write(self, ctx: &AivaxContext, out: &mut String) -> bool {
        use core::fmt::Write as _;
        let text = |v: Option<&str>, out: &mut String| v.map(|v| out.push_str(v)).is_some();
        match self {
            AivaxField::NonceVerified => {
                out.push_str(if ctx.nonce_verified { "true" } else { "false" });
                true
            }
            AivaxField::ExternalUserId => text(ctx.external_user_id.as_deref(), out),
            AivaxField::CallSource => text(ctx.call_source.as_deref(), out),
            AivaxField::ConversationToken => text(ctx.conversation_token.as_deref(), out),
            AivaxField::Moment => text(ctx.moment.as_ref().map(|m| m.text.as_str()), out),
            AivaxField::MomentUnix => ctx
                .moment
                .as_ref()
                .map(|m| write!(out, "{}", m.unix_seconds))
                .is_some(),
            AivaxField::MomentOffsetMinutes => ctx
                .moment
                .as_ref()
                .map(|m| write!(out, "{}", m.offset_minutes))
                .is_some(),
            AivaxField::Metadata => canonical_text(&ctx.metadata_json(), out),
            AivaxField::Context => {
                out.push_str(&ctx.to_json());
                true
            }
        }
    }
}
