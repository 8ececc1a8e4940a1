//! Conformance vectors over HTTP through `ToolctxLayer` (format:
//! docs/VECTORS.md): `tests/rust-server/vectors tests/vectors/*.json ...`.
//!
//! One hyper server on 127.0.0.1 serves every case, each on a connection of
//! its own, with the layer built from the case's configuration and its
//! `now` as the clock, in front of an upstream that records what reached it.
//! A case passes when:
//!   pass/accept  the request reached the upstream with its body byte for
//!                byte, and the verified context in its extensions (none
//!                for pass) matches the expectation;
//!   reject       the layer answered the core's refusal (status,
//!                `application/json`, the body the core renders) and the
//!                upstream saw nothing.
//! Cases that HTTP/1.1 cannot carry as written (a method or header name that
//! is not a token, a header the HTTP layer owns, whitespace around a value)
//! are skipped with a line saying why; so are rows of the per-feature
//! tables (not requests) and the AIVAX profile, which this layer does not
//! serve. Ends with `N passed, N failed` (`, N skipped`).

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, Request};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use serde_json::Value as J;
use toolctx_core::{Reason, Refusal, Verdict};
use toolctx_tower::{Toolctx, ToolctxLayer};
use tower_layer::Layer;

// The layer tests' recording inner service: what reached the upstream.
#[path = "../tests/support/mod.rs"]
mod support;

use support::{Inner as Upstream, INNER_HEADER};

type Current = Arc<Mutex<Option<Toolctx<Upstream>>>>;

/// Why HTTP/1.1 cannot carry the request as written, if it cannot.
fn inexpressible(r: &toolctx_vectors::Request) -> Option<String> {
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    if !token(&r.method) {
        return Some(format!("method {:?} is not an HTTP token", r.method));
    }
    const FRAMING: [&str; 8] = [
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "te",
        "upgrade",
        "keep-alive",
        "expect",
    ];
    for (n, v) in &r.headers {
        if !token(n) {
            return Some(format!("header name {n:?} is not an HTTP token"));
        }
        if FRAMING.contains(&n.to_ascii_lowercase().as_str()) {
            return Some(format!("header {n:?} is owned by the HTTP layer"));
        }
        if v.trim_matches([' ', '\t']) != v {
            return Some(format!(
                "header {n:?} has whitespace around its value, which HTTP trims"
            ));
        }
        if v.contains(['\r', '\n', '\0']) {
            return Some(format!("header {n:?} holds a line break or NUL"));
        }
    }
    None
}

/// Sends one case and rebuilds the verdict from what happened on the wire.
async fn send(
    addr: std::net::SocketAddr,
    seen: &Upstream,
    r: &toolctx_vectors::Request,
    verifier: &toolctx_core::Verifier,
) -> Result<Verdict, String> {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let mut req = Request::new(Full::new(Bytes::from(r.body.clone())));
    *req.method_mut() = Method::from_bytes(r.method.as_bytes()).map_err(|e| e.to_string())?;
    *req.uri_mut() = "/mcp"
        .parse()
        .map_err(|e: http::uri::InvalidUri| e.to_string())?;
    for (n, v) in &r.headers {
        req.headers_mut().append(
            HeaderName::from_bytes(n.as_bytes()).map_err(|e| e.to_string())?,
            HeaderValue::from_bytes(v.as_bytes()).map_err(|e| e.to_string())?,
        );
    }
    let res = sender
        .send_request(req)
        .await
        .map_err(|e| format!("send: {e}"))?;
    let (parts, body) = res.into_parts();
    let body = body.collect().await.map_err(|e| e.to_string())?.to_bytes();
    let upstream = seen.0.lock().ok().and_then(|mut s| s.pop());
    if parts.headers.contains_key(INNER_HEADER) {
        let got = upstream.ok_or("the upstream answered but recorded nothing")?;
        if got.body != r.body {
            return Err("the body reached the upstream altered".into());
        }
        let v = got
            .verification
            .ok_or("no Verification in the request's extensions")?;
        let verdict = match v.shared() {
            Some(ctx) => Verdict::Accept(Box::new((*ctx).clone())),
            None => Verdict::Pass,
        };
        forwarded(verifier, &verdict, &r.headers, &got.headers)?;
        return Ok(verdict);
    }
    if upstream.is_some() {
        return Err("refused, yet the upstream saw the request".into());
    }
    // A refusal: it must be exactly the core's rendering of its reason and id.
    let doc: J =
        serde_json::from_slice(&body).map_err(|e| format!("refusal body not JSON: {e}"))?;
    let reason = doc
        .pointer("/error/data/reason")
        .and_then(J::as_str)
        .and_then(Reason::from_code)
        .ok_or_else(|| format!("no known reason in {}", String::from_utf8_lossy(&body)))?;
    // The id as written (serde_json would reformat `1e400`): the text
    // between `"id":` and `,"error"`; the whole body is compared below.
    let text = String::from_utf8_lossy(&body);
    let id = text
        .split_once(",\"id\":")
        .and_then(|(_, rest)| rest.split_once(",\"error\":"))
        .map(|(id, _)| id.to_string())
        .filter(|id| id != "null");
    let refusal = Refusal::new(reason, id);
    if body.as_ref() != refusal.body(true).as_bytes() {
        return Err(format!("refusal body {text} is not the core's"));
    }
    if parts.status.as_u16() != refusal.status() {
        return Err(format!("status {} for {}", parts.status, reason.as_str()));
    }
    if parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .map(HeaderValue::as_bytes)
        != Some(b"application/json")
    {
        return Err("refusal without content-type application/json".into());
    }
    Ok(Verdict::Reject(refusal))
}

