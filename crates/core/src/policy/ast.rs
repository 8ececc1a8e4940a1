//! The parsed expression, in the subset's shapes only.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lit {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StrFn {
    StartsWith,
    EndsWith,
    Contains,
}

/// The top-level variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Var {
    Claims,
    Args,
    Meta,
    Tool,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Lit(Lit),
    List(Vec<Node>),
    Var(Var),
    /// An iteration variable: its depth from the innermost comprehension
    /// (0 innermost), resolved by the checker.
    Local(String, usize),
    Select(Box<Node>, String),
    Has(Box<Node>, String),
    Index(Box<Node>, Box<Node>),
    Not(Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Cond(Box<Node>, Box<Node>, Box<Node>),
    Cmp(Cmp, Box<Node>, Box<Node>),
    In(Box<Node>, Box<Node>),
    Size(Box<Node>),
    Str(StrFn, Box<Node>, Box<Node>),
    /// `range.all(var, pred)` (`all: true`) or `range.exists(var, pred)`.
    Comp {
        all: bool,
        var: String,
        range: Box<Node>,
        pred: Box<Node>,
    },
}

/// An expression and the byte offset its error is reported at.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub expr: Expr,
    pub at: usize,
}
