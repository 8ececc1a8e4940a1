#![forbid(unsafe_code)]
//! The Redis address the module takes from the environment, read by the
//! core's store address (docs/CONTRACT.md §5.4). The module's client speaks
//! plain RESP to one node: a TLS, Cluster, Sentinel or durable-claims
//! address is refused at load with the reason, never downgraded.

use toolctx_core::store::{StoreAddress, Supports};

/// One plain node, as the core read it (never shown: it may hold a
/// password).
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub(super) user: Option<String>,
    pub(super) password: Option<String>,
    pub db: u32,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("db", &self.db)
            .finish_non_exhaustive()
    }
}

/// What the module's client does: one plain node, nothing more.
const SUPPORTS: Supports = Supports {
    tls: false,
    cluster: false,
    sentinel: false,
    wait: false,
};

impl Endpoint {
    /// Reads an address by the core's grammar. The message of an `Err`
    /// never quotes it.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let address = StoreAddress::parse(url).map_err(|e| e.to_string())?;
        address.check(SUPPORTS).map_err(|e| e.to_string())?;
        let node = address
            .nodes
            .first()
            .ok_or("the store address names no node")?;
        Ok(Endpoint {
            host: node.host.clone(),
            port: node.port,
            user: address.user.clone(),
            password: address.password().map(str::to_string),
            db: address.db,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let e = Endpoint::parse("redis://127.0.0.1:6380/2").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.db, &e.user, &e.password),
            ("127.0.0.1", 6380, 2, &None, &None)
        );
        let e = Endpoint::parse("redis://:p%40ss@localhost").unwrap();
        assert_eq!(
            (e.port, e.password.as_deref(), e.user.as_deref()),
            (6379, Some("p@ss"), None)
        );
        let e = Endpoint::parse("redis://bob:pw@[::1]:7000").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.user.as_deref()),
            ("::1", 7000, Some("bob"))
        );
        assert!(!format!("{e:?}").contains("pw"));
        for bad in [
            "redis://",
            "redis://h:0",
            "redis://h:x",
            "redis://h/x",
            "redis://h?db=1",
            "redis://bob@h",
            "redis://:p%zz@h",
            "redis://[::1",
        ] {
            let e = Endpoint::parse(bad).unwrap_err();
            assert!(
                e.starts_with("the store address is invalid: "),
                "{bad}: {e}"
            );
            assert!(!e.contains(bad), "{bad}: {e}");
        }
        // What the client cannot do is refused with the reason.
        for (url, needs) in [
            ("rediss://:pw@h", "TLS (rediss)"),
            ("redis-cluster://a,b", "Redis Cluster"),
            ("redis-sentinel://a#p", "Sentinel"),
            ("redis://h?wait_replicas=1", "durable claims"),
        ] {
            let e = Endpoint::parse(url).unwrap_err();
            assert!(e.contains(needs), "{url}: {e}");
            assert!(!e.contains("pw"), "{url}: {e}");
        }
    }
}
