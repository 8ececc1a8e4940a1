//! The `_aiv_*` members of `params._meta`, read into an [`AivaxContext`].

use alloc::string::String;
use alloc::vec::Vec;

use super::config::AivaxConfig;
use super::context::AivaxContext;
use super::moment::parse_moment;
use super::nonce::{nonce_matches, NonceCache};
use crate::json::{Item, Kind, Members};
use crate::reason::Reason;

const NONCE: &str = "_aiv_nonce";
const RESERVED_PREFIX: &str = "_aiv";

/// Checks the `_aiv_*` members of `_meta` (an object, or absent).
pub(crate) fn check(
    config: &AivaxConfig,
    meta: Option<Item<'_, '_>>,
    cache: Option<&mut NonceCache>,
) -> Result<AivaxContext, Reason> {
    // A member that is absent or null.
    let get = |name: &str| {
        meta.and_then(|m| m.get(name))
            .filter(|v| v.kind() != Kind::Null)
    };
    let nonce_verified = match get(NONCE) {
        None if config.require_nonce => return Err(Reason::NonceMissing),
        None => false,
        Some(nonce) => {
            let nonce = nonce.as_str().ok_or(Reason::NonceInvalid)?;
            if !nonce_matches(config, nonce.as_bytes(), cache) {
                return Err(Reason::NonceInvalid);
            }
            true
        }
    };
    let optional = |name: &str| -> Result<Option<String>, Reason> {
        match get(name) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(|s| Some(String::from(s)))
                .ok_or(Reason::ContextMalformed),
        }
    };
    let moment = match optional("_aiv_moment")? {
        None => None,
        Some(text) => Some(parse_moment(&text).ok_or(Reason::ContextMalformed)?),
    };
    let mut metadata = Vec::new();
    for (k, v) in meta.map_or(Members::NONE, Item::members) {
        if let (Some(k), Some(v)) = (k.as_str(), v.as_str()) {
            if !k.starts_with(RESERVED_PREFIX) {
                metadata.push((String::from(k), String::from(v)));
            }
        }
    }
    Ok(AivaxContext {
        nonce_verified,
        external_user_id: optional("_aiv_external_user_id")?,
        call_source: optional("_aiv_call_source")?,
        conversation_token: optional("_aiv_conversation_token")?,
        moment,
        metadata,
        request_id: None,
        upstream: Vec::new(),
    })
}
