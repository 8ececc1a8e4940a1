//! The strict JSON reader and writer every check goes through.
//!
//! RFC 8259 and nothing more: duplicate member names are refused (compared
//! after unescaping), nesting is limited, strings must be valid UTF-8 with no
//! lone surrogate escapes. The first offending position in the document
//! decides which error is reported. Strings without escapes are borrowed from
//! the input, so reading a typical request allocates little.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use crate::scan;

mod reader;
// The reader uses the values defined here, never the other way round.
pub use reader::parse;
pub(crate) use reader::{read, Doc, Item, Keep, Kind, Members, NameIndex};

/// Deepest nesting accepted: the top-level value is depth 1.
pub const MAX_DEPTH: usize = 64;

/// Why a document was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonError {
    /// Not JSON (grammar, UTF-8, lone surrogate, trailing data).
    Syntax,
    /// An object names the same member twice.
    Duplicate,
    /// More than [`MAX_DEPTH`] nested containers.
    TooDeep,
}

impl core::fmt::Display for JsonError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            JsonError::Syntax => "invalid JSON",
            JsonError::Duplicate => "duplicate member name",
            JsonError::TooDeep => "JSON nested too deeply",
        })
    }
}

impl core::error::Error for JsonError {}

/// A JSON value. Objects keep their members in document order.
#[derive(Debug, Clone)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    /// The number exactly as written (always valid JSON number syntax).
    Number(Cow<'a, str>),
    String(Cow<'a, str>),
    Array(Vec<Value<'a>>),
    Object(Vec<(Cow<'a, str>, Value<'a>)>),
}

impl<'a> Value<'a> {
    /// The member `name` of an object; `None` for anything else.
    pub fn get(&self, name: &str) -> Option<&Value<'a>> {
        match self {
            Value::Object(members) => members.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    /// A NumericDate: an integer literal (no fraction, no exponent) whose
    /// value is in `0..=2^53-1`.
    pub fn as_numeric_date(&self) -> Option<u64> {
        match self {
            Value::Number(text) => numeric_date(text),
            _ => None,
        }
    }

    /// A copy that no longer borrows from the input.
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(b),
            Value::Number(n) => Value::Number(Cow::Owned(n.into_owned())),
            Value::String(s) => Value::String(Cow::Owned(s.into_owned())),
            Value::Array(items) => Value::Array(items.into_iter().map(Value::into_owned).collect()),
            Value::Object(members) => Value::Object(
                members
                    .into_iter()
                    .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                    .collect(),
            ),
        }
    }

    /// An owned copy, leaving `self` as it is.
    pub fn to_owned_value(&self) -> Value<'static> {
        let own = |s: &Cow<'_, str>| Cow::Owned(String::from(&**s));
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(*b),
            Value::Number(n) => Value::Number(own(n)),
            Value::String(s) => Value::String(own(s)),
            Value::Array(items) => Value::Array(items.iter().map(Value::to_owned_value).collect()),
            Value::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (own(k), v.to_owned_value()))
                    .collect(),
            ),
        }
    }

    /// Serializes compactly, members in their stored order.
    pub fn write(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Number(n) => out.push_str(n),
            Value::String(s) => write_str(s, out),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Value::Object(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(k, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }
}

/// A JSON value kept as its compact text, as [`Value::write`] writes it:
/// what a verified context carries for an arbitrary JSON claim
/// (`metadata`), one string instead of a tree. Equal texts are equal
/// values; [`JsonText::parse`] (the reader's) gives the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonText(String);

impl JsonText {
    /// Text the strict reader read (and the crate wrote compactly).
    pub(crate) fn new(text: String) -> JsonText {
        JsonText(text)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
    // `parse` is the reader's (`reader.rs`).
}

/// JSON equality: objects ignore member order, arrays keep order, strings
/// compare by code point, numbers by exact decimal value (`1 == 1.0`).
impl PartialEq for Value<'_> {
    fn eq(&self, other: &Value<'_>) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => number_eq(a, b),
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
            }
            // Members are unique (the reader refuses duplicates), so equal
            // sizes plus every member found equal means equal objects.
            (Value::Object(a), Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| b.iter().any(|(k2, v2)| k == k2 && v == v2))
            }
            _ => false,
        }
    }
}

