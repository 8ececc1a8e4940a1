//! The boundary every wasm module of toolctx shares: the npm package's two
//! (`toolctx-wasm`, `toolctx-wasm-conventions`, through wasm-bindgen, feature
//! `js`) and the raw module the Go and Java front ends embed
//! (`toolctx-wasm-abi`, plain exports). Nothing is decided here: the core
//! decides; this crate gives its outcome the one string form every host
//! reads.
//!
//! - [`split`]: the method and headers cut out of one buffer by their lengths.
//! - The verdict strings (`verdicts.rs`): `p`, `b` + ticket, `u`, `a` + JSON
//!   [+ newline + request id [+ the headers to set upstream]], `c` + a
//!   replay claim, `r` + JSON; the errors (`"<code>\n<message>"`, [`Error`]).
//!   A module may answer an accepted call in its own form instead
//!   ([`verdict_in`], the `form` of [`AgentArea::new`]): the npm module's
//!   `A` + record (`crates/wasm/src/record.rs`), which only its TypeScript
//!   layer reads; the raw module keeps `a` + JSON.
//! - What waits under a ticket ([`Tickets`]): the header checks waiting for
//!   their body, which [`Boundary`] keeps for either profile ([`Profile`]),
//!   and the accepted calls waiting for a shared replay store's answer
//!   ([`AgentArea`]).
//! - The server helpers' rules in string form (`helpers.rs`), the core's
//!   codes (`codes.rs`) and its settings table (`settings.rs`).
//!
//! Its readers: `npm/src/boundary/` (TypeScript), `go/abi.go` (Go) and
//! `java/.../Abi.java` (Java). The files describe one format, and a change
//! to it changes them all.

mod agentarea;
mod boundary;
mod codes;
mod error;
pub mod helpers;
#[cfg(feature = "js")]
mod js;
pub mod settings;
mod tickets;
mod verdicts;

pub use agentarea::{redis_claim_answer, AgentArea};
pub use boundary::{split, Boundary, HeldRequest, Profile};
pub use codes::{codes_json, core_codes};
pub use error::Error;
#[cfg(feature = "js")]
pub use js::{config_error, flag_setting, js_error, read_setting, redis_timeout_ms};
pub use tickets::Tickets;
pub use verdicts::{accepted, described, lines, refusal, verdict, verdict_in};
