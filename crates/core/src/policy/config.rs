//! The `policy` setting and the decision on a call.
//!
//! ```json
//! "policy": {
//!   "default": "deny",
//!   "mode": "enforce",
//!   "rules": {
//!     "transfer": [{"name": "own-account", "expr": "args.from == claims.end_user_id"}],
//!     "repo_*": [{"name": "admins", "expr": "'admin' in claims.metadata.roles"}]
//!   }
//! }
//! ```
//!
//! A call's rules are every rule whose tool pattern matches its name
//! (exactly, or with `*` standing for any run of characters), in the
//! order written; all must allow. A tool no pattern matches gets
//! `default`. In `audit` mode a denial is reported, and the call goes on.

use alloc::string::String;
use alloc::vec::Vec;

use super::error::Error;
use super::eval::Env;
use super::{Input, Program};
use crate::json::Value;

/// The name a denial by the default is reported under (no rule may take it).
pub const DEFAULT_RULE: &str = "default";
/// Most rules one policy holds.
pub const MAX_RULES: usize = 256;
/// Longest expression, in bytes.
pub const MAX_EXPRESSION_BYTES: usize = 4096;
/// Longest rule name or tool pattern, in bytes.
const MAX_NAME_BYTES: usize = 128;

/// What a policy does with a denial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Refuse the call `policy_denied`.
    Enforce,
    /// Let the call through and report the rule that would have denied.
    Audit,
}

/// One compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The tool pattern it applies to.
    pub tools: String,
    pub name: String,
    /// The expression as written.
    pub expr: String,
    program: Program,
}

/// A compiled policy.
#[derive(Debug, Clone)]
pub struct Policy {
    pub default_allow: bool,
    pub mode: Mode,
    pub rules: Vec<Rule>,
}

/// Two policies are equal when written alike (the compiled programs follow
/// from the text).
impl PartialEq for Policy {
    fn eq(&self, other: &Policy) -> bool {
        self.default_allow == other.default_allow
            && self.mode == other.mode
            && self.rules.len() == other.rules.len()
            && self
                .rules
                .iter()
                .zip(&other.rules)
                .all(|(a, b)| a.tools == b.tools && a.name == b.name && a.expr == b.expr)
    }
}
impl Eq for Policy {}

/// Why a `policy` setting was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyError {
    /// The setting's shape (names the member at fault).
    Shape(&'static str),
    /// A rule's expression is refused: the rule, the error, and its
    /// 1-based line and column in the expression.
    Expression {
        rule: String,
        error: Error,
        line: usize,
        column: usize,
    },
}

impl core::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PolicyError::Shape(what) => write!(f, "{what}"),
            PolicyError::Expression {
                rule,
                error,
                line,
                column,
            } => write!(f, "rule `{rule}` at {line}:{column}: {}", error.kind),
        }
    }
}

/// A call's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision<'p> {
    Allow,
    /// Denied by the rule named ([`DEFAULT_RULE`] when no rule names the
    /// tool and the default denies).
    Deny(&'p str),
}

/// A rule name or pattern: 1 to 128 bytes of letters, digits, `_`, `-`,
/// `.`, `/` and `:` (a pattern `*` too), so that it is safe in a header, a
/// log line and a metric label as it is.
fn name_ok(s: &str, pattern: bool) -> bool {
    !s.is_empty()
        && s.len() <= MAX_NAME_BYTES
        && s.bytes().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, b'_' | b'-' | b'.' | b'/' | b':')
                || (pattern && c == b'*')
        })
}

/// Whether `name` matches `pattern`, `*` standing for any run of bytes:
/// the text before the first `*` starts the name, the text after the
/// last ends it, and the pieces between are found in order, leftmost
/// first (which finds a match whenever there is one).
pub(crate) fn matches(pattern: &str, name: &str) -> bool {
    let Some((first, rest_pattern)) = pattern.split_once('*') else {
        return pattern == name;
    };
    let (middle, last) = rest_pattern.rsplit_once('*').unwrap_or(("", rest_pattern));
    let Some(rest) = name.strip_prefix(first) else {
        return false;
    };
    if rest.len() < last.len() || !rest.ends_with(last) {
        return false;
    }
    let mut rest = rest.get(..rest.len() - last.len()).unwrap_or("");
    for part in middle.split('*') {
        match rest.find(part) {
            Some(i) => rest = rest.get(i + part.len()..).unwrap_or(""),
            None => return false,
        }
    }
    true
}

