//! The values a rule computes with: CEL's for the subset, read from the
//! call's JSON as CEL's JSON mapping reads it (every number a double).

use alloc::borrow::Cow;
use alloc::vec::Vec;
use core::cmp::Ordering;

use crate::json::{Item, Kind, Value as Json};

#[derive(Clone)]
pub(crate) enum Val<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(&'a str),
    /// A JSON array of a parsed tree.
    Array(&'a [Json<'a>]),
    /// A JSON object of a parsed tree.
    Map(&'a [(Cow<'a, str>, Json<'a>)]),
    /// A JSON array or object read in place in the request's document
    /// (the arguments, `_meta`, the metadata claim): nothing copied.
    Node(Item<'a, 'a>),
    /// A map of values already read (the claims).
    Fields(&'a [(&'a str, Val<'a>)]),
    /// A list literal's values.
    List(Vec<Val<'a>>),
}

/// A JSON number as CEL's JSON mapping reads it: a double. The reader
/// admits only JSON's number syntax, which f64 reads; a magnitude past
/// f64's range reads as infinity, as in Go.
fn number(text: &str) -> Val<'_> {
    Val::Double(text.parse().unwrap_or(f64::NAN))
}

/// A JSON value as CEL's JSON mapping (`google.protobuf.Value`) has it.
pub(crate) fn from_json<'a>(v: &'a Json<'a>) -> Val<'a> {
    match v {
        Json::Null => Val::Null,
        Json::Bool(b) => Val::Bool(*b),
        Json::Number(text) => number(text),
        Json::String(s) => Val::Str(s),
        Json::Array(items) => Val::Array(items),
        Json::Object(members) => Val::Map(members),
    }
}

/// A value in a read document, as [`from_json`] has it.
pub(crate) fn from_item<'a>(item: Item<'a, 'a>) -> Val<'a> {
    match item.kind() {
        Kind::Null => Val::Null,
        Kind::Bool => Val::Bool(item.text() == "true"),
        Kind::Number => number(item.text()),
        Kind::String => Val::Str(item.as_str().unwrap_or_default()),
        Kind::Array | Kind::Object => Val::Node(item),
    }
}

impl<'a> Val<'a> {
    pub(crate) fn is_map(&self) -> bool {
        match self {
            Val::Map(_) | Val::Fields(_) => true,
            Val::Node(item) => item.is_object(),
            _ => false,
        }
    }

    pub(crate) fn is_list(&self) -> bool {
        match self {
            Val::Array(_) | Val::List(_) => true,
            Val::Node(item) => item.kind() == Kind::Array,
            _ => false,
        }
    }

    /// A map's value for `key`.
    pub(crate) fn lookup(&self, key: &str) -> Option<Val<'a>> {
        match self {
            Val::Map(members) => members
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| from_json(v)),
            Val::Fields(fields) => fields
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.clone()),
            // Stops at the key (a strict document has it once).
            Val::Node(item) => item
                .members()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| from_item(v)),
            _ => None,
        }
    }

    /// A list's elements, or a map's keys (what `all` and `exists` range
    /// over); `None` for anything else.
    pub(crate) fn elements(&self) -> Option<Vec<Val<'a>>> {
        Some(match self {
            Val::Array(items) => items.iter().map(from_json).collect(),
            Val::List(items) => items.clone(),
            Val::Map(members) => members.iter().map(|(k, _)| Val::Str(k)).collect(),
            Val::Fields(fields) => fields.iter().map(|(k, _)| Val::Str(k)).collect(),
            Val::Node(item) if item.is_object() => item
                .members()
                .map(|(k, _)| Val::Str(k.as_str().unwrap_or_default()))
                .collect(),
            Val::Node(item) => item.elements().map(from_item).collect(),
            _ => return None,
        })
    }

    /// Calls `f` on each of a list's elements, or a map's keys, until it
    /// returns false; `None` for anything else. Nothing is collected.
    pub(crate) fn each(&self, f: &mut dyn FnMut(Val<'a>) -> bool) -> Option<()> {
        match self {
            Val::Array(items) => {
                let _ = items.iter().all(|v| f(from_json(v)));
            }
            Val::List(items) => {
                let _ = items.iter().all(|v| f(v.clone()));
            }
            Val::Map(members) => {
                let _ = members.iter().all(|(k, _)| f(Val::Str(k)));
            }
            Val::Fields(fields) => {
                let _ = fields.iter().all(|(k, _)| f(Val::Str(k)));
            }
            Val::Node(item) if item.is_object() => {
                let _ = item
                    .members()
                    .all(|(k, _)| f(Val::Str(k.as_str().unwrap_or_default())));
            }
            Val::Node(item) => {
                let _ = item.elements().all(|v| f(from_item(v)));
            }
            _ => return None,
        }
        Some(())
    }

    /// The size of a list or map.
    pub(crate) fn len(&self) -> Option<usize> {
        Some(match self {
            Val::Array(items) => items.len(),
            Val::List(items) => items.len(),
            Val::Map(members) => members.len(),
            Val::Fields(fields) => fields.len(),
            Val::Node(item) if item.is_object() => item.members().count(),
            Val::Node(item) => item.elements().count(),
            _ => return None,
        })
    }

    /// The `i`th element of a list.
    pub(crate) fn item(&self, i: usize) -> Option<Val<'a>> {
        match self {
            Val::Array(items) => items.get(i).map(from_json),
            Val::List(items) => items.get(i).cloned(),
            Val::Node(item) if !item.is_object() => item.elements().nth(i).map(from_item),
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
        _ if a.is_map() && b.is_map() => {
            let (Some(keys), Some(n)) = (a.elements(), b.len()) else {
                return false;
            };
            keys.len() == n
                && keys.iter().all(|k| match k {
                    Val::Str(k) => match (a.lookup(k), b.lookup(k)) {
                        (Some(x), Some(y)) => equal(&x, &y),
                        _ => false,
                    },
                    _ => false,
                })
        }
        _ if a.is_list() && b.is_list() => match (a.elements(), b.elements()) {
            (Some(x), Some(y)) => x.len() == y.len() && x.iter().zip(&y).all(|(x, y)| equal(x, y)),
            _ => false,
        },
        _ => false,
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
        _ if v.is_list() => {
            out.push('[');
            for (i, item) in v.elements().unwrap_or_default().iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_tagged(item, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for (i, key) in v.elements().unwrap_or_default().iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if let Val::Str(k) = key {
                    write_str(k, out);
                    out.push(':');
                    if let Some(item) = v.lookup(k) {
                        write_tagged(&item, out);
                    }
                }
            }
            out.push('}');
        }
    }
}
