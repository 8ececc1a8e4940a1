//! Every setting a front end accepts, read one way (CONTRACT §5, precise
//! point on settings): one table ([`TABLE`]) of defaults and ranges, and
//! one reading ([`read`]) of the value a user gave, whatever its host
//! language. A front end hands the user's value over as it came ([`Raw`])
//! and applies the answer; it keeps no default, range or clamp of its own.
//!
//! The reading, the same for every row:
//! - absent (`None`, `null`, `undefined`, an unset option): the default;
//!   a setting without one is refused `config_missing`.
//! - the wrong type (a string for a number, a number for a flag, ...):
//!   `config_type`.
//! - a number: NaN, infinite, negative or outside the range is refused
//!   `limit_out_of_range`. 0 is the default when the range starts at 1
//!   (Go's and Java's unset fields are 0, so no setting gives 0 another
//!   meaning there), and itself when the range starts at 0 (a clock skew
//!   of 0, a nonce cache of 0: off). Durations in milliseconds are rounded
//!   to the nearest one (hosts count them in fractions: seconds times
//!   1000, nanoseconds over 10^6); counts, bytes and seconds must be whole.
//! - a text: an unresolved placeholder (`${NAME}`, left by a configuration
//!   framework whose variable was unset) is refused `config_placeholder`,
//!   never used as an instance id, a secret, an address or a prefix.

use alloc::string::String;

/// A value as the user gave it to a front end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Raw<'a> {
    /// Not given (`None`, `null`, `undefined`, an unset field).
    Absent,
    Flag(bool),
    /// Any number, as the host holds it (an integer converted exactly up
    /// to 2^53, which is past every range).
    Number(f64),
    Text(&'a str),
    /// Anything else (a list, a map, an object).
    Other,
}

/// What a setting holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `true` or `false`.
    Flag,
    /// Milliseconds: a fraction is rounded to the nearest one.
    Millis,
    /// Seconds, whole.
    Seconds,
    /// A whole number of entries.
    Count,
    /// A whole number of bytes.
    Bytes,
    /// A text (an id, a secret, an address, a prefix).
    Text,
}

impl Kind {
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::Flag => "flag",
            Kind::Millis => "ms",
            Kind::Seconds => "s",
            Kind::Count => "count",
            Kind::Bytes => "bytes",
            Kind::Text => "text",
        }
    }
}

/// A setting's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultValue {
    /// None: the setting must be given.
    Required,
    Flag(bool),
    Number(u64),
    Text(&'static str),
}

/// One row of [`TABLE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// Its name in the core's configuration, the vectors and the docs (a
    /// front end spells it as its language does: `ttlMs`, `TTL`, ...).
    pub name: &'static str,
    pub kind: Kind,
    pub default: DefaultValue,
    /// The range of a number (both ends included); 0..0 for the others.
    pub min: u64,
    pub max: u64,
}

/// A setting's value, once read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Flag(bool),
    Number(u64),
    Text(&'a str),
}

const fn flag(name: &'static str, default: bool) -> Setting {
    Setting {
        name,
        kind: Kind::Flag,
        default: DefaultValue::Flag(default),
        min: 0,
        max: 0,
    }
}

const fn number(
    name: &'static str,
    kind: Kind,
    default: DefaultValue,
    min: u64,
    max: u64,
) -> Setting {
    Setting {
        name,
        kind,
        default,
        min,
        max,
    }
}

const fn text(name: &'static str, default: DefaultValue) -> Setting {
    Setting {
        name,
        kind: Kind::Text,
        default,
        min: 0,
        max: 0,
    }
}

use DefaultValue::Number as N;

// The defaults and bounds, one constant each; the modules that use them
// (config, redis, replay, helpers) re-export them from here.

/// The verifier's clock skew, token age and size limits (CONTRACT §1); the
/// upper bounds catch a unit mistake (milliseconds for seconds, ...).
pub const DEFAULT_CLOCK_SKEW_S: u64 = 30;
pub const MAX_CLOCK_SKEW_S: u64 = 3600;
pub const DEFAULT_MAX_TOKEN_AGE_S: u64 = 600;
pub const MAX_TOKEN_AGE_LIMIT_S: u64 = 7 * 24 * 3600;
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
pub const MAX_BODY_LIMIT: usize = 64 * 1024 * 1024;
pub const DEFAULT_MAX_TOKEN_BYTES: usize = 8 * 1024;
pub const MAX_TOKEN_LIMIT: usize = 64 * 1024;

/// How many live token ids an in-process replay store holds unless told
/// otherwise: 300 calls/s with 300 s tokens and 30 s of clock skew.
pub const DEFAULT_REPLAY_CAPACITY: usize = 100_000;
/// The largest capacity a front end may ask for: what a `u32` holds, so
/// that every host (a 32-bit wasm one too) holds the same ids.
pub const MAX_REPLAY_CAPACITY: u32 = u32::MAX;

