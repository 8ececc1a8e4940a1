//! The policy (CONTRACT §8): rules in a subset of CEL over the verified
//! context, the tool's name, its arguments and `_meta`, compiled once when
//! the configuration is read and decided after the verdict.
//!
//! One file a job: `lexer.rs` and `parser.rs` read an expression into
//! `ast.rs`'s shapes (what CEL has but the subset does not is refused
//! there), `check.rs` type-checks it as CEL's checker does, `eval.rs` runs
//! it over `value.rs`'s values, `config.rs` reads the `policy` setting and
//! decides a call.

mod ast;
mod call;
mod check;
mod config;
mod error;
mod eval;
mod lexer;
mod parser;
mod value;

pub(crate) use call::denial;
pub use config::{
    Decision, Mode, Policy, PolicyError, Rule, DEFAULT_RULE, MAX_EXPRESSION_BYTES, MAX_RULES,
};
pub use error::{Error, ErrorKind};

use alloc::vec::Vec;

use crate::json::Value;

/// One expression, parsed and type-checked: what a rule runs.
#[derive(Debug, Clone)]
pub struct Program {
    root: ast::Node,
}

impl Program {
    /// Parses and checks `src`; the result must be a `bool` (or `dyn`).
    pub fn compile(src: &str) -> Result<Program, Error> {
        let root = parser::parse(src)?;
        let ty = check::check(&root, &mut Vec::new())?;
        if !matches!(ty, check::Ty::Bool | check::Ty::Dyn | check::Ty::Free) {
            return Err(Error::at(
                ErrorKind::Type("a rule must evaluate to a bool"),
                0,
            ));
        }
        Ok(Program { root })
    }

    /// Parses and checks `src` without requiring a bool: the differential
    /// test's entry, which compares any expression's value with cel-go's.
    pub fn compile_any(src: &str) -> Result<Program, Error> {
        let root = parser::parse(src)?;
        check::check(&root, &mut Vec::new())?;
        Ok(Program { root })
    }

    /// Whether the program allows: `Some(true)` only for the value
    /// `true`; `Some(false)` for `false`; `None` for an error or a value
    /// that is not a bool (both deny).
    pub fn allows(&self, input: &Input<'_>) -> Option<bool> {
        self.allows_in(&input.env())
    }

    pub(crate) fn allows_in(&self, env: &eval::Env<'_>) -> Option<bool> {
        self.allows_with(env, &mut Vec::new())
    }

    /// [`Program::allows_in`] with the caller's (empty) stack of
    /// iteration variables, reused from rule to rule.
    pub(crate) fn allows_with<'a>(
        &'a self,
        env: &eval::Env<'a>,
        locals: &mut Vec<value::Val<'a>>,
    ) -> Option<bool> {
        locals.clear();
        match eval::eval(&self.root, env, locals) {
            Ok(value::Val::Bool(b)) => Some(b),
            _ => None,
        }
    }

    /// The program's value as JSON text in the differential test's
    /// notation (`None` for an error): `{"int":"1"}`, `{"uint":"1"}`,
    /// `{"double":1.5}` and plain JSON for the rest, lists as arrays, maps
    /// as objects (their numbers doubles).
    pub fn value_json(&self, input: &Input<'_>) -> Option<alloc::string::String> {
        let env = input.env();
        let v = eval::eval(&self.root, &env, &mut Vec::new()).ok()?;
        let mut out = alloc::string::String::new();
        value::write_tagged(&v, &mut out);
        Some(out)
    }
}

impl Program {
    /// [`Program::value_json`] over a JSON object `{"claims", "args",
    /// "meta", "tool"}` read in place, as the verifier reads a request's
    /// arguments and `_meta` (the differential test's path); `None` when
    /// the text is not strict JSON. `Some(None)` is an error's value.
    pub fn value_json_of(&self, input: &[u8]) -> Option<Option<alloc::string::String>> {
        let doc = crate::json::read(input, crate::json::Keep::All).ok()?;
        let root = doc.root()?;
        let part = |name: &str| match root.get(name) {
            Some(i) if i.is_object() => value::Val::Node(i),
            _ => value::Val::Fields(&[]),
        };
        let env = eval::Env {
            claims: part("claims"),
            args: part("args"),
            meta: part("meta"),
            tool: root.get("tool").and_then(|t| t.as_str()).unwrap_or(""),
        };
        let Ok(v) = eval::eval(&self.root, &env, &mut Vec::new()) else {
            return Some(None);
        };
        let mut out = alloc::string::String::new();
        value::write_tagged(&v, &mut out);
        Some(Some(out))
    }
}

/// What a rule reads. `claims`, `args` and `meta` are JSON objects (an
/// absent one reads as an empty map; anything but an object too).
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub claims: Option<&'a Value<'a>>,
    pub args: Option<&'a Value<'a>>,
    pub meta: Option<&'a Value<'a>>,
    pub tool: &'a str,
}

impl<'a> Input<'a> {
    fn env(&self) -> eval::Env<'a> {
        let map = |v: Option<&'a Value<'a>>| match v {
            Some(Value::Object(m)) => value::Val::Map(m),
            _ => value::Val::Map(&[]),
        };
        eval::Env {
            claims: map(self.claims),
            args: map(self.args),
            meta: map(self.meta),
            tool: self.tool,
        }
    }
}

#[cfg(test)]
mod tests;
