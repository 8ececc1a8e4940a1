use super::*;
use crate::config::ConfigError;
use alloc::string::ToString;

fn limit(row: &Setting, x: f64) -> bool {
    row.number(x).is_none()
}

#[test]
fn every_row_is_named_once_and_its_default_is_in_its_range() {
    for (i, row) in TABLE.iter().enumerate() {
        assert!(
            TABLE.iter().skip(i + 1).all(|o| o.name != row.name),
            "{}",
            row.name
        );
        assert_eq!(setting(row.name), Some(row));
        if let DefaultValue::Number(n) = row.default {
            assert!((row.min..=row.max).contains(&n), "{}", row.name);
            assert_eq!(row.read(Raw::Absent), Ok(Value::Number(n)));
        }
    }
    assert_eq!(
        read("nope", Raw::Absent),
        Err(SettingError::Unknown("nope".into()))
    );
}

#[test]
fn zero_is_the_default_from_one_and_itself_from_zero() {
    assert_eq!(WAIT.number(0.0), Some(DEFAULT_WAIT_MS));
    assert_eq!(WAIT.number(-0.0), Some(DEFAULT_WAIT_MS));
    assert_eq!(NONCE_CACHE.number(0.0), Some(0));
    assert_eq!(CLOCK_SKEW_S.number(0.0), Some(0));
    // No default: 0 is out of range.
    assert!(limit(&REPLAY_SLOTS, 0.0));
}

#[test]
fn numbers_out_of_range_negative_or_not_whole_are_refused() {
    for x in [
        -1.0,
        -0.4,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1.5,
        4_294_967_296.0,
    ] {
        assert!(limit(&REPLAY_CAPACITY, x), "{x}");
    }
    assert_eq!(REPLAY_CAPACITY.number(4_294_967_295.0), Some(4_294_967_295));
    // Milliseconds round to the nearest one; below 0.5 is 0, out of range.
    assert_eq!(TTL.number(1.5), Some(2));
    assert_eq!(TTL.number(0.5), Some(1));
    assert!(limit(&TTL, 0.4));
    assert!(limit(&WAIT, MAX_WAIT_MS as f64 + 0.5));
    assert_eq!(WAIT.number(MAX_WAIT_MS as f64 + 0.4), Some(MAX_WAIT_MS));
}

#[test]
fn wrong_types_and_absent_values() {
    assert_eq!(read("include_reason", Raw::Absent), Ok(Value::Flag(true)));
    assert_eq!(
        read("include_reason", Raw::Flag(false)),
        Ok(Value::Flag(false))
    );
    for raw in [Raw::Number(1.0), Raw::Text("true"), Raw::Other] {
        assert_eq!(
            read("include_reason", raw),
            Err(SettingError::Type("include_reason"))
        );
    }
    for raw in [Raw::Flag(true), Raw::Text("500"), Raw::Other] {
        assert_eq!(
            read("store_timeout_ms", raw),
            Err(SettingError::Type("store_timeout_ms"))
        );
    }
    assert_eq!(
        read("instance_id", Raw::Absent),
        Err(SettingError::Missing("instance_id"))
    );
    assert_eq!(
        read("idempotency_key_prefix", Raw::Absent),
        Ok(Value::Text(IDEMPOTENCY_KEY_PREFIX))
    );
    assert!(INCLUDE_REASON.flag(None) && !INCLUDE_REASON.flag(Some(false)));
}

#[test]
fn an_unresolved_placeholder_is_refused_with_its_own_code() {
    for t in [
        "${TOOLCTX_INSTANCE_ID}",
        "redis://${HOST}:6379",
        "${A:b}",
        "x${}",
    ] {
        assert!(has_placeholder(t.as_bytes()), "{t}");
    }
    for t in ["", "$HOME", "${", "}${", "a}b", "0b6f2c4e-6a7d", "$ {A}"] {
        assert!(!has_placeholder(t.as_bytes()), "{t}");
    }
    let e = read("instance_id", Raw::Text("${ID}")).unwrap_err();
    assert_eq!(e.code(), "config_placeholder");
    assert_eq!(
        e.to_string(),
        "setting `instance_id` holds an unresolved placeholder `${...}`: set the variable it names"
    );
}

#[test]
fn the_messages_shared_with_config_errors_are_theirs() {
    for (e, c) in [
        (SettingError::Missing("x"), ConfigError::Missing("x")),
        (SettingError::Type("x"), ConfigError::Type("x")),
        (SettingError::Limit("x"), ConfigError::Limit("x")),
        (
            SettingError::Placeholder("x"),
            ConfigError::Placeholder("x"),
        ),
        (
            SettingError::Unknown("x".into()),
            ConfigError::UnknownSetting("x".into()),
        ),
    ] {
        assert_eq!((e.code(), e.to_string()), (c.code(), c.to_string()));
        assert_eq!(ConfigError::from(e), c);
    }
}

#[test]
fn a_verifier_refuses_a_placeholder_as_its_instance_id_secret_or_hook_key() {
    use crate::aivax::AivaxConfig;
    use crate::{Config, UnknownSettings, Verifier};
    let secret = "s".repeat(32);
    let config = |id: &str, secret: &str| {
        let text = alloc::format!(r#"{{"instance_id":"{id}","secrets":["{secret}"]}}"#);
        Config::from_json(text.as_bytes(), UnknownSettings::Refuse).and_then(Verifier::new)
    };
    assert!(config("i", &secret).is_ok());
    for (id, secret, name) in [
        ("${TOOLCTX_INSTANCE_ID}", secret.as_str(), "instance_id"),
        ("i", "${TOOLCTX_SECRET}", "secrets"),
        (
            "i",
            "${TOOLCTX_SECRET}-padded-to-thirty-two-bytes",
            "secrets",
        ),
    ] {
        let e = config(id, secret).map(|_| ()).unwrap_err();
        assert_eq!(e, ConfigError::Placeholder(name), "{id} {secret}");
        assert_eq!(e.code(), "config_placeholder");
    }
    let hook = AivaxConfig::new(b"${AIVAX_HOOK_KEY}".to_vec());
    assert_eq!(hook.validate(), Err(ConfigError::Placeholder("hook_key")));
    assert!(AivaxConfig::new(b"hook-key".to_vec()).validate().is_ok());
}
