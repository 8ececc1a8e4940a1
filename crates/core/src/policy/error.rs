//! Why an expression was refused at configuration, and where.

use alloc::string::String;

/// What is wrong with an expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// Not CEL (CEL's parser refuses it too).
    Syntax(&'static str),
    /// CEL that this subset does not evaluate (arithmetic, bytes, map
    /// literals, other functions and macros): refused, never guessed.
    Unsupported(&'static str),
    /// An identifier that is not a variable (`claims`, `args`, `meta`,
    /// `tool`) nor an iteration variable in scope.
    Undeclared(String),
    /// A type error CEL's checker reports (no overload of the operator or
    /// function accepts the operands' types).
    Type(&'static str),
}

/// A refused expression: what, and its byte offset in the expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub offset: usize,
}

impl Error {
    pub(crate) fn at(kind: ErrorKind, offset: usize) -> Error {
        Error { kind, offset }
    }

    /// The 1-based line and column (in characters) of the offset in `src`.
    pub fn line_column(&self, src: &str) -> (usize, usize) {
        let before = src.get(..self.offset).unwrap_or(src);
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        (line, col)
    }
}

impl core::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ErrorKind::Syntax(m) => write!(f, "syntax error: {m}"),
            ErrorKind::Unsupported(m) => write!(f, "not in the policy subset: {m}"),
            ErrorKind::Undeclared(name) => write!(f, "undeclared reference to `{name}`"),
            ErrorKind::Type(m) => write!(f, "type error: {m}"),
        }
    }
}
