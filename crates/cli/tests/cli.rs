//! The `toolctx` binary against the example MCP server
//! (examples/node-server, the toolctx npm package in front of the official
//! TypeScript SDK), started here on 127.0.0.1 with a free port and stopped
//! when each test ends, however it ends.
//!
//! Needs `node`, `examples/node-server/node_modules` and `npm/dist`:
//! `scripts/test-cli` installs and builds them. The server file is
//! `server.mjs` (MCP SDK v2), or `$TOOLCTX_EXAMPLE_SERVER` (`scripts/test-cli`
//! runs these tests a second time with `server-v1.mjs`, SDK 1.x).
#![forbid(unsafe_code)]
// Helpers outside `#[test]` functions may panic too (clippy.toml covers the tests).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value as J;
use toolctx_core::{Config, Verdict, Verifier};

const INSTANCE: &str = "inst-cli-test";
const SECRET_ENV: &str = "TOOLCTX_TEST_SECRET";
const OTHER_SECRET_ENV: &str = "TOOLCTX_TEST_SECRET_NEXT";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A secret unique to this run, so finding it in any output is meaningful.
fn secret(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("cli-test-{tag}-secret-{}-{nanos}", std::process::id())
}

/// The example server file these tests run: `server.mjs` unless
/// `TOOLCTX_EXAMPLE_SERVER` names another one in examples/node-server.
fn server_file() -> String {
    std::env::var("TOOLCTX_EXAMPLE_SERVER").unwrap_or_else(|_| "server.mjs".to_string())
}

