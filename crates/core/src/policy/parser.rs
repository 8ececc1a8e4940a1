//! CEL's grammar, recursive descent, down to the subset's shapes: what
//! CEL parses but the subset does not evaluate is refused as
//! `Unsupported` where it starts.
//!
//! ```text
//! expr     = or ["?" or ":" expr]
//! or       = and {"||" and}
//! and      = relation {"&&" relation}
//! relation = unary {("=="|"!="|"<"|"<="|">"|">="|"in") unary}
//! unary    = member | "!"+ member | "-" number
//! member   = primary {"." ident ["(" args ")"] | "[" expr "]"}
//! primary  = ident ["(" args ")"] | "(" expr ")" | "[" [expr {"," expr} [","]] "]" | literal
//! ```
//!
//! CEL's `+` and `-` bind tighter than the relations; the subset has
//! neither, so a relation's operands are unary expressions.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use super::ast::{Cmp, Expr, Lit, Node, StrFn, Var};
use super::error::{Error, ErrorKind};
use super::lexer::{lex, Tok};

/// Deepest nesting of expressions accepted.
pub(crate) const MAX_DEPTH: usize = 48;

pub(crate) fn parse(src: &str) -> Result<Node, Error> {
    let toks = lex(src)?;
    let mut p = Parser {
        toks,
        i: 0,
        depth: 0,
        scope: Vec::new(),
    };
    let node = p.expr()?;
    match p.peek() {
        Tok::End => Ok(node),
        _ => Err(p.syntax("unexpected token")),
    }
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    i: usize,
    depth: usize,
    /// The iteration variables in scope, innermost last.
    scope: Vec<String>,
}

fn node(expr: Expr, at: usize) -> Node {
    Node { expr, at }
}

fn bx(n: Node) -> Box<Node> {
    Box::new(n)
}

impl Parser {
    fn peek(&self) -> &Tok {
        self.toks.get(self.i).map_or(&Tok::End, |(t, _)| t)
    }

    fn pos(&self) -> usize {
        self.toks.get(self.i).map_or(0, |(_, p)| *p)
    }

    fn bump(&mut self) -> (Tok, usize) {
        let t = self.toks.get(self.i).cloned().unwrap_or((Tok::End, 0));
        self.i += 1;
        t
    }

    fn syntax(&self, msg: &'static str) -> Error {
        Error::at(ErrorKind::Syntax(msg), self.pos())
    }

    fn expect(&mut self, tok: Tok, msg: &'static str) -> Result<(), Error> {
        if *self.peek() == tok {
            self.i += 1;
            Ok(())
        } else {
            Err(self.syntax(msg))
        }
    }

