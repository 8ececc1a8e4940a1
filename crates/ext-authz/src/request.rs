//! What Envoy's ext_authz filter sends (`CheckRequest`), read into what the
//! core takes: the method, every header as sent (repeated ones repeated),
//! the body's raw bytes.

use envoy_types::ext_authz::v3::pb::CheckRequest;

/// Envoy adds it to the check request (`true` when it cut the body at
/// `max_request_bytes`, with `allow_partial_message: true`).
pub const PARTIAL_BODY_HEADER: &str = "x-envoy-auth-partial-body";

/// Test builds only: the request header that carries `now` (Unix seconds).
#[cfg(feature = "test-clock")]
pub const TEST_NOW_HEADER: &str = "x-toolctx-test-now";

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

/// Reads a check request. `Err` says which ext_authz setting is missing:
/// without it the service cannot see the request as the core must, and
/// refuses (fail closed).
pub fn read(check: CheckRequest) -> Result<Request, &'static str> {
    let http = check
        .attributes
        .and_then(|a| a.request)
        .and_then(|r| r.http)
        .ok_or("the check request carries no HTTP request attributes")?;
    // The `headers` map joins repeated headers with ",": a token or a
    // credential sent twice would look like one. Only `header_map` keeps
    // them apart.
    let map = http.header_map.filter(|m| !m.headers.is_empty()).ok_or(
        "the check request has no header_map: set `encode_raw_headers: true` on the ext_authz \
         filter (Envoy 1.32 or later), so repeated headers reach the core as sent",
    )?;
    let headers: Vec<(String, Vec<u8>)> = map
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
        .collect();
    if http.raw_body.is_empty() && !http.body.is_empty() {
        return Err(
            "the body arrived as text: set `with_request_body.pack_as_bytes: true` on the \
                    ext_authz filter, so the core reads the exact bytes",
        );
    }
    let partial_header = headers
        .iter()
        .find(|(n, _)| n == PARTIAL_BODY_HEADER)
        .map(|(_, v)| v.as_slice());
    let partial = partial_header.is_some_and(|v| v.eq_ignore_ascii_case(b"true"));
    // Envoy marks every body it buffered for the check (`false` when
    // whole); a request with a body and no mark had none sent.
    let announced = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| std::str::from_utf8(v).ok()?.trim().parse::<u64>().ok())
        .or_else(|| u64::try_from(http.size).ok());
    let chunked = headers.iter().any(|(n, _)| n == "transfer-encoding");
    let sent = u64::try_from(http.raw_body.len()).unwrap_or(u64::MAX);
    let unsent = announced.is_some_and(|size| size > sent)
        || (partial_header.is_none() && (chunked || announced.is_some_and(|size| size > 0)));
    if !partial && unsent {
        return Err(
            "the request has a body the ext_authz filter did not send: set `with_request_body` \
             (with `pack_as_bytes: true`)",
        );
    }
    let id = headers
        .iter()
        .find(|(n, _)| n == "x-request-id")
        .map_or(http.id, |(_, v)| String::from_utf8_lossy(v).into_owned());
    Ok(Request {
        method: http.method,
        headers,
        body: http.raw_body,
        partial,
        id,
    })
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
    fn refuses_what_the_core_cannot_judge() {
        let joined_only = HttpRequest {
            method: "POST".into(),
            headers: [("x-agentarea-context".to_string(), "a,b".to_string())].into(),
            ..Default::default()
        };
        assert!(read(check(joined_only))
            .unwrap_err()
            .contains("encode_raw_headers"));
        let map = Some(HeaderMap {
            headers: vec![raw(":method", "POST")],
        });
        let text_body = HttpRequest {
            header_map: map.clone(),
            body: "{}".into(),
            ..Default::default()
        };
        assert!(read(check(text_body))
            .unwrap_err()
            .contains("pack_as_bytes"));
        let no_body = HttpRequest {
            header_map: map.clone(),
            size: 10,
            ..Default::default()
        };
        assert!(read(check(no_body))
            .unwrap_err()
            .contains("with_request_body"));
        assert!(read(CheckRequest::default()).is_err());
        let cut = HttpRequest {
            header_map: Some(HeaderMap {
                headers: vec![raw(":method", "POST"), raw(PARTIAL_BODY_HEADER, "true")],
            }),
            raw_body: b"{".to_vec(),
            size: 10,
            ..Default::default()
        };
        assert!(read(check(cut)).unwrap().partial);
    }
}