/// The example server; killed on drop. It also exits when its standard
/// input closes, so it cannot outlive a test process that is killed.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(verify: bool, secrets: &[&str]) -> Server {
        Server::start_with(verify, secrets, &[])
    }

    fn start_with(verify: bool, secrets: &[&str], flags: &[&str]) -> Server {
        let dir = root().join("examples/node-server");
        let file = server_file();
        assert!(
            dir.join(&file).exists(),
            "examples/node-server/{file} does not exist"
        );
        assert!(
            dir.join("node_modules/@modelcontextprotocol/sdk").exists()
                && dir
                    .join("node_modules/@modelcontextprotocol/server")
                    .exists()
                && root().join("npm/dist/node/index.js").exists(),
            "examples/node-server/node_modules or npm/dist missing: run scripts/test-cli"
        );
        let mut cmd = Command::new("node");
        cmd.arg(&file)
            .args(["--port", "0", "--exit-with-stdin"])
            .current_dir(&dir)
            .env("TOOLCTX_INSTANCE_ID", INSTANCE)
            .env_remove("TOOLCTX_SECRET")
            .env_remove("TOOLCTX_SECRET_PREVIOUS")
            .env_remove("TOOLCTX_CREDENTIAL")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if !verify {
            cmd.arg("--no-verify");
        }
        cmd.args(flags);
        for (name, value) in ["TOOLCTX_SECRET", "TOOLCTX_SECRET_PREVIOUS"]
            .iter()
            .zip(secrets)
        {
            cmd.env(name, value);
        }
        let mut child = cmd.spawn().expect("node starts");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout piped");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("server prints its address");
        let server = Server {
            url: line
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_string(),
            child,
        };
        assert!(
            server.url.starts_with("http://127.0.0.1:"),
            "server did not start: {line:?}"
        );
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the CLI with the test secrets in its environment; checks that no
/// secret appears in anything it printed.
fn toolctx(args: &[&str], secrets: &[(&str, &str)], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolctx"));
    cmd.args(args)
        .current_dir(root())
        .env("TOOLCTX_INSTANCE_ID", INSTANCE)
        .env_remove("TOOLCTX_SECRET")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in secrets {
        cmd.env(name, value);
    }
    let mut child = cmd.spawn().expect("toolctx runs");
    {
        use std::io::Write as _;
        let mut input = child.stdin.take().expect("stdin piped");
        if let Some(bytes) = stdin {
            input.write_all(bytes).expect("stdin written");
        }
    }
    let out = child.wait_with_output().expect("toolctx ends");
    let printed = [
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    ]
    .concat();
    for (_, value) in secrets {
        assert!(
            !printed.contains(value),
            "toolctx {args:?} printed a secret:\n{printed}"
        );
    }
    out
}

/// `toolctx <args> --secret-env TOOLCTX_TEST_SECRET`, with `secret` in
/// that variable.
fn with_secret(args: &[&str], secret: &str) -> Output {
    let mut args = args.to_vec();
    args.extend(["--secret-env", SECRET_ENV]);
    toolctx(&args, &[(SECRET_ENV, secret)], None)
}

/// The same with `--json`.
fn secret_json(args: &[&str], secret: &str) -> Output {
    let mut args = args.to_vec();
    args.push("--json");
    with_secret(&args, secret)
}

/// A conformance run's stdout, once it is checked to have exited 0 with no
/// case failed.
fn all_passed(out: &Output) -> String {
    let text = stdout(out);
    assert_eq!(
        (out.status.code(), summary_line(&text).1),
        (Some(0), 0),
        "{text}"
    );
    text
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn summary_line(text: &str) -> (usize, usize) {
    let last = text
        .lines()
        .rev()
        .find(|l| l.ends_with(" failed"))
        .unwrap_or_else(|| panic!("no `N passed, N failed` line in:\n{text}"));
    let nums: Vec<usize> = last
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    (nums[0], nums[1])
}

#[test]
fn call_prints_progress_then_the_result() {
    let s = secret("call");
    let server = Server::start(true, &[&s]);
    let out = toolctx(
        &[
            "call",
            &server.url,
            "export_report",
            r#"{"pages":3}"#,
            "--secret-env",
            SECRET_ENV,
            "--end-user-id",
            "user-42",
        ],
        &[(SECRET_ENV, &s)],
        None,
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let progress: Vec<&str> = text.lines().filter(|l| l.starts_with("progress")).collect();
    assert_eq!(progress.len(), 3, "{text}");
    assert!(progress[0].contains("1/3"), "{text}");
    let result_at = text.find("exported 3 pages").expect("the result");
    assert!(
        text.find("page 3 of 3").unwrap() < result_at,
        "progress before the result:\n{text}"
    );

    // The same with --json: the progress notifications and the result, and
    // the tool saw the verified context.
    let out = secret_json(
        &["call", &server.url, "whoami", "--end-user-id", "user-42"],
        &s,
    );
    assert_eq!(out.status.code(), Some(0));
    let doc: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["status"], 200);
    let saw = &doc["result"]["structuredContent"];
    assert_eq!(saw["verified_here"], true);
    assert_eq!(saw["context"]["end_user_id"], "user-42");
    assert_eq!(saw["context"]["task_id"], doc["context"]["task_id"]);

    let out = secret_json(
        &["call", &server.url, "export_report", r#"{"pages":2}"#],
        &s,
    );
    let doc: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["content_type"], "text/event-stream");
    assert_eq!(doc["progress"].as_array().unwrap().len(), 2, "{doc}");
    assert_eq!(doc["progress"][1]["progress"], 2);
    assert_eq!(
        doc["progress"][0]["progressToken"],
        doc["context"]["progress_token"]
    );
}

#[test]
fn call_and_conformance_with_json_answers() {
    let s = secret("json");
    let server = Server::start_with(true, &[&s], &["--json-response"]);
    let out = secret_json(
        &["call", &server.url, "export_report", r#"{"pages":1}"#],
        &s,
    );
    assert_eq!(out.status.code(), Some(0));
    let doc: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["content_type"], "application/json", "{doc}");
    assert_eq!(
        doc["result"]["content"][0]["text"], "exported 1 pages",
        "{doc}"
    );
    all_passed(&with_secret(&["conformance", &server.url], &s));

    // Valid calls to another tool: the probe's count then proves nothing.
    let text = all_passed(&with_secret(
        &[
            "conformance",
            &server.url,
            "--tool",
            "get_order",
            "--args",
            r#"{"orderId":"A-1"}"#,
        ],
        &s,
    ));
    assert!(text.contains("runs not counted"), "{text}");
}

#[test]
fn call_with_the_wrong_secret_is_refused() {
    let s = secret("right");
    let wrong = secret("wrong");
    let server = Server::start(true, &[&s]);
    let out = toolctx(
        &[
            "call",
            &server.url,
            "get_order",
            r#"{"orderId":"A-1"}"#,
            "--secret-env",
            OTHER_SECRET_ENV,
        ],
        &[(SECRET_ENV, &s), (OTHER_SECRET_ENV, &wrong)],
        None,
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("refused") && text.contains("401 -32001 signature_invalid"),
        "{text}"
    );
}

#[test]
fn conformance_passes_against_the_protected_server() {
    let (s, next) = (secret("current"), secret("next"));
    let server = Server::start(true, &[&s, &next]);
    let out = toolctx(
        &[
            "conformance",
            &server.url,
            "--secret-env",
            SECRET_ENV,
            "--secret-env",
            OTHER_SECRET_ENV,
        ],
        &[(SECRET_ENV, &s), (OTHER_SECRET_ENV, &next)],
        None,
    );
    let text = stdout(&out);
    let (passed, failed) = summary_line(&text);
    assert_eq!((out.status.code(), failed), (Some(0), 0), "{text}");
    assert!(passed >= 30, "{text}");
    assert!(
        text.contains("signed with the second secret"),
        "rotation case ran:\n{text}"
    );
    // Every refused case was checked with the probe: its `ran` column is 0.
    let refused: Vec<&str> = text.lines().filter(|l| l.contains(" -32")).collect();
    assert!(refused.len() >= 25, "{text}");
    assert!(
        refused.iter().all(|l| l.trim_end().ends_with(" 0")),
        "{text}"
    );
}

#[test]
fn conformance_fails_readably_against_the_unprotected_server() {
    let s = secret("unprotected");
    let server = Server::start(false, &[]);
    let out = with_secret(&["conformance", &server.url], &s);
    let text = stdout(&out);
    let (passed, failed) = summary_line(&text);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(failed >= 20 && passed >= 3, "{text}");
    let header = text.lines().nth(1).unwrap();
    for col in ["class", "case", "expected", "got", "ran"] {
        assert!(header.contains(col), "table header: {header}");
    }
    let expired = text
        .lines()
        .find(|l| l.contains("expired"))
        .expect("an expired-token row");
    assert!(expired.starts_with("FAIL"), "{expired}");
    assert!(
        expired.contains("401 -32001 token_expired") && expired.contains("200 result"),
        "{expired}"
    );
    assert!(
        expired.contains("1 (must be 0)"),
        "the refused call ran: {expired}"
    );

    let out = secret_json(&["conformance", &server.url], &s);
    let doc: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["failed"].as_u64(), Some(failed as u64));
    assert_eq!(doc["cases"][0]["ok"], true);
}

#[test]
fn mint_output_verifies_with_the_core() {
    let s = secret("mint");
    let out = secret_json(
        &[
            "mint",
            "--tool",
            "get_order",
            "--end-user-id",
            "user-7",
            "--metadata",
            r#"{"k":[1,2]}"#,
        ],
        &s,
    );
    assert_eq!(out.status.code(), Some(0));
    let doc: J = serde_json::from_slice(&out.stdout).unwrap();
    let token = doc["token"].as_str().unwrap();
    assert_eq!(
        doc["claims"]["exp"].as_u64().unwrap(),
        doc["claims"]["iat"].as_u64().unwrap() + 300
    );
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "get_order", "arguments": {}, "_meta": doc["_meta"]},
    })
    .to_string();
    let verifier = Verifier::new(Config::new(INSTANCE, vec![s.clone().into_bytes()])).unwrap();
    let now = doc["claims"]["iat"].as_u64().unwrap();
    let headers = [("x-agentarea-context", token)];
    match verifier.check("POST", &headers, body.as_bytes(), now) {
        Verdict::Accept(ctx) => {
            assert_eq!(ctx.end_user_id.as_deref(), Some("user-7"));
            assert_eq!(ctx.tool.as_deref(), Some("get_order"));
        }
        other => panic!("{other:?}"),
    }

    // `mint --request` feeds `verify`; a file secret works the same way.
    let file = std::env::temp_dir().join(format!("toolctx-cli-test-{}.secret", std::process::id()));
    std::fs::write(&file, format!("{s}\n")).unwrap();
    let minted = toolctx(
        &[
            "mint",
            "--secret-file",
            file.to_str().unwrap(),
            "--tool",
            "t",
            "--request",
        ],
        &[(SECRET_ENV, &s)],
        None,
    );
    let verified = toolctx(
        &["verify", "--secret-env", SECRET_ENV, "--json"],
        &[(SECRET_ENV, &s)],
        Some(&minted.stdout),
    );
    std::fs::remove_file(&file).ok();
    let v: J = serde_json::from_slice(&verified.stdout).unwrap();
    assert_eq!(
        (verified.status.code(), v["outcome"].as_str()),
        (Some(0), Some("accept")),
        "{v}"
    );

    // Raw HTTP in, the refusal body out.
    let raw = "POST /mcp HTTP/1.1\r\ncontent-type: application/json\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}";
    let out = toolctx(
        &["verify", "--secret-env", SECRET_ENV],
        &[(SECRET_ENV, &s)],
        Some(raw.as_bytes()),
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"context token missing","data":{"reason":"token_missing"}}}"#), "{text}");
}

