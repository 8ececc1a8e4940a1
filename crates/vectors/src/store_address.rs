//! The store address vectors (`tests/vectors/store-address.json`, written
//! by `tests/vectors/generate_store_address.py`): each case gives an
//! address (and what the front end's client supports) and expects the
//! address read, or the refusal. [`run_files`] hands each case to a front
//! end's reading; [`core_reading`] is the core's.

use serde_json::{json, Value as J};
use toolctx_core::store::{StoreAddress, Supports, Topology};

use crate::{run_format_files, STORE_ADDRESS_FORMAT};

/// The address read, as the vectors write it, or the refusal's code and
/// message.
pub type Answer = Result<J, (String, String)>;

/// The address as the vectors write it.
pub fn to_json(a: &StoreAddress) -> J {
    let mut out = serde_json::Map::new();
    out.insert("topology".into(), J::from(a.topology.as_str()));
    if let Topology::Sentinel { primary } = &a.topology {
        out.insert("primary".into(), J::from(primary.as_str()));
    }
    let tls = a
        .tls
        .as_ref()
        .map(|t| json!({ "ca": t.ca, "cert": t.cert, "key": t.key }));
    out.insert("tls".into(), tls.unwrap_or(J::Null));
    let nodes: Vec<J> = a
        .nodes
        .iter()
        .map(|n| json!({ "host": n.host, "port": n.port }))
        .collect();
    out.insert("nodes".into(), J::Array(nodes));
    out.insert("user".into(), json!(a.user));
    out.insert("password".into(), json!(a.password()));
    out.insert("db".into(), J::from(a.db));
    let wait = a
        .wait
        .map(|w| json!({ "replicas": w.replicas, "timeout_ms": w.timeout_ms }));
    out.insert("wait".into(), wait.unwrap_or(J::Null));
    out.insert("redacted".into(), J::from(a.redacted()));
    J::Object(out)
}

/// What a client supports, from the case's `supports` (absent: everything).
pub fn supports(list: Option<&J>) -> Supports {
    let Some(list) = list.and_then(J::as_array) else {
        return Supports::ALL;
    };
    let has = |k: &str| list.iter().any(|v| v.as_str() == Some(k));
    Supports {
        tls: has("tls"),
        cluster: has("cluster"),
        sentinel: has("sentinel"),
        wait: has("wait"),
    }
}

/// The core's reading of `address` for a client that supports `s`.
pub fn core_reading(address: &str, s: Supports) -> Answer {
    StoreAddress::parse(address)
        .and_then(|a| a.check(s).map(|()| a))
        .map(|a| to_json(&a))
        .map_err(|e| (e.code().to_string(), e.to_string()))
}

fn expected(expect: &J) -> Answer {
    match expect.get("address") {
        Some(a) => Ok(a.clone()),
        None => Err((
            expect["error"].as_str().unwrap_or("").to_string(),
            expect["message"].as_str().unwrap_or("").to_string(),
        )),
    }
}

/// Every case of the store address vector files `paths` through
/// `reading`, printing one line per failure and the closing `N passed, N
/// failed`; `Err` when anything failed or no case ran.
pub fn run_files(
    paths: &[String],
    mut reading: impl FnMut(&str, Supports) -> Answer,
) -> Result<(), String> {
    run_format_files(paths, STORE_ADDRESS_FORMAT, |case| {
        let want = expected(&case["expect"]);
        let got = reading(
            case["address"].as_str().unwrap_or(""),
            supports(case.get("supports")),
        );
        if want == got {
            Ok(())
        } else {
            Err(format!("expected {want:?}, got {got:?}"))
        }
    })
}
