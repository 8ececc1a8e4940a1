//! The primary a set of Sentinels names: asked for by name when there is
//! no connection, and forgotten when a command on it fails (the node died,
//! or answers `READONLY` as a demoted replica), so that the next call asks
//! the Sentinels again and reaches the promoted one. The failing call
//! itself fails (a command is sent once).

use std::sync::Mutex;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::sentinel::SentinelClient;
use redis::AsyncConnectionConfig;

pub(crate) struct Primary {
    sentinels: tokio::sync::Mutex<SentinelClient>,
    current: Mutex<Option<MultiplexedConnection>>,
    config: AsyncConnectionConfig,
}

impl Primary {
    pub(crate) fn new(sentinels: SentinelClient, timeout: Duration) -> Primary {
        Primary {
            sentinels: tokio::sync::Mutex::new(sentinels),
            current: Mutex::new(None),
            config: AsyncConnectionConfig::new()
                .set_connection_timeout(Some(timeout))
                .set_response_timeout(Some(timeout)),
        }
    }

    fn held(&self) -> Option<MultiplexedConnection> {
        self.current.lock().ok().and_then(|c| c.clone())
    }

    /// The connection to the primary, asking the Sentinels for it (and
    /// checking that the node they name is a primary) when there is none.
    pub(crate) async fn connection(&self) -> Result<MultiplexedConnection, String> {
        if let Some(c) = self.held() {
            return Ok(c);
        }
        let mut sentinels = self.sentinels.lock().await;
        // Another call may have found it while this one waited.
        if let Some(c) = self.held() {
            return Ok(c);
        }
        let conn = sentinels
            .get_async_connection_with_config(&self.config)
            .await
            .map_err(|e| format!("cannot reach the primary through Sentinel ({:?})", e.kind()))?;
        if let Ok(mut c) = self.current.lock() {
            *c = Some(conn.clone());
        }
        Ok(conn)
    }

    /// After a failed command: the next call asks the Sentinels again.
    pub(crate) fn forget(&self) {
        if let Ok(mut c) = self.current.lock() {
            *c = None;
        }
    }
}
