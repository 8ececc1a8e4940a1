//! The policy language's tokens (CEL's lexical grammar), each with the byte
//! offset it starts at. Everything CEL's lexer reads is read here, so an
//! operator or literal outside the subset is refused by name at its place
//! rather than as a stray character.

use alloc::string::String;
use alloc::vec::Vec;

use super::error::{Error, ErrorKind};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Int(i64),
    /// An int literal's magnitude too large for `i64`: valid only after a
    /// unary minus (`-9223372036854775808`).
    IntMin,
    Uint(u64),
    Double(f64),
    Str(String),
    Bytes,
    Ident(String),
    /// A reserved word: a field name after `.`, an error anywhere else.
    Reserved(String),
    True,
    False,
    Null,
    In,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Dot,
    Comma,
    Question,
    Colon,
    Not,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Minus,
    /// `+`, `*`, `/`, `%`: CEL's arithmetic, outside the subset.
    Arith,
    End,
}

/// CEL's reserved words: an identifier spelled so is a syntax error.
const RESERVED: [&str; 17] = [
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

pub(crate) fn lex(src: &str) -> Result<Vec<(Tok, usize)>, Error> {
    let mut out = Vec::new();
    let b = src.as_bytes();
    let mut i = 0;
    loop {
        while let Some(c) = b.get(i) {
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => i += 1,
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    while b.get(i).is_some_and(|c| *c != b'\n') {
                        i += 1;
                    }
                }
                _ => break,
            }
        }
        let start = i;
        let Some(&c) = b.get(i) else {
            out.push((Tok::End, i));
            return Ok(out);
        };
        let two = |second: u8| b.get(i + 1) == Some(&second);
        let (tok, len) = match c {
            b'(' => (Tok::LParen, 1),
            b')' => (Tok::RParen, 1),
            b'[' => (Tok::LBracket, 1),
            b']' => (Tok::RBracket, 1),
            b'{' => (Tok::LBrace, 1),
            b'}' => (Tok::RBrace, 1),
            b',' => (Tok::Comma, 1),
            b'?' => (Tok::Question, 1),
            b':' => (Tok::Colon, 1),
            b'=' if two(b'=') => (Tok::Eq, 2),
            b'!' if two(b'=') => (Tok::Ne, 2),
            b'!' => (Tok::Not, 1),
            b'<' if two(b'=') => (Tok::Le, 2),
            b'<' => (Tok::Lt, 1),
            b'>' if two(b'=') => (Tok::Ge, 2),
            b'>' => (Tok::Gt, 1),
            b'&' if two(b'&') => (Tok::And, 2),
            b'|' if two(b'|') => (Tok::Or, 2),
            b'-' => (Tok::Minus, 1),
            b'+' | b'*' | b'/' | b'%' => (Tok::Arith, 1),
            b'.' if !b.get(i + 1).is_some_and(u8::is_ascii_digit) => (Tok::Dot, 1),
            b'0'..=b'9' | b'.' => number(b, i)?,
            b'"' | b'\'' => {
                let (s, end) = string(src, i, false)?;
                (Tok::Str(s), end - i)
            }
            b'r' | b'R' if matches!(b.get(i + 1), Some(b'"' | b'\'')) => {
                let (s, end) = string(src, i + 1, true)?;
                (Tok::Str(s), end - i)
            }
            b'b' | b'B' if bytes_literal(b, i) => {
                let raw = matches!(b.get(i + 1), Some(b'r' | b'R'));
                let (_, end) = string(src, if raw { i + 2 } else { i + 1 }, raw)?;
                (Tok::Bytes, end - i)
            }
            b'`' => return Err(Error::at(ErrorKind::Unsupported("quoted field names"), i)),
            c if c == b'_' || c.is_ascii_alphabetic() => {
                let mut end = i;
                while b
                    .get(end)
                    .is_some_and(|c| *c == b'_' || c.is_ascii_alphanumeric())
                {
                    end += 1;
                }
                let word = src.get(i..end).unwrap_or("");
                let tok = match word {
                    "true" => Tok::True,
                    "false" => Tok::False,
                    "null" => Tok::Null,
                    "in" => Tok::In,
                    w if RESERVED.contains(&w) => Tok::Reserved(String::from(w)),
                    w => Tok::Ident(String::from(w)),
                };
                (tok, end - i)
            }
            _ => return Err(Error::at(ErrorKind::Syntax("unexpected character"), i)),
        };
        out.push((tok, start));
        i += len;
    }
}

/// Whether a bytes literal starts at `i` (`b'`, `b"`, `br'`, ...).
fn bytes_literal(b: &[u8], i: usize) -> bool {
    let quote = |j: usize| matches!(b.get(j), Some(b'"' | b'\''));
    quote(i + 1) || (matches!(b.get(i + 1), Some(b'r' | b'R')) && quote(i + 2))
}

