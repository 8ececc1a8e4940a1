//! The values a rule computes with: CEL's for the subset, read from the
//! call's JSON as CEL's JSON mapping reads it (every number a double).

use alloc::borrow::Cow;
use alloc::vec::Vec;
use core::cmp::Ordering;

use crate::json::Value as Json;

#[derive(Debug, Clone)]
pub(crate) enum Val<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(&'a str),
    /// A JSON array, read in place.
    Array(&'a [Json<'a>]),
    /// A list literal's values.
    List(Vec<Val<'a>>),
    /// A JSON object, read in place.
    Map(&'a [(Cow<'a, str>, Json<'a>)]),
}

/// A JSON value as CEL's JSON mapping (`google.protobuf.Value`) has it.
pub(crate) fn from_json<'a>(v: &'a Json<'a>) -> Val<'a> {
    match v {
        Json::Null => Val::Null,
        Json::Bool(b) => Val::Bool(*b),
        // The reader admits only JSON's number syntax, which f64 reads;
        // a magnitude past f64's range reads as infinity, as in Go.
        Json::Number(text) => Val::Double(text.parse().unwrap_or(f64::NAN)),
        Json::String(s) => Val::Str(s),
        Json::Array(items) => Val::Array(items),
        Json::Object(members) => Val::Map(members),
    }
}

impl<'a> Val<'a> {
    pub(crate) fn len(&self) -> Option<usize> {
        match self {
            Val::Array(items) => Some(items.len()),
            Val::List(items) => Some(items.len()),
            Val::Map(members) => Some(members.len()),
            _ => None,
        }
    }

    /// The `i`th element of a list.
    pub(crate) fn item(&self, i: usize) -> Option<Val<'a>> {
        match self {
            Val::Array(items) => items.get(i).map(from_json),
            Val::List(items) => items.get(i).cloned(),
            _ => None,
        }
    }
}

/// A number's place on the number line, for CEL's heterogeneous numeric
/// equality and ordering: int, uint and double compare as the numbers
/// they are, never through a lossy conversion.
#[derive(Clone, Copy)]
enum Num {
    I(i64),
    U(u64),
    D(f64),
}

fn num(v: &Val<'_>) -> Option<Num> {
    match v {
        Val::Int(n) => Some(Num::I(*n)),
        Val::Uint(n) => Some(Num::U(*n)),
        Val::Double(d) => Some(Num::D(*d)),
        _ => None,
    }
}

/// A double against an i64 or u64 as cel-go compares them (its
/// `compareDoubleInt`, `compareDoubleUint`): past the integer type's
/// range by the bound, else as two doubles. `None` for NaN.
fn cmp_d(d: f64, lo: f64, hi: f64, n: f64) -> Option<Ordering> {
    if d < lo {
        return Some(Ordering::Less);
    }
    if d > hi {
        return Some(Ordering::Greater);
    }
    d.partial_cmp(&n)
}

const I64_MIN: f64 = -9_223_372_036_854_775_808.0;
const I64_MAX: f64 = 9_223_372_036_854_775_808.0;
const U64_MAX: f64 = 18_446_744_073_709_551_616.0;

fn cmp_num(a: Num, b: Num) -> Option<Ordering> {
    match (a, b) {
        (Num::I(x), Num::I(y)) => Some(x.cmp(&y)),
        (Num::U(x), Num::U(y)) => Some(x.cmp(&y)),
        (Num::D(x), Num::D(y)) => x.partial_cmp(&y),
        (Num::I(x), Num::U(y)) => Some(match u64::try_from(x) {
            Ok(x) => x.cmp(&y),
            Err(_) => Ordering::Less,
        }),
        (Num::D(x), Num::I(y)) => cmp_d(x, I64_MIN, I64_MAX, y as f64),
        (Num::D(x), Num::U(y)) => cmp_d(x, 0.0, U64_MAX, y as f64),
        (Num::U(_) | Num::I(_), _) => cmp_num(b, a).map(Ordering::reverse),
    }
}

/// CEL's ordering (`<` and the rest): numbers across types, strings by
/// code point, bools; `None` is an error (no such overload, or NaN).
pub(crate) fn order(a: &Val<'_>, b: &Val<'_>) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return cmp_num(x, y);
    }
    match (a, b) {
        (Val::Str(x), Val::Str(y)) => Some(x.cmp(y)),
        (Val::Bool(x), Val::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// CEL's heterogeneous equality: numbers by value across types, lists
/// element-wise, maps by their keys and values, anything else of two
/// different types unequal (never an error).
pub(crate) fn equal(a: &Val<'_>, b: &Val<'_>) -> bool {
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return matches!(cmp_num(x, y), Some(Ordering::Equal));
    }
    match (a, b) {
        (Val::Null, Val::Null) => true,
        (Val::Bool(x), Val::Bool(y)) => x == y,
        (Val::Str(x), Val::Str(y)) => x == y,
        (Val::Map(x), Val::Map(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| {
                    y.iter()
                        .find(|(k2, _)| k2 == k)
                        .is_some_and(|(_, v2)| equal(&from_json(v), &from_json(v2)))
                })
        }
        _ => match (a.len(), b.len()) {
            (Some(n), Some(m)) if !matches!(a, Val::Map(_)) && !matches!(b, Val::Map(_)) => {
                n == m
                    && (0..n).all(|i| match (a.item(i), b.item(i)) {
                        (Some(x), Some(y)) => equal(&x, &y),
                        _ => false,
                    })
            }
            _ => false,
        },
    }
}

/// A value in the differential test's notation (see
/// [`Program::value_json`](super::Program::value_json)).
pub(crate) fn write_tagged(v: &Val<'_>, out: &mut alloc::string::String) {
    use crate::digits::{push_i64, push_u64};
    use crate::json::write_str;
    match v {
        Val::Null => out.push_str("null"),
        Val::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Val::Int(n) => {
            out.push_str("{\"int\":\"");
            push_i64(*n, out);
            out.push_str("\"}");
        }
        Val::Uint(n) => {
            out.push_str("{\"uint\":\"");
            push_u64(*n, out);
            out.push_str("\"}");
        }
        Val::Double(d) => {
            use core::fmt::Write;
            out.push_str("{\"double\":");
            // Rust's shortest round-trip form; the reader compares numbers.
            let _ = write!(out, "{d:?}");
            out.push('}');
        }
        Val::Str(s) => write_str(s, out),
        Val::Array(_) | Val::List(_) => {
            out.push('[');
            for i in 0..v.len().unwrap_or(0) {
                if i > 0 {
                    out.push(',');
                }
                if let Some(item) = v.item(i) {
                    write_tagged(&item, out);
                }
            }
            out.push(']');
        }
        Val::Map(members) => {
            out.push('{');
            for (i, (k, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(k, out);
                out.push(':');
                write_tagged(&from_json(item), out);
            }
            out.push('}');
        }
    }
}