/// A number's value as parts that compare exactly whatever their length:
/// the value is `0.D × 10^(exponent + position)`, where `D` is `digits`
/// with its `.` left out.
pub(crate) struct Parts<'s> {
    pub(crate) negative: bool,
    /// The significant digits as written, `.` included, with no leading or
    /// trailing zeros; empty for zero.
    pub(crate) digits: &'s [u8],
    /// Where the first significant digit stands: the count of integer
    /// digits from it on, or minus the zeros between the point and it.
    pub(crate) position: i64,
    /// The exponent's sign and its digits without leading zeros (no
    /// digits: zero, whatever the sign).
    pub(crate) exp_negative: bool,
    pub(crate) exp_digits: &'s [u8],
}

impl<'s> Parts<'s> {
    /// Bytes, not `str` patterns: this is in every wasm front end.
    pub(crate) fn of(text: &'s str) -> Self {
        let text = text.as_bytes();
        let split = |s: &'s [u8], at: fn(&u8) -> bool| match s.iter().position(at) {
            Some(i) => (s.get(..i).unwrap_or(s), s.get(i + 1..).unwrap_or(&[])),
            None => (s, &[][..]),
        };
        let (negative, rest) = match text.split_first() {
            Some((b'-', r)) => (true, r),
            _ => (false, text),
        };
        let (mantissa, exp_text) = split(rest, |&b| b == b'e' || b == b'E');
        let (int, frac) = split(mantissa, |&b| b == b'.');
        let int_significant = trim_start(int, b"0");
        let position = if int_significant.is_empty() {
            -((frac.len() - trim_start(frac, b"0").len()) as i64)
        } else {
            int_significant.len() as i64
        };
        let (exp_negative, exp_text) = match exp_text.split_first() {
            Some((b'-', r)) => (true, r),
            Some((b'+', r)) => (false, r),
            _ => (false, exp_text),
        };
        let mut digits = trim_start(mantissa, b"0.");
        while let Some((b'0' | b'.', r)) = digits.split_last() {
            digits = r;
        }
        Parts {
            negative,
            digits,
            position,
            exp_negative,
            exp_digits: trim_start(exp_text, b"0"),
        }
    }

    pub(crate) fn significant(&self) -> impl Iterator<Item = &'s u8> {
        self.digits.iter().filter(|&&b| b != b'.')
    }
}

/// `s` without its leading bytes that are in `set`.
fn trim_start<'s>(mut s: &'s [u8], set: &[u8]) -> &'s [u8] {
    while let Some((b, r)) = s.split_first() {
        if !set.contains(b) {
            break;
        }
        s = r;
    }
    s
}

/// Exact numeric equality in time linear in the texts, with no allocation:
/// exponents of any length never saturate or wrap.
fn number_eq(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (x, y) = (Parts::of(a), Parts::of(b));
    if x.digits.is_empty() || y.digits.is_empty() {
        return x.digits.is_empty() && y.digits.is_empty();
    }
    x.negative == y.negative && x.significant().eq(y.significant()) && scale_eq(&x, &y)
}

