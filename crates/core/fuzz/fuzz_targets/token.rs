//! The token parser and claim checks: any bytes as `X-AgentArea-Context`
//! in front of a valid body.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

#[path = "common.rs"]
mod common;

static VERIFIER: OnceLock<toolctx_core::Verifier> = OnceLock::new();

const BODY: &[u8] = br#"{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"search_documents","arguments":{},"_meta":{"progressToken":17,"agentarea/protocol":"1","agentarea/task_id":"t","agentarea/tool_call_id":"c","agentarea/workspace_id":"w","agentarea/idempotency_key":"t:c"}}}"#;

fuzz_target!(|token: &[u8]| {
    let v = VERIFIER.get_or_init(common::verifier);
    let headers: [(&[u8], &[u8]); 1] = [(b"x-agentarea-context", token)];
    common::check(v, &headers, BODY);
    if let Ok(t) = std::str::from_utf8(token) {
        let _ = toolctx_core::decode_unverified(t);
    }
});
