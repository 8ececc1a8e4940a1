#![forbid(unsafe_code)]
//! What the module's stream logic ([`crate::filter`]) asks of Envoy and
//! tells it back: the interface `abi.rs` implements over Envoy's C ABI and
//! the tests implement without Envoy.

use std::borrow::Cow;

use crate::module::Level;

/// Request headers borrowed from Envoy: `(name, value)`.
pub type Headers<'s> = Vec<(&'s [u8], &'s [u8])>;

/// What a hook can ask of Envoy for the current stream. Reads borrow the
/// stream, writes take it mutably: Envoy's header and body memory is only
/// valid until the hook returns or the headers are changed, and the borrow
/// checker keeps every borrowed slice inside that window.
pub trait Stream {
    /// Every request header, in order, duplicates kept; `None` when Envoy
    /// cannot give them.
    fn request_headers(&self) -> Option<Headers<'_>>;
    /// Removes every copy of the header `name` (lower case).
    fn remove_request_header(&mut self, name: &str) -> bool;
    /// Adds the header `name: value`.
    fn add_request_header(&mut self, name: &str, value: &str) -> bool;
    /// The request body received so far (buffered and just received).
    fn body_size(&self) -> usize;
    /// Its first `max` bytes: borrowed when Envoy holds them in one
    /// chunk, copied together otherwise. `None` when Envoy cannot give them.
    fn request_body(&self, max: usize) -> Option<Cow<'_, [u8]>>;
    /// Answers the request locally (`application/json`).
    fn send_response(&mut self, status: u16, body: &[u8]);
    /// Adds one to a counter defined for this configuration.
    fn bump(&mut self, counter: usize);
    fn log(&self, level: Level, message: &str);
    /// A handle that brings this stream back to its worker thread from any
    /// thread (Envoy's scheduler): Envoy then calls the scheduled hook,
    /// which calls [`Filter::on_claim_answered`]. `None` when Envoy cannot
    /// give one.
    fn resumer(&mut self) -> Option<Box<dyn Resume>>;
    /// Lets a held request go on (Envoy's `continue_decoding`).
    fn continue_request(&mut self);
}

/// Wakes a held stream on its worker thread; called once, from any thread.
/// A stream reset meanwhile is not woken (Envoy's scheduler forgets it).
pub trait Resume: Send {
    fn resume(self: Box<Self>);
}

/// What the request-headers hook tells Envoy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadersStatus {
    Continue,
    /// Hold the headers (the body is awaited, or a local reply was sent).
    Stop,
}

/// What the request-body hook tells Envoy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyStatus {
    Continue,
    /// Buffer the body and call again with more.
    Buffer,
    /// A local reply was sent: go no further.
    Stop,
    /// Hold the body (buffered) while the replay claim is in flight; the
    /// scheduled hook resumes or answers the request.
    Wait,
}
