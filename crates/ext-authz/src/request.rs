//! What Envoy's ext_authz filter sends (`CheckRequest`), read into what the
//! core takes: the method, every header as sent (repeated ones repeated),
//! the body's raw bytes.

use envoy_types::ext_authz::v3::pb::CheckRequest;
use toolctx_core::TOKEN_HEADER;

/// Envoy adds it to the check request (`true` when it cut the body at
/// `max_request_bytes`, with `allow_partial_message: true`).
pub const PARTIAL_BODY_HEADER: &str = "x-envoy-auth-partial-body";

/// One HTTP request as the core reads it.
#[derive(Debug, Default)]
pub struct Request {
    pub method: String,
    /// Lower-case names, in order, repeated headers as separate entries.
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
    /// Envoy cut the body (never accepted).
    pub partial: bool,
    /// Envoy's request id (`x-request-id`, else the check's stream id), for
    /// the log line.
    pub id: String,
}

impl Request {
    /// The first value of `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }
}

/// Reads a check request. `Err` says which setting of the gateway's
/// ext_authz filter is missing: without it the service cannot see the
/// request as the core must, and refuses (fail closed).
pub fn read(check: CheckRequest) -> Result<Request, &'static str> {
    let http = check
        .attributes
        .and_then(|a| a.request)
        .and_then(|r| r.http)
        .ok_or("the check request carries no HTTP request attributes")?;
    if http.raw_body.is_empty() && !http.body.is_empty() {
        return Err(
            "the body arrived as text: set `with_request_body.pack_as_bytes: true` on the \
                    ext_authz filter, so the core reads the exact bytes",
        );
    }
    let raw = http
        .header_map
        .as_ref()
        .is_some_and(|m| !m.headers.is_empty());
    let headers = match http.header_map {
        Some(map) if raw => map
            .headers
            .into_iter()
            .map(|h| {
                let value = if h.raw_value.is_empty() {
                    h.value.into_bytes()
                } else {
                    h.raw_value
                };
                (h.key.to_ascii_lowercase(), value)
            })
            .collect(),
        _ => joined(http.headers),
    };
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    };
    // Envoy marks every body it buffered for the check, `true` when it cut
    // it; agentgateway reports a cut body's size as -1.
    let mark = find(PARTIAL_BODY_HEADER);
    let sent = u64::try_from(http.raw_body.len()).unwrap_or(u64::MAX);
    let announced = find("content-length")
        .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<u64>().ok());
    let cut = mark.is_some_and(|v| v.eq_ignore_ascii_case(b"true"))
        || announced.is_some_and(|n| n > sent)
        || (mark.is_none() && u64::try_from(http.size).is_ok_and(|n| n > sent))
        || (mark.is_none() && http.size == -1 && sent > 0)
        || (raw && mark.is_none() && find("transfer-encoding").is_some());
    let id = find("x-request-id").map_or(http.id, |v| String::from_utf8_lossy(v).into_owned());
    Ok(Request {
        method: http.method,
        headers,
        body: http.raw_body,
        partial: cut,
        id,
    })
}

