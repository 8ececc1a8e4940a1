#![doc = include_str!("../README.md")]
// Only the host-ABI module holds `unsafe` (allowed there, with a SAFETY
// comment on each block); every other module says `forbid`.
#![deny(unsafe_code)]

#[cfg(not(test))]
#[allow(unsafe_code)]
mod abi;
mod decide;
pub mod filter;
pub mod module;
pub mod redis;
pub mod replay;
pub mod stream;

#[cfg(test)]
mod tests;
