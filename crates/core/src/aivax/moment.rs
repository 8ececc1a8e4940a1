//! `_aiv_moment`: the ISO 8601 dates the profile reads, with their offset.

use alloc::string::String;

/// `_aiv_moment`: an ISO 8601 timestamp with its UTC offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moment {
    /// As sent.
    pub text: String,
    /// The instant, in Unix seconds (fraction dropped).
    pub unix_seconds: i64,
    /// The sender's offset from UTC, in minutes.
    pub offset_minutes: i32,
}

fn digits(s: &[u8]) -> Option<u32> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.iter().try_fold(0u32, |v, d| {
        v.checked_mul(10)?.checked_add(u32::from(d - b'0'))
    })
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`.
pub fn parse_moment(text: &str) -> Option<Moment> {
    let b = text.as_bytes();
    let field = |from: usize, to: usize| digits(b.get(from..to)?);
    let sep = |at: usize, c: u8| b.get(at) == Some(&c);
    if !(sep(4, b'-')
        && sep(7, b'-')
        && (sep(10, b'T') || sep(10, b't'))
        && sep(13, b':')
        && sep(16, b':'))
    {
        return None;
    }
    let (year, month, day) = (field(0, 4)?, field(5, 7)?, field(8, 10)?);
    let (hour, minute, second) = (field(11, 13)?, field(14, 16)?, field(17, 19)?);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let max_day = month_days.get(usize::try_from(month).ok()?.checked_sub(1)?)?;
    if day == 0 || day > *max_day || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut at = 19;
    if sep(at, b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == start {
            return None;
        }
    }
    let offset_minutes: i32 = match b.get(at..)? {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (h, m) = (digits(&[*h1, *h2])?, digits(&[*m1, *m2])?);
            if h > 23 || m > 59 {
                return None;
            }
            let minutes = i32::try_from(h * 60 + m).ok()?;
            if *sign == b'-' {
                -minutes
            } else {
                minutes
            }
        }
        _ => return None,
    };
    let days = days_from_civil(i64::from(year), i64::from(month), i64::from(day));
    let local = days * 86_400 + i64::from(hour) * 3600 + i64::from(minute) * 60 + i64::from(second);
    Some(Moment {
        text: String::from(text),
        unix_seconds: local - i64::from(offset_minutes) * 60,
        offset_minutes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments() {
        let m = parse_moment("2025-09-09T16:58:05.0000000+00:00").unwrap();
        assert_eq!((m.unix_seconds, m.offset_minutes), (1_757_437_085, 0));
        let m = parse_moment("2025-09-09T19:58:05+03:00").unwrap();
        assert_eq!((m.unix_seconds, m.offset_minutes), (1_757_437_085, 180));
        assert_eq!(
            parse_moment("1970-01-01T00:00:00Z").unwrap().unix_seconds,
            0
        );
        assert_eq!(
            parse_moment("2024-02-29T00:00:00-01:30")
                .unwrap()
                .unix_seconds,
            1_709_170_200
        );
        for bad in [
            "2025-09-09T16:58:05",
            "2025-02-29T00:00:00Z",
            "2025-13-01T00:00:00Z",
            "2025-09-09 16:58:05Z",
            "2025-09-09T16:58:05.+00:00",
            "2025-09-09T16:58:05+0000",
            "2025-09-09T24:00:00Z",
            "２025-09-09T16:58:05Z",
        ] {
            assert_eq!(parse_moment(bad), None, "{bad}");
        }
    }
}
