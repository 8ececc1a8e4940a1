//! The outcome as Envoy's `CheckResponse`: a refusal is a
//! `DeniedHttpResponse` with the core's status, JSON-RPC body and
//! `content-type: application/json` (what the filter and the npm
//! middleware send); an accepted call an `OkHttpResponse` with the mapped
//! headers set; a pass an `OkHttpResponse` too. Either way every mapped
//! header the caller sent is dropped: the set ones are overwritten (all
//! copies), the others listed in `headers_to_remove`.

use envoy_types::ext_authz::v3::pb::{
    CheckResponse, DeniedHttpResponse, HeaderAppendAction, HeaderValue, HeaderValueOption,
    HttpResponse, HttpStatus, OkHttpResponse,
};
use envoy_types::pb::google::rpc;
use toolctx_core::{Reason, Refusal};

use crate::decide::Outcome;

/// google.rpc.Code values.
const OK: i32 = 0;
const PERMISSION_DENIED: i32 = 7;
const UNAUTHENTICATED: i32 = 16;

/// The refusal when the service cannot judge: the core's `internal_error`.
pub fn internal_error() -> Refusal {
    Refusal::new(Reason::InternalError, None)
}

fn header(name: &str, value: String) -> HeaderValueOption {
    HeaderValueOption {
        header: Some(HeaderValue {
            key: name.to_string(),
            value,
            raw_value: Vec::new(),
        }),
        append_action: HeaderAppendAction::OverwriteIfExistsOrAdd as i32,
        ..Default::default()
    }
}

fn ok(headers: Vec<HeaderValueOption>, headers_to_remove: Vec<String>) -> CheckResponse {
    CheckResponse {
        status: Some(rpc::Status {
            code: OK,
            ..Default::default()
        }),
        http_response: Some(HttpResponse::OkResponse(OkHttpResponse {
            headers,
            headers_to_remove,
            ..Default::default()
        })),
        dynamic_metadata: None,
    }
}

/// The refusal as Envoy's local reply.
pub fn denied(refusal: &Refusal, include_reason: bool) -> CheckResponse {
    let code = if refusal.status() == 401 {
        UNAUTHENTICATED
    } else {
        PERMISSION_DENIED
    };
    CheckResponse {
        status: Some(rpc::Status {
            code,
            message: refusal.reason().as_str().to_string(),
            details: Vec::new(),
        }),
        http_response: Some(HttpResponse::DeniedResponse(DeniedHttpResponse {
            status: Some(HttpStatus {
                code: i32::from(refusal.status()),
            }),
            headers: vec![header("content-type", "application/json".to_string())],
            body: refusal.body(include_reason),
        })),
        dynamic_metadata: None,
    }
}

/// The response for `outcome`; `written` are the mapped header names.
pub fn build<S: AsRef<str>>(
    outcome: &Outcome,
    written: &[S],
    include_reason: bool,
) -> CheckResponse {
    let names = || written.iter().map(AsRef::as_ref);
    match outcome {
        Outcome::Pass => ok(Vec::new(), names().map(String::from).collect()),
        Outcome::Accept(set) => {
            let remove = names()
                .filter(|n| !set.iter().any(|(s, _)| s == n))
                .map(String::from)
                .collect();
            let headers = set
                .iter()
                .map(|(name, value)| header(name, value.clone()))
                .collect();
            ok(headers, remove)
        }
        Outcome::Refuse(r) => denied(r, include_reason),
        Outcome::Error(_) => denied(&internal_error(), include_reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_carries_the_core_status_and_body() {
        let r = Refusal::new(Reason::TokenExpired, Some("7".into()));
        let resp = build::<&str>(&Outcome::Refuse(r.clone()), &[], true);
        assert_eq!(resp.status.unwrap().code, UNAUTHENTICATED);
        let Some(HttpResponse::DeniedResponse(d)) = resp.http_response else {
            panic!("not denied")
        };
        assert_eq!(d.status.unwrap().code, 401);
        assert_eq!(d.body, r.body(true));
        assert_eq!(
            d.headers[0].header.as_ref().unwrap().value,
            "application/json"
        );
    }

    #[test]
    fn mapped_headers_are_set_or_removed() {
        // Values come encoded from the core and are sent as they are.
        let set = vec![("x-task".to_string(), "t%201".to_string())];
        let resp = build(&Outcome::Accept(set), &["x-task", "x-session-id"], true);
        let Some(HttpResponse::OkResponse(ok)) = resp.http_response else {
            panic!("not ok")
        };
        assert_eq!(ok.headers[0].header.as_ref().unwrap().value, "t%201");
        assert_eq!(ok.headers_to_remove, vec!["x-session-id".to_string()]);
        let resp = build(&Outcome::Pass, &["x-task"], true);
        let Some(HttpResponse::OkResponse(ok)) = resp.http_response else {
            panic!("not ok")
        };
        assert!(ok.headers.is_empty());
        assert_eq!(ok.headers_to_remove, vec!["x-task".to_string()]);
        let resp = build::<&str>(&Outcome::Error("x".into()), &[], false);
        let Some(HttpResponse::DeniedResponse(d)) = resp.http_response else {
            panic!("not denied")
        };
        assert_eq!(d.status.unwrap().code, 500);
        assert!(!d.body.contains("reason"));
    }
}
