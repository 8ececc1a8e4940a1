//! The strict JSON reader and writer every check goes through.
//!
//! RFC 8259 and nothing more: duplicate member names are refused (compared
//! after unescaping), nesting is limited, strings must be valid UTF-8 with no
//! lone surrogate escapes. The first offending position in the document
//! decides which error is reported. Strings without escapes are borrowed from
//! the input, so reading a typical request allocates little.

use alloc::borrow::Cow;
use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;

use crate::scan;

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
        const MAX: u64 = (1 << 53) - 1;
        let Value::Number(text) = self else {
            return None;
        };
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, &**text),
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

/// A number's value as (negative, significant digits, exponent), with no
/// leading or trailing zeros in the digits; zero is (false, [], 0).
fn normalize(text: &str) -> (bool, Vec<u8>, i64) {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exp_text) = match rest.find(['e', 'E']) {
        Some(i) => (rest.get(..i).unwrap_or(""), rest.get(i + 1..).unwrap_or("")),
        None => (rest, ""),
    };
    // Exponents beyond any realistic document saturate; both sides of a
    // comparison saturate alike.
    let mut exp: i64 = 0;
    let (exp_negative, exp_digits) = match exp_text.as_bytes().first() {
        Some(b'-') => (true, exp_text.get(1..).unwrap_or("")),
        Some(b'+') => (false, exp_text.get(1..).unwrap_or("")),
        _ => (false, exp_text),
    };
    for b in exp_digits.bytes() {
        exp = exp
            .saturating_mul(10)
            .saturating_add(i64::from(b.wrapping_sub(b'0')));
    }
    if exp_negative {
        exp = -exp;
    }
    let mut digits = Vec::with_capacity(mantissa.len());
    let mut seen_point = false;
    for b in mantissa.bytes() {
        if b == b'.' {
            seen_point = true;
        } else {
            if seen_point {
                exp = exp.saturating_sub(1);
            }
            if !(digits.is_empty() && b == b'0') {
                digits.push(b);
            }
        }
    }
    while digits.last() == Some(&b'0') {
        digits.pop();
        exp = exp.saturating_add(1);
    }
    if digits.is_empty() {
        return (false, digits, 0);
    }
    (negative, digits, exp)
}

fn number_eq(a: &str, b: &str) -> bool {
    a == b || normalize(a) == normalize(b)
}

/// Writes `s` as a JSON string: quotes, backslashes and control characters
/// escaped, everything else as UTF-8.
pub fn write_str(s: &str, out: &mut String) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(s.get(start..i).unwrap_or(""));
        if esc.is_empty() {
            let _ = write!(out, "\\u{:04x}", b);
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(s.get(start..).unwrap_or(""));
    out.push('"');
}

/// Reads one JSON document; trailing whitespace only.
pub fn parse(src: &[u8]) -> Result<Value<'_>, JsonError> {
    parse_as(src, Keep::All)
}

/// Reads a JSON-RPC request with the same strictness as [`parse`], but
/// keeps only what the checks read: top-level `method`, `id` and `params`
/// (of which `name` and `_meta`), and `method` of batch elements. The rest
/// is validated and dropped, which spares building `arguments`.
pub(crate) fn parse_request(src: &[u8]) -> Result<Value<'_>, JsonError> {
    parse_as(src, Keep::Request)
}

fn parse_as(src: &[u8], keep: Keep) -> Result<Value<'_>, JsonError> {
    // Valid UTF-8 throughout (the usual case) is checked once; otherwise
    // each string is checked where it stands, so the first problem in the
    // document is the one reported.
    let text = core::str::from_utf8(src).ok();
    let mut p = Parser {
        src,
        text,
        pos: 0,
        names: Vec::with_capacity(32),
    };
    p.ws();
    let value = p.value(1, keep)?;
    p.ws();
    if p.pos != src.len() {
        return Err(JsonError::Syntax);
    }
    Ok(value)
}

/// Which parts of a value to build; the rest is only validated.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    All,
    Nothing,
    Request,
    BatchElement,
    Params,
}

impl Keep {
    fn member(self, name: &str) -> Keep {
        match (self, name) {
            (Keep::All, _) => Keep::All,
            (Keep::Request, "method" | "id") | (Keep::BatchElement, "method") => Keep::All,
            (Keep::Request, "params") => Keep::Params,
            (Keep::Params, "name" | "_meta") => Keep::All,
            _ => Keep::Nothing,
        }
    }

    fn element(self) -> Keep {
        match self {
            Keep::All => Keep::All,
            Keep::Request => Keep::BatchElement,
            _ => Keep::Nothing,
        }
    }
}

struct Parser<'a> {
    src: &'a [u8],
    /// `src` as text when it is valid UTF-8 as a whole.
    text: Option<&'a str>,
    pos: usize,
    /// Member names of the objects being read, innermost last: one buffer
    /// for the duplicate checks of every level.
    names: Vec<Cow<'a, str>>,
}

