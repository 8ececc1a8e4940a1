use alloc::string::String;

use super::config::matches;
use super::*;
use crate::json::parse;

fn compile_err(src: &str) -> (ErrorKind, (usize, usize)) {
    let Err(e) = Program::compile(src) else {
        panic!("{src} compiled");
    };
    let at = e.line_column(src);
    (e.kind, at)
}

fn run(src: &str, args: &str) -> Option<bool> {
    let args = parse(args.as_bytes()).unwrap();
    let claims = parse(br#"{"end_user_id":"u1","metadata":{"roles":["admin"]}}"#).unwrap();
    let input = Input {
        claims: Some(&claims),
        args: Some(&args),
        meta: None,
        tool: "transfer",
    };
    Program::compile(src).unwrap().allows(&input)
}

#[test]
fn check_time_errors_carry_their_position() {
    assert!(matches!(
        compile_err("1 == 1.0"),
        (ErrorKind::Type(_), (1, 3))
    ));
    assert!(matches!(
        compile_err("'a' < 1"),
        (ErrorKind::Type(_), (1, 5))
    ));
    assert!(matches!(
        compile_err("1 < 1.5"),
        (ErrorKind::Type(_), (1, 3))
    ));
    assert!(matches!(
        compile_err("x == 1"),
        (ErrorKind::Undeclared(_), (1, 1))
    ));
    assert!(matches!(
        compile_err("args.a +\n 1"),
        (ErrorKind::Unsupported(_), (1, 8))
    ));
    assert!(matches!(
        compile_err("true &&\n  size(1) == 1"),
        (ErrorKind::Type(_), (2, 7))
    ));
    assert!(matches!(
        compile_err("args.a =="),
        (ErrorKind::Syntax(_), (1, 10))
    ));
    assert!(matches!(compile_err("'x'"), (ErrorKind::Type(_), _)));
    assert!(matches!(
        compile_err("b'x' == b'x'"),
        (ErrorKind::Unsupported(_), _)
    ));
    assert!(matches!(
        compile_err("if == 1"),
        (ErrorKind::Syntax(_), (1, 1))
    ));
    // A reserved word is a field name after a dot.
    assert!(Program::compile("has(args.if)").is_ok());
}

#[test]
fn every_json_number_is_a_double() {
    for spelling in ["100", "100.0", "1e2", "1.00e+2"] {
        let args = alloc::format!("{{\"n\":{spelling}}}");
        assert_eq!(run("args.n == 100", &args), Some(true), "{spelling}");
        assert_eq!(run("args.n == 100.0", &args), Some(true), "{spelling}");
        assert_eq!(run("args.n <= 100 && args.n >= 100u", &args), Some(true));
        assert_eq!(run("args.n in [1, 100]", &args), Some(true));
    }
    assert_eq!(run("args.n == 100", r#"{"n":"100"}"#), Some(false));
}

#[test]
fn errors_are_absorbed_by_the_side_that_decides_and_otherwise_deny() {
    assert_eq!(run("args.missing || true", "{}"), Some(true));
    assert_eq!(run("true || args.missing", "{}"), Some(true));
    assert_eq!(run("args.missing && false", "{}"), Some(false));
    assert_eq!(run("args.missing && true", "{}"), None);
    assert_eq!(run("args.missing", "{}"), None);
    assert_eq!(run("args.s", r#"{"s":"yes"}"#), None);
    assert_eq!(
        run("args.l.all(x, x > 1)", r#"{"l":[2, "a", 0]}"#),
        Some(false)
    );
    assert_eq!(
        run("args.l.exists(x, x > 1)", r#"{"l":["a", 2]}"#),
        Some(true)
    );
    assert_eq!(run("args.l.exists(x, x > 1)", r#"{"l":["a", 0]}"#), None);
    assert_eq!(run("'admin' in claims.metadata.roles", "{}"), Some(true));
    assert_eq!(
        run("args.to == claims.end_user_id", r#"{"to":"u2"}"#),
        Some(false)
    );
    assert_eq!(run("size('héllo') == 5", "{}"), Some(true));
}

#[test]
fn tool_patterns() {
    assert!(matches("transfer", "transfer"));
    assert!(!matches("transfer", "transfers"));
    assert!(matches("delete_*", "delete_repo"));
    assert!(matches("*", "anything"));
    assert!(matches("a*b*c", "a-b-c"));
    assert!(matches("a*b", "ab"));
    assert!(!matches("a*b*c", "a-c-b"));
    assert!(!matches("ab*ba", "aba"));
}

fn policy(text: &str) -> Result<Policy, PolicyError> {
    Policy::from_value(&parse(text.as_bytes()).unwrap())
}

#[test]
fn the_setting_and_its_refusals() {
    let p =
        policy(r#"{"default":"deny","mode":"audit","rules":{"t*":[{"name":"r1","expr":"true"}]}}"#)
            .unwrap();
    assert_eq!(p.mode, Mode::Audit);
    assert_eq!(p.names(), alloc::vec!["r1"]);
    let input = Input {
        claims: None,
        args: None,
        meta: None,
        tool: "other",
    };
    assert_eq!(p.decide(&input), Decision::Deny(DEFAULT_RULE));
    let Err(e) = policy(r#"{"default":"allow","rules":{"t":[{"name":"r","expr":"true &&\n 1"}]}}"#)
    else {
        panic!("taken");
    };
    let mut text = String::new();
    core::fmt::write(&mut text, format_args!("{e}")).unwrap();
    assert!(text.starts_with("rule `r` at 1:6: type error"), "{text}");
    for bad in [
        r#"{"rules":{}}"#,
        r#"{"default":"allow","rules":{"t":[{"name":"default","expr":"true"}]}}"#,
        r#"{"default":"allow","rules":{"t":[{"name":"r","expr":"true","x":1}]}}"#,
        r#"{"default":"allow","rules":{"t":{"name":"r","expr":"true"}}}"#,
        r#"[]"#,
    ] {
        assert!(matches!(policy(bad), Err(PolicyError::Shape(_))), "{bad}");
    }
}

#[test]
fn a_refusal_names_its_rule_in_data_never_an_argument() {
    let r = crate::Refusal::new(crate::Reason::PolicyDenied, Some(String::from("4")))
        .with_rule(String::from("own-account"));
    assert_eq!(
        r.body(true),
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32004,"message":"call denied by policy","data":{"reason":"policy_denied","rule":"own-account"}}}"#
    );
    assert_eq!(r.status(), 403);
    assert!(!r.body(false).contains("own-account"));
}
