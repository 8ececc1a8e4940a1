//! Which gateway reads the configuration, and what that changes.

#[cfg(feature = "redis")]
use toolctx_core::store::Supports;

/// Which front end reads the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// The proxy-wasm filter: environment variables reach it through
    /// `vm_config.environment_variables.host_env_keys`; its replay guard
    /// lives in Envoy's shared data.
    EnvoyFilter,
    /// The native Envoy module (`crates/envoy-module`): a library inside
    /// the Envoy process, reading Envoy's own environment; its replay guard
    /// is a table in the process, shared by every worker thread.
    EnvoyModule,
    /// The ext_authz service: a process of its own, reading its own
    /// environment; its replay guard is in process or in Redis. Only with
    /// the `service` feature, which keeps its code out of the filter's wasm.
    #[cfg(feature = "service")]
    Service,
}

impl Host {
    #[cfg(feature = "redis")]
    /// What this host's Redis client reaches; the core refuses a store
    /// address that needs more (`StoreAddress::check`), naming it.
    pub fn store_supports(self) -> Supports {
        match self {
            // The filter opens no connection; the module's RESP client
            // speaks plain RESP to one node.
            Host::EnvoyFilter | Host::EnvoyModule => Supports::default(),
            // toolctx-tower's Redis client: TLS, Cluster, Sentinel, WAIT.
            #[cfg(feature = "service")]
            Host::Service => Supports::ALL,
        }
    }

    /// Where a missing environment variable must be set.
    pub(crate) fn env_hint(self) -> &'static str {
        match self {
            Host::EnvoyFilter => {
                "is set in the VM: list them in vm_config.environment_variables.host_env_keys"
            }
            Host::EnvoyModule => "is set in the environment of the Envoy process",
            #[cfg(feature = "service")]
            Host::Service => "is set in the service's environment",
        }
    }

    /// Why a secret may not be written inline.
    pub(crate) fn inline_hint(self) -> &'static str {
        match self {
            Host::EnvoyFilter | Host::EnvoyModule => "Envoy's /config_dump would show them",
            #[cfg(feature = "service")]
            Host::Service => "configuration files are read by more people than secrets should be",
        }
    }
}
