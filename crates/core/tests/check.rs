//! Properties of the whole check that vectors cannot state case by case.
#![forbid(unsafe_code)]
// Helpers outside `#[test]` functions may panic too (clippy.toml covers the tests).
#![allow(clippy::unwrap_used)]

use toolctx_core::json::{self, Value};
use toolctx_core::{ClaimAnswer, Config, HeadersVerdict, Reason, Verdict, Verifier};

use toolctx_fixture::{body, claims, INSTANCE, NOW, SECRET, TOOL};

const OTHER: &[u8] = b"previous-secret-0123456789-abcdefghijklm";

fn verifier() -> Verifier {
    Verifier::new(Config::new(INSTANCE, vec![OTHER.to_vec(), SECRET.to_vec()])).unwrap()
}

fn headers(token: &str) -> Vec<(String, String)> {
    vec![
        ("content-type".into(), "application/json".into()),
        ("X-AgentArea-Context".into(), token.into()),
    ]
}

#[test]
fn minted_token_and_meta_verify() {
    let c = claims();
    let token = c.mint(SECRET).unwrap();
    let v = verifier().check("POST", &headers(&token), &body(&c), NOW);
    let Verdict::Accept(ctx) = v else {
        panic!("{v:?}")
    };
    assert_eq!(ctx.task_id, "6f1c9a52-7d3e-4b8a-9c2f-1e0d3b5a7c9e");
    assert_eq!(
        ctx.idempotency_key,
        "6f1c9a52-7d3e-4b8a-9c2f-1e0d3b5a7c9e:call_Xk92bLq0vTzR4mNp"
    );
    assert_eq!(ctx.exp, NOW - 5 + 300);
    assert_eq!(
        ctx.secret_index, 1,
        "signed with the second configured secret"
    );
    assert_eq!(ctx.tool.as_deref(), Some(TOOL));
    assert_eq!(ctx.request_id.as_deref(), Some("17"));
    let text = ctx.to_json();
    let round: Value = json::parse(text.as_bytes()).unwrap();
    assert_eq!(
        round.get("end_user_id").and_then(Value::as_str),
        Some("user-42@example.com")
    );
}

