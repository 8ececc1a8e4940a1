//! Why a forward configuration was refused, and where.

use alloc::string::String;

/// Why a forward configuration was refused; its `Display` names the
/// offending entry and never a value from a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForwardError {
    /// A context field this profile does not have.
    UnknownField(String),
    /// A header name that is not an HTTP token.
    BadName(String),
    /// A header name toolctx may not write ([`RESERVED_HEADERS`](super::RESERVED_HEADERS), `mcp-*`).
    Reserved(String),
    /// Two entries write the same header.
    Twice(String),
    /// An empty `_meta` member name.
    EmptyMember,
    /// A part of the configuration that must be an object (a map to header
    /// names) is not one.
    NotAnObject,
    /// An entry whose header name is not a string.
    NotAName,
}

impl core::fmt::Display for ForwardError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ForwardError::UnknownField(name) => write!(f, "unknown context field `{name}`"),
            ForwardError::BadName(name) => write!(f, "`{name}` is not a valid header name"),
            ForwardError::Reserved(name) => write!(f, "header `{name}` is reserved"),
            ForwardError::Twice(name) => write!(f, "header `{name}` is written twice"),
            ForwardError::EmptyMember => f.write_str("a `_meta` member name must not be empty"),
            ForwardError::NotAnObject => {
                f.write_str("must be an object mapping names to header names")
            }
            ForwardError::NotAName => f.write_str("must be a header name"),
        }
    }
}

impl core::error::Error for ForwardError {}

/// The part of a forward configuration an entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardPart {
    /// Context fields to header names.
    Headers,
    /// `_meta` members to header names.
    Meta,
    /// The Tuix headers.
    Tuix,
}

/// A refused forward configuration, located: the part, the entry's key (a
/// context field or `_meta` member; `None` for the part itself or `tuix`)
/// and why, so that each reader can name the setting in its own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardEntryError {
    pub part: ForwardPart,
    pub key: Option<String>,
    pub error: ForwardError,
}
