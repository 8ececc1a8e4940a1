//! `toolctx inspect`: what a token says, when it lives, and which checks it
//! would fail. Every check is the core's: without a secret the token's own
//! header and payload are re-signed with a throwaway key, so the core runs
//! every step after the signature on exactly those bytes.

use std::io::Read as _;

use clap::Args;
use serde_json::{json, Value as J};
use toolctx_core::{decode_unverified, json as core_json, Config, Reason, Verdict, TOKEN_HEADER};

use crate::common::{random_hex, usage, Error, Outcome, VerifierArgs, EXIT_NEGATIVE, EXIT_OK};
use crate::jws;
use crate::output::{indent_rest, pretty, relative, utc, Style};
use crate::verify::{print_verdict, verdict_json};

#[derive(Args, Debug)]
pub struct InspectArgs {
    /// The token (`-` reads it from standard input)
    #[arg(value_name = "TOKEN")]
    pub token: String,
    /// With --secret-env/--secret-file: the full verdict. The instance id
    /// defaults to the token's own `aud`
    #[command(flatten)]
    pub verifier: VerifierArgs,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

/// Registered claims that are not context: never put in `_meta`.
const REGISTERED: [&str; 7] = ["iss", "aud", "iat", "exp", "nbf", "jti", "tool"];

/// A `tools/call` that the token's claims fit: the `tool` claim as the name
/// and every other claim as an `agentarea/*` key of `_meta`, so the core
/// judges the token and not a made-up request.
fn fitting_request(payload: &[u8]) -> String {
    let doc = core_json::parse(payload).ok();
    let tool = doc
        .as_ref()
        .and_then(|d| d.get("tool"))
        .and_then(core_json::Value::as_str)
        .unwrap_or("tool");
    let mut meta = String::from("{");
    if let Some(core_json::Value::Object(members)) = &doc {
        for (k, v) in members {
            if REGISTERED.contains(&&**k) {
                continue;
            }
            if meta.len() > 1 {
                meta.push(',');
            }
            core_json::write_str(&format!("agentarea/{k}"), &mut meta);
            meta.push(':');
            v.write(&mut meta);
        }
    }
    meta.push('}');
    let mut name = String::new();
    core_json::write_str(tool, &mut name);
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":{name},"arguments":{{}},"_meta":{meta}}}}}"#
    )
}

/// `aud` as one instance id: the string, or the first string of an array.
fn audience(claims: &J) -> Option<String> {
    match claims.get("aud") {
        Some(J::String(s)) => Some(s.clone()),
        Some(J::Array(items)) => items.iter().find_map(|i| i.as_str().map(str::to_string)),
        _ => None,
    }
}

struct Failure {
    reason: Reason,
    note: String,
}

fn time_note(reason: Reason, claims: &J, now: u64) -> String {
    let at = |k: &str| claims.get(k).and_then(J::as_u64);
    match (reason, at("iat"), at("exp"), at("nbf")) {
        (Reason::TokenExpired, _, Some(exp), _) => format!("expired {}", relative(exp, now)),
        (Reason::TokenIssuedInFuture, Some(iat), _, _) => {
            format!("issued {}", relative(iat, now))
        }
        (Reason::TokenTooOld, Some(iat), _, _) => format!("issued {}", relative(iat, now)),
        (Reason::TokenNotYetValid, _, _, Some(nbf)) => format!("valid from {}", relative(nbf, now)),
        _ => String::new(),
    }
}

fn is_time(reason: Reason) -> bool {
    matches!(
        reason,
        Reason::TokenExpired
            | Reason::TokenIssuedInFuture
            | Reason::TokenTooOld
            | Reason::TokenNotYetValid
    )
}

/// The checks that fail without the secret, in the core's order. After a
/// failure on the times or the audience the check runs again with those
/// set aside, to show what else would fail.
fn checks_without_secret(
    token: &str,
    payload: &[u8],
    claims: &J,
    base: &Config,
    now: u64,
) -> Result<Vec<Failure>, Error> {
    let throwaway = random_hex(32).into_bytes();
    let token = jws::resign(token, &throwaway).unwrap_or_else(|| token.to_string());
    let body = fitting_request(payload);
    let headers = [
        ("content-type", "application/json"),
        (TOKEN_HEADER, token.as_str()),
    ];
    let mut config = base.clone();
    config.secrets = vec![throwaway];
    let mut at = now;
    let mut failures: Vec<Failure> = Vec::new();
    for _ in 0..4 {
        let verifier = toolctx_core::Verifier::new(config.clone())
            .map_err(|e| usage(format!("configuration refused: {e}")))?;
        let Verdict::Reject(r) = verifier.check("POST", &headers, body.as_bytes(), at) else {
            break;
        };
        let reason = r.reason();
        let note = if is_time(reason) {
            time_note(reason, claims, now)
        } else if reason == Reason::AudienceInvalid {
            format!("aud is not {:?}", config.instance_id)
        } else {
            String::new()
        };
        failures.push(Failure { reason, note });
        if is_time(reason) && at == now {
            // Look past the times: judge as at issue time (or nbf).
            let iat = claims.get("iat").and_then(J::as_u64);
            let nbf = claims.get("nbf").and_then(J::as_u64).unwrap_or(0);
            match iat {
                Some(iat) => at = iat.max(nbf),
                None => break,
            }
        } else if reason == Reason::AudienceInvalid {
            match audience(claims) {
                Some(aud) if aud != config.instance_id => config.instance_id = aud,
                _ => break,
            }
        } else {
            break;
        }
    }
    Ok(failures)
}

