//! Opening the store from a store address (docs/CONTRACT.md §5.4), read by
//! the core (`toolctx_core::store::StoreAddress`): one node (reconnecting),
//! a Redis Cluster (redis-rs's cluster client: it follows `MOVED` and
//! `ASK`), or the primary a set of Sentinels names (re-found after a
//! failover, `sentinel.rs`); over TLS with the certificate verified (the
//! address's CA, or the host's trust store), an ACL user and a database.
//! No message quotes the address.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::ConnectionManagerConfig;
use redis::cluster::ClusterClientBuilder;
use redis::sentinel::{SentinelClientBuilder, SentinelServerType};
use redis::{
    ClientTlsConfig, ConnectionAddr, ConnectionInfo, IntoConnectionInfo, RedisConnectionInfo,
    TlsCertificates, TlsMode,
};
use toolctx_core::store::{Node, StoreAddress, Topology};

use super::sentinel::Primary;
use super::Conn;

/// How many times redis-rs's cluster client may send a command again: on a
/// redirection (`MOVED`, `ASK`: the node did not run it), a cluster in
/// failover (`TRYAGAIN`, `CLUSTERDOWN`) or a dropped connection, always
/// within the one store timeout around the whole call. Generous: while a
/// slot migrates, another command on the shared connection can take the
/// one-shot `ASKING` meant for this one, and the redirection goes round
/// again.
const CLUSTER_RETRIES: u32 = 16;

/// Why the store cannot be opened; never the address.
fn failed(e: &redis::RedisError) -> String {
    format!("cannot reach Redis ({:?})", e.kind())
}

/// A TLS address's certificates, read from the files it names.
fn certificates(address: &StoreAddress) -> Result<Option<TlsCertificates>, String> {
    let Some(tls) = &address.tls else {
        return Ok(None);
    };
    // redis-rs builds rustls with no provider of its own: ring, unless the
    // program installed one already. (rustls 0.23.48 deprecates ring's for
    // its lack of post-quantum key exchange; aws-lc-rs would need cmake and
    // a C toolchain in every build. A program wanting it installs it first.)
    #[allow(deprecated)]
    let _ = rustls::crypto::ring::default_provider().install_default();
    let read = |path: &Option<String>, what: &str| {
        path.as_ref()
            .map(|p| {
                std::fs::read(p).map_err(|e| {
                    format!(
                        "cannot read the {what} file the store address names ({:?})",
                        e.kind()
                    )
                })
            })
            .transpose()
    };
    let client_tls = match (read(&tls.cert, "cert")?, read(&tls.key, "key")?) {
        (Some(client_cert), Some(client_key)) => Some(ClientTlsConfig {
            client_cert,
            client_key,
        }),
        _ => None,
    };
    Ok(Some(TlsCertificates {
        client_tls,
        root_cert: read(&tls.ca, "ca")?,
    }))
}

fn addr(node: &Node, tls: bool) -> ConnectionAddr {
    match tls {
        true => ConnectionAddr::TcpTls {
            host: node.host.clone(),
            port: node.port,
            insecure: false,
            tls_params: None,
        },
        false => ConnectionAddr::Tcp(node.host.clone(), node.port),
    }
}

/// The ACL user, the password and the database every node is sent.
fn login(address: &StoreAddress) -> RedisConnectionInfo {
    let mut info = RedisConnectionInfo::default().set_db(i64::from(address.db));
    if let Some(user) = &address.user {
        info = info.set_username(user);
    }
    if let Some(password) = address.password() {
        info = info.set_password(password);
    }
    info
}

fn info(node: &Node, address: &StoreAddress) -> Result<ConnectionInfo, String> {
    Ok(addr(node, address.tls.is_some())
        .into_connection_info()
        .map_err(|e| failed(&e))?
        .set_redis_settings(login(address)))
}

async fn within<T>(
    timeout: Duration,
    what: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::time::timeout(timeout, what)
        .await
        .map_err(|_| "Redis did not answer in time".to_string())?
}

/// Opens `address` (already checked against what this client does);
/// connecting is bounded by `timeout`, and so is every command after.
pub(super) async fn open(address: &StoreAddress, timeout: Duration) -> Result<Conn, String> {
    let certs = certificates(address)?;
    let first = address
        .nodes
        .first()
        .ok_or("the store address names no node")?;
    match &address.topology {
        Topology::Single => {
            let info = info(first, address)?;
            let client = match certs {
                Some(c) => redis::Client::build_with_tls(info, c),
                None => redis::Client::open(info),
            }
            .map_err(|e| format!("the Redis URL is invalid ({:?})", e.kind()))?;
            let config = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(timeout))
                .set_response_timeout(Some(timeout))
                .set_number_of_retries(1);
            let conn = within(timeout, async {
                client
                    .get_connection_manager_with_config(config)
                    .await
                    .map_err(|e| failed(&e))
            })
            .await?;
            Ok(Conn::Single(conn))
        }
        Topology::Cluster => {
            let seeds = address
                .nodes
                .iter()
                .map(|n| info(n, address))
                .collect::<Result<Vec<_>, _>>()?;
            let mut builder = ClusterClientBuilder::new(seeds)
                .connection_timeout(timeout)
                .response_timeout(timeout)
                .retries(CLUSTER_RETRIES);
            if let Some(c) = certs {
                builder = builder.tls(TlsMode::Secure).certs(c);
            }
            let client = builder
                .build()
                .map_err(|e| format!("the Redis URL is invalid ({:?})", e.kind()))?;
            let conn = within(timeout, async {
                client.get_async_connection().await.map_err(|e| failed(&e))
            })
            .await?;
            Ok(Conn::Cluster(conn))
        }
        Topology::Sentinel { primary } => {
            let tls = address.tls.is_some();
            let sentinels = address.nodes.iter().map(|n| addr(n, tls));
            let mut builder =
                SentinelClientBuilder::new(sentinels, primary, SentinelServerType::Master)
                    .map_err(|e| format!("the Redis URL is invalid ({:?})", e.kind()))?
                    .set_client_to_redis_db(i64::from(address.db));
            if let Some(user) = &address.user {
                builder = builder.set_client_to_redis_username(user);
            }
            if let Some(password) = address.password() {
                builder = builder.set_client_to_redis_password(password);
            }
            if let Some(c) = certs {
                builder = builder
                    .set_client_to_redis_tls_mode(TlsMode::Secure)
                    .set_client_to_redis_certificates(c.clone())
                    .set_client_to_sentinel_tls_mode(TlsMode::Secure)
                    .set_client_to_sentinel_certificates(c);
            }
            let client = builder
                .build()
                .map_err(|e| format!("the Redis URL is invalid ({:?})", e.kind()))?;
            let primary = Arc::new(Primary::new(client, timeout));
            within(timeout, async { primary.connection().await.map(|_| ()) }).await?;
            Ok(Conn::Sentinel(primary))
        }
    }
}