/// A numeric literal at `i`: decimal or hex int, `u`-suffixed uint, or
/// double (fraction and/or exponent).
fn number(b: &[u8], i: usize) -> Result<(Tok, usize), Error> {
    let err = |msg| Error::at(ErrorKind::Syntax(msg), i);
    let digits = |mut j: usize, hex: bool| {
        while b.get(j).is_some_and(|c| {
            if hex {
                c.is_ascii_hexdigit()
            } else {
                c.is_ascii_digit()
            }
        }) {
            j += 1;
        }
        j
    };
    let text = |end: usize| core::str::from_utf8(b.get(i..end).unwrap_or(b"")).unwrap_or("");
    if b.get(i) == Some(&b'0') && matches!(b.get(i + 1), Some(b'x' | b'X')) {
        let end = digits(i + 2, true);
        if end == i + 2 {
            return Err(err("invalid hex literal"));
        }
        let hex = core::str::from_utf8(b.get(i + 2..end).unwrap_or(b"")).unwrap_or("");
        let v = u64::from_str_radix(hex, 16).map_err(|_| err("integer literal out of range"))?;
        return int_or_uint(b, end, v, i);
    }
    let mut end = digits(i, false);
    let mut double = false;
    if b.get(end) == Some(&b'.') && b.get(end + 1).is_some_and(u8::is_ascii_digit) {
        end = digits(end + 1, false);
        double = true;
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let mut j = end + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let after = digits(j, false);
        if after == j {
            return Err(err("invalid exponent"));
        }
        end = after;
        double = true;
    }
    if double {
        let v: f64 = text(end)
            .parse()
            .map_err(|_| err("invalid double literal"))?;
        // CEL's parser refuses a literal past the double range.
        if v.is_infinite() {
            return Err(err("double literal out of range"));
        }
        return Ok((Tok::Double(v), end - i));
    }
    let v: u64 = text(end)
        .parse()
        .map_err(|_| err("integer literal out of range"))?;
    int_or_uint(b, end, v, i)
}

fn int_or_uint(b: &[u8], end: usize, v: u64, i: usize) -> Result<(Tok, usize), Error> {
    if matches!(b.get(end), Some(b'u' | b'U')) {
        return Ok((Tok::Uint(v), end + 1 - i));
    }
    let tok = match i64::try_from(v) {
        Ok(n) => Tok::Int(n),
        Err(_) if v == 1 << 63 => Tok::IntMin,
        Err(_) => {
            return Err(Error::at(
                ErrorKind::Syntax("integer literal out of range"),
                i,
            ))
        }
    };
    Ok((tok, end - i))
}

/// A string literal whose opening quote is at `q`: `'…'`, `"…"` or their
/// triple-quoted forms; escapes read unless `raw`. Returns the text and
/// the offset after the closing quote.
fn string(src: &str, q: usize, raw: bool) -> Result<(String, usize), Error> {
    let b = src.as_bytes();
    let err = |msg, at| Error::at(ErrorKind::Syntax(msg), at);
    let quote = b.get(q).copied().unwrap_or(b'"');
    let triple = b.get(q + 1) == Some(&quote) && b.get(q + 2) == Some(&quote);
    let mut i = if triple { q + 3 } else { q + 1 };
    let mut out = String::new();
    let rest = src.get(i..).unwrap_or("");
    let mut chars = rest.char_indices().peekable();
    while let Some((off, c)) = chars.next() {
        let at = i + off;
        if c as u32 == quote as u32 {
            if !triple {
                return Ok((out, at + 1));
            }
            if b.get(at + 1) == Some(&quote) && b.get(at + 2) == Some(&quote) {
                return Ok((out, at + 3));
            }
            out.push(c);
            continue;
        }
        if !triple && (c == '\n' || c == '\r') {
            return Err(err("newline in string literal", at));
        }
        if c != '\\' || raw {
            out.push(c);
            continue;
        }
        let Some((_, e)) = chars.next() else {
            break;
        };
        let simple = match e {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '`' | '?' => Some(e),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let (radix, len) = match e {
            'x' | 'X' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='3' => (8, 2),
            _ => return Err(err("invalid escape sequence", at)),
        };
        let mut v: u32 = if radix == 8 { e as u32 - '0' as u32 } else { 0 };
        for _ in 0..len {
            let d = chars
                .next()
                .and_then(|(_, d)| d.to_digit(radix))
                .ok_or_else(|| err("invalid escape sequence", at))?;
            v = v * radix + d;
        }
        out.push(char::from_u32(v).ok_or_else(|| err("invalid code point in escape", at))?);
    }
    i = src.len();
    Err(err("unterminated string literal", i.min(q)))
}
