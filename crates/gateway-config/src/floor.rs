//! Bench builds only (feature `bench-profile`): the floors under a
//! gateway's cost that `bench/envoy.sh profile` measures, for the Envoy
//! filter (chosen by the VM's environment variable [`FLOOR_ENV`]) and the
//! module (chosen by the stanza's `filter_name`, `toolctx-floor-<name>`).

/// The filter's VM environment variable naming its floor (`noop`, `hold`).
pub const FLOOR_ENV: &str = "TOOLCTX_BENCH_FLOOR";

/// What a bench-profile build does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Floor {
    /// Decide (the default): the gateway as it ships, timed.
    Full,
    /// `noop`: continue at the headers, touching nothing.
    Noop,
    /// `hold`: read the headers, hold the request, read the whole body,
    /// continue; no core, no header, no counter.
    Hold,
}

impl Floor {
    /// From a floor's name (`noop`, `hold`); anything else is `Full`.
    pub fn named(name: &[u8]) -> Floor {
        match name {
            b"noop" => Floor::Noop,
            b"hold" => Floor::Hold,
            _ => Floor::Full,
        }
    }

    /// From the module's `filter_name`: `toolctx-floor-noop`,
    /// `toolctx-floor-hold`; anything else is `Full`.
    pub fn from_filter_name(filter_name: &[u8]) -> Floor {
        filter_name
            .strip_prefix(b"toolctx-floor-")
            .map_or(Floor::Full, Floor::named)
    }
}
