//! Where the shared state lives and how sure a write is: the store address
//! every front end that opens its own connection reads ([`address`]), and
//! durable claims ([`durable`]).

pub mod address;
pub mod durable;

pub use address::{AddressError, Node, StoreAddress, Supports, Tls, Topology, Wait};