/// How long one store command may wait for its reply, in milliseconds,
/// before the store counts as failed (the call is refused, never let
/// through). One value for every front end: the replay claim sits on every
/// guarded call's path, a healthy Redis on the same network answers in
/// well under a millisecond, and a paused one should fail calls in half a
/// second rather than hold them (the gateways' limit since they took Redis).
pub const STORE_TIMEOUT_MS: u64 = 500;
/// The longest store timeout: a store that has not answered in a minute
/// is down, and a longer bound would only hold every guarded call that
/// long before refusing it. It is also well under the longest timer every
/// host keeps (JavaScript's `setTimeout` fires at once past 2^31 - 1 ms).
pub const MAX_STORE_TIMEOUT_MS: u64 = 60_000;
/// The Redis replay guard's key prefix when none is configured.
pub const REPLAY_KEY_PREFIX: &str = "toolctx:jti:";

/// How long an idempotent result is kept: 24 h; at most 30 days (past
/// that it is a unit mistake).
pub const DEFAULT_TTL_MS: u64 = 24 * 60 * 60 * 1000;
pub const MAX_TTL_MS: u64 = 30 * 24 * 3600 * 1000;
/// How long a claim lasts if its process dies before completing it: 30 min
/// (above the platform's longest tool timeout, 1800 s); at most a day.
pub const DEFAULT_LEASE_MS: u64 = 30 * 60 * 1000;
pub const MAX_LEASE_MS: u64 = 24 * 3600 * 1000;
/// How long a duplicate waits for the first call to finish: 60 s; at most
/// the platform's longest tool timeout (1800 s): past it nobody waits for
/// the answer. A wait of 0 is not a setting: 0 reads as the default in
/// every front end (Go's and Java's unset fields are 0); the shortest
/// wait is 1 ms.
pub const DEFAULT_WAIT_MS: u64 = 60 * 1000;
pub const MAX_WAIT_MS: u64 = 1800 * 1000;
/// Entries an in-memory idempotency store keeps (least recently used out
/// first); at most what a `u32` holds, as the replay guard's.
pub const DEFAULT_MEMORY_ENTRIES: usize = 10_000;
/// The idempotency helper's Redis key prefix when none is configured.
pub const IDEMPOTENCY_KEY_PREFIX: &str = "toolctx:idem:";

/// The least time between two progress sends: the platform's rate; at
/// most a minute (a longer pause reads as a stalled tool).
pub const PROGRESS_INTERVAL_MS: u64 = 500;
pub const MAX_PROGRESS_INTERVAL_MS: u64 = 60_000;

/// The AIVAX verified-nonce cache: entries by default and at most (it is
/// searched linearly, each entry costs its nonce's 60 bytes); 0 is off.
pub const DEFAULT_NONCE_CACHE: usize = 1024;
pub const MAX_NONCE_CACHE: usize = 4096;

/// The gateways' replay table (the Envoy filter's shared data): buckets
/// (required), and token ids per bucket.
pub const MAX_REPLAY_SLOTS: u32 = 1 << 20;
pub const DEFAULT_REPLAY_WAYS: u32 = 4;
pub const MAX_REPLAY_WAYS: u32 = 16;

