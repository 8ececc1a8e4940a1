#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use super::*;
#[cfg(feature = "aivax")]
use toolctx_core::aivax::AivaxField;
use toolctx_core::{ClaimAnswer, ForwardField as Field, Verifier};

const S1: &str = "0123456789abcdef0123456789abcdef-one";
const S2: &str = "0123456789abcdef0123456789abcdef-two";

fn env(name: &str) -> Option<String> {
    match name {
        "S1" => Some(S1.into()),
        "S2" => Some(S2.into()),
        "SHORT" => Some("short".into()),
        "EMPTY" => Some(String::new()),
        "CRED" => Some("Bearer abc".into()),
        "HOOK" => Some("hook-key-value".into()),
        "LONG" => Some("k".repeat(73)),
        _ => None,
    }
}

fn load_str(s: &str) -> Result<Loaded, String> {
    load(s.as_bytes(), &env)
}

fn agentarea(l: &Loaded) -> (&Verifier, &[(Field, String)], &Option<ReplayGuard>) {
    match &l.settings.profile {
        Profile::AgentArea { verifier, replay } => {
            (verifier, verifier.config().forward.fields(), replay)
        }
        #[cfg(feature = "aivax")]
        Profile::Aivax { .. } => panic!("not agentarea"),
    }
}

