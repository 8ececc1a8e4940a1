//! Printing: colour only on a terminal, times for people, tables.

use std::io::IsTerminal as _;

use serde_json::Value as J;

/// ANSI colours when standard output is a terminal and `NO_COLOR` is unset.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    color: bool,
}

impl Style {
    pub fn stdout() -> Style {
        Style {
            color: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    pub fn good(&self, s: &str) -> String {
        self.paint("32", s)
    }
    pub fn bad(&self, s: &str) -> String {
        self.paint("31", s)
    }
    pub fn warn(&self, s: &str) -> String {
        self.paint("33", s)
    }
    pub fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
    pub fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
}

/// `4m 12s`, `2h 5m`, `3d 4h`, `12s`: the two largest units.
pub fn duration(secs: u64) -> String {
    let units = [(86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")];
    let mut parts = Vec::new();
    let mut rest = secs;
    for (size, name) in units {
        if rest >= size || (size == 1 && parts.is_empty()) {
            parts.push(format!("{}{name}", rest / size));
            rest %= size;
        }
        if parts.len() == 2 {
            break;
        }
    }
    // `1h 0m` reads oddly: drop a trailing zero unit.
    if parts.len() == 2 && parts.last().is_some_and(|p| p.starts_with('0')) {
        parts.pop();
    }
    parts.join(" ")
}

/// `in 4m 12s`, `4m 12s ago` or `now`.
pub fn relative(t: u64, now: u64) -> String {
    match t.cmp(&now) {
        std::cmp::Ordering::Greater => format!("in {}", duration(t - now)),
        std::cmp::Ordering::Less => format!("{} ago", duration(now - t)),
        std::cmp::Ordering::Equal => "now".into(),
    }
}

/// `2026-11-29 19:40:00 UTC` from Unix seconds (proleptic Gregorian).
pub fn utc(t: u64) -> String {
    let days = (t / 86_400) as i64;
    let secs = t % 86_400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Pretty JSON, two-space indented.
pub fn pretty(v: &J) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// Indents every line after the first by `n` spaces.
pub fn indent_rest(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                l.to_string()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A plain-text table: each column as wide as its widest cell. `paint`
/// colours a finished cell (padding included) without changing widths.
pub fn table(
    header: &[&str],
    rows: &[Vec<String>],
    paint: &dyn Fn(usize, usize, String) -> String,
) -> String {
    let cols = header.len();
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| -> String {
        cells
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let w = width.get(i).copied().unwrap_or(0);
                if i + 1 == cols {
                    c
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    out.push('\n');
    for (r, row) in rows.iter().enumerate() {
        let cells = row
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                let w = width.get(c).copied().unwrap_or(0);
                let padded = if c + 1 == cols {
                    cell.clone()
                } else {
                    format!("{cell:<w$}")
                };
                paint(r, c, padded)
            })
            .collect::<Vec<_>>()
            .join("  ");
        out.push_str(cells.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_speech() {
        assert_eq!(duration(0), "0s");
        assert_eq!(duration(12), "12s");
        assert_eq!(duration(252), "4m 12s");
        assert_eq!(duration(3600), "1h");
        assert_eq!(duration(3900), "1h 5m");
        assert_eq!(duration(90_061), "1d 1h");
        assert_eq!(relative(1_000_252, 1_000_000), "in 4m 12s");
        assert_eq!(relative(1_000_000, 1_000_300), "5m ago");
        assert_eq!(relative(5, 5), "now");
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_767_225_600), "2026-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_798_761_599), "2026-12-31 23:59:59 UTC");
    }

    #[test]
    fn table_aligns() {
        let t = table(
            &["a", "bb"],
            &[vec!["xxx".into(), "y".into()]],
            &|_, _, s| s,
        );
        assert_eq!(t, "a    bb\nxxx  y\n");
    }
}