/// Headers from the joined map (`encode_raw_headers` off, or a gateway
/// that sends no `header_map`): one entry per name, repeated headers joined
/// with `,`. A context token never contains `,` (base64url and dots), so
/// the token header is split back into the copies the caller sent, and the
/// core refuses two of them as `token_duplicated`; any other header stays
/// joined (a doubled credential then matches no configured value and is
/// refused as `credential_invalid`, as it is from separate copies).
fn joined(map: std::collections::HashMap<String, String>) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::with_capacity(map.len());
    for (name, value) in map {
        let name = name.to_ascii_lowercase();
        if name == TOKEN_HEADER {
            for copy in value.split(',') {
                out.push((
                    name.clone(),
                    copy.trim_matches([' ', '\t']).as_bytes().to_vec(),
                ));
            }
        } else {
            out.push((name, value.into_bytes()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use envoy_types::pb::envoy::config::core::v3::{HeaderMap, HeaderValue};
    use envoy_types::pb::envoy::service::auth::v3::attribute_context::{HttpRequest, Request};
    use envoy_types::pb::envoy::service::auth::v3::AttributeContext;

    fn check(http: HttpRequest) -> CheckRequest {
        CheckRequest {
            attributes: Some(AttributeContext {
                request: Some(Request {
                    http: Some(http),
                    ..Default::default()
                }),
                ..Default::default()
            }),
        }
    }

    fn raw(key: &str, value: &str) -> HeaderValue {
        HeaderValue {
            key: key.into(),
            value: String::new(),
            raw_value: value.as_bytes().to_vec(),
        }
    }

    #[test]
    fn repeated_headers_stay_repeated_and_the_body_is_raw() {
        let r = read(check(HttpRequest {
            method: "POST".into(),
            header_map: Some(HeaderMap {
                headers: vec![
                    raw(":method", "POST"),
                    raw("X-AgentArea-Context", "a"),
                    raw("x-agentarea-context", "b"),
                    raw(PARTIAL_BODY_HEADER, "false"),
                ],
            }),
            raw_body: b"{\xff}".to_vec(),
            size: 3,
            ..Default::default()
        }))
        .unwrap();
        assert_eq!(r.headers.len(), 4);
        assert_eq!(r.headers[1], ("x-agentarea-context".into(), b"a".to_vec()));
        assert_eq!(r.headers[2], ("x-agentarea-context".into(), b"b".to_vec()));
        assert_eq!(r.body, b"{\xff}");
        assert!(!r.partial);
    }

    #[test]
    fn the_joined_map_keeps_a_doubled_token_apart() {
        let r = read(check(HttpRequest {
            method: "POST".into(),
            headers: [
                (
                    "x-agentarea-context".to_string(),
                    "a.b.c, d.e.f".to_string(),
                ),
                (
                    "authorization".to_string(),
                    "Bearer x, Bearer x".to_string(),
                ),
            ]
            .into(),
            ..Default::default()
        }))
        .unwrap();
        let tokens: Vec<_> = r
            .headers
            .iter()
            .filter(|(n, _)| n == TOKEN_HEADER)
            .map(|(_, v)| v.clone())
            .collect();
        assert_eq!(tokens, vec![b"a.b.c".to_vec(), b"d.e.f".to_vec()]);
        assert_eq!(r.header("authorization"), Some(&b"Bearer x, Bearer x"[..]));
    }

    #[test]
    fn a_cut_or_missing_body_is_marked() {
        let map = |extra: Vec<HeaderValue>| {
            let mut h = vec![raw(":method", "POST")];
            h.extend(extra);
            Some(HeaderMap { headers: h })
        };
        let text_body = HttpRequest {
            header_map: map(vec![]),
            body: "{}".into(),
            ..Default::default()
        };
        assert!(read(check(text_body))
            .unwrap_err()
            .contains("pack_as_bytes"));
        assert!(read(CheckRequest::default()).is_err());
        for (what, http) in [
            (
                "marked cut",
                HttpRequest {
                    header_map: map(vec![raw(PARTIAL_BODY_HEADER, "true")]),
                    raw_body: b"{".to_vec(),
                    ..Default::default()
                },
            ),
            (
                "shorter than content-length",
                HttpRequest {
                    header_map: map(vec![
                        raw("content-length", "10"),
                        raw(PARTIAL_BODY_HEADER, "false"),
                    ]),
                    raw_body: b"{}".to_vec(),
                    ..Default::default()
                },
            ),
            (
                "not sent (no with_request_body)",
                HttpRequest {
                    header_map: map(vec![raw("transfer-encoding", "chunked")]),
                    ..Default::default()
                },
            ),
            (
                "agentgateway's size -1",
                HttpRequest {
                    headers: [(":method".to_string(), "POST".to_string())].into(),
                    raw_body: b"{".to_vec(),
                    size: -1,
                    ..Default::default()
                },
            ),
        ] {
            assert!(read(check(http)).unwrap().partial, "{what}");
        }
        let whole = HttpRequest {
            header_map: map(vec![
                raw("content-length", "2"),
                raw(PARTIAL_BODY_HEADER, "false"),
            ]),
            raw_body: b"{}".to_vec(),
            size: 2,
            ..Default::default()
        };
        assert!(!read(check(whole)).unwrap().partial);
    }
}