#[test]
fn loads_secrets_from_env_for_rotation() {
    let l =
        load_str(r#"{"instance_id":"i","secret_env":["S1","S2","UNSET"],"max_body_bytes":100}"#)
            .unwrap();
    assert_eq!(
        agentarea(&l).0.config().secrets,
        vec![S1.as_bytes().to_vec(), S2.as_bytes().to_vec()]
    );
    assert_eq!(l.settings.max_body_bytes(), 100);
    assert!(l.settings.include_reason);
    assert_eq!(l.notes.len(), 1);
}

#[test]
fn refuses_inline_secrets_and_credentials() {
    let e = load_str(r#"{"instance_id":"i","secrets":["0123456789abcdef0123456789abcdef"]}"#)
        .unwrap_err();
    assert!(e.contains("inline `secrets`"), "{e}");
    let e = load_str(r#"{"instance_id":"i","secret_env":["S1"],"credential":{"header":"authorization","values":["x"]}}"#)
        .unwrap_err();
    assert!(e.contains("inline `credential.values`"), "{e}");
}

#[test]
fn says_what_is_wrong_without_the_secret() {
    let e = load_str(r#"{"instance_id":"i","secret_env":["SHORT"]}"#).unwrap_err();
    assert!(
        e.contains("SHORT") && e.contains("5 bytes") && !e.contains("short"),
        "{e}"
    );
    let e = load_str(r#"{"instance_id":"i","secret_env":["UNSET","EMPTY"]}"#).unwrap_err();
    assert!(e.contains("host_env_keys"), "{e}");
    let e = load_str(r#"{"instance_id":"i"}"#).unwrap_err();
    assert!(e.contains("secret_env"), "{e}");
    let e = load_str(r#"{"instance_id":"i","secret_env":["S1"],"clock_skew":3}"#).unwrap_err();
    assert!(e.contains("clock_skew"), "{e}");
    let e = load_str(r#"{"instance_id":"i","secret_env":["S1"],"max_body_bytes":0}"#).unwrap_err();
    assert!(e.contains("max_body_bytes"), "{e}");
    assert!(load_str("[]").is_err() && load_str("{").is_err());
}

#[test]
fn reads_credential_and_header_map() {
    let l = load_str(
        r#"{"instance_id":"i","secret_env":["S1"],"include_reason":false,
            "credential":{"header":"authorization","values_env":["CRED"]},
            "headers":{"task_id":"X-Toolctx-Task-Id","context":"x-toolctx-context"}}"#,
    )
    .unwrap();
    let c = agentarea(&l).0.config().credential.clone().unwrap();
    assert_eq!(c.values, vec!["Bearer abc".to_string()]);
    assert!(!l.settings.include_reason);
    assert_eq!(
        agentarea(&l).1,
        [
            (Field::TaskId, "x-toolctx-task-id".into()),
            (Field::Context, "x-toolctx-context".into())
        ]
    );
    for bad in [
        r#"{"nope":"x-a"}"#,
        r#"{"task_id":"x a"}"#,
        r#"{"task_id":"x-agentarea-context"}"#,
        r#"{"task_id":"x-a","jti":"X-A"}"#,
    ] {
        let text = format!(r#"{{"instance_id":"i","secret_env":["S1"],"headers":{bad}}}"#);
        assert!(load_str(&text).is_err(), "{bad}");
    }
}

#[test]
fn a_refused_forward_setting_is_named_in_the_gateways_words() {
    let known = FORWARD_FIELDS_TEXT;
    for (bad, said) in [
        (
            r#""headers":[]"#,
            "`headers` must be an object mapping context fields to header names".to_string(),
        ),
        (
            r#""headers":{"task_id":5}"#,
            "`headers.task_id` must be a header name".into(),
        ),
        (
            r#""headers":{"nope":"x-a"}"#,
            format!("`headers`: unknown agentarea context field `nope` (known: {known})"),
        ),
        (
            r#""headers":{"task_id":"x a"}"#,
            "`headers.task_id`: `x a` is not a valid header name".into(),
        ),
        (
            r#""headers":{"task_id":"Host"}"#,
            "`headers.task_id`: header `host` is reserved".into(),
        ),
        (
            r#""headers":{"task_id":"x-a","jti":"X-A"}"#,
            "`headers`/`meta_headers`/`tuix`: `x-a` is used twice".into(),
        ),
        (
            r#""meta_headers":"x""#,
            "`meta_headers` must be an object mapping `_meta` member names to header names".into(),
        ),
        (
            r#""meta_headers":{"s":true}"#,
            "`meta_headers.s` must be a header name".into(),
        ),
        (
            r#""meta_headers":{"":"x-b"}"#,
            "`meta_headers`: a `_meta` member name must not be empty".into(),
        ),
        (
            r#""meta_headers":{"s":"mcp-x"}"#,
            "`meta_headers.s`: header `mcp-x` is reserved".into(),
        ),
        (
            r#""tuix":true,"meta_headers":{"n":"X-Session-Id"}"#,
            "`headers`/`meta_headers`/`tuix`: `x-session-id` is used twice".into(),
        ),
        (
            r#""forward":{"tuix":true}"#,
            "unknown setting `forward`: the gateways forward with `headers`, `meta_headers` and `tuix`".into(),
        ),
    ] {
        let text = format!(r#"{{"instance_id":"i","secret_env":["S1"],{bad}}}"#);
        assert_eq!(load_str(&text).err(), Some(said), "{bad}");
    }
}

/// The context fields the agentarea profile forwards, as its refusal lists them.
const FORWARD_FIELDS_TEXT: &str =
    "task_id, tool_call_id, workspace_id, idempotency_key, protocol, \
     agent_id, end_user_id, metadata, tool, jti, iat, exp, secret_index, context";

#[cfg(feature = "aivax")]
#[test]
fn reads_aivax_profile_with_the_key_from_env() {
    let l = load_str(
        r#"{"profile":"aivax","hook_key_env":"HOOK","require_nonce":false,"max_bcrypt_cost":10,
            "credential":{"header":"authorization","values_env":["CRED"]},"max_body_bytes":1000,
            "headers":{"external_user_id":"x-aivax-user","context":"x-aivax-context"},
            "meta_headers":{"sessionId":"X-Session-Id"}}"#,
    )
    .unwrap();
    let Profile::Aivax {
        verifier,
        nonce_cache,
    } = &l.settings.profile
    else {
        panic!("not aivax")
    };
    assert_eq!(verifier.max_body_bytes(), 1000);
    assert_eq!(
        *nonce_cache,
        toolctx_core::settings::DEFAULT_NONCE_CACHE,
        "the nonce cache is the settings table's default"
    );
    assert_eq!(
        verifier.forward().fields()[0],
        (AivaxField::ExternalUserId, "x-aivax-user".into())
    );
    assert_eq!(
        l.settings.removed_headers(),
        vec!["x-aivax-user", "x-aivax-context", "x-session-id"]
    );
    let dbg = format!("{:?}", l.settings);
    assert!(
        !dbg.contains("hook-key-value") && !dbg.contains("Bearer abc"),
        "{dbg}"
    );
    let cached =
        load_str(r#"{"profile":"aivax","hook_key_env":"HOOK","nonce_cache":256}"#).unwrap();
    assert!(matches!(
        cached.settings.profile,
        Profile::Aivax {
            nonce_cache: 256,
            ..
        }
    ));
    assert!(cached
        .settings
        .summary()
        .contains("nonce cache 256 entries"));
    assert!(
        load_str(r#"{"instance_id":"i","secret_env":["S1"],"nonce_cache":8}"#)
            .unwrap_err()
            .contains("belongs to")
    );
    for (bad, says) in [
        (r#"{"profile":"aivax","hook_key":"k"}"#, "inline `hook_key`"),
        (r#"{"profile":"aivax"}"#, "hook_key_env"),
        (
            r#"{"profile":"aivax","hook_key_env":"UNSET"}"#,
            "host_env_keys",
        ),
        (
            r#"{"profile":"aivax","hook_key_env":"HOOK","max_bcrypt_cost":32}"#,
            "4 to 31",
        ),
        (r#"{"profile":"aivax","hook_key_env":"LONG"}"#, "72 bytes"),
        (
            r#"{"profile":"aivax","hook_key_env":"HOOK","secret_env":["S1"]}"#,
            "agentarea profile",
        ),
        (
            r#"{"profile":"aivax","hook_key_env":"HOOK","nonce_cache":4097}"#,
            "setting `nonce_cache` is out of range",
        ),
        (
            r#"{"profile":"aivax","hook_key_env":"HOOK","nonce_cache":-1}"#,
            "setting `nonce_cache` is out of range",
        ),
        (
            r#"{"profile":"aivax","hook_key_env":"HOOK","x":1}"#,
            "unknown setting `x`",
        ),
        (r#"{"profile":"other"}"#, "`profile`"),
        (
            r#"{"instance_id":"i","secret_env":["S1"],"hook_key_env":"HOOK"}"#,
            "aivax",
        ),
        (
            r#"{"profile":"aivax","hook_key_env":"HOOK","headers":{"task_id":"x-a"}}"#,
            "unknown aivax",
        ),
    ] {
        let e = load_str(bad).unwrap_err();
        assert!(
            e.contains(says) && !e.contains("hook-key-value"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn reads_meta_headers_and_replay_guard() {
    let l = load_str(
        r#"{"instance_id":"i","secret_env":["S1"],"headers":{"task_id":"x-task"},
            "meta_headers":{"sessionId":"X-Session-Id","idempotencyKey":"X-Idempotency-Key"},
            "replay_guard":{"slots":1024}}"#,
    )
    .unwrap();
    assert_eq!(
        agentarea(&l).0.config().forward.meta_members(),
        [
            ("sessionId".to_string(), "x-session-id".to_string()),
            (
                "idempotencyKey".to_string(),
                "x-idempotency-key".to_string()
            )
        ]
    );
    assert_eq!(
        l.settings.removed_headers(),
        ["x-task", "x-session-id", "x-idempotency-key"]
    );
    assert_eq!(
        agentarea(&l).2.clone().unwrap(),
        ReplayGuard::Table {
            slots: 1024,
            ways: 4,
            prefix: "toolctx/replay/i/".into()
        }
    );
    // `tuix: true` is the same two headers.
    let tuix = load_str(
        r#"{"instance_id":"i","secret_env":["S1"],"headers":{"task_id":"x-task"},"tuix":true}"#,
    )
    .unwrap();
    assert_eq!(
        tuix.settings.removed_headers(),
        l.settings.removed_headers()
    );
    for bad in [
        r#""meta_headers":{"sessionId":"x-task"}"#,
        r#""meta_headers":{"sessionId":"content-length"}"#,
        r#""meta_headers":{"":"x-b"}"#,
        r#""meta_headers":[]"#,
        r#""tuix":true,"meta_headers":{"n":"X-Session-Id"}"#,
        r#""tuix":1"#,
        r#""replay_guard":{"slots":0}"#,
        r#""replay_guard":{"slots":1,"ways":17}"#,
        r#""replay_guard":{"slotz":1}"#,
        r#""replay_guard":true"#,
    ] {
        let text = format!(
            r#"{{"instance_id":"i","secret_env":["S1"],"headers":{{"task_id":"x-task"}},{bad}}}"#
        );
        assert!(load_str(&text).is_err(), "{bad}");
    }
}

#[cfg(feature = "service")]
#[test]
fn redis_replay_guard_is_for_the_service_only() {
    let env = |name: &str| match name {
        "REDIS" => Some("redis://:pw-secret@127.0.0.1:6379/0".to_string()),
        "BAD" => Some("http://x".to_string()),
        other => env(other),
    };
    let text =
        br#"{"instance_id":"i","secret_env":["S1"],"replay_guard":{"redis_url_env":"REDIS"}}"#;
    let e = load(text, &env).unwrap_err();
    assert!(e.contains("ext_authz service"), "{e}");
    let l = load_for(Host::Service, text, &env).unwrap();
    let Some(ReplayGuard::Redis(r)) = agentarea(&l).2.clone() else {
        panic!("not redis")
    };
    assert_eq!(r.key_prefix, DEFAULT_REDIS_KEY_PREFIX);
    let shown = format!("{:?} {}", l.settings, l.settings.summary());
    assert!(
        !shown.contains("pw-secret") && shown.contains("REDIS"),
        "{shown}"
    );
    for (bad, says) in [
        (r#"{"redis_url_env":"REDIS","slots":4}"#, "no `slots`"),
        (r#"{"redis_url_env":"UNSET"}"#, "service's environment"),
        (r#"{"redis_url_env":"BAD"}"#, "redis://"),
        (
            r#"{"redis_url_env":"REDIS","redis_key_prefix":1}"#,
            "setting `replay_key_prefix` has the wrong type",
        ),
    ] {
        let text = format!(r#"{{"instance_id":"i","secret_env":["S1"],"replay_guard":{bad}}}"#);
        let e = load_for(Host::Service, text.as_bytes(), &env).unwrap_err();
        assert!(e.contains(says) && !e.contains("pw-secret"), "{bad}: {e}");
    }
    // The service's client (toolctx-tower's) reaches TLS, a cluster, a
    // Sentinel set and durable claims; the module's plain client refuses
    // each, naming what it lacks.
    for (address, lacks) in [
        (
            "rediss://u:pw-secret@127.0.0.1:6380?ca=ca.pem",
            "TLS (rediss)",
        ),
        (
            "redis-cluster://127.0.0.1:7000,127.0.0.1:7001",
            "Redis Cluster",
        ),
        ("redis-sentinel://127.0.0.1:26379#main", "Sentinel"),
        ("redis://127.0.0.1:6379?wait_replicas=1", "durable claims"),
    ] {
        let env = |name: &str| {
            (name == "A")
                .then(|| address.to_string())
                .or_else(|| env(name))
        };
        let text =
            br#"{"instance_id":"i","secret_env":["S1"],"replay_guard":{"redis_url_env":"A"}}"#;
        assert!(load_for(Host::Service, text, &env).is_ok(), "{address}");
        let e = load_for(Host::EnvoyModule, text, &env).unwrap_err();
        assert!(e.contains(lacks) && !e.contains("pw-secret"), "{e}");
    }
    // The in-process table is the same setting as the filter's.
    let text = br#"{"instance_id":"i","secret_env":["S1"],"replay_guard":{"slots":8}}"#;
    let l = load_for(Host::Service, text, &env).unwrap();
    assert_eq!(agentarea(&l).2.clone().unwrap().capacity(), Some(32));
    unset_secret_names(Host::Service, "service's environment");
}

/// A secret variable that is unset is refused naming where `host` reads
/// variables (not the filter's `host_env_keys`).
fn unset_secret_names(host: Host, place: &str) {
    let e = load_for(host, br#"{"instance_id":"i","secret_env":["UNSET"]}"#, &env).unwrap_err();
    assert!(e.contains(place) && !e.contains("host_env_keys"), "{e}");
}

type Headers = Vec<(String, Vec<u8>)>;

/// An accepted call for instance `i` signed with `S1`, token id `jti`, at
/// `now`: (now, headers, body with `extra_meta` members added to `_meta`).
fn signed_call(jti: &str, extra_meta: &str) -> (u64, Headers, Vec<u8>) {
    let now = 1_767_225_600;
    let claims = format!(
        r#"{{"iss":"agentarea","aud":"i","iat":{now},"exp":{},"jti":"{jti}","protocol":"1","task_id":"t-1","tool_call_id":"c-1","workspace_id":"w","idempotency_key":"t-1:c-1"}}"#,
        now + 300
    );
    let token = toolctx_core::sign_compact(
        br#"{"alg":"HS256","typ":"JWT"}"#,
        claims.as_bytes(),
        S1.as_bytes(),
    );
    let headers = vec![
        ("content-type".to_string(), b"application/json".to_vec()),
        ("x-agentarea-context".to_string(), token.into_bytes()),
    ];
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","_meta":{{"agentarea/protocol":"1","agentarea/task_id":"t-1","agentarea/tool_call_id":"c-1","agentarea/workspace_id":"w","agentarea/idempotency_key":"t-1:c-1"{extra_meta}}}}}}}"#
    );
    (now, headers, body.into_bytes())
}

#[test]
fn check_body_maps_accepted_calls_and_needs_a_store_for_the_guard() {
    let (now, headers, body) = signed_call("j-1", r#","sessionId":"s""#);
    let body = body.as_slice();
    // What the gateway does with the call under `config`, as text (the
    // decision borrows the settings, which live only inside).
    let run = |config: &str, first_use: Option<ClaimJti<'_>>| {
        let s = load_str(config).unwrap().settings;
        let toolctx_core::HeadersVerdict::ReadBody(checked) = s.check_headers("POST", &headers)
        else {
            panic!("headers refused")
        };
        // `..` for the AIVAX nonces, a field only with that feature.
        #[allow(clippy::needless_update)]
        let stores = Stores {
            first_use,
            ..Stores::default()
        };
        s.check_body(checked, &headers, body, now, stores)
            .map(|d| match d {
                Decision::Reject(r) => format!("reject {}", r.reason().as_str()),
                other => format!("{other:?}"),
            })
    };
    let plain = r#"{"instance_id":"i","secret_env":["S1"],"headers":{"task_id":"x-task"},"meta_headers":{"sessionId":"x-session-id"}}"#;
    let accepted = Decision::Accept(vec![
        ("x-task".to_string(), "t-1".to_string()),
        ("x-session-id".to_string(), "s".to_string()),
    ]);
    assert_eq!(run(plain, None).unwrap(), format!("{accepted:?}"));
    let guarded = r#"{"instance_id":"i","secret_env":["S1"],"replay_guard":{"slots":4}}"#;
    assert!(run(guarded, None).is_err());
    let mut seen = Vec::new();
    let mut once = |jti: &str, until: u64| {
        seen.push((jti.to_string(), until));
        ClaimAnswer::Used
    };
    assert_eq!(
        run(guarded, Some(&mut once)).unwrap(),
        "reject token_replayed"
    );
    assert_eq!(seen, vec![("j-1".to_string(), now + 300 + 30)]);
    // A store that cannot answer: internal_error, never token_replayed;
    // a full one: replay_guard_full.
    let mut down = |_: &str, _: u64| ClaimAnswer::Failed;
    assert_eq!(
        run(guarded, Some(&mut down)).unwrap(),
        "reject internal_error"
    );
    let mut full = |_: &str, _: u64| ClaimAnswer::Full;
    assert_eq!(
        run(guarded, Some(&mut full)).unwrap(),
        "reject replay_guard_full"
    );
}

#[test]
fn log_lines_and_counter_names() {
    let r = toolctx_core::Refusal::new(toolctx_core::Reason::TokenExpired, Some("\"a\nb\"".into()));
    assert_eq!(
        refusal_line(&r, Some(b"req-1\x00")),
        r#"refused token_expired status=401 request_id=req-1? rpc_id="a?b""#
    );
    let long = "x".repeat(100);
    let line = refusal_line(&r, Some(long.as_bytes()));
    assert!(line.contains(&format!("request_id={} ", "x".repeat(MAX_LOGGED_ID))));
    assert!(refusal_line(&r, None).contains("request_id=- "));
    assert_eq!(error_line("no clock"), "request refused with 500: no clock");
    assert_eq!(
        counters::refused(toolctx_core::Reason::TokenReplayed),
        "toolctx.refused.token_replayed"
    );
    assert_eq!(
        [counters::PASSED, counters::ACCEPTED, counters::ERRORS],
        ["toolctx.passed", "toolctx.accepted", "toolctx.errors"]
    );
}

#[test]
fn the_module_reads_envoys_environment_and_takes_redis_but_not_tls() {
    unset_secret_names(Host::EnvoyModule, "environment of the Envoy process");
    let text = br#"{"instance_id":"i","secret_env":["S1"],"replay_guard":{"slots":8}}"#;
    assert!(load_for(Host::EnvoyModule, text, &env).is_ok());
    let env = |name: &str| match name {
        "R" => Some("redis://:pw-secret@127.0.0.1:6379/2".to_string()),
        "TLS" => Some("rediss://:pw-secret@127.0.0.1:6380".to_string()),
        other => env(other),
    };
    let text = br#"{"instance_id":"i","secret_env":["S1"],"replay_guard":{"redis_url_env":"R","redis_key_prefix":"p:"}}"#;
    let module = load_for(Host::EnvoyModule, text, &env);
    #[cfg(feature = "redis")]
    {
        let l = module.unwrap();
        let Some(ReplayGuard::Redis(r)) = agentarea(&l).2.clone() else {
            panic!("not redis")
        };
        assert_eq!((r.url_env.as_str(), r.key_prefix.as_str()), ("R", "p:"));
        let shown = format!("{:?} {}", l.settings, l.settings.summary());
        assert!(
            !shown.contains("pw-secret") && shown.contains("redis (url from R)"),
            "{shown}"
        );
        for (bad, says) in [
            (r#"{"redis_url_env":"TLS"}"#, "needs TLS (rediss)"),
            (
                r#"{"redis_url_env":"UNSET"}"#,
                "environment of the Envoy process",
            ),
            (r#"{"redis_url_env":"R","ways":2}"#, "no `slots`"),
            (
                r#"{"slots":4,"redis_key_prefix":"p:"}"#,
                "needs `replay_guard.redis_url_env`",
            ),
        ] {
            let text = format!(r#"{{"instance_id":"i","secret_env":["S1"],"replay_guard":{bad}}}"#);
            let e = load_for(Host::EnvoyModule, text.as_bytes(), &env).unwrap_err();
            assert!(e.contains(says) && !e.contains("pw-secret"), "{bad}: {e}");
        }
    }
    #[cfg(not(feature = "redis"))]
    assert!(module.unwrap_err().contains("the `redis`"));
    // The filter still refuses it, saying where Redis is taken.
    let e = load(text, &env).unwrap_err();
    assert!(
        e.contains("the ext_authz service and the dynamic module") && !e.contains("pw-secret"),
        "{e}"
    );
}

#[test]
fn a_deferred_claim_is_settled_by_the_core() {
    let (now, headers, body) = signed_call("j-9", "");
    let body = body.as_slice();
    let guarded = r#"{"instance_id":"i","secret_env":["S1"],"headers":{"task_id":"x-task"},"replay_guard":{"slots":4}}"#;
    let s = load_str(guarded).unwrap().settings;
    let pending = |body: &[u8]| {
        let toolctx_core::HeadersVerdict::ReadBody(checked) = s.check_headers("POST", &headers)
        else {
            panic!("headers refused")
        };
        s.check_body_deferred(checked, &headers, body, now).unwrap()
    };
    let reason = |d: Decision| match d {
        Decision::Reject(r) => r.reason().as_str(),
        other => panic!("{other:?}"),
    };
    for (answer, want) in [
        (ClaimAnswer::Used, "token_replayed"),
        (ClaimAnswer::Full, "replay_guard_full"),
        (ClaimAnswer::Failed, "internal_error"),
    ] {
        let Deferred::Claim(p) = pending(body) else {
            panic!("not a claim")
        };
        assert_eq!(
            (p.claim().jti.as_str(), p.claim().until),
            ("j-9", now + 330)
        );
        assert_eq!(reason(s.settle(p, answer).unwrap()), want);
    }
    let Deferred::Claim(p) = pending(body) else {
        panic!("not a claim")
    };
    assert_eq!(
        s.settle(p, ClaimAnswer::FirstUse).unwrap(),
        Decision::Accept(vec![("x-task".to_string(), "t-1".to_string())])
    );
    // What is not an accepted call is decided at once; without a guard
    // there is nothing to defer.
    let Deferred::Decided(d) = pending(b"{}") else {
        panic!("claimed a body that is not a call")
    };
    assert_eq!(d, Decision::Pass);
    let plain = load_str(r#"{"instance_id":"i","secret_env":["S1"]}"#)
        .unwrap()
        .settings;
    let toolctx_core::HeadersVerdict::ReadBody(checked) = plain.check_headers("POST", &headers)
    else {
        panic!("headers refused")
    };
    assert!(plain
        .check_body_deferred(checked, &headers, body, now)
        .is_err());
}

#[test]
fn counters_are_defined_once_each_and_found_by_reason() {
    use toolctx_core::Reason;
    let mut names = Vec::new();
    let ids = crate::Counters::define(|name| {
        names.push(name.to_string());
        Ok::<usize, String>(names.len() - 1)
    })
    .unwrap();
    assert_eq!(names.len(), 3 + Reason::ALL.len());
    assert_eq!((ids.passed, ids.accepted, ids.errors), (0, 1, 2));
    for (i, reason) in Reason::ALL.iter().enumerate() {
        let id = *ids.refused(*reason).unwrap();
        assert_eq!(id, 3 + i);
        assert_eq!(names[id], counters::refused(*reason));
    }
    let pairs: Vec<_> = ids.each_refused().map(|(r, id)| (r, *id)).collect();
    assert_eq!(pairs.len(), Reason::ALL.len());
    // A failed definition stops there.
    let failed = crate::Counters::define(|name| {
        if name == counters::ACCEPTED {
            Err("no")
        } else {
            Ok(0u32)
        }
    });
    assert_eq!(failed.unwrap_err(), "no");
    // Before a host defined them: no refusal counter at all.
    assert!(crate::Counters::<u32>::default()
        .refused(Reason::TokenExpired)
        .is_none());
    assert_eq!(
        counters::prometheus(&counters::refused(Reason::TokenExpired)),
        "toolctx_refused_token_expired"
    );
}

#[test]
fn the_request_time_is_the_gateways_clock_unless_a_test_build_reads_the_header() {
    use crate::request::{header, now};
    let headers: [(&[u8], &[u8]); 2] = [
        (b"X-Toolctx-Test-Now", b"1700000000"),
        (b":method", b"POST"),
    ];
    assert_eq!(header(&headers, ":METHOD"), Some(&b"POST"[..]));
    assert_eq!(header(&headers, "x-other"), None);
    let at = now(|name| header(&headers, name), || Some(42));
    #[cfg(feature = "test-clock")]
    {
        assert_eq!(crate::request::TEST_NOW_HEADER, "x-toolctx-test-now");
        assert_eq!(at, Some(1_700_000_000));
        let bad: [(&[u8], &[u8]); 1] = [(b"x-toolctx-test-now", b"soon")];
        assert_eq!(now(|name| header(&bad, name), || Some(42)), None);
    }
    #[cfg(not(feature = "test-clock"))]
    assert_eq!(at, Some(42));
    assert_eq!(now(|_| None, || Some(42)), Some(42));
    assert!(crate::request::system_now().is_some_and(|t| t > 1_700_000_000));
}

#[cfg(feature = "bench-profile")]
#[test]
fn floors_are_named_as_the_bench_names_them() {
    use crate::Floor;
    assert_eq!(Floor::named(b"noop"), Floor::Noop);
    assert_eq!(Floor::named(b"hold"), Floor::Hold);
    assert_eq!(Floor::named(b""), Floor::Full);
    assert_eq!(Floor::from_filter_name(b"toolctx-floor-noop"), Floor::Noop);
    assert_eq!(Floor::from_filter_name(b"toolctx-floor-hold"), Floor::Hold);
    assert_eq!(Floor::from_filter_name(b"hold"), Floor::Full);
    assert_eq!(Floor::from_filter_name(b"toolctx"), Floor::Full);
}

/// tests/vectors/settings.json through the gateways' reading of their JSON
/// values (`load::setting`): the value read or the core's message.
#[test]
fn the_settings_vectors_read_as_the_core_reads_them() {
    use toolctx_core::json::{self, Value};
    use toolctx_core::settings::{self, Value as S};
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/settings.json"
    );
    let text = std::fs::read(path).unwrap();
    let file = json::parse(&text).unwrap();
    let (mut passed, mut failed) = (0, Vec::new());
    let Some(Value::Array(cases)) = file.get("cases") else {
        panic!("no cases")
    };
    for case in cases {
        let name = case.get("name").and_then(Value::as_str).unwrap_or("?");
        let setting = case.get("setting").and_then(Value::as_str).unwrap_or("");
        let expect = case.get("expect").unwrap();
        let got = match settings::setting(setting) {
            None => Err(format!("unknown setting `{setting}`")),
            Some(row) => crate::load::setting(row, case.get("raw")).map(|v| match v {
                S::Flag(b) => b.to_string(),
                S::Number(n) => n.to_string(),
                S::Text(t) => json::Value::String(t.into()).to_json(),
            }),
        };
        let want = match expect.get("value") {
            Some(Value::String(s)) => Ok(json::Value::String(s.clone()).to_json()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            Some(v) => Ok(v.to_json()),
            None => Err(expect
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()),
        };
        if got == want {
            passed += 1;
        } else {
            failed.push(format!("{name}: expected {want:?}, got {got:?}"));
        }
    }
    println!("{passed} passed, {} failed", failed.len());
    assert!(passed > 0 && failed.is_empty(), "{failed:#?}");
}