/// Whether `x.exponent + x.position == y.exponent + y.position`, that is
/// `x.exponent - y.exponent == d` for the small `d = y.position -
/// x.position`, on the exponents' decimal digits. Positions are bounded by
/// the texts' lengths, so `|d|` fits in 64 bits (no 128-bit division, which
/// costs kilobytes of wasm).
fn scale_eq(x: &Parts<'_>, y: &Parts<'_>) -> bool {
    let d = i128::from(y.position) - i128::from(x.position);
    let x_negative = x.exp_negative && !x.exp_digits.is_empty();
    let y_negative = y.exp_negative && !y.exp_digits.is_empty();
    let (a, b) = (x.exp_digits, y.exp_digits);
    // Negated when x's exponent is negative: |a| - |b| == d when the signs
    // agree, |a| + |b| == d when they differ.
    let d = if x_negative { -d } else { d };
    let Ok(t) = u64::try_from(d.unsigned_abs()) else {
        return false;
    };
    if x_negative != y_negative {
        d >= 0 && digits_eq(a, b, false, t)
    } else if d < 0 {
        digits_eq(b, a, true, t)
    } else {
        digits_eq(a, b, true, t)
    }
}

/// Whether `a - b` (`subtract`) or `a + b` equals `t`, for decimal digit
/// strings of any length: one pass from the last digit, comparing each
/// digit of the result with `t`'s.
fn digits_eq(a: &[u8], b: &[u8], subtract: bool, mut t: u64) -> bool {
    let digit = |s: &[u8], i: usize| {
        s.len()
            .checked_sub(i + 1)
            .and_then(|j| s.get(j))
            .map_or(0, |&c| i32::from(c.wrapping_sub(b'0')))
    };
    let mut carry = 0;
    for i in 0..a.len().max(b.len()) {
        let mut r = if subtract {
            digit(a, i) - digit(b, i) - carry
        } else {
            digit(a, i) + digit(b, i) + carry
        };
        carry = 0;
        if r < 0 {
            r += 10;
            carry = 1;
        } else if r > 9 {
            r -= 10;
            carry = 1;
        }
        if r as u64 != t % 10 {
            return false;
        }
        t /= 10;
    }
    carry == 0 && t == 0
}

/// The NumericDate a number's text stands for, if it is one.
#[inline(never)]
fn numeric_date(text: &str) -> Option<u64> {
    const MAX: u64 = (1 << 53) - 1;
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let mut value: u64 = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
        if value > MAX {
            return None;
        }
    }
    (!negative || value == 0).then_some(value)
}