    fn expr(&mut self) -> Result<Node, Error> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.syntax("expression nested too deeply"));
        }
        let cond = self.or()?;
        let out = if *self.peek() == Tok::Question {
            let at = self.bump().1;
            let yes = self.or()?;
            self.expect(Tok::Colon, "expected ':'")?;
            let no = self.expr()?;
            node(Expr::Cond(bx(cond), bx(yes), bx(no)), at)
        } else {
            cond
        };
        self.depth -= 1;
        Ok(out)
    }

    fn or(&mut self) -> Result<Node, Error> {
        let mut left = self.and()?;
        while *self.peek() == Tok::Or {
            let at = self.bump().1;
            let right = self.and()?;
            left = node(Expr::Or(bx(left), bx(right)), at);
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Node, Error> {
        let mut left = self.relation()?;
        while *self.peek() == Tok::And {
            let at = self.bump().1;
            let right = self.relation()?;
            left = node(Expr::And(bx(left), bx(right)), at);
        }
        Ok(left)
    }

    fn relation(&mut self) -> Result<Node, Error> {
        let mut left = self.unary()?;
        loop {
            let op = match self.peek() {
                Tok::Eq => Some(Cmp::Eq),
                Tok::Ne => Some(Cmp::Ne),
                Tok::Lt => Some(Cmp::Lt),
                Tok::Le => Some(Cmp::Le),
                Tok::Gt => Some(Cmp::Gt),
                Tok::Ge => Some(Cmp::Ge),
                Tok::In => None,
                Tok::Arith | Tok::Minus => {
                    return Err(Error::at(ErrorKind::Unsupported("arithmetic"), self.pos()))
                }
                _ => return Ok(left),
            };
            let at = self.bump().1;
            let right = self.unary()?;
            left = match op {
                Some(op) => node(Expr::Cmp(op, bx(left), bx(right)), at),
                None => node(Expr::In(bx(left), bx(right)), at),
            };
        }
    }

    fn unary(&mut self) -> Result<Node, Error> {
        match self.peek() {
            Tok::Not => {
                let at = self.pos();
                let mut nots = 0;
                while *self.peek() == Tok::Not {
                    self.i += 1;
                    nots += 1;
                }
                let operand = self.member()?;
                // CEL's parser drops an even run of `!` altogether.
                Ok(match nots % 2 {
                    0 => operand,
                    _ => node(Expr::Not(bx(operand)), at),
                })
            }
            Tok::Minus => {
                let at = self.bump().1;
                let lit = match self.peek() {
                    Tok::Int(n) => Lit::Int(n.wrapping_neg()),
                    Tok::IntMin => Lit::Int(i64::MIN),
                    Tok::Double(d) => Lit::Double(-d),
                    _ => return Err(Error::at(ErrorKind::Unsupported("negation"), at)),
                };
                self.i += 1;
                self.member_tail(node(Expr::Lit(lit), at))
            }
            _ => self.member(),
        }
    }

    fn member(&mut self) -> Result<Node, Error> {
        let primary = self.primary()?;
        self.member_tail(primary)
    }

    fn member_tail(&mut self, mut left: Node) -> Result<Node, Error> {
        loop {
            match self.peek() {
                Tok::Dot => {
                    let at = self.bump().1;
                    let name = match self.bump() {
                        (Tok::Ident(name) | Tok::Reserved(name), _) => name,
                        (Tok::Question, _) => {
                            return Err(Error::at(ErrorKind::Unsupported("optional selection"), at))
                        }
                        _ => return Err(Error::at(ErrorKind::Syntax("expected a field name"), at)),
                    };
                    if *self.peek() == Tok::LParen {
                        left = self.method(left, name)?;
                    } else {
                        left = node(Expr::Select(bx(left), name), at);
                    }
                }
                Tok::LBracket => {
                    let at = self.bump().1;
                    if *self.peek() == Tok::Question {
                        return Err(Error::at(ErrorKind::Unsupported("optional index"), at));
                    }
                    let index = self.expr()?;
                    self.expect(Tok::RBracket, "expected ']'")?;
                    left = node(Expr::Index(bx(left), bx(index)), at);
                }
                Tok::LBrace => {
                    return Err(Error::at(
                        ErrorKind::Unsupported("message construction"),
                        self.pos(),
                    ))
                }
                _ => return Ok(left),
            }
        }
    }

    /// `target.name(...)`: the macros `all` and `exists`, `size()` and the
    /// string functions.
    fn method(&mut self, target: Node, name: String) -> Result<Node, Error> {
        // Errors in a call are reported at its `(`, as CEL's parser
        // places a call; a macro at its target.
        let at = self.pos();
        self.expect(Tok::LParen, "expected '('")?;
        let unsupported = |what| Err(Error::at(ErrorKind::Unsupported(what), at));
        let expr = match name.as_str() {
            "all" | "exists" => {
                let var = match self.bump() {
                    (Tok::Ident(v), _) => v,
                    (_, p) => {
                        return Err(Error::at(
                            ErrorKind::Syntax("argument is not an identifier"),
                            p,
                        ))
                    }
                };
                if *self.peek() != Tok::Comma {
                    return unsupported("this form of all()/exists()");
                }
                self.i += 1;
                self.scope.push(var.clone());
                let pred = self.expr();
                self.scope.pop();
                let pred = pred?;
                let target_at = target.at;
                self.expect(Tok::RParen, "expected ')'")?;
                return Ok(node(
                    Expr::Comp {
                        all: name == "all",
                        var,
                        range: bx(target),
                        pred: bx(pred),
                    },
                    target_at,
                ));
            }
            "size" => {
                if *self.peek() != Tok::RParen {
                    return Err(Error::at(ErrorKind::Type("size() takes no argument"), at));
                }
                Expr::Size(bx(target))
            }
            "startsWith" | "endsWith" | "contains" => {
                let f = match name.as_str() {
                    "startsWith" => StrFn::StartsWith,
                    "endsWith" => StrFn::EndsWith,
                    _ => StrFn::Contains,
                };
                let arg = self.expr()?;
                if *self.peek() != Tok::RParen {
                    return Err(Error::at(
                        ErrorKind::Type("no matching overload: one argument expected"),
                        at,
                    ));
                }
                Expr::Str(f, bx(target), bx(arg))
            }
            _ => return unsupported("function"),
        };
        self.expect(Tok::RParen, "expected ')'")?;
        Ok(node(expr, at))
    }

    fn primary(&mut self) -> Result<Node, Error> {
        let (tok, at) = self.bump();
        let lit = |l| Ok(node(Expr::Lit(l), at));
        match tok {
            Tok::Int(n) => lit(Lit::Int(n)),
            Tok::Uint(n) => lit(Lit::Uint(n)),
            Tok::Double(d) => lit(Lit::Double(d)),
            Tok::Str(s) => lit(Lit::Str(s)),
            Tok::True => lit(Lit::Bool(true)),
            Tok::False => lit(Lit::Bool(false)),
            Tok::Null => lit(Lit::Null),
            Tok::IntMin => Err(Error::at(
                ErrorKind::Syntax("integer literal out of range"),
                at,
            )),
            Tok::Bytes => Err(Error::at(ErrorKind::Unsupported("bytes"), at)),
            Tok::LParen => {
                let inner = self.expr()?;
                self.expect(Tok::RParen, "expected ')'")?;
                Ok(inner)
            }
            Tok::LBracket => {
                let mut items = Vec::new();
                while *self.peek() != Tok::RBracket {
                    items.push(self.expr()?);
                    if *self.peek() == Tok::Comma {
                        self.i += 1;
                    } else {
                        break;
                    }
                }
                self.expect(Tok::RBracket, "expected ']'")?;
                Ok(node(Expr::List(items), at))
            }
            Tok::LBrace => Err(Error::at(ErrorKind::Unsupported("map literals"), at)),
            Tok::Dot => Err(Error::at(ErrorKind::Unsupported("qualified names"), at)),
            Tok::Ident(name) => {
                if *self.peek() == Tok::LParen {
                    return self.global_call(name, at);
                }
                if let Some(depth) = self.scope.iter().rev().position(|v| *v == name) {
                    return Ok(node(Expr::Local(name, depth), at));
                }
                let var = match name.as_str() {
                    "claims" => Var::Claims,
                    "args" => Var::Args,
                    "meta" => Var::Meta,
                    "tool" => Var::Tool,
                    _ => return Err(Error::at(ErrorKind::Undeclared(name), at)),
                };
                Ok(node(Expr::Var(var), at))
            }
            Tok::Arith | Tok::Minus => Err(Error::at(ErrorKind::Unsupported("arithmetic"), at)),
            Tok::Reserved(_) => Err(Error::at(ErrorKind::Syntax("reserved identifier"), at)),
            _ => Err(Error::at(ErrorKind::Syntax("unexpected token"), at)),
        }
    }

    /// `has(x.f)` and `size(x)`; any other global function is not the
    /// subset's.
    fn global_call(&mut self, name: String, ident: usize) -> Result<Node, Error> {
        let at = self.pos();
        self.expect(Tok::LParen, "expected '('")?;
        let expr = match name.as_str() {
            "has" => {
                let arg = self.expr()?;
                match arg.expr {
                    Expr::Select(target, field) => Expr::Has(target, field),
                    _ => {
                        return Err(Error::at(
                            ErrorKind::Syntax("invalid argument to has() macro"),
                            arg.at,
                        ))
                    }
                }
            }
            "size" => {
                let arg = self.expr()?;
                Expr::Size(bx(arg))
            }
            _ => return Err(Error::at(ErrorKind::Unsupported("function"), ident)),
        };
        if *self.peek() != Tok::RParen {
            return Err(Error::at(
                ErrorKind::Type("no matching overload: one argument expected"),
                at,
            ));
        }
        self.i += 1;
        Ok(node(expr, at))
    }
}