/// Objects with more members than this check duplicates through a set.
const LINEAR_DUPLICATE_SCAN: usize = 16;

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Result<(), JsonError> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(JsonError::Syntax)
        }
    }

    fn slice(&self, from: usize, to: usize) -> &'a [u8] {
        self.src.get(from..to).unwrap_or(&[])
    }

    fn value(&mut self, depth: usize, keep: Keep) -> Result<Value<'a>, JsonError> {
        match self.peek() {
            Some(b'{') => self.object(depth, keep),
            Some(b'[') => self.array(depth, keep),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(JsonError::Syntax),
        }
    }

    fn literal(&mut self, word: &[u8], v: Value<'a>) -> Result<Value<'a>, JsonError> {
        // Compare byte by byte so a truncated literal fails at its end.
        for &b in word {
            self.eat(b)?;
        }
        Ok(v)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Value<'a>, JsonError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(JsonError::Syntax),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(JsonError::Syntax);
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(JsonError::Syntax);
            }
        }
        let text =
            core::str::from_utf8(self.slice(start, self.pos)).map_err(|_| JsonError::Syntax)?;
        Ok(Value::Number(Cow::Borrowed(text)))
    }

    /// The string bytes from `from` to here; runs end at ASCII bytes, so
    /// they never split a UTF-8 sequence.
    fn run(&self, from: usize) -> Result<&'a str, JsonError> {
        match self.text {
            Some(text) => text.get(from..self.pos).ok_or(JsonError::Syntax),
            None => core::str::from_utf8(self.slice(from, self.pos)).map_err(|_| JsonError::Syntax),
        }
    }

    /// Advances over string bytes that need no attention.
    fn plain(&mut self) {
        let rest = self.src.get(self.pos..).unwrap_or(&[]);
        // Eight bytes at a time while none is `"`, `\\` or a control byte.
        let skipped = scan::skip_words(rest, scan::needs_attention);
        let tail = rest.get(skipped..).unwrap_or(&[]);
        let n = tail
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .unwrap_or(tail.len());
        self.pos += skipped + n;
    }

    fn string(&mut self) -> Result<Cow<'a, str>, JsonError> {
        self.eat(b'"')?;
        let start = self.pos;
        self.plain();
        if self.peek() == Some(b'"') {
            let s = self.run(start)?;
            self.pos += 1;
            return Ok(Cow::Borrowed(s));
        }
        let mut out = String::from(self.run(start)?);
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    self.pos += 1;
                    self.escape(&mut out)?;
                }
                Some(0x20..) => {
                    let from = self.pos;
                    self.plain();
                    out.push_str(self.run(from)?);
                }
                _ => return Err(JsonError::Syntax),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(b @ b'0'..=b'9') => b - b'0',
                Some(b @ b'a'..=b'f') => b - b'a' + 10,
                Some(b @ b'A'..=b'F') => b - b'A' + 10,
                _ => return Err(JsonError::Syntax),
            };
            v = (v << 4) | u32::from(d);
            self.pos += 1;
        }
        Ok(v)
    }

    fn escape(&mut self, out: &mut String) -> Result<(), JsonError> {
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                let hi = self.hex4()?;
                let code = match hi {
                    0xD800..=0xDBFF => {
                        self.eat(b'\\')?;
                        self.eat(b'u')?;
                        let lo = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return Err(JsonError::Syntax);
                        }
                        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return Err(JsonError::Syntax),
                    _ => hi,
                };
                out.push(char::from_u32(code).ok_or(JsonError::Syntax)?);
                return Ok(());
            }
            _ => return Err(JsonError::Syntax),
        };
        self.pos += 1;
        out.push(c);
        Ok(())
    }

    fn array(&mut self, depth: usize, keep: Keep) -> Result<Value<'a>, JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::TooDeep);
        }
        self.pos += 1;
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.ws();
            let item = self.value(depth + 1, keep.element())?;
            if keep != Keep::Nothing {
                items.push(item);
            }
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(JsonError::Syntax),
            }
        }
    }

    fn object(&mut self, depth: usize, keep: Keep) -> Result<Value<'a>, JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::TooDeep);
        }
        self.pos += 1;
        // Sized for a typical JSON-RPC request or token payload: growing a
        // vector costs more than the spare slots.
        let mut members: Vec<(Cow<'a, str>, Value<'a>)> = match keep {
            Keep::Nothing => Vec::new(),
            _ => Vec::with_capacity(16),
        };
        let base = self.names.len();
        // Large objects would make a linear duplicate scan quadratic.
        let mut set: Option<BTreeSet<Cow<'a, str>>> = None;
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(JsonError::Syntax);
            }
            let name = self.string()?;
            let duplicate = match set.as_mut() {
                Some(set) => !set.insert(name.clone()),
                None => self.names.get(base..).unwrap_or(&[]).contains(&name),
            };
            if duplicate {
                return Err(JsonError::Duplicate);
            }
            self.names.push(name.clone());
            if set.is_none() && self.names.len() - base > LINEAR_DUPLICATE_SCAN {
                set = Some(
                    self.names
                        .get(base..)
                        .unwrap_or(&[])
                        .iter()
                        .cloned()
                        .collect(),
                );
            }
            self.ws();
            self.eat(b':')?;
            self.ws();
            let child = keep.member(&name);
            let value = self.value(depth + 1, child)?;
            if child != Keep::Nothing {
                members.push((name, value));
            }
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    self.names.truncate(base);
                    return Ok(Value::Object(members));
                }
                _ => return Err(JsonError::Syntax),
            }
        }
    }
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
        // Many members go through the set and still find the duplicate.
        let mut big = String::from("{");
        for i in 0..100 {
            big.push_str(&alloc::format!("\"k{i}\":{i},"));
        }
        big.push_str("\"k7\":0}");
        assert_eq!(err(&big), JsonError::Duplicate);
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