/// Writes `s` as a JSON string: quotes, backslashes and control characters
/// escaped, everything else as UTF-8.
pub fn write_str(s: &str, out: &mut String) {
    out.reserve(s.len() + 2);
    out.push('"');
    let mut rest = s;
    loop {
        let plain = scan::plain_len(rest.as_bytes());
        out.push_str(rest.get(..plain).unwrap_or(rest));
        let Some(&b) = rest.as_bytes().get(plain) else {
            break;
        };
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            _ => {
                out.push_str("\\u");
                crate::digits::push_hex(u32::from(b), 4, false, out);
            }
        }
        // An ASCII byte: the rest starts on a character boundary.
        rest = rest.get(plain + 1..).unwrap_or("");
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> JsonError {
        match parse(s.as_bytes()) {
            Err(e) => e,
            Ok(v) => unreachable!("{s} parsed as {v:?}"),
        }
    }

    #[test]
    fn grammar() {
        for ok in [
            "0",
            "-0",
            "1.5e-3",
            "\"a\\u00e9\\ud83d\\ude00\"",
            "[]",
            "{}",
            " {\"a\":[1,{}]} ",
            "true",
        ] {
            assert!(parse(ok.as_bytes()).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "01",
            "1.",
            ".5",
            "+1",
            "1e",
            "NaN",
            "[1,]",
            "{\"a\":1,}",
            "\u{feff}{}",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"a\nb\"",
            "{} x",
            "tru",
            "\"\\x\"",
            "'a'",
        ] {
            assert_eq!(err(bad), JsonError::Syntax, "{bad:?}");
        }
        assert_eq!(parse(b"\"\xff\"").err(), Some(JsonError::Syntax));
    }

    #[test]
    fn duplicates_after_unescaping_and_first_position_wins() {
        assert_eq!(err(r#"{"a":1,"\u0061":2}"#), JsonError::Duplicate);
        assert!(parse(br#"{"a":1,"A":2}"#).is_ok());
        assert_eq!(err(r#"{"a":1,"a":[[[[["#), JsonError::Duplicate);
        let deep = "[".repeat(65);
        assert_eq!(err(&deep), JsonError::TooDeep);
        let ok = "[".repeat(64) + &"]".repeat(64);
        assert!(parse(ok.as_bytes()).is_ok());
        // An object opened with `k0` to `k{n-1}`, unclosed.
        let opened = |n: usize| {
            let mut big = String::from("{");
            for i in 0..n {
                big.push_str(&alloc::format!("\"k{i}\":{i},"));
            }
            big
        };
        // Many members go through the sort and still find the duplicate.
        assert_eq!(
            err(&alloc::format!("{}\"k7\":0}}", opened(100))),
            JsonError::Duplicate
        );
        // A large object's duplicate is found when it ends, yet it is still
        // the error whatever fails after it, nested or not, escaped or not.
        let big = opened(40);
        assert!(parse(alloc::format!("{big}\"last\":0}}").as_bytes()).is_ok());
        for (text, want) in [
            (alloc::format!("{big}\"k3\":0"), JsonError::Duplicate),
            (
                alloc::format!("{big}\"\\u006b3\":0}}"),
                JsonError::Duplicate,
            ),
            (alloc::format!("{big}\"k39\":[1,}}"), JsonError::Duplicate),
            (alloc::format!("{big}\"x\":[1,}}"), JsonError::Syntax),
            (alloc::format!("{big}\"k0\":1,\"k"), JsonError::Duplicate),
            (alloc::format!("{big}\"x\":1,\"k"), JsonError::Syntax),
            (alloc::format!("[{big}\"k1\":0}},]"), JsonError::Duplicate),
            (
                alloc::format!("{{\"a\":{big}\"k1\":0}},\"a\":1}}"),
                JsonError::Duplicate,
            ),
        ] {
            assert_eq!(err(&text), want, "{text}");
        }
    }

    #[test]
    fn equality() {
        let p = |s: &'static str| parse(s.as_bytes()).unwrap_or(Value::Null);
        assert_eq!(p(r#"{"a":1,"b":[1,2]}"#), p(r#"{"b":[1,2.0],"a":1.0}"#));
        assert_ne!(p("[1,2]"), p("[2,1]"));
        assert_eq!(p("100"), p("1e2"));
        assert_eq!(p("0"), p("-0.0"));
        assert_ne!(p("1"), p("\"1\""));
        assert_ne!(p("10"), p("1"));
    }

    #[test]
    fn numbers_compare_exactly_at_any_exponent() {
        let eq = |a: &str, b: &str| {
            let (x, y) = (parse(a.as_bytes()), parse(b.as_bytes()));
            assert!(x.is_ok() && y.is_ok(), "{a} {b}");
            assert_eq!(x == y, y == x, "{a} {b} not symmetric");
            x == y
        };
        let cases = [
            // Exponents beyond 64 bits used to saturate: these differ.
            ("1e99999999999999999999", "1e99999999999999999998", false),
            ("1e9223372036854775807", "1e9223372036854775808", false),
            ("1e-99999999999999999999", "1e-99999999999999999998", false),
            ("1e99999999999999999999", "1e-99999999999999999999", false),
            ("1e18446744073709551616", "1", false),
            ("1.23e999999999999999996", "1.24e999999999999999996", false),
            ("-1e99999999999999999999", "1e99999999999999999999", false),
            // And these, equal once the digits' position counts, did not.
            ("10e-99999999999999999999", "1e-99999999999999999998", true),
            ("0.1e9223372036854775808", "1e9223372036854775807", true),
            ("1e100000000000000000000", "1000e99999999999999999997", true),
            (
                "123.45e-10000000000000000000",
                "12345e-10000000000000000002",
                true,
            ),
            (
                "0.00123e9999999999999999999",
                "1.23e9999999999999999996",
                true,
            ),
            // Small exponents of opposite signs meet through a sum.
            ("100e-1", "0.1e+2", true),
            ("0.001e3", "1000e-3", true),
            // Leading zeros in exponents, either case of `e`, explicit `+`.
            ("-1E+0001", "-10", true),
            ("-1E+0001", "-1", false),
            ("-1E+0000", "-1", true),
            ("1e-0001", "0.1", true),
            ("5e000000000000000000000000000002", "500", true),
            ("1e-00000000000000000000", "1", true),
            // Zero is zero whatever its sign or exponent.
            ("0e99999999999999999999", "0", true),
            ("-0", "0", true),
            ("-0.000e-99999999999999999999", "0e+5", true),
            ("0e99999999999999999999", "1e-99999999999999999999", false),
        ];
        for (a, b, equal) in cases {
            assert_eq!(eq(a, b), equal, "{a} vs {b}");
        }
        // An exponent of a million digits: one pass, no saturation.
        let nines = "9".repeat(1_000_000);
        let eights = "9".repeat(999_999) + "8";
        assert!(!eq(
            &alloc::format!("1e{nines}"),
            &alloc::format!("1e{eights}")
        ));
        assert!(eq(
            &alloc::format!("1e{nines}"),
            &alloc::format!("10e{eights}")
        ));
        let zeros = "0".repeat(1_000_000);
        assert!(eq(&alloc::format!("1e-{zeros}5"), "0.00001"));
    }

    #[test]
    fn number_equality_matches_a_reference() {
        // Small numbers through an independent reading: the exact value as
        // an integer numerator scaled to a common exponent.
        fn value(text: &str) -> (i128, i32) {
            let (m, e) = text.split_once(['e', 'E']).unwrap_or((text, "0"));
            let e: i32 = e.parse().unwrap_or(0);
            let (int, frac) = m.split_once('.').unwrap_or((m, ""));
            let digits = alloc::format!("{int}{frac}");
            (digits.parse().unwrap_or(0), e - frac.len() as i32)
        }
        fn same(a: &str, b: &str) -> bool {
            let ((ma, ea), (mb, eb)) = (value(a), value(b));
            let low = ea.min(eb);
            let scale = |m: i128, e: i32| m * 10i128.pow((e - low) as u32);
            scale(ma, ea) == scale(mb, eb)
        }
        let mantissas = [
            "0", "-0", "1", "-1", "10", "1.5", "15", "0.015", "150.0", "-1.50",
        ];
        let exponents = ["", "e0", "e+1", "E-2", "e005", "e-0003", "e1", "e-1", "E+2"];
        let mut texts = Vec::new();
        for m in mantissas {
            for e in exponents {
                texts.push(alloc::format!("{m}{e}"));
            }
        }
        for a in &texts {
            for b in &texts {
                assert_eq!(number_eq(a, b), same(a, b), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn numeric_dates() {
        let p = |s: &'static str| parse(s.as_bytes()).ok().and_then(|v| v.as_numeric_date());
        assert_eq!(p("1767225600"), Some(1767225600));
        assert_eq!(p("9007199254740991"), Some(9007199254740991));
        assert_eq!(p("9007199254740992"), None);
        assert_eq!(p("1767225600.0"), None);
        assert_eq!(p("1e9"), None);
        assert_eq!(p("-1"), None);
        assert_eq!(p("\"1\""), None);
    }

    #[test]
    fn writer_round_trips() {
        let src = r#"{"a":"q\"\\\n\u0001é","b":[1,true,null]}"#;
        let v = parse(src.as_bytes()).unwrap_or(Value::Null);
        let out = v.to_json();
        assert_eq!(parse(out.as_bytes()).unwrap_or(Value::Null), v);
    }
}