fn read_token(arg: &str) -> Result<String, Error> {
    if arg == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| usage(format!("cannot read standard input: {e}")))?;
        Ok(s.trim().to_string())
    } else {
        Ok(arg.trim().to_string())
    }
}

fn segment_json(bytes: &[u8]) -> J {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| J::String(String::from_utf8_lossy(bytes).into()))
}

pub fn run(args: &InspectArgs) -> Outcome {
    let style = Style::stdout();
    let token = read_token(&args.token)?;
    let now = args.verifier.now();
    let secrets = args.verifier.secrets.load_if_given()?;
    let with_secret = !secrets.is_empty();
    let decoded = decode_unverified(&token);
    let (header, claims, payload) = match &decoded {
        Some((h, p)) => (segment_json(h), segment_json(p), p.clone()),
        None => (J::Null, J::Null, Vec::new()),
    };
    let aud = audience(&claims);
    let instance_from_token = !args.verifier.instance_given();
    let mut config = args
        .verifier
        .config(secrets, aud.as_deref().or(Some("(no aud)")))?;
    // The token is under inspection, not the request: no static credential.
    config.credential = None;

    let mut times = serde_json::Map::new();
    for (k, label) in [("iat", "issued"), ("nbf", "valid from"), ("exp", "expires")] {
        if let Some(t) = claims.get(k).and_then(J::as_u64) {
            times.insert(
                k.into(),
                json!({"at": t, "utc": utc(t), "relative": relative(t, now), "label": label}),
            );
        }
    }

    let failures = if decoded.is_some() {
        checks_without_secret(&token, &payload, &claims, &config, now)?
    } else {
        vec![Failure {
            reason: Reason::TokenMalformed,
            note: "not three base64url segments".into(),
        }]
    };
    let verdict = if with_secret {
        let verifier = args.verifier.verifier(config.clone())?;
        let body = fitting_request(&payload);
        let headers = [
            ("content-type", "application/json"),
            (TOKEN_HEADER, token.as_str()),
        ];
        Some(verifier.check("POST", &headers, body.as_bytes(), now))
    } else {
        None
    };
    let ok = match &verdict {
        Some(v) => !matches!(v, Verdict::Reject(_)),
        None => failures.is_empty(),
    };

    if args.json {
        let out = json!({
            "header": header,
            "claims": claims,
            "times": times,
            "now": now,
            "instance_id": config.instance_id,
            "instance_id_from_token": instance_from_token,
            "checks_without_secret": failures.iter().map(|f| json!({
                "reason": f.reason.as_str(),
                "status": f.reason.status(),
                "code": f.reason.code(),
                "message": f.reason.message(),
                "note": f.note,
            })).collect::<Vec<_>>(),
            "signature_checked": with_secret,
            "verdict": verdict.as_ref().map(|v| verdict_json(v, true)),
        });
        println!("{out}");
        return Ok(if ok { EXIT_OK } else { EXIT_NEGATIVE });
    }

    if decoded.is_some() {
        println!("header     {}", header);
        println!("claims     {}", indent_rest(&pretty(&claims), 11));
    } else {
        println!(
            "token      {}",
            style.bad("not a compact JWS (three base64url segments)")
        );
    }
    for (k, label) in [("iat", "issued"), ("nbf", "valid from"), ("exp", "expires")] {
        if let Some(t) = claims.get(k).and_then(J::as_u64) {
            println!(
                "{:<11}{} ({})",
                label,
                utc(t),
                style.bold(&relative(t, now))
            );
        }
    }
    let against = if instance_from_token {
        "the token's own aud (pass --instance-id to check it)".to_string()
    } else {
        format!("instance {:?}", config.instance_id)
    };
    println!("checks     without the secret, audience against {against}:");
    if failures.is_empty() {
        println!(
            "           {} form, alg, issuer, audience, times, context, tool, protocol",
            style.good("ok")
        );
    }
    for f in &failures {
        let note = if f.note.is_empty() {
            String::new()
        } else {
            format!(" ({})", f.note)
        };
        println!(
            "           {} {}: {}{note}",
            style.bad("FAIL"),
            f.reason.as_str(),
            f.reason.message()
        );
    }
    match &verdict {
        None => println!(
            "signature  {}",
            style.dim(
                "not checked: pass --secret-env NAME or --secret-file PATH for the full verdict"
            )
        ),
        Some(v) => {
            if let Verdict::Accept(ctx) = v {
                println!(
                    "signature  {} (secret #{})",
                    style.good("valid"),
                    ctx.secret_index
                );
            }
            print_verdict(v, true, style);
        }
    }
    Ok(if ok { EXIT_OK } else { EXIT_NEGATIVE })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn fitting_request_binds_every_non_registered_claim() {
        let body = fitting_request(
            br#"{"iss":"agentarea","aud":"i","iat":1,"exp":2,"tool":"t","task_id":"a","metadata":{"k":[1]}}"#,
        );
        let doc: J = serde_json::from_str(&body).unwrap();
        assert_eq!(doc["params"]["name"], "t");
        assert_eq!(
            doc["params"]["_meta"],
            json!({"agentarea/task_id": "a", "agentarea/metadata": {"k": [1]}})
        );
    }
}