impl Policy {
    /// Reads and compiles the `policy` setting.
    pub fn from_value(v: &Value<'_>) -> Result<Policy, PolicyError> {
        let Value::Object(members) = v else {
            return Err(PolicyError::Shape("`policy` must be an object"));
        };
        let mut default_allow = None;
        let mut mode = Mode::Enforce;
        let mut rules = Vec::new();
        for (name, value) in members {
            match (&**name, value) {
                ("default", Value::String(s)) if s == "allow" || s == "deny" => {
                    default_allow = Some(s == "allow")
                }
                ("default", _) => {
                    return Err(PolicyError::Shape(
                        "`policy.default` must be \"allow\" or \"deny\"",
                    ))
                }
                ("mode", Value::String(s)) if s == "enforce" => mode = Mode::Enforce,
                ("mode", Value::String(s)) if s == "audit" => mode = Mode::Audit,
                ("mode", _) => {
                    return Err(PolicyError::Shape(
                        "`policy.mode` must be \"enforce\" or \"audit\"",
                    ))
                }
                ("rules", Value::Object(tools)) => {
                    for (pattern, list) in tools {
                        read_rules(pattern, list, &mut rules)?;
                    }
                }
                ("rules", _) => return Err(PolicyError::Shape("`policy.rules` must be an object")),
                _ => return Err(PolicyError::Shape("unknown member in `policy`")),
            }
        }
        let default_allow = default_allow.ok_or(PolicyError::Shape(
            "`policy.default` is required (\"allow\" or \"deny\")",
        ))?;
        Ok(Policy {
            default_allow,
            mode,
            rules,
        })
    }

    /// The rules' names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.rules.iter().map(|r| r.name.as_str()).collect()
    }

    /// Whether any rule applies to `tool`: when none does, the default
    /// decides and the call's arguments need not be read.
    pub fn names_tool(&self, tool: &str) -> bool {
        self.rules.iter().any(|r| matches(&r.tools, tool))
    }

    /// The decision for a tool no rule names: the default's.
    pub fn decide_unnamed(&self) -> Decision<'_> {
        match self.default_allow {
            true => Decision::Allow,
            false => Decision::Deny(DEFAULT_RULE),
        }
    }

    /// Decides a call: every rule for `input.tool`, in order, must
    /// evaluate to `true`; the first that does not (false, an error, or
    /// not a bool) denies. The mode is the caller's to apply.
    pub fn decide(&self, input: &Input<'_>) -> Decision<'_> {
        self.decide_in(&input.env(), input.tool)
    }

    pub(crate) fn decide_in(&self, env: &Env<'_>, tool: &str) -> Decision<'_> {
        let mut named = false;
        // One stack of iteration variables for every rule.
        let mut locals = Vec::new();
        for rule in &self.rules {
            if !matches(&rule.tools, tool) {
                continue;
            }
            named = true;
            if rule.program.allows_with(env, &mut locals) != Some(true) {
                return Decision::Deny(&rule.name);
            }
        }
        match named || self.default_allow {
            true => Decision::Allow,
            false => Decision::Deny(DEFAULT_RULE),
        }
    }
}

fn read_rules(pattern: &str, list: &Value<'_>, rules: &mut Vec<Rule>) -> Result<(), PolicyError> {
    if !name_ok(pattern, true) {
        return Err(PolicyError::Shape(
            "a tool pattern is 1 to 128 letters, digits, `_-./:` or `*`",
        ));
    }
    let Value::Array(items) = list else {
        return Err(PolicyError::Shape("a tool's rules must be an array"));
    };
    for item in items {
        let (Some(name), Some(expr)) = (
            item.get("name").and_then(Value::as_str),
            item.get("expr").and_then(Value::as_str),
        ) else {
            return Err(PolicyError::Shape(
                "a rule is an object with the strings `name` and `expr`",
            ));
        };
        if let Value::Object(m) = item {
            if m.len() != 2 {
                return Err(PolicyError::Shape("unknown member in a rule"));
            }
        }
        if !name_ok(name, false) {
            return Err(PolicyError::Shape(
                "a rule name is 1 to 128 letters, digits or `_-./:`",
            ));
        }
        if name == DEFAULT_RULE {
            return Err(PolicyError::Shape(
                "`default` names the default's denial: a rule may not be named so",
            ));
        }
        if rules.iter().any(|r: &Rule| r.name == name) {
            return Err(PolicyError::Shape("two rules have the same name"));
        }
        if rules.len() == MAX_RULES {
            return Err(PolicyError::Shape("more than 256 rules"));
        }
        if expr.len() > MAX_EXPRESSION_BYTES {
            return Err(PolicyError::Shape(
                "an expression is longer than 4096 bytes",
            ));
        }
        let program = Program::compile(expr).map_err(|error| {
            let (line, column) = error.line_column(expr);
            PolicyError::Expression {
                rule: String::from(name),
                error,
                line,
                column,
            }
        })?;
        rules.push(Rule {
            tools: String::from(pattern),
            name: String::from(name),
            expr: String::from(expr),
            program,
        });
    }
    Ok(())
}
