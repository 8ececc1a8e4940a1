//! A call as the policy reads it, in place: the verified context's claims
//! as fields, the arguments and `_meta` as the request's document holds
//! them (nothing copied into a tree).

use alloc::vec::Vec;

use super::config::{Decision, Policy};
use super::eval::Env;
use super::value::{from_item, Val};
use crate::claims::{Claim, ClaimValue};
use crate::context::Context;
use crate::json::{self, Item, Keep};

/// An object read in place; anything else (absent) an empty map.
fn object<'a>(item: Option<Item<'a, 'a>>) -> Val<'a> {
    match item {
        Some(i) if i.is_object() => Val::Node(i),
        _ => Val::Fields(&[]),
    }
}

/// The rule that denies the call (`default` when no rule names the tool
/// and the default denies), or `None` when it is allowed. The claims are
/// read only when a rule names the tool: every context claim the token
/// carried under its name (`metadata` as the object it is), then `tool`,
/// `jti`, `iat` and `exp` (numbers, doubles to a rule as every JSON
/// number). No context (a call passed without one): no claims.
pub(crate) fn denial<'p>(
    policy: &'p Policy,
    ctx: Option<&Context>,
    tool: &str,
    arguments: Option<Item<'_, '_>>,
    meta: Option<Item<'_, '_>>,
) -> Option<&'p str> {
    if !policy.names_tool(tool) {
        return match policy.decide_unnamed() {
            Decision::Allow => None,
            Decision::Deny(rule) => Some(rule),
        };
    }
    // The metadata claim was read strictly when it was verified; read
    // again here, in place.
    let metadata = ctx
        .and_then(|c| c.metadata.as_ref())
        .and_then(|m| json::read(m.as_str().as_bytes(), Keep::All).ok());
    let mut fields: Vec<(&str, Val<'_>)> = Vec::new();
    if let Some(ctx) = ctx {
        fields.reserve(Claim::ALL.len() + 4);
        for claim in Claim::ALL {
            let value = match ctx.claim(claim) {
                Some(ClaimValue::Text(t)) => Val::Str(t),
                Some(ClaimValue::Json(v)) => super::value::from_json(v),
                Some(ClaimValue::Raw(_)) => match metadata.as_ref().and_then(|d| d.root()) {
                    Some(root) => from_item(root),
                    None => continue,
                },
                None => continue,
            };
            fields.push((claim.name(), value));
        }
        for (name, value) in [("tool", &ctx.tool), ("jti", &ctx.jti)] {
            if let Some(v) = value {
                fields.push((name, Val::Str(v)));
            }
        }
        // NumericDates are at most 2^53 - 1: exact as doubles.
        fields.push(("iat", Val::Double(ctx.iat as f64)));
        fields.push(("exp", Val::Double(ctx.exp as f64)));
    }
    let env = Env {
        claims: Val::Fields(&fields),
        args: object(arguments),
        meta: object(meta),
        tool,
    };
    match policy.decide_in(&env, tool) {
        Decision::Allow => None,
        Decision::Deny(rule) => Some(rule),
    }
}
