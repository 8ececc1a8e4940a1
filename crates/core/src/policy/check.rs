//! The type check, as CEL's checker does it with the standard
//! environment's declarations for the subset's operators and functions:
//! `claims`, `args` and `meta` are `map(string, dyn)`, `tool` a `string`.
//! An operand of type `dyn` agrees with every overload (its value is
//! checked when the rule runs); concrete types must fit an overload, so
//! `1 == 1.0` and `'a' < 1` are refused here, never decided at call time.

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::ast::{Cmp, Expr, Lit, Node, Var};
use super::error::{Error, ErrorKind};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ty {
    Dyn,
    /// A type not known yet, which the first type it meets decides: what
    /// CEL's checker gives `x[k]` for a `dyn` `x` and a `k` that cannot be
    /// a list index (the map overload's value type, a free type
    /// parameter), so that `(c ? x['k'] : [1]) == 1` is refused as
    /// `list(int) == int`.
    Free,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    List(Box<Ty>),
    /// `map(string, dyn)`: the only maps are the variables.
    Map,
}

/// Whether a value of `a` may stand where `b` is expected (CEL's
/// assignability, symmetric for the subset's types: `dyn` fits anything,
/// `null` only `null`, lists element-wise).
fn fits(a: &Ty, b: &Ty) -> bool {
    match (a, b) {
        (Ty::Dyn | Ty::Free, _) | (_, Ty::Dyn | Ty::Free) => true,
        (Ty::List(x), Ty::List(y)) => fits(x, y),
        _ => a == b,
    }
}

/// The more general of two types that fit each other; a free type takes
/// the other.
fn general(a: Ty, b: Ty) -> Ty {
    match (a, b) {
        (Ty::Free, t) | (t, Ty::Free) => t,
        (Ty::Dyn, _) | (_, Ty::Dyn) => Ty::Dyn,
        (Ty::List(x), Ty::List(y)) => Ty::List(Box::new(general(*x, *y))),
        (a, _) => a,
    }
}

/// The ordering overloads of CEL's standard environment as its checker
/// admits them by default (bytes, time and duration aside): bool, int,
/// uint, double and string, each against its own type. The overloads
/// across numeric types are declared but switched off at check time
/// (cel-go's `CrossTypeNumericComparisons` is off): `1 < 1.5` is refused,
/// while a `dyn` operand compares across numeric types when it runs.
///
/// `null` fits the timestamp and duration overloads (CEL's checker keeps
/// them nullable), so `null < null` and `null < dyn` pass the check and
/// fail when they run.
fn ordered(a: &Ty, b: &Ty) -> bool {
    let comparable = |t: &Ty| {
        matches!(
            t,
            Ty::Bool | Ty::Int | Ty::Uint | Ty::Double | Ty::String | Ty::Null
        )
    };
    match (a, b) {
        (Ty::Dyn | Ty::Free, Ty::Dyn | Ty::Free) => true,
        (Ty::Dyn | Ty::Free, t) | (t, Ty::Dyn | Ty::Free) => comparable(t),
        _ => comparable(a) && a == b,
    }
}

fn is_bool(t: &Ty) -> bool {
    fits(t, &Ty::Bool)
}

fn mismatch(at: usize, what: &'static str) -> Error {
    Error::at(ErrorKind::Type(what), at)
}

