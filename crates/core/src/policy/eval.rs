//! The evaluation, with CEL's runtime semantics for the subset: `&&` and
//! `||` absorb an error when the other side decides (`false && error` is
//! `false` whichever side errs), `all` and `exists` likewise over their
//! elements, equality is heterogeneous and never errs, and everything
//! else that CEL refuses at run time (a missing key, an index out of
//! range, an operand of the wrong type behind `dyn`) is an error, which
//! the rule turns into a denial.

use alloc::vec::Vec;
use core::cmp::Ordering;

use super::ast::{Cmp, Expr, Lit, Node, StrFn, Var};
use super::value::{equal, order, Val};

/// An evaluation error: CEL's error value. Its message is never needed:
/// a rule that errs denies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Failed;

type R<'a> = Result<Val<'a>, Failed>;

/// What a rule reads: the three maps (an absent one empty) and the tool.
pub(crate) struct Env<'a> {
    pub claims: Val<'a>,
    pub args: Val<'a>,
    pub meta: Val<'a>,
    pub tool: &'a str,
}

fn boolean(v: R<'_>) -> Result<bool, Failed> {
    match v? {
        Val::Bool(b) => Ok(b),
        _ => Err(Failed),
    }
}

pub(crate) fn eval<'a>(node: &'a Node, env: &Env<'a>, locals: &mut Vec<Val<'a>>) -> R<'a> {
    match &node.expr {
        Expr::Lit(lit) => Ok(match lit {
            Lit::Null => Val::Null,
            Lit::Bool(b) => Val::Bool(*b),
            Lit::Int(n) => Val::Int(*n),
            Lit::Uint(n) => Val::Uint(*n),
            Lit::Double(d) => Val::Double(*d),
            Lit::Str(s) => Val::Str(s),
        }),
        Expr::List(items) => items
            .iter()
            .map(|item| eval(item, env, locals))
            .collect::<Result<Vec<_>, _>>()
            .map(Val::List),
        Expr::Var(var) => Ok(match var {
            Var::Claims => env.claims.clone(),
            Var::Args => env.args.clone(),
            Var::Meta => env.meta.clone(),
            Var::Tool => Val::Str(env.tool),
        }),
        Expr::Local(_, depth) => locals.iter().rev().nth(*depth).cloned().ok_or(Failed),
        Expr::Select(target, field) => eval(target, env, locals)?.lookup(field).ok_or(Failed),
        // As cel-go's presence test: a map's key, an error on a list (a
        // field name is not an index), false on anything else.
        Expr::Has(target, field) => {
            let t = eval(target, env, locals)?;
            match (t.is_map(), t.is_list()) {
                (true, _) => Ok(Val::Bool(t.lookup(field).is_some())),
                (_, true) => Err(Failed),
                _ => Ok(Val::Bool(false)),
            }
        }
        Expr::Index(target, index) => {
            let t = eval(target, env, locals)?;
            let i = eval(index, env, locals)?;
            match &i {
                Val::Str(k) if t.is_map() => t.lookup(k).ok_or(Failed),
                _ if t.is_list() => t.item(list_index(&i)?).ok_or(Failed),
                _ => Err(Failed),
            }
        }
        Expr::Not(x) => Ok(Val::Bool(!boolean(eval(x, env, locals))?)),
        Expr::And(a, b) | Expr::Or(a, b) => {
            // The value that decides alone: false for `&&`, true for `||`.
            let decides = matches!(node.expr, Expr::Or(..));
            let x = boolean(eval(a, env, locals));
            if x == Ok(decides) {
                return Ok(Val::Bool(decides));
            }
            let y = boolean(eval(b, env, locals));
            match (x, y) {
                (_, Ok(v)) if v == decides => Ok(Val::Bool(decides)),
                (Ok(_), Ok(_)) => Ok(Val::Bool(!decides)),
                _ => Err(Failed),
            }
        }
        Expr::Cond(c, yes, no) => match boolean(eval(c, env, locals))? {
            true => eval(yes, env, locals),
            false => eval(no, env, locals),
        },
        Expr::Cmp(op, a, b) => {
            let x = eval(a, env, locals)?;
            let y = eval(b, env, locals)?;
            Ok(Val::Bool(match op {
                Cmp::Eq => equal(&x, &y),
                Cmp::Ne => !equal(&x, &y),
                _ => {
                    let o = order(&x, &y).ok_or(Failed)?;
                    match op {
                        Cmp::Lt => o == Ordering::Less,
                        Cmp::Le => o != Ordering::Greater,
                        Cmp::Gt => o == Ordering::Greater,
                        _ => o != Ordering::Less,
                    }
                }
            }))
        }
        Expr::In(a, b) => {
            let x = eval(a, env, locals)?;
            // A list literal is read element by element, never built.
            if let Expr::List(items) = &b.expr {
                let mut found = false;
                for item in items {
                    // Every element, as the list would be built.
                    let v = eval(item, env, locals)?;
                    found = found || equal(&x, &v);
                }
                return Ok(Val::Bool(found));
            }
            let r = eval(b, env, locals)?;
            if r.is_map() {
                return Ok(Val::Bool(match x {
                    Val::Str(k) => r.lookup(k).is_some(),
                    _ => false,
                }));
            }
            if !r.is_list() {
                return Err(Failed);
            }
            let mut found = false;
            r.each(&mut |v| {
                found = equal(&x, &v);
                !found
            });
            Ok(Val::Bool(found))
        }
        Expr::Size(x) => {
            let v = eval(x, env, locals)?;
            let n = match v {
                Val::Str(s) => s.chars().count(),
                _ => v.len().ok_or(Failed)?,
            };
            i64::try_from(n).map(Val::Int).map_err(|_| Failed)
        }
        Expr::Str(f, target, arg) => {
            let (Val::Str(s), Val::Str(p)) = (eval(target, env, locals)?, eval(arg, env, locals)?)
            else {
                return Err(Failed);
            };
            Ok(Val::Bool(match f {
                StrFn::StartsWith => s.starts_with(p),
                StrFn::EndsWith => s.ends_with(p),
                StrFn::Contains => s.contains(p),
            }))
        }
        Expr::Comp {
            all, range, pred, ..
        } => {
            let r = eval(range, env, locals)?;
            // `all` stops at the first false, `exists` at the first true;
            // an error is the answer only if nothing decided.
            let decides = !*all;
            // cel-go answers a range of size 0 before it asks whether the
            // range can be iterated: an empty string is no error.
            if matches!(r, Val::Str("")) {
                return Ok(Val::Bool(!decides));
            }
            let mut failed = false;
            let mut decided = false;
            r.each(&mut |item| {
                locals.push(item);
                let v = boolean(eval(pred, env, locals));
                locals.pop();
                match v {
                    Ok(b) if b == decides => decided = true,
                    Ok(_) => {}
                    Err(_) => failed = true,
                }
                !decided
            })
            .ok_or(Failed)?;
            if decided {
                return Ok(Val::Bool(decides));
            }
            match failed {
                true => Err(Failed),
                false => Ok(Val::Bool(!decides)),
            }
        }
    }
}

/// A list index as cel-go reads one: an int, or a double or uint that is
/// exactly an int; a negative one is out of range.
fn list_index(i: &Val<'_>) -> Result<usize, Failed> {
    let n = match *i {
        Val::Int(n) => n,
        Val::Uint(u) => i64::try_from(u).map_err(|_| Failed)?,
        Val::Double(d) => {
            // Lossless only: a whole number within i64's range.
            let n = d as i64;
            if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&d)
                || n as f64 != d
            {
                return Err(Failed);
            }
            n
        }
        _ => return Err(Failed),
    };
    usize::try_from(n).map_err(|_| Failed)
}
