//! Header names the core reads, a leaf: the verifier reads the token from
//! it and the forward configuration may never write it.

/// Header carrying the context token.
pub const TOKEN_HEADER: &str = "x-agentarea-context";
