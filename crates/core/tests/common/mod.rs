//! One valid `tools/call` shared by the tests and the benchmark: a ~1 KB
//! body and a ~800-character token with every optional claim.
#![allow(dead_code, clippy::unwrap_used)]

use toolctx_core::json;
use toolctx_core::{ContextClaims, TokenClaims};

pub const INSTANCE: &str = "0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f";
pub const SECRET: &[u8] = b"bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz";
pub const NOW: u64 = 1_767_225_600;
pub const TOOL: &str = "search_documents";

pub fn claims() -> TokenClaims {
    TokenClaims {
        instance_id: INSTANCE.into(),
        tool: Some(TOOL.into()),
        jti: "2c5e7a4e-1f2b-4c3d-9e8f-0a1b2c3d4e5f".into(),
        iat: NOW - 5,
        context: ContextClaims {
            protocol: "1".into(),
            task_id: "6f1c9a52-7d3e-4b8a-9c2f-1e0d3b5a7c9e".into(),
            tool_call_id: "call_Xk92bLq0vTzR4mNp".into(),
            workspace_id: "1b2e4c6d-8f0a-4b2c-9d4e-6f8a0b2c4d6e".into(),
            agent_id: Some("9d4a1c3e-5b7d-4f9a-8c2e-4a6b8d0f2c4e".into()),
            end_user_id: Some("user-42@example.com".into()),
            metadata: Some(
                json::parse(br#"{"chatId":"c-9f3b2a","channel":"web","locale":"en-GB","plan":"team","tags":["beta","eu"]}"#)
                    .unwrap()
                    .into_owned(),
            ),
        },
    }
}

/// The request body carrying `c`'s context in `_meta`.
pub fn body(c: &TokenClaims) -> Vec<u8> {
    let meta = c.context.meta_json();
    let meta = meta.trim_start_matches('{');
    format!(
        r#"{{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{{"name":"{TOOL}","arguments":{{"query":"quarterly revenue by region","limit":25,"filters":{{"year":2026,"types":["pdf","xlsx"]}},"cursor":"eyJvZmZzZXQiOjUwfQ"}},"_meta":{{"progressToken":17,{meta}}}}}"#
    )
    .into_bytes()
}
