//! The refusal table (CONTRACT §3): the only place where a reason is mapped
//! to an HTTP status, a JSON-RPC code and a message.

struct Row {
    code: &'static str,
    status: u16,
    rpc: i32,
    message: &'static str,
}

const fn row(code: &'static str, status: u16, rpc: i32, message: &'static str) -> Row {
    Row {
        code,
        status,
        rpc,
        message,
    }
}

table_enum! {
    /// Why a request was refused. The string form ([`Reason::as_str`]) is the
    /// stable machine code sent as `error.data.reason`. One row per reason,
    /// in the order of the checks: the machine code, the HTTP status, the
    /// JSON-RPC code and the message.
    #[non_exhaustive]
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Reason: Row {
        CredentialMissing => row("credential_missing", 401, -32001, "missing credential"),
        CredentialInvalid => row("credential_invalid", 401, -32001, "invalid credential"),
        BodyTooLarge => row("body_too_large", 413, -32600, "request body too large"),
        ParseError => row("parse_error", 400, -32700, "parse error"),
        DuplicateMember => row("duplicate_member", 400, -32600, "duplicate member in JSON object"),
        TooDeep => row("too_deep", 400, -32600, "JSON nested too deeply"),
        BatchWithToolsCall => row(
            "batch_with_tools_call",
            400,
            -32600,
            "tools/call is not allowed in a batch",
        ),
        InvalidParams => row("invalid_params", 400, -32602, "invalid params"),
        HeaderMismatch => row(
            "header_mismatch",
            400,
            -32020,
            "MCP header does not match the request body",
        ),
        TokenMissing => row("token_missing", 401, -32001, "context token missing"),
        TokenDuplicated => row(
            "token_duplicated",
            401,
            -32001,
            "context token sent more than once",
        ),
        TokenTooLarge => row("token_too_large", 401, -32001, "context token too large"),
        TokenMalformed => row("token_malformed", 401, -32001, "context token malformed"),
        AlgNotAllowed => row("alg_not_allowed", 401, -32001, "context token algorithm not allowed"),
        CritNotSupported => row(
            "crit_not_supported",
            401,
            -32001,
            "context token header not supported",
        ),
        SignatureInvalid => row(
            "signature_invalid",
            401,
            -32001,
            "context token signature invalid",
        ),
        IssuerInvalid => row("issuer_invalid", 401, -32001, "context token issuer invalid"),
        AudienceInvalid => row("audience_invalid", 401, -32001, "context token audience invalid"),
        ClaimInvalid => row("claim_invalid", 401, -32001, "context token claim invalid"),
        TokenExpired => row("token_expired", 401, -32001, "context token expired"),
        TokenIssuedInFuture => row(
            "token_issued_in_future",
            401,
            -32001,
            "context token issued in the future",
        ),
        TokenTooOld => row("token_too_old", 401, -32001, "context token too old"),
        TokenNotYetValid => row("token_not_yet_valid", 401, -32001, "context token not yet valid"),
        ContextMalformed => row("context_malformed", 400, -32602, "malformed context value"),
        ToolMismatch => row("tool_mismatch", 403, -32003, "context token is for another tool"),
        ProtocolUnsupported => row(
            "protocol_unsupported",
            403,
            -32003,
            "unsupported context protocol",
        ),
        MetaMismatch => row("meta_mismatch", 403, -32003, "context does not match the token"),
        MetaMissing => row("meta_missing", 403, -32003, "context missing from _meta"),
        ClaimMissing => row(
            "claim_missing",
            403,
            -32003,
            "context key not vouched for by the token",
        ),
        /// The policy (CONTRACT §8) denies the call: a rule for its tool
        /// evaluated to false, to an error or to a value that is not a
        /// bool, or no rule names the tool and the default denies. The
        /// refusal names the rule (`data.rule`), never an argument.
        PolicyDenied => row("policy_denied", 403, -32004, "call denied by policy"),
        TokenReplayed => row("token_replayed", 401, -32001, "context token already used"),
        /// The replay guard holds its capacity of live token ids: this
        /// fresh token cannot be recorded. Retryable; never a replay.
        ReplayGuardFull => row(
            "replay_guard_full",
            503,
            -32603,
            "replay guard is full: retry later",
        ),
        // AIVAX profile (CONTRACT §7).
        NonceMissing => row("nonce_missing", 401, -32001, "AIVAX nonce missing"),
        NonceInvalid => row("nonce_invalid", 401, -32001, "AIVAX nonce invalid"),
        // Fail closed when a front end cannot decide.
        /// The front end could not run the check (a host call failed, it is
        /// misconfigured): the request is refused, never passed.
        InternalError => row(
            "internal_error",
            500,
            -32603,
            "request refused: the verifier could not run",
        ),
    }
}

impl Reason {
    /// The stable machine code, e.g. `"token_expired"`.
    pub const fn as_str(self) -> &'static str {
        self.row().code
    }

    /// The HTTP status of the refusal.
    pub const fn status(self) -> u16 {
        self.row().status
    }

    /// The JSON-RPC error code of the refusal.
    pub const fn code(self) -> i32 {
        self.row().rpc
    }

    /// The JSON-RPC error message of the refusal.
    pub const fn message(self) -> &'static str {
        self.row().message
    }

    /// Whether the refusal answers `id: null` whatever the request's id:
    /// refusals at steps 1 to 4 (CONTRACT §3), before the body is read or
    /// while it cannot be trusted. [`Refusal::new`](crate::Refusal::new)
    /// applies it; every later refusal answers with the request's own id.
    pub const fn answers_null_id(self) -> bool {
        matches!(
            self,
            Reason::CredentialMissing
                | Reason::CredentialInvalid
                | Reason::BodyTooLarge
                | Reason::ParseError
                | Reason::DuplicateMember
                | Reason::TooDeep
                | Reason::BatchWithToolsCall
        )
    }

    /// The reason for a machine code, the inverse of [`Reason::as_str`].
    pub fn from_code(code: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == code)
    }
}

impl core::fmt::Display for Reason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ALL` is generated with the enum: each variant once, at the index of
    /// its discriminant, so nothing reading `ALL` misses one.
    #[test]
    fn all_lists_every_variant_in_order() {
        for (i, r) in Reason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
        }
    }

    #[test]
    fn codes_are_unique_and_round_trip() {
        for (i, r) in Reason::ALL.iter().enumerate() {
            assert_eq!(Reason::from_code(r.as_str()), Some(*r));
            for other in Reason::ALL.iter().skip(i + 1) {
                assert_ne!(r.as_str(), other.as_str());
            }
        }
    }
}
