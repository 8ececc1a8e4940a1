//! RFC 8785 JSON Canonicalization Scheme, and the Tuix idempotency key
//! built on it (CONTRACT §7).
//!
//! Canonical form: no whitespace; object members sorted by the UTF-16 code
//! units of their names; strings escaped as ECMAScript's `JSON.stringify`
//! does (`"`, `\`, `\b \f \n \r \t`, other control characters as `\u00xx`);
//! numbers as ECMAScript's `Number.prototype.toString` prints the nearest
//! IEEE 754 double (so `1.0` is `1`, `1e21` is `1e+21`). A number with no
//! finite double is refused.

use alloc::string::String;
use alloc::vec::Vec;
use sha2::{Digest, Sha256};

use crate::json::{write_str, Value};
use crate::sort::heapsort;

mod big;
mod number;

pub use number::{write_double, NotCanonicalizable};

/// Appends the canonical form of `v` to `out`.
pub fn canonicalize_into(v: &Value<'_>, out: &mut String) -> Result<(), NotCanonicalizable> {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::String(s) => write_str(s, out),
        Value::Number(n) => number::write_number(n, out)?,
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonicalize_into(item, out)?;
            }
            out.push(']');
        }
        Value::Object(members) => {
            let mut sorted: Vec<&(_, Value<'_>)> = members.iter().collect();
            sort_members(&mut sorted);
            out.push('{');
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(k, out);
                out.push(':');
                canonicalize_into(v, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// The canonical form of `v`.
pub fn canonicalize(v: &Value<'_>) -> Result<String, NotCanonicalizable> {
    let mut out = String::new();
    canonicalize_into(v, &mut out)?;
    Ok(out)
}

/// The Tuix idempotency key: lowercase hex SHA-256 of the canonical form of
/// `{"arguments": A, "sessionId": S, "tool": T, "turn": U}`, where `A` is
/// `arguments` without its top-level members that are `null` or `""`.
/// Member order never changes the key; any other change does.
pub fn tuix_idempotency_key(
    session_id: &str,
    turn: &str,
    tool: &str,
    arguments: &Value<'_>,
) -> Result<String, NotCanonicalizable> {
    let mut text = String::from("{\"arguments\":");
    match arguments {
        Value::Object(members) => {
            let kept = members
                .iter()
                .filter(|(_, v)| {
                    !matches!(v, Value::Null) && !matches!(v, Value::String(s) if s.is_empty())
                })
                .cloned()
                .collect();
            canonicalize_into(&Value::Object(kept), &mut text)?;
        }
        other => canonicalize_into(other, &mut text)?,
    }
    for (name, value) in [("sessionId", session_id), ("tool", tool), ("turn", turn)] {
        text.push_str(",\"");
        text.push_str(name);
        text.push_str("\":");
        write_str(value, &mut text);
    }
    text.push('}');
    let digest = Sha256::digest(text.as_bytes());
    let mut hex = String::with_capacity(64);
    for b in digest {
        for nibble in [b >> 4, b & 0x0f] {
            hex.push(char::from_digit(u32::from(nibble), 16).unwrap_or('0'));
        }
    }
    Ok(hex)
}

/// Puts object members in RFC 8785 order: by their names' UTF-16 code
/// units. Names are unique (the reader refuses duplicates), so no stability
/// is needed.
pub(crate) fn sort_members<M: core::borrow::Borrow<(S, V)>, S: AsRef<str>, V>(members: &mut [M]) {
    heapsort(members, |a, b| {
        let (a, b) = (a.borrow().0.as_ref(), b.borrow().0.as_ref());
        a.encode_utf16().lt(b.encode_utf16())
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn canon(src: &str) -> String {
        canonicalize(&parse(src.as_bytes()).unwrap()).unwrap()
    }

    /// RFC 8785 §3.2.2 (the sample input and its canonical form).
    #[test]
    fn rfc8785_sample() {
        let input = r#"{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"#;
        assert_eq!(
            canon(input),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    /// RFC 8785 §3.2.3: members sorted by UTF-16 code units.
    #[test]
    fn rfc8785_sorting() {
        let input = r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#;
        let out = canon(input);
        let order: Vec<&str> = [
            "\\r",
            "1",
            "\u{80}",
            "\u{f6}",
            "\u{20ac}",
            "\u{1f600}",
            "\u{fb33}",
        ]
        .to_vec();
        let mut last = 0;
        for key in order {
            let at = out.find(&alloc::format!("\"{key}\"")).unwrap();
            assert!(at >= last, "{key} out of order in {out}");
            last = at;
        }
    }

    /// RFC 8785 Appendix B: IEEE 754 doubles and their canonical text.
    #[test]
    fn rfc8785_appendix_b_numbers() {
        let cases: &[(u64, &str)] = &[
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ];
        for &(bits, want) in cases {
            // Through the JSON reader: the shortest round-trip text of the
            // double (Rust's `{:e}`) parses back to the same double.
            let text = alloc::format!("{:e}", f64::from_bits(bits));
            assert_eq!(canon(&text), want, "{bits:016x} ({text})");
        }
        assert_eq!(
            canonicalize(&parse(b"1e400").unwrap()),
            Err(NotCanonicalizable)
        );
    }

    #[test]
    fn tuix_key_ignores_order_null_and_empty() {
        let a = parse(br#"{"page":1,"q":"x","skip":null,"note":""}"#).unwrap();
        let b = parse(br#"{"q":"x","page":1.0}"#).unwrap();
        let k = tuix_idempotency_key("s-1", "m-7", "get_employees", &a).unwrap();
        assert_eq!(k.len(), 64);
        assert_eq!(
            k,
            tuix_idempotency_key("s-1", "m-7", "get_employees", &b).unwrap()
        );
        assert_ne!(
            k,
            tuix_idempotency_key("s-1", "m-8", "get_employees", &b).unwrap()
        );
        assert_ne!(
            k,
            tuix_idempotency_key("s-1", "m-7", "get_employee", &b).unwrap()
        );
        let c = parse(br#"{"q":"y","page":1}"#).unwrap();
        assert_ne!(
            k,
            tuix_idempotency_key("s-1", "m-7", "get_employees", &c).unwrap()
        );
    }
}
