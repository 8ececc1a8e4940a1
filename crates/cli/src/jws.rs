//! HS256 over arbitrary header and payload text. The core mints only
//! well-formed tokens; conformance cases need the others (a `crit` header,
//! a string `exp`, no issuer, ...), and `inspect` re-signs a token to run
//! the core's claim checks without knowing its secret.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

fn mac(signed: &str, secret: &[u8]) -> String {
    match Hmac::<Sha256>::new_from_slice(secret) {
        Ok(mut m) => {
            m.update(signed.as_bytes());
            URL_SAFE_NO_PAD.encode(m.finalize().into_bytes())
        }
        // HMAC takes keys of any length; nothing to sign with otherwise.
        Err(_) => String::new(),
    }
}

/// `base64url(header).base64url(payload).base64url(HMAC-SHA256)`.
pub fn sign(header: &str, payload: &str, secret: &[u8]) -> String {
    toolctx_core::sign_compact(header.as_bytes(), payload.as_bytes(), secret)
}

/// The same `header.payload` segments, byte for byte, with a signature
/// made with `secret`. `None` when the token does not have three segments.
pub fn resign(token: &str, secret: &[u8]) -> Option<String> {
    let mut parts = token.split('.');
    let (h, p, _sig) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let signed = format!("{h}.{p}");
    let sig = mac(&signed, secret);
    Some(format!("{signed}.{sig}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use toolctx_core::{ContextClaims, TokenClaims};

    #[test]
    fn same_bytes_as_the_core_mint() {
        let secret = b"0123456789abcdef0123456789abcdef";
        let claims = TokenClaims {
            instance_id: "i".into(),
            tool: None,
            jti: "j".into(),
            iat: 1,
            context: ContextClaims {
                protocol: "1".into(),
                task_id: "t".into(),
                tool_call_id: "c".into(),
                workspace_id: "w".into(),
                agent_id: None,
                end_user_id: None,
                metadata: None,
            },
        };
        let minted = claims.mint(secret).unwrap();
        assert_eq!(
            sign(
                r#"{"alg":"HS256","typ":"JWT"}"#,
                &claims.payload_json(),
                secret
            ),
            minted
        );
        assert_eq!(resign(&minted, secret).unwrap(), minted);
        assert!(resign("a.b", secret).is_none());
    }
}