pub const INSTANCE_ID: Setting = text("instance_id", DefaultValue::Required);
pub const SECRET: Setting = text("secret", DefaultValue::Required);
pub const REQUIRE_CONTEXT: Setting = flag("require_context", true);
pub const CLOCK_SKEW_S: Setting = number(
    "clock_skew_s",
    Kind::Seconds,
    N(DEFAULT_CLOCK_SKEW_S),
    0,
    MAX_CLOCK_SKEW_S,
);
pub const MAX_TOKEN_AGE_S: Setting = number(
    "max_token_age_s",
    Kind::Seconds,
    N(DEFAULT_MAX_TOKEN_AGE_S),
    0,
    MAX_TOKEN_AGE_LIMIT_S,
);
pub const MAX_BODY_BYTES: Setting = number(
    "max_body_bytes",
    Kind::Bytes,
    N(DEFAULT_MAX_BODY_BYTES as u64),
    1,
    MAX_BODY_LIMIT as u64,
);
pub const MAX_TOKEN_BYTES: Setting = number(
    "max_token_bytes",
    Kind::Bytes,
    N(DEFAULT_MAX_TOKEN_BYTES as u64),
    1,
    MAX_TOKEN_LIMIT as u64,
);
pub const INCLUDE_REASON: Setting = flag("include_reason", true);
pub const REPLAY_CAPACITY: Setting = number(
    "replay_capacity",
    Kind::Count,
    N(DEFAULT_REPLAY_CAPACITY as u64),
    1,
    MAX_REPLAY_CAPACITY as u64,
);
pub const STORE_TIMEOUT: Setting = number(
    "store_timeout_ms",
    Kind::Millis,
    N(STORE_TIMEOUT_MS),
    1,
    MAX_STORE_TIMEOUT_MS,
);
pub const REDIS_URL: Setting = text("redis_url", DefaultValue::Required);
pub const REPLAY_PREFIX: Setting = text("replay_key_prefix", DefaultValue::Text(REPLAY_KEY_PREFIX));
pub const TTL: Setting = number(
    "idempotency_ttl_ms",
    Kind::Millis,
    N(DEFAULT_TTL_MS),
    1,
    MAX_TTL_MS,
);
pub const LEASE: Setting = number(
    "idempotency_lease_ms",
    Kind::Millis,
    N(DEFAULT_LEASE_MS),
    1,
    MAX_LEASE_MS,
);
pub const WAIT: Setting = number(
    "idempotency_wait_ms",
    Kind::Millis,
    N(DEFAULT_WAIT_MS),
    1,
    MAX_WAIT_MS,
);
pub const MEMORY_ENTRIES: Setting = number(
    "idempotency_memory_entries",
    Kind::Count,
    N(DEFAULT_MEMORY_ENTRIES as u64),
    1,
    MAX_REPLAY_CAPACITY as u64,
);
pub const IDEMPOTENCY_PREFIX: Setting = text(
    "idempotency_key_prefix",
    DefaultValue::Text(IDEMPOTENCY_KEY_PREFIX),
);
pub const PROGRESS_INTERVAL: Setting = number(
    "progress_interval_ms",
    Kind::Millis,
    N(PROGRESS_INTERVAL_MS),
    1,
    MAX_PROGRESS_INTERVAL_MS,
);
pub const NONCE_CACHE: Setting = number(
    "nonce_cache",
    Kind::Count,
    N(DEFAULT_NONCE_CACHE as u64),
    0,
    MAX_NONCE_CACHE as u64,
);
pub const REPLAY_SLOTS: Setting = number(
    "replay_slots",
    Kind::Count,
    DefaultValue::Required,
    1,
    MAX_REPLAY_SLOTS as u64,
);
pub const REPLAY_WAYS: Setting = number(
    "replay_ways",
    Kind::Count,
    N(DEFAULT_REPLAY_WAYS as u64),
    1,
    MAX_REPLAY_WAYS as u64,
);

/// Every setting a front end accepts: one default and one range each.
pub const TABLE: [Setting; 21] = [
    INSTANCE_ID,
    SECRET,
    REQUIRE_CONTEXT,
    CLOCK_SKEW_S,
    MAX_TOKEN_AGE_S,
    MAX_BODY_BYTES,
    MAX_TOKEN_BYTES,
    INCLUDE_REASON,
    REPLAY_CAPACITY,
    STORE_TIMEOUT,
    REDIS_URL,
    REPLAY_PREFIX,
    TTL,
    LEASE,
    WAIT,
    MEMORY_ENTRIES,
    IDEMPOTENCY_PREFIX,
    PROGRESS_INTERVAL,
    NONCE_CACHE,
    REPLAY_SLOTS,
    REPLAY_WAYS,
];

/// Why a value was refused, naming the setting: `config_missing`,
/// `config_type`, `limit_out_of_range`, `config_placeholder` and
/// `config_unknown_setting`, as the core's `ConfigError` says them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingError {
    Missing(&'static str),
    Type(&'static str),
    Limit(&'static str),
    Placeholder(&'static str),
    Unknown(String),
}

impl SettingError {
    /// Every code, in the order of the variants.
    pub const CODES: [&'static str; 5] = [
        "config_missing",
        "config_type",
        "limit_out_of_range",
        "config_placeholder",
        "config_unknown_setting",
    ];

    /// A stable machine code.
    pub const fn code(&self) -> &'static str {
        match self {
            SettingError::Missing(_) => "config_missing",
            SettingError::Type(_) => "config_type",
            SettingError::Limit(_) => "limit_out_of_range",
            SettingError::Placeholder(_) => "config_placeholder",
            SettingError::Unknown(_) => "config_unknown_setting",
        }
    }
}

/// The messages of `ConfigError` for the codes they share.
impl core::fmt::Display for SettingError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SettingError::Missing(name) => write!(f, "setting `{name}` is required"),
            SettingError::Type(name) => write!(f, "setting `{name}` has the wrong type"),
            SettingError::Limit(name) => write!(f, "setting `{name}` is out of range"),
            SettingError::Placeholder(name) => placeholder_message(name, f),
            SettingError::Unknown(name) => write!(f, "unknown setting `{name}`"),
        }
    }
}

