//! `toolctx verify`: one request through the core, the verdict and the
//! refusal body a front end would send.

use std::io::Read as _;
use std::path::PathBuf;

use clap::Args;
use serde_json::{json, Value as J};
use toolctx_core::{Verdict, Verifier};

use crate::common::{parse_core_json, usage, Error, Outcome, VerifierArgs, EXIT_NEGATIVE, EXIT_OK};
use crate::output::{indent_rest, pretty, Style};
use toolctx_vectors as runner;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The request: raw HTTP (`POST /mcp HTTP/1.1`, headers, blank line,
    /// body) or JSON (`{"method", "headers": [[name, value], ...], "body"}`,
    /// a vector case, or `toolctx mint --request` output); `-` or nothing
    /// reads standard input. A vector case's own `now` is used unless
    /// --now is given
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub verifier: VerifierArgs,
    /// Leave `error.data.reason` out of the refusal body
    #[arg(long)]
    pub no_reason: bool,
    /// Print the verdict as JSON
    #[arg(long)]
    pub json: bool,
}

/// Reads the input file or standard input.
fn read_input(file: &Option<PathBuf>) -> Result<Vec<u8>, Error> {
    match file {
        Some(p) if p.as_os_str() != "-" => {
            std::fs::read(p).map_err(|e| usage(format!("cannot read {}: {e}", p.display())))
        }
        _ => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| usage(format!("cannot read standard input: {e}")))?;
            Ok(buf)
        }
    }
}

/// A request from raw HTTP/1.x text: request line, headers, blank line,
/// body (the exact remaining bytes; CRLF or LF line ends).
fn parse_raw(input: &[u8]) -> Result<runner::Request, Error> {
    let mut pos = 0;
    let mut lines = Vec::new();
    loop {
        let rest = input.get(pos..).unwrap_or_default();
        let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
            // No blank line: headers only, empty body.
            if !rest.is_empty() {
                lines.push(String::from_utf8_lossy(rest).into_owned());
            }
            pos = input.len();
            break;
        };
        let line = rest.get(..nl).unwrap_or_default();
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        pos += nl + 1;
        if line.is_empty() {
            break;
        }
        lines.push(String::from_utf8_lossy(line).into_owned());
    }
    let mut it = lines.into_iter();
    let request_line = it.next().ok_or_else(|| usage("empty request"))?;
    let method = request_line
        .split_whitespace()
        .next()
        .ok_or_else(|| usage("no request line"))?
        .to_string();
    let mut headers = Vec::new();
    for l in it {
        let (n, v) = l
            .split_once(':')
            .ok_or_else(|| usage(format!("not a header line: `{l}`")))?;
        // HTTP strips optional whitespace around a field value.
        headers.push((n.to_string(), v.trim_matches([' ', '\t']).to_string()));
    }
    Ok(runner::Request {
        method,
        headers,
        body: input.get(pos..).unwrap_or_default().to_vec(),
    })
}

/// The JSON form: a vector case, `mint --request` output, or a bare request
/// object. A `body` that is an object or array is serialized.
fn parse_json(doc: J) -> Result<runner::Request, Error> {
    let mut case = if doc.get("request").is_some() {
        doc
    } else {
        json!({ "request": doc })
    };
    if let Some(b) = case.pointer_mut("/request/body") {
        if b.is_object() || b.is_array() {
            *b = J::String(b.to_string());
        }
    }
    runner::request(&case).map_err(|e| usage(format!("request: {e}")))
}

/// The `now` of a vector case given as input, used unless `--now` is.
fn case_now(input: &[u8]) -> Option<u64> {
    let doc: J = serde_json::from_slice(input).ok()?;
    doc.get("request")?;
    doc.get("now")?.as_u64()
}

pub fn read_request(input: &[u8]) -> Result<runner::Request, Error> {
    let start = input.iter().position(|b| !b.is_ascii_whitespace());
    if start.and_then(|i| input.get(i)) == Some(&b'{') {
        let doc: J =
            serde_json::from_slice(input).map_err(|e| usage(format!("request JSON: {e}")))?;
        parse_json(doc)
    } else {
        parse_raw(input)
    }
}

/// The verdict as JSON: `{"outcome": ...}` with the context or the refusal.
pub fn verdict_json(v: &Verdict, include_reason: bool) -> J {
    match v {
        Verdict::Pass => json!({"outcome": "pass"}),
        Verdict::Accept(ctx) => {
            json!({"outcome": "accept", "context": parse_core_json(&ctx.to_json())})
        }
        Verdict::Reject(r) => json!({
            "outcome": "reject",
            "status": r.status(),
            "code": r.code(),
            "reason": r.reason().as_str(),
            "message": r.message(),
            "id": parse_core_json(r.id_json()),
            "body": r.body(include_reason),
        }),
    }
}

/// Human lines for a verdict.
pub fn print_verdict(v: &Verdict, include_reason: bool, style: Style) {
    match v {
        Verdict::Pass => println!(
            "verdict    {}  (not a tools/call: forwarded untouched)",
            style.good("pass")
        ),
        Verdict::Accept(ctx) => {
            println!("verdict    {}", style.good("accept"));
            println!(
                "context    {}",
                indent_rest(&pretty(&parse_core_json(&ctx.to_json())), 11)
            );
        }
        Verdict::Reject(r) => {
            println!(
                "verdict    {}  {} {} {}: {}",
                style.bad("reject"),
                r.status(),
                r.code(),
                r.reason().as_str(),
                r.message()
            );
            println!("body       {}", r.body(include_reason));
        }
    }
}

pub fn run(args: &VerifyArgs) -> Outcome {
    let input = read_input(&args.file)?;
    let request = read_request(&input)?;
    let secrets = args.verifier.secrets()?;
    let config = args.verifier.config(secrets, None)?;
    if config.secrets.is_empty() {
        return Err(usage(
            "no secret: pass --secret-env NAME or --secret-file PATH, or a --config with secrets",
        ));
    }
    let verifier: Verifier = args.verifier.verifier(config)?;
    let now = match (args.verifier.now, case_now(&input)) {
        (None, Some(t)) => t,
        _ => args.verifier.now(),
    };
    let verdict = verifier.check(&request.method, &request.headers, &request.body, now);
    if args.json {
        println!("{}", verdict_json(&verdict, !args.no_reason));
    } else {
        print_verdict(&verdict, !args.no_reason, Style::stdout());
    }
    Ok(match verdict {
        Verdict::Reject(_) => EXIT_NEGATIVE,
        _ => EXIT_OK,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn raw_http_keeps_repeats_and_exact_body() {
        let r =
            read_request(b"POST /mcp HTTP/1.1\r\nX-A: 1\r\nx-a:  2 \r\n\r\n{\"a\":\r\n1}").unwrap();
        assert_eq!(r.method, "POST");
        assert_eq!(
            r.headers,
            vec![("X-A".into(), "1".into()), ("x-a".into(), "2".into())]
        );
        assert_eq!(r.body, b"{\"a\":\r\n1}");
    }

    #[test]
    fn json_forms() {
        let bare = read_request(br#"{"headers":[["a","b"]],"body":{"x":1}}"#).unwrap();
        assert_eq!(bare.method, "POST");
        assert_eq!(bare.body, br#"{"x":1}"#);
        let case = read_request(br#"{"name":"n","request":{"method":"GET","body":"x"}}"#).unwrap();
        assert_eq!(
            (case.method.as_str(), case.body.as_slice()),
            ("GET", &b"x"[..])
        );
    }
}