/// `_meta` is read once for steps 11 and 14: a malformed context value
/// is refused before the tool (step 12) and the tool before any step-14
/// refusal, of which the first in document order wins.
#[test]
fn meta_refusals_keep_the_contracts_order() {
    let c = claims();
    let token = c.mint(SECRET).unwrap();
    let body = String::from_utf8(body(&c)).unwrap();
    let task = format!(r#""agentarea/task_id":"{}""#, c.context.task_id);
    let user = r#""agentarea/end_user_id":"user-42@example.com""#;
    let reason = |body: &str| match verifier().check("POST", &headers(&token), body.as_bytes(), NOW)
    {
        Verdict::Reject(r) => r.reason().as_str(),
        other => panic!("{other:?}"),
    };
    let mismatched = body.replace(&task, r#""agentarea/task_id":"x""#);
    assert_eq!(reason(&mismatched), "meta_mismatch");
    let malformed_later = mismatched.replace(user, r#""agentarea/end_user_id":"""#);
    assert_eq!(reason(&malformed_later), "context_malformed");
    let other_tool = mismatched.replace(&format!(r#""name":"{TOOL}""#), r#""name":"other""#);
    assert_eq!(reason(&other_tool), "tool_mismatch");
    let missing_first = mismatched.replace(r#""_meta":{"#, r#""_meta":{"agentarea/zzz":1,"#);
    assert_eq!(reason(&missing_first), "claim_missing");
    let missing_later = mismatched.replace(user, &format!(r#"{user},"agentarea/zzz":1"#));
    assert_eq!(reason(&missing_later), "meta_mismatch");
}

#[test]
fn headers_only_check_refuses_before_the_body() {
    let mut config = Config::new(INSTANCE, vec![SECRET.to_vec()]);
    config.credential = Some(toolctx_core::Credential {
        header: "Authorization".into(),
        values: vec!["Bearer one".into(), "Bearer two".into()],
    });
    let v = Verifier::new(config).unwrap();
    let h = |val: &str| vec![("authorization".to_string(), val.to_string())];
    assert!(matches!(
        v.check_headers("POST", &h("Bearer two")),
        HeadersVerdict::ReadBody(_)
    ));
    assert_eq!(
        v.check_headers("GET", &Vec::<(String, String)>::new()),
        HeadersVerdict::Pass
    );
    let HeadersVerdict::Reject(r) = v.check_headers("POST", &h("Bearer twO")) else {
        panic!()
    };
    assert_eq!(
        (r.reason(), r.status(), r.id_json()),
        (Reason::CredentialInvalid, 401, "null")
    );
    let HeadersVerdict::Reject(r) = v.check_headers("POST", &Vec::<(String, String)>::new()) else {
        panic!()
    };
    assert_eq!(r.reason(), Reason::CredentialMissing);
}

fn with_credential(value: &str) -> Verifier {
    let mut config = Config::new(INSTANCE, vec![SECRET.to_vec()]);
    config.credential = Some(toolctx_core::Credential {
        header: "Authorization".into(),
        values: vec![value.into()],
    });
    Verifier::new(config).unwrap()
}

/// `check_headers` then `check_body` with its proof is `check`, for
/// requests that pass, are accepted and are refused at each stage.
#[test]
fn check_body_after_check_headers_is_check() {
    let v = with_credential("Bearer one");
    let c = claims();
    let token = c.mint(SECRET).unwrap();
    let good = body(&c);
    let mut signed = headers(&token);
    signed.push(("authorization".into(), "Bearer one".into()));
    let unsigned = vec![("authorization".to_string(), "Bearer one".to_string())];
    type Case<'a> = (&'a str, &'a [(String, String)], &'a [u8], u64);
    let cases: [Case<'_>; 6] = [
        ("POST", &signed, &good, NOW),
        ("GET", &signed, &good, NOW),
        ("POST", &headers(&token), &good, NOW),
        ("POST", &signed, &good, NOW + 3600),
        ("POST", &unsigned, &good, NOW),
        ("POST", &signed, b"[{\"method\":\"tools/list\"}]", NOW),
    ];
    for (method, h, b, now) in cases {
        let split = match v.check_headers(method, h) {
            HeadersVerdict::Pass => Verdict::Pass,
            HeadersVerdict::Reject(r) => Verdict::Reject(r),
            HeadersVerdict::ReadBody(checked) => v.check_body(checked, h, b, now),
        };
        assert_eq!(split, v.check(method, h, b, now), "{method} {h:?}");
    }
}

/// A proof vouches for the verifier that made it: another one checks its
/// own credential instead of trusting it, so a body check can never skip
/// a credential it did not see.
#[test]
fn a_proof_from_another_verifier_does_not_skip_the_credential() {
    let open = verifier();
    let guarded = with_credential("Bearer one");
    let c = claims();
    let token = c.mint(SECRET).unwrap();
    let bare = headers(&token);
    let HeadersVerdict::ReadBody(foreign) = open.check_headers("POST", &bare) else {
        panic!()
    };
    let Verdict::Reject(r) = guarded.check_body(foreign, &bare, &body(&c), NOW) else {
        panic!()
    };
    assert_eq!(
        (r.reason(), r.id_json()),
        (Reason::CredentialMissing, "null")
    );

    let mut signed = bare.clone();
    signed.push(("authorization".into(), "Bearer one".into()));
    let HeadersVerdict::ReadBody(foreign) = open.check_headers("POST", &signed) else {
        panic!()
    };
    assert!(matches!(
        guarded.check_body(foreign, &signed, &body(&c), NOW),
        Verdict::Accept(_)
    ));
    // A clone is the same verifier: its proofs hold for the original.
    let HeadersVerdict::ReadBody(own) = guarded.clone().check_headers("POST", &signed) else {
        panic!()
    };
    assert!(matches!(
        guarded.check_body(own, &signed, &body(&c), NOW),
        Verdict::Accept(_)
    ));
}

/// RFC 7515 Appendix A.1: the HS256 example (header with CRLF) verifies at
/// the MAC layer: the refusal comes from the claims, after the signature.
#[test]
fn rfc7515_a1_mac_verifies_over_raw_segments() {
    use base64::Engine as _;
    let key = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow")
        .unwrap();
    let token = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let v = Verifier::new(Config::new(INSTANCE, vec![key.clone()])).unwrap();
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#;
    let Verdict::Reject(r) = v.check("POST", &headers(token), body, 1_300_819_000) else {
        panic!()
    };
    assert_eq!(r.reason(), Reason::IssuerInvalid);
    // One flipped key byte and the same token fails at the signature.
    let mut wrong = key;
    wrong[0] ^= 1;
    let v = Verifier::new(Config::new(INSTANCE, vec![wrong])).unwrap();
    let Verdict::Reject(r) = v.check("POST", &headers(token), body, 1_300_819_000) else {
        panic!()
    };
    assert_eq!(r.reason(), Reason::SignatureInvalid);
}

/// Replacements tried at every byte position.
fn mutations(b: u8) -> [u8; 7] {
    [b ^ 0x01, b ^ 0x20, b'.', b'"', b'\\', b'A', 0]
}

/// Mutating any byte of a valid token never gives an accept, and mutating
/// any byte of the body never gives an accept with a different context.
#[test]
fn mutations_never_forge_a_context() {
    let v = verifier();
    let c = claims();
    let token = c.mint(SECRET).unwrap();
    let body = body(&c);
    let Verdict::Accept(good) = v.check("POST", &headers(&token), &body, NOW) else {
        panic!()
    };
    let mut tried = 0;
    for i in 0..token.len() {
        for m in mutations(token.as_bytes()[i]) {
            let mut t = token.as_bytes().to_vec();
            if t[i] == m {
                continue;
            }
            t[i] = m;
            let h = vec![("x-agentarea-context".to_string(), t)];
            let verdict = v.check("POST", &h, &body, NOW);
            assert!(
                matches!(verdict, Verdict::Reject(_)),
                "token byte {i} -> {m}: {verdict:?}"
            );
            tried += 1;
        }
    }
    for i in 0..body.len() {
        for m in mutations(body[i]) {
            let mut b = body.clone();
            if b[i] == m {
                continue;
            }
            b[i] = m;
            if let Verdict::Accept(mut ctx) = v.check("POST", &headers(&token), &b, NOW) {
                // The request id is the caller's, not vouched for.
                ctx.request_id.clone_from(&good.request_id);
                assert_eq!(ctx, good, "body byte {i} -> {m} changed the context");
            }
            tried += 1;
        }
    }
    assert!(tried > 5000, "{tried}");
}

/// Mutating a refused request never turns it into an accept.
#[test]
fn mutations_never_turn_a_refusal_into_an_accept() {
    let v = verifier();
    let mut c = claims();
    c.iat = NOW - 400; // expired: exp + skew <= now
    let token = c.mint(SECRET).unwrap();
    let body = body(&c);
    assert!(matches!(
        v.check("POST", &headers(&token), &body, NOW),
        Verdict::Reject(_)
    ));
    for i in 0..token.len() {
        for m in mutations(token.as_bytes()[i]) {
            let mut t = token.as_bytes().to_vec();
            t[i] = m;
            let h = vec![("x-agentarea-context".to_string(), t)];
            assert!(
                !matches!(v.check("POST", &h, &body, NOW), Verdict::Accept(_)),
                "token byte {i}"
            );
        }
    }
    for i in 0..body.len() {
        for m in mutations(body[i]) {
            let mut b = body.clone();
            b[i] = m;
            assert!(
                !matches!(
                    v.check("POST", &headers(&token), &b, NOW),
                    Verdict::Accept(_)
                ),
                "body byte {i}"
            );
        }
    }
}

/// Arbitrary bytes as body and token never panic (a cheap fuzz pass; the
/// fuzz targets go further).
#[test]
fn arbitrary_input_does_not_panic() {
    let v = verifier();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let alphabet = br#"{}[]":,.\-0123456789eE+tfnulrsa/_ \u00d8"#;
    for _ in 0..20_000 {
        let len = (next() % 96) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                let r = next();
                if r % 8 == 0 {
                    r as u8
                } else {
                    alphabet[(r >> 8) as usize % alphabet.len()]
                }
            })
            .collect();
        let _ = json::parse(&bytes);
        let token = String::from_utf8_lossy(&bytes).into_owned();
        let _ = v.check("POST", &headers(&token), &bytes, NOW);
        let _ = toolctx_core::decode_unverified(&token);
    }
}

#[test]
fn deep_and_wide_documents_are_cheap_to_refuse() {
    let v = verifier();
    let deep = "[".repeat(200_000);
    let Verdict::Reject(r) = v.check("POST", &headers("x"), deep.as_bytes(), NOW) else {
        panic!()
    };
    assert_eq!(r.reason(), Reason::TooDeep);
    // 50k members: the duplicate check must not be quadratic.
    let mut wide = String::from(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"#,
    );
    for i in 0..50_000 {
        wide.push_str(&format!("\"k{i}\":0,"));
    }
    wide.push_str("\"k1\":1}}}");
    let Verdict::Reject(r) = v.check("POST", &headers("x"), wide.as_bytes(), NOW) else {
        panic!()
    };
    assert_eq!(r.reason(), Reason::DuplicateMember);
}

#[test]
fn refusal_body_renders_id_and_optional_reason() {
    let v = verifier();
    let body = br#"{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"name":"x"}}"#;
    let Verdict::Reject(r) = v.check("POST", &Vec::<(String, String)>::new(), body, NOW) else {
        panic!()
    };
    assert_eq!(
        r.body(true),
        r#"{"jsonrpc":"2.0","id":"a\"b","error":{"code":-32001,"message":"context token missing","data":{"reason":"token_missing"}}}"#
    );
    assert_eq!(
        r.body(false),
        r#"{"jsonrpc":"2.0","id":"a\"b","error":{"code":-32001,"message":"context token missing"}}"#
    );
}

#[test]
fn secrets_never_show_in_debug_or_errors() {
    let v = verifier();
    let shown = format!("{v:?}");
    assert!(
        !shown.contains("test-secret") && !shown.contains("previous-secret"),
        "{shown}"
    );
    let err = Verifier::new(Config::new(INSTANCE, vec![b"short-secret".to_vec()])).unwrap_err();
    assert!(!err.to_string().contains("short-secret"));
}

#[test]
fn replay_guard_accepts_a_token_once_within_its_lifetime() {
    use toolctx_core::ReplayCache;
    let v = Verifier::new(Config::new(INSTANCE, vec![SECRET.to_vec()])).unwrap();
    let c = claims();
    let token = c.mint(SECRET).unwrap();
    let h = headers(&token);
    let body = body(&c);
    let mut cache = ReplayCache::new(16);
    let mut once = |jti: &str, until: u64| cache.first_use(jti, until, NOW);
    assert!(matches!(
        v.check_once("POST", &h, &body, NOW, &mut once),
        Verdict::Accept(_)
    ));
    let Verdict::Reject(r) = v.check_once("POST", &h, &body, NOW, &mut once) else {
        panic!()
    };
    assert_eq!(
        (r.reason(), r.status(), r.code(), r.id_json()),
        (Reason::TokenReplayed, 401, -32001, "17")
    );
    // A retry carries a new token (new jti) and is accepted.
    let mut retry = claims();
    retry.jti = "9b0e3c1a-0000-4000-8000-000000000001".into();
    let h2 = headers(&retry.mint(SECRET).unwrap());
    assert!(matches!(
        v.check_once("POST", &h2, &body, NOW, &mut once),
        Verdict::Accept(_)
    ));
    // The guard remembers each id until the token could no longer pass.
    assert_eq!(cache.len(), 2);
    assert_eq!(cache.first_use("old", NOW + 1, NOW), ClaimAnswer::FirstUse);
    assert_eq!(
        cache.first_use("old", NOW + 400, NOW + 1),
        ClaimAnswer::FirstUse,
        "forgotten once its token expired"
    );
}

#[test]
fn replay_guard_refuses_what_it_cannot_guard() {
    use toolctx_core::{sign_compact, ReplayCache};
    let v = Verifier::new(Config::new(INSTANCE, vec![SECRET.to_vec()])).unwrap();
    let c = claims();
    // The same claims without `jti`.
    let payload = c
        .payload_json()
        .replace(r#""jti":"2c5e7a4e-1f2b-4c3d-9e8f-0a1b2c3d4e5f","#, "");
    assert!(!payload.contains("jti"));
    let token = sign_compact(
        br#"{"alg":"HS256","typ":"JWT"}"#,
        payload.as_bytes(),
        SECRET,
    );
    let mut cache = ReplayCache::new(16);
    let mut once = |jti: &str, until: u64| cache.first_use(jti, until, NOW);
    let Verdict::Reject(r) = v.check_once("POST", &headers(&token), &body(&c), NOW, &mut once)
    else {
        panic!()
    };
    assert_eq!(r.reason(), Reason::ClaimInvalid);
    // A full cache of live ids answers `Full` rather than forgets, and
    // the core refuses that `replay_guard_full` (503), never a replay.
    let mut full = ReplayCache::new(1);
    assert_eq!(full.first_use("a", NOW + 300, NOW), ClaimAnswer::FirstUse);
    assert_eq!(full.first_use("b", NOW + 300, NOW), ClaimAnswer::Full);
    assert_eq!(
        full.first_use("b", NOW + 600, NOW + 300),
        ClaimAnswer::FirstUse,
        "room again once `a` expired"
    );
    let mut one = ReplayCache::new(1);
    assert_eq!(one.first_use("x", NOW + 300, NOW), ClaimAnswer::FirstUse);
    let mut claim = |jti: &str, until: u64| one.first_use(jti, until, NOW);
    let Verdict::Reject(r) = v.check_once(
        "POST",
        &headers(&c.mint(SECRET).unwrap()),
        &body(&c),
        NOW,
        &mut claim,
    ) else {
        panic!()
    };
    assert_eq!(
        (r.reason(), r.status(), r.code()),
        (Reason::ReplayGuardFull, 503, -32603)
    );
    // A refused call does not use up its token id.
    let mut guard = ReplayCache::new(16);
    let mut once = |jti: &str, until: u64| guard.first_use(jti, until, NOW);
    let good = c.mint(SECRET).unwrap();
    let wrong_tool = String::from_utf8(body(&c))
        .unwrap()
        .replace(r#""name":"search_documents""#, r#""name":"other""#);
    let Verdict::Reject(r) = v.check_once(
        "POST",
        &headers(&good),
        wrong_tool.as_bytes(),
        NOW,
        &mut once,
    ) else {
        panic!()
    };
    assert_eq!(r.reason(), Reason::ToolMismatch);
    assert!(matches!(
        v.check_once("POST", &headers(&good), &body(&c), NOW, &mut once),
        Verdict::Accept(_)
    ));
}
