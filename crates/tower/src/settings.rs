//! toolctx-tower's settings read through the core's table
//! (`toolctx_core::settings`, docs/CONTRACT.md §5.3): a value as its Rust
//! type holds it (a `Duration`, a count, a flag) is handed to the core as
//! the number or flag it is, and the core's answer is used: its default for
//! 0 where the range starts at 1, its refusal (`limit_out_of_range`) for a
//! value outside the range. No default, range or clamp is written here.

use std::time::Duration;

use toolctx_core::settings::{Raw, Setting, SettingError, Value};

/// A `Duration` setting (a row in milliseconds), as the core reads its
/// milliseconds (fractions rounded to the nearest one).
pub fn duration(row: &Setting, given: Duration) -> Result<Duration, SettingError> {
    match row.read(Raw::Number(given.as_nanos() as f64 / 1e6))? {
        Value::Number(ms) => Ok(Duration::from_millis(ms)),
        _ => Err(SettingError::Type(row.name)),
    }
}

/// A count setting (entries).
pub fn count(row: &Setting, given: usize) -> Result<usize, SettingError> {
    match row.read(Raw::Number(given as f64))? {
        Value::Number(n) => usize::try_from(n).map_err(|_| SettingError::Limit(row.name)),
        _ => Err(SettingError::Type(row.name)),
    }
}

/// A flag setting: the flag given, or the row's default when none is.
pub fn flag(row: &Setting, given: Option<bool>) -> bool {
    row.flag(given)
}

/// A millisecond row's default, for a builder that starts from it.
pub fn duration_or_default(row: &Setting) -> Duration {
    Duration::from_millis(number_default(row))
}

/// A count row's default, for a store that starts from it.
pub fn count_or_default(row: &Setting) -> usize {
    usize::try_from(number_default(row)).unwrap_or(usize::MAX)
}

fn number_default(row: &Setting) -> u64 {
    match row.read(Raw::Absent) {
        Ok(Value::Number(n)) => n,
        // Every row these are used for has a number as its default.
        _ => 0,
    }
}
