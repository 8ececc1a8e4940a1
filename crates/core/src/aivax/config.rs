//! The AIVAX profile's own settings and their ranges.

use alloc::vec::Vec;

use crate::config::ConfigError;

/// Highest bcrypt cost accepted unless configured otherwise.
pub const DEFAULT_MAX_BCRYPT_COST: u32 = 12;
pub(super) const MIN_BCRYPT_COST: u32 = 4;
const MAX_BCRYPT_COST: u32 = 31;

/// Settings of the AIVAX profile.
#[derive(Clone, PartialEq, Eq)]
pub struct AivaxConfig {
    /// The account hook key in plain text (1..=72 bytes, no NUL).
    pub hook_key: Vec<u8>,
    /// Refuse a call whose `_aiv_nonce` is missing or `null`.
    pub require_nonce: bool,
    /// Highest bcrypt cost worked on (4..=31).
    pub max_bcrypt_cost: u32,
}

impl core::fmt::Debug for AivaxConfig {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AivaxConfig")
            .field("hook_key", &"[redacted]")
            .field("require_nonce", &self.require_nonce)
            .field("max_bcrypt_cost", &self.max_bcrypt_cost)
            .finish()
    }
}

impl AivaxConfig {
    pub fn new(hook_key: Vec<u8>) -> AivaxConfig {
        AivaxConfig {
            hook_key,
            require_nonce: true,
            max_bcrypt_cost: DEFAULT_MAX_BCRYPT_COST,
        }
    }

    /// Whether the settings are usable.
    pub fn validate(&self) -> Result<(), ConfigError> {
        // bcrypt reads at most 72 bytes and stops at NUL: a longer key or
        // one with NUL would be silently shortened.
        if crate::settings::has_placeholder(&self.hook_key) {
            return Err(ConfigError::Placeholder("hook_key"));
        }
        if self.hook_key.is_empty() || self.hook_key.len() > 72 || self.hook_key.contains(&0) {
            return Err(ConfigError::Invalid("hook_key"));
        }
        if !(MIN_BCRYPT_COST..=MAX_BCRYPT_COST).contains(&self.max_bcrypt_cost) {
            return Err(ConfigError::Limit("max_bcrypt_cost"));
        }
        Ok(())
    }
}