/// The type of `node`, or the first type error. `locals` are the
/// iteration variables' types, innermost last.
pub(crate) fn check(node: &Node, locals: &mut Vec<Ty>) -> Result<Ty, Error> {
    let at = node.at;
    Ok(match &node.expr {
        Expr::Lit(Lit::Null) => Ty::Null,
        Expr::Lit(Lit::Bool(_)) => Ty::Bool,
        Expr::Lit(Lit::Int(_)) => Ty::Int,
        Expr::Lit(Lit::Uint(_)) => Ty::Uint,
        Expr::Lit(Lit::Double(_)) => Ty::Double,
        Expr::Lit(Lit::Str(_)) => Ty::String,
        Expr::List(items) => {
            // Mixed element types make a list of dyn, as CEL's checker
            // joins them by default.
            let mut elem: Option<Ty> = None;
            for item in items {
                let t = check(item, locals)?;
                elem = Some(match elem {
                    None => t,
                    Some(prev) if fits(&prev, &t) => general(prev, t),
                    Some(_) => Ty::Dyn,
                });
            }
            Ty::List(Box::new(elem.unwrap_or(Ty::Free)))
        }
        Expr::Var(Var::Tool) => Ty::String,
        Expr::Var(_) => Ty::Map,
        Expr::Local(_, depth) => locals.iter().rev().nth(*depth).cloned().unwrap_or(Ty::Dyn),
        Expr::Select(target, _) | Expr::Has(target, _) => {
            let t = check(target, locals)?;
            if !matches!(t, Ty::Map | Ty::Dyn | Ty::Free) {
                return Err(mismatch(at, "field selection on a value without fields"));
            }
            match node.expr {
                Expr::Has(..) => Ty::Bool,
                _ => Ty::Dyn,
            }
        }
        Expr::Index(target, index) => {
            let t = check(target, locals)?;
            let i = check(index, locals)?;
            match t {
                Ty::List(elem) if fits(&i, &Ty::Int) => *elem,
                Ty::Map if fits(&i, &Ty::String) => Ty::Dyn,
                // Both overloads (list and map) fit an index that may be
                // an int: their results differ, so dyn; only the map's
                // fits any other, and its value type is free.
                Ty::Dyn | Ty::Free if fits(&i, &Ty::Int) => Ty::Dyn,
                Ty::Dyn | Ty::Free => Ty::Free,
                _ => return Err(mismatch(at, "no matching overload for '_[_]'")),
            }
        }
        Expr::Not(x) => {
            if !is_bool(&check(x, locals)?) {
                return Err(mismatch(at, "no matching overload for '!_'"));
            }
            Ty::Bool
        }
        Expr::And(a, b) | Expr::Or(a, b) => {
            let (ta, tb) = (check(a, locals)?, check(b, locals)?);
            if !is_bool(&ta) || !is_bool(&tb) {
                return Err(mismatch(at, "no matching overload for '_&&_' or '_||_'"));
            }
            Ty::Bool
        }
        Expr::Cond(c, yes, no) => {
            let tc = check(c, locals)?;
            let (ty, tn) = (check(yes, locals)?, check(no, locals)?);
            if !is_bool(&tc) || !fits(&ty, &tn) {
                return Err(mismatch(at, "no matching overload for '_?_:_'"));
            }
            general(ty, tn)
        }
        Expr::Cmp(op, a, b) => {
            let (ta, tb) = (check(a, locals)?, check(b, locals)?);
            let ok = match op {
                Cmp::Eq | Cmp::Ne => equatable(&ta, &tb),
                _ => ordered(&ta, &tb),
            };
            if !ok {
                return Err(mismatch(at, "no matching overload for the comparison"));
            }
            Ty::Bool
        }
        Expr::In(a, b) => {
            let (ta, tb) = (check(a, locals)?, check(b, locals)?);
            let ok = match &tb {
                Ty::Dyn | Ty::Free => true,
                Ty::List(elem) => equatable(&ta, elem),
                Ty::Map => fits(&ta, &Ty::String),
                _ => false,
            };
            if !ok {
                return Err(mismatch(at, "no matching overload for '@in'"));
            }
            Ty::Bool
        }
        Expr::Size(x) => {
            let t = check(x, locals)?;
            if !matches!(t, Ty::String | Ty::List(_) | Ty::Map | Ty::Dyn | Ty::Free) {
                return Err(mismatch(at, "no matching overload for 'size'"));
            }
            Ty::Int
        }
        Expr::Str(_, target, arg) => {
            let (tt, ta) = (check(target, locals)?, check(arg, locals)?);
            if !fits(&tt, &Ty::String) || !fits(&ta, &Ty::String) {
                return Err(mismatch(at, "no matching overload for the string function"));
            }
            Ty::Bool
        }
        Expr::Comp { range, pred, .. } => {
            let var = match check(range, locals)? {
                Ty::List(elem) => *elem,
                Ty::Map => Ty::String,
                Ty::Dyn | Ty::Free => Ty::Dyn,
                _ => return Err(mismatch(at, "expression of type is not a list or map")),
            };
            locals.push(var);
            let tp = check(pred, locals);
            locals.pop();
            if !is_bool(&tp?) {
                return Err(mismatch(at, "no matching overload for '_&&_' or '_||_'"));
            }
            Ty::Bool
        }
    })
}

/// `_==_` and `@in`'s element: one type parameter both sides must fit;
/// `null` is assignable only to `null` and `dyn` among the subset's types.
fn equatable(a: &Ty, b: &Ty) -> bool {
    fits(a, b)
}
