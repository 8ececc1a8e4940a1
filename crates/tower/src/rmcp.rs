//! rmcp integration: extractors a tool handler takes as arguments for the
//! context [`ToolctxLayer`](crate::ToolctxLayer) verified.
//!
//! rmcp's `StreamableHttpService` puts each request's `http::request::Parts`
//! into the tool's `RequestContext.extensions` (stateless, 2026-07-28 and
//! legacy session mode alike, always the `tools/call`'s own POST), and the
//! layer put a [`Verification`] into those parts' extensions.

use std::ops::Deref;
use std::sync::Arc;

use rmcp::handler::server::common::{AsRequestContext, FromContextPart};
use rmcp::model::ErrorData;
use rmcp::service::{RequestContext, RoleServer};
use toolctx_core::Context;

use crate::Verification;

/// What the layer found on this call's request; an error when the request
/// did not come through the layer (never read as "no context").
pub fn verification(ctx: &RequestContext<RoleServer>) -> Result<&Verification, ErrorData> {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Verification>())
        .ok_or_else(|| {
            ErrorData::internal_error(
                "toolctx: this call did not pass through ToolctxLayer (put the layer in front of \
                 rmcp's StreamableHttpService)",
                None,
            )
        })
}

/// The protocol revision of this request, as rmcp reads it (the request's
/// own metadata, else the session's negotiated version), or `""` when it
/// has none: what [`Idempotent::run`](crate::helpers::Idempotent::run)
/// hands the core so that a replay is written for it.
pub fn protocol_revision(ctx: &RequestContext<RoleServer>) -> String {
    ctx.protocol_version()
        .map(|v| v.as_str().to_owned())
        .unwrap_or_default()
}

/// The verified context of this `tools/call`, as a tool argument. The call
/// fails when the layer is missing, or when it let the call through
/// without context (`require_context: false`); [`MaybeVerified`] takes the
/// second case as `None`.
#[derive(Clone, Debug)]
pub struct Verified(pub Arc<Context>);

impl Deref for Verified {
    type Target = Context;
    fn deref(&self) -> &Context {
        &self.0
    }
}

impl Verified {
    pub fn from_request_context(ctx: &RequestContext<RoleServer>) -> Result<Verified, ErrorData> {
        verification(ctx)?.shared().map(Verified).ok_or_else(|| {
            ErrorData::invalid_request(
                "toolctx: this tool needs a verified context and the call carries none",
                None,
            )
        })
    }
}

impl<C: AsRequestContext> FromContextPart<C> for Verified {
    fn from_context_part(context: &mut C) -> Result<Self, ErrorData> {
        Verified::from_request_context(context.as_request_context())
    }
}

/// The verified context, or `None` for a call the layer let through
/// without one (`require_context: false`). The call still fails when the
/// layer is missing.
#[derive(Clone, Debug)]
pub struct MaybeVerified(pub Option<Arc<Context>>);

impl MaybeVerified {
    pub fn from_request_context(
        ctx: &RequestContext<RoleServer>,
    ) -> Result<MaybeVerified, ErrorData> {
        Ok(MaybeVerified(verification(ctx)?.shared()))
    }

    pub fn context(&self) -> Option<&Context> {
        self.0.as_deref()
    }
}

impl<C: AsRequestContext> FromContextPart<C> for MaybeVerified {
    fn from_context_part(context: &mut C) -> Result<Self, ErrorData> {
        MaybeVerified::from_request_context(context.as_request_context())
    }
}