/// The upstream saw the headers the core forwards with `verdict`: every
/// removed name gone (unless the core set it), every set pair there, every
/// other header as sent.
fn forwarded(
    verifier: &toolctx_core::Verifier,
    verdict: &Verdict,
    sent: &[(String, String)],
    seen: &http::HeaderMap,
) -> Result<(), String> {
    let up = verifier
        .upstream(verdict)
        .ok_or("no upstream for a request handed on")?;
    for name in up.remove {
        let set: Vec<&str> = up
            .set
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect();
        let got: Vec<&[u8]> = seen
            .get_all(name.as_str())
            .iter()
            .map(HeaderValue::as_bytes)
            .collect();
        if got != set.iter().map(|v| v.as_bytes()).collect::<Vec<_>>() {
            return Err(format!(
                "header {name}: upstream saw {got:?}, the core forwards {set:?}"
            ));
        }
    }
    for (name, value) in up.set {
        if !seen
            .get_all(name.as_str())
            .iter()
            .any(|v| v.as_bytes() == value.as_bytes())
        {
            return Err(format!("header {name}: {value:?} not forwarded"));
        }
    }
    for (name, value) in sent {
        let lower = name.to_ascii_lowercase();
        if up.remove.contains(&lower) {
            continue;
        }
        if !seen
            .get_all(lower.as_str())
            .iter()
            .any(|v| v.as_bytes() == value.as_bytes())
        {
            return Err(format!("header {name} did not reach the upstream as sent"));
        }
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: vectors FILE...");
        std::process::exit(2);
    }
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("listen on 127.0.0.1: {e}");
            std::process::exit(2);
        }
    };
    let Ok(addr) = listener.local_addr() else {
        std::process::exit(2)
    };
    let current: Current = Arc::default();
    let serving = current.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let Some(service) = serving.lock().ok().and_then(|c| c.clone()) else {
                continue;
            };
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), TowerToHyperService::new(service)),
            );
        }
    });

    let upstream = Upstream::default();
    let mut tally = toolctx_vectors::Tally::default();
    let mut skipped = Vec::new();
    for path in &paths {
        let (file, cases) = match toolctx_vectors::load(path) {
            Ok(toolctx_vectors::Loaded::Cases(file, cases)) => (file, cases),
            Ok(toolctx_vectors::Loaded::Other(note)) => {
                tally.skipped.push(note);
                continue;
            }
            Err(e) => {
                tally.broken.push(e);
                continue;
            }
        };
        for (name, case) in cases {
            if toolctx_vectors::is_table_case(&case) {
                skipped.push(format!("{path}: {name}: a table row, not a request"));
                continue;
            }
            if file.get("profile").and_then(J::as_str) == Some("aivax") {
                skipped.push(format!(
                    "{path}: {name}: the AIVAX profile is not served by this layer"
                ));
                continue;
            }
            let result = async {
                let request = toolctx_vectors::request(&case)?;
                if let Some(why) = inexpressible(&request) {
                    return Ok(Some(why));
                }
                let verifier = toolctx_vectors::verifier(&file, &case)?;
                let now = toolctx_vectors::case_now(&file, &case)?;
                let layer = ToolctxLayer::new(verifier.clone()).clock(move || now);
                if let Ok(mut c) = current.lock() {
                    *c = Some(layer.layer(upstream.clone()));
                }
                let verdict = send(addr, &upstream, &request, &verifier).await?;
                toolctx_vectors::judge(case.get("expect").unwrap_or(&J::Null), &verdict)
                    .map(|()| None)
            }
            .await;
            match result {
                Ok(Some(why)) => skipped.push(format!("{path}: {name}: {why}")),
                Ok(None) => tally.count(path, &name, Ok(())),
                Err(e) => tally.count(path, &name, Err(e)),
            }
        }
    }
    for line in tally.lines() {
        println!("{line}");
    }
    for line in &skipped {
        println!("skipped: {line}");
    }
    let skip = if skipped.is_empty() {
        String::new()
    } else {
        format!(", {} skipped", skipped.len())
    };
    println!("{}{skip}", tally.summary());
    std::process::exit(if tally.ok() { 0 } else { 1 });
}
