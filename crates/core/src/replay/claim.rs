//! What a claim is and what a store may answer, a leaf of the replay guard:
//! the in-process cache, the Redis command and its reading all use it.

use alloc::string::String;

use crate::reason::Reason;

/// What a replay store answers when asked to record a token id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClaimAnswer {
    /// The id was unused; it is now recorded until the claim's `until`.
    FirstUse,
    /// The id is recorded already: the token is replayed.
    Used,
    /// The store holds its capacity of live ids and cannot record this
    /// one: not a replay, a retryable refusal.
    Full,
    /// The store could not answer (down, timed out, a bad reply).
    Failed,
}

impl ClaimAnswer {
    pub const ALL: [ClaimAnswer; 4] = [
        ClaimAnswer::FirstUse,
        ClaimAnswer::Used,
        ClaimAnswer::Full,
        ClaimAnswer::Failed,
    ];

    /// The answer of a store that says only whether the id was unused
    /// (`true`: first use, `false`: used) and fails by raising: such a
    /// store can never answer [`ClaimAnswer::Full`].
    pub fn of(first_use: bool) -> ClaimAnswer {
        if first_use {
            ClaimAnswer::FirstUse
        } else {
            ClaimAnswer::Used
        }
    }

    /// The answer's name in every language (`first_use`, `used`, `full`,
    /// `failed`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ClaimAnswer::FirstUse => "first_use",
            ClaimAnswer::Used => "used",
            ClaimAnswer::Full => "full",
            ClaimAnswer::Failed => "failed",
        }
    }

    /// The answer a custom store gave by name; any other name is no answer
    /// at all: [`ClaimAnswer::Failed`], never a first use.
    pub fn from_name(name: &str) -> ClaimAnswer {
        ClaimAnswer::ALL
            .into_iter()
            .find(|a| a.as_str() == name)
            .unwrap_or(ClaimAnswer::Failed)
    }

    /// The rule: `Ok` to accept, else the refusal's reason.
    pub fn verdict(self) -> Result<(), Reason> {
        match self {
            ClaimAnswer::FirstUse => Ok(()),
            ClaimAnswer::Used => Err(Reason::TokenReplayed),
            ClaimAnswer::Full => Err(Reason::ReplayGuardFull),
            ClaimAnswer::Failed => Err(Reason::InternalError),
        }
    }
}

/// What an accepted call must record in the replay guard: its token id,
/// until the Unix second from which the token is refused as expired
/// (`exp + clock_skew_s`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayClaim {
    pub jti: String,
    pub until: u64,
}