#[test]
fn inspect_shows_times_and_failing_checks() {
    let s = secret("inspect");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mint = |iat: u64| -> String {
        let out = secret_json(&["mint", "--iat", &iat.to_string()], &s);
        let doc: J = serde_json::from_slice(&out.stdout).unwrap();
        doc["token"].as_str().unwrap().to_string()
    };
    let fresh = mint(now);
    let out = toolctx(&["inspect", &fresh], &[(SECRET_ENV, &s)], None);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("expires in 4m") || text.contains("(in 5m)") || text.contains("(in 4m"),
        "{text}"
    );
    assert!(text.contains("signature  not checked"), "{text}");

    let stale = mint(now - 1000);
    let out = toolctx(
        &["inspect", &stale, "--instance-id", "someone-else"],
        &[(SECRET_ENV, &s)],
        None,
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL audience_invalid") && text.contains("FAIL token_expired"),
        "{text}"
    );
    assert!(text.contains("ago)"), "{text}");

    let out = toolctx(
        &["inspect", &fresh, "--secret-env", SECRET_ENV, "--json"],
        &[(SECRET_ENV, &s)],
        None,
    );
    let doc: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["verdict"]["outcome"], "accept", "{doc}");
    let wrong = secret("other");
    let out = toolctx(
        &[
            "inspect",
            &fresh,
            "--secret-env",
            OTHER_SECRET_ENV,
            "--json",
        ],
        &[(OTHER_SECRET_ENV, &wrong)],
        None,
    );
    let doc: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["verdict"]["reason"], "signature_invalid", "{doc}");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn vectors_run_through_the_core() {
    let files = toolctx_vectors::verdict_files(&root().join("tests/vectors"));
    let mut args = vec!["vectors"];
    args.extend(files.iter().map(String::as_str));
    let out = toolctx(&args, &[], None);
    let text = stdout(&out);
    let (passed, failed) = summary_line(&text);
    assert_eq!((out.status.code(), failed), (Some(0), 0), "{text}");
    assert!(passed >= 150, "{text}");
    // One case through `verify`, with the file's config and the case's own now.
    let file: J =
        serde_json::from_slice(&std::fs::read(root().join("tests/vectors/valid.json")).unwrap())
            .unwrap();
    let dir = std::env::temp_dir().join(format!("toolctx-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (config, case) = (dir.join("config.json"), dir.join("case.json"));
    std::fs::write(&config, file["config"].to_string()).unwrap();
    let mut first = file["cases"][0].clone();
    if first.get("now").is_none() {
        first["now"] = file["now"].clone();
    }
    std::fs::write(&case, first.to_string()).unwrap();
    let out = toolctx(
        &[
            "verify",
            "--config",
            config.to_str().unwrap(),
            case.to_str().unwrap(),
            "--json",
        ],
        &[],
        None,
    );
    std::fs::remove_dir_all(&dir).ok();
    let v: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["outcome"], first["expect"]["outcome"], "{v}");

    let out = toolctx(&["vectors", "no-such-file.json"], &[], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).ends_with("0 passed, 1 failed\n"));
}

