//! Shared by the fuzz targets: one verifier, and the check that every
//! refusal renders a well-formed JSON-RPC error.
use toolctx_core::{json, Config, Verdict, Verifier};

pub const NOW: u64 = 1_767_225_600;

pub fn verifier() -> Verifier {
    let mut config = Config::new(
        "0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f",
        vec![
            b"fuzz-secret-0123456789-abcdefghijklmnopqrstuv".to_vec(),
            b"bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz".to_vec(),
        ],
    );
    config.max_body_bytes = 64 * 1024;
    Verifier::new(config).unwrap()
}

/// Runs a check and holds the verdict to the contract's invariants.
pub fn check(v: &Verifier, headers: &[(&[u8], &[u8])], body: &[u8]) {
    match v.check("POST", headers, body, NOW) {
        Verdict::Reject(r) => {
            let text = r.body(true);
            let doc = json::parse(text.as_bytes()).expect("refusal body is JSON");
            assert_eq!(doc.get("jsonrpc").and_then(|v| v.as_str()), Some("2.0"));
            assert!(doc.get("error").is_some_and(|e| e.is_object()));
            assert!((400..=413).contains(&r.status()));
        }
        Verdict::Accept(ctx) => {
            // Only a correctly signed token can be accepted; its key composes.
            assert_eq!(ctx.idempotency_key, format!("{}:{}", ctx.task_id, ctx.tool_call_id));
            assert!(json::parse(ctx.to_json().as_bytes()).is_ok());
        }
        Verdict::Pass => {}
    }
}