impl core::error::Error for SettingError {}

/// The one message of `config_placeholder`, for this table's refusal and
/// the core's `ConfigError` alike.
pub fn placeholder_message(name: &str, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
    // Written in pieces, not `write!`: no formatting arguments for the
    // npm verifier's module to carry.
    f.write_str("setting `")?;
    f.write_str(name)?;
    f.write_str("` holds an unresolved placeholder `${...}`: set the variable it names")
}

/// The row named `name`.
pub fn setting(name: &str) -> Option<&'static Setting> {
    TABLE.iter().find(|s| s.name == name)
}

/// The one reading of a user's value for a setting of the table (see the
/// module's documentation).
pub fn read<'a>(name: &str, raw: Raw<'a>) -> Result<Value<'a>, SettingError> {
    setting(name)
        .ok_or_else(|| SettingError::Unknown(name.into()))?
        .read(raw)
}

impl Setting {
    /// [`read`] for this row.
    pub fn read<'a>(&self, raw: Raw<'a>) -> Result<Value<'a>, SettingError> {
        let name = self.name;
        match (self.kind, raw) {
            (_, Raw::Absent) => match self.default {
                DefaultValue::Required => Err(SettingError::Missing(name)),
                DefaultValue::Flag(b) => Ok(Value::Flag(b)),
                DefaultValue::Number(n) => Ok(Value::Number(n)),
                DefaultValue::Text(t) => Ok(Value::Text(t)),
            },
            (Kind::Flag, Raw::Flag(b)) => Ok(Value::Flag(b)),
            (Kind::Text, Raw::Text(t)) => text_value(name, t).map(Value::Text),
            (Kind::Millis | Kind::Seconds | Kind::Count | Kind::Bytes, Raw::Number(x)) => self
                .number(x)
                .map(Value::Number)
                .ok_or(SettingError::Limit(name)),
            _ => Err(SettingError::Type(name)),
        }
    }

    /// A number for a numeric row (see [`read`]); `None` is out of range
    /// (`limit_out_of_range`).
    pub fn number(&self, x: f64) -> Option<u64> {
        // `as` saturates (NaN and below 0 are 0); `x > 0.0` is false for
        // NaN and below 0.
        let millis = self.kind == Kind::Millis;
        let n = if millis { (x + 0.5) as u64 } else { x as u64 };
        if x == 0.0 {
            self.whole(0)
        } else if x > 0.0 && n > 0 && (millis || n as f64 == x) {
            self.whole(n)
        } else {
            None
        }
    }

    /// [`Setting::number`] for a whole number a host holds as one.
    pub fn whole(&self, n: u64) -> Option<u64> {
        match self.default {
            DefaultValue::Number(d) if n == 0 && self.min > 0 => Some(d),
            _ => (self.min..=self.max).contains(&n).then_some(n),
        }
    }

    /// A flag row's value from a host whose value may be of any type
    /// ([`read`] for a flag, without the number arms a small module has
    /// no room for): the flag, the default when absent, else `config_type`.
    pub fn flag_of(&self, raw: Raw<'_>) -> Result<bool, SettingError> {
        match raw {
            Raw::Absent => Ok(self.flag(None)),
            Raw::Flag(b) => Ok(b),
            _ => Err(SettingError::Type(self.name)),
        }
    }

    /// A flag row's value from a host that holds a flag or nothing (no
    /// wrong type to refuse): the flag, or the row's default.
    pub const fn flag(&self, raw: Option<bool>) -> bool {
        match (raw, self.default) {
            (Some(b), _) | (None, DefaultValue::Flag(b)) => b,
            _ => false,
        }
    }
}

/// Whether `text` holds an unresolved placeholder: `${` with a `}` after
/// it, as Spring, Compose, shells and dotenv tools write one and leave it
/// when its variable is unset.
// Not inlined: one copy for its callers, in the small modules too.
#[inline(never)]
pub fn has_placeholder(text: &[u8]) -> bool {
    // Bytes, not `str::find`: its substring searcher costs the npm
    // verifier's module kilobytes it has no room for (a secret is bytes).
    let mut open = false;
    let mut dollar = false;
    for &b in text {
        if open && b == b'}' {
            return true;
        }
        open |= dollar && b == b'{';
        dollar = b == b'$';
    }
    false
}

/// A text setting as given, or refused `config_placeholder` naming it.
pub fn text_value<'a>(name: &'static str, text: &'a str) -> Result<&'a str, SettingError> {
    if has_placeholder(text.as_bytes()) {
        Err(SettingError::Placeholder(name))
    } else {
        Ok(text)
    }
}

#[cfg(test)]
mod tests;