#[test]
fn vectors_name_the_forwarded_header_that_differs() {
    let mut file: J =
        serde_json::from_slice(&std::fs::read(root().join("tests/vectors/forward.json")).unwrap())
            .unwrap();
    let cases = file["cases"].as_array_mut().unwrap();
    let i = cases
        .iter()
        .position(|c| c["name"] == "sessionId: a space")
        .unwrap();
    let mut case = cases[i].clone();
    assert_eq!(case["expect"]["forward"]["x-session-id"], "a%20b");
    case["expect"]["forward"]["x-session-id"] = "a b".into();
    file["cases"] = J::Array(vec![cases[i].clone(), case]);
    let path =
        std::env::temp_dir().join(format!("toolctx-cli-forward-{}.json", std::process::id()));
    std::fs::write(&path, file.to_string()).unwrap();
    let out = toolctx(&["vectors", path.to_str().unwrap()], &[], None);
    std::fs::remove_file(&path).ok();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(r#"sessionId: a space: forward x-session-id: expected "a b", got "a%20b""#),
        "{text}"
    );
    assert!(text.ends_with("1 passed, 1 failed\n"), "{text}");
}

#[test]
fn errors_are_clear_and_never_echo_a_secret() {
    let short = "short-secret-value";
    let out = toolctx(
        &["mint", "--secret-env", SECRET_ENV],
        &[(SECRET_ENV, short)],
        None,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("18 bytes") && err.contains("32 to 512"),
        "{err}"
    );

    let out = toolctx(&["mint"], &[], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--secret-env NAME"));

    // No plain-argument secret exists to misuse.
    let out = toolctx(&["mint", "--secret", "x"], &[], None);
    assert_eq!(out.status.code(), Some(2));

    // Nothing listens on this port: exit 3.
    let s = secret("unreachable");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = toolctx(
        &["call", &url, "t", "--secret-env", SECRET_ENV],
        &[(SECRET_ENV, &s)],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = toolctx(&["--help"], &[], None);
    let help = stdout(&out);
    assert!(
        help.contains("Exit codes") && help.contains("toolctx conformance"),
        "{help}"
    );
}
