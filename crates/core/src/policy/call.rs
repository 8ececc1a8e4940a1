//! A call as the policy reads it: the verified context's claims as one
//! JSON object, the arguments and `_meta` as the body has them.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::config::{Decision, Policy};
use super::Input;
use crate::claims::{Claim, ClaimValue};
use crate::context::Context;
use crate::digits::push_u64;
use crate::json::{self, Item, Value};

/// The claims a rule reads as `claims`: every context claim the token
/// carried under its name (`metadata` as the object it is), then `tool`,
/// `jti`, `iat` and `exp` (numbers, doubles to the rule as every JSON
/// number). No context (a call passed without one): no claims.
fn claims(ctx: Option<&Context>) -> Value<'_> {
    let Some(ctx) = ctx else {
        return Value::Object(Vec::new());
    };
    let mut members = Vec::with_capacity(Claim::ALL.len() + 4);
    for claim in Claim::ALL {
        let value = match ctx.claim(claim) {
            Some(ClaimValue::Text(t)) => text(t),
            Some(ClaimValue::Json(v)) => v.clone(),
            // The metadata object was read strictly when it was verified.
            Some(ClaimValue::Raw(raw)) => match json::parse(raw.as_bytes()) {
                Ok(v) => v,
                Err(_) => continue,
            },
            None => continue,
        };
        members.push((Cow::Borrowed(claim.name()), value));
    }
    for (name, value) in [("tool", &ctx.tool), ("jti", &ctx.jti)] {
        if let Some(v) = value {
            members.push((Cow::Borrowed(name), text(v)));
        }
    }
    for (name, n) in [("iat", ctx.iat), ("exp", ctx.exp)] {
        let mut digits = String::new();
        push_u64(n, &mut digits);
        members.push((Cow::Borrowed(name), Value::Number(Cow::Owned(digits))));
    }
    Value::Object(members)
}

fn text(s: &str) -> Value<'_> {
    Value::String(Cow::Borrowed(s))
}

/// The rule that denies the call (`default` when no rule names the tool
/// and the default denies), or `None` when it is allowed. The arguments
/// and `_meta` are read only when a rule names the tool.
pub(crate) fn denial<'p>(
    policy: &'p Policy,
    ctx: Option<&Context>,
    tool: &str,
    arguments: Option<Item<'_, '_>>,
    meta: Option<Item<'_, '_>>,
) -> Option<&'p str> {
    let decision = if policy.names_tool(tool) {
        let claims = claims(ctx);
        let args = arguments.map(Item::to_value);
        let meta = meta.map(Item::to_value);
        policy.decide(&Input {
            claims: Some(&claims),
            args: args.as_ref(),
            meta: meta.as_ref(),
            tool,
        })
    } else {
        policy.decide_unnamed()
    };
    match decision {
        Decision::Allow => None,
        Decision::Deny(rule) => Some(rule),
    }
}
