//! The store address vectors (`tests/vectors/store-address.json`, written
//! by `tests/vectors/generate_store_address.py`): each case gives an
//! address (and what the front end's client supports) and expects the
//! address read, or the refusal. [`run_files`] hands each case to a front
//! end's reading; [`core_reading`] is the core's.

use serde_json::{json, Value as J};
use toolctx_core::store::{StoreAddress, Supports, Topology};

use crate::{Tally, STORE_ADDRESS_FORMAT};

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

/// Runs every case of the file `path` through `reading` into `tally`.
pub fn run_file(path: &str, tally: &mut Tally, reading: &mut dyn FnMut(&str, Supports) -> Answer) {
    let read = std::fs::read_to_string(path)
        .map_err(|e| format!("{path}: {e}"))
        .and_then(|text| serde_json::from_str::<J>(&text).map_err(|e| format!("{path}: {e}")));
    let file = match read {
        Ok(file) if file.get("format").and_then(J::as_str) == Some(STORE_ADDRESS_FORMAT) => file,
        Ok(_) => {
            return tally
                .broken
                .push(format!("{path}: not store address vectors"))
        }
        Err(e) => return tally.broken.push(e),
    };
    let cases = file["cases"].as_array().cloned().unwrap_or_default();
    if cases.is_empty() {
        return tally.broken.push(format!("{path}: no cases"));
    }
    for case in &cases {
        let name = case["name"].as_str().unwrap_or("?");
        let want = expected(&case["expect"]);
        let got = reading(
            case["address"].as_str().unwrap_or(""),
            supports(case.get("supports")),
        );
        let outcome = if want == got {
            Ok(())
        } else {
            Err(format!("expected {want:?}, got {got:?}"))
        };
        tally.count(path, name, outcome);
    }
}

/// [`run_file`] over `paths`, printing one line per failure and the
/// closing `N passed, N failed`; `Err` when anything failed or no case ran.
pub fn run_files(
    paths: &[String],
    mut reading: impl FnMut(&str, Supports) -> Answer,
) -> Result<(), String> {
    let mut tally = Tally::default();
    for path in paths {
        run_file(path, &mut tally, &mut reading);
    }
    tally.finish("no store address case ran")
}
