//! Integer expressions of a scenario file's `expr` variables
//! (`lo = { expr = "min(a, b)" }`, `lo_price = { expr = "lo * 7919 % 10000" }`):
//! values worked out from other variables before each iteration, so that an
//! answer can be checked against what the request asked (docs/scenarios.md,
//! "Expressions").
//!
//! The grammar, lowest precedence first, all operators left-associative:
//!
//! ```text
//! expr    := product (("+" | "-") product)*
//! product := unary (("*" | "/" | "%") unary)*
//! unary   := "-" unary | atom
//! atom    := INTEGER | NAME | NAME "(" expr ("," expr)* ")" | "(" expr ")"
//! ```
//!
//! Functions: `min` and `max` (one or more arguments), `abs` (one). Values
//! are 64-bit signed integers; `/` truncates toward zero and `%` takes the
//! sign of its left side (as in C, Go and Rust). Evaluation is checked: an
//! overflow, a division by zero, or a name without an integer value gives
//! no value, never a wrapped one. A parse is done once, at load; evaluating
//! walks the tree and allocates nothing.

use std::fmt;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expr {
    node: Node,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Int(i64),
    /// A variable, and the byte offset of its name in the source.
    Var(Box<str>, usize),
    Neg(Box<Node>),
    Bin(Op, Box<Node>, Box<Node>),
    Call(Func, Vec<Node>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    Min,
    Max,
    Abs,
}

/// Why a text is not an expression: the byte offset in it and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub offset: usize,
    pub message: String,
}

/// Why an expression has no value in an iteration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("`{0}` has no value")]
    Missing(String),
    #[error("`{0}` is {1:?}, not an integer")]
    NotInteger(String, String),
    #[error("a division by zero")]
    DivisionByZero,
    #[error("an overflow of 64-bit integers")]
    Overflow,
}

/// Nesting deeper than this is refused, and so is an expression of more nodes
/// (the tree is walked recursively: a hostile file must not overflow the stack).
const MAX_DEPTH: usize = 64;
const MAX_NODES: usize = 256;

impl Expr {
    /// Parses `src`.
    pub fn parse(src: &str) -> Result<Expr, SyntaxError> {
        let mut p = Parser { src: src.as_bytes(), i: 0, depth: 0, nodes: 0 };
        p.skip_ws();
        if p.i == src.len() {
            return Err(p.error("an empty expression"));
        }
        let node = p.sum()?;
        p.skip_ws();
        if p.i < src.len() {
            return Err(p.error("expected an operator (+ - * / %) or the end of the expression"));
        }
        Ok(Expr { node })
    }

    /// The variables it names, with their byte offsets in the source, in order.
    pub fn names(&self) -> Vec<(&str, usize)> {
        fn walk<'a>(n: &'a Node, out: &mut Vec<(&'a str, usize)>) {
            match n {
                Node::Int(_) => {}
                Node::Var(name, at) => out.push((name, *at)),
                Node::Neg(a) => walk(a, out),
                Node::Bin(_, a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Node::Call(_, args) => args.iter().for_each(|a| walk(a, out)),
            }
        }
        let mut out = Vec::new();
        walk(&self.node, &mut out);
        out
    }

    /// Its value, with `get` giving each variable's text (an integer in decimal).
    pub fn eval<'v>(&self, get: &dyn Fn(&str) -> Option<&'v str>) -> Result<i64, EvalError> {
        eval(&self.node, get)
    }
}

fn eval<'v>(n: &Node, get: &dyn Fn(&str) -> Option<&'v str>) -> Result<i64, EvalError> {
    Ok(match n {
        Node::Int(v) => *v,
        Node::Var(name, _) => {
            let text = get(name).ok_or_else(|| EvalError::Missing(name.to_string()))?;
            text.trim().parse().map_err(|_| EvalError::NotInteger(name.to_string(), text.to_owned()))?
        }
        Node::Neg(a) => eval(a, get)?.checked_neg().ok_or(EvalError::Overflow)?,
        Node::Bin(op, a, b) => {
            let (a, b) = (eval(a, get)?, eval(b, get)?);
            let r = match op {
                Op::Add => a.checked_add(b),
                Op::Sub => a.checked_sub(b),
                Op::Mul => a.checked_mul(b),
                Op::Div | Op::Rem if b == 0 => return Err(EvalError::DivisionByZero),
                Op::Div => a.checked_div(b),
                Op::Rem => a.checked_rem(b),
            };
            r.ok_or(EvalError::Overflow)?
        }
        Node::Call(f, args) => {
            let mut acc: Option<i64> = None;
            for a in args {
                let v = eval(a, get)?;
                acc = Some(match (f, acc) {
                    (Func::Abs, _) => v.checked_abs().ok_or(EvalError::Overflow)?,
                    (_, None) => v,
                    (Func::Min, Some(m)) => m.min(v),
                    (Func::Max, Some(m)) => m.max(v),
                });
            }
            acc.expect("a call has at least one argument (checked at parse)")
        }
    })
}

struct Parser<'a> {
    src: &'a [u8],
    i: usize,
    depth: usize,
    nodes: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError { offset: self.i, message: message.into() }
    }

    /// Counts a node of the tree being built.
    fn node(&mut self, n: Node) -> Result<Node, SyntaxError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(self.error(format!("an expression of more than {MAX_NODES} terms")));
        }
        Ok(n)
    }

    fn skip_ws(&mut self) {
        while self.src.get(self.i).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// Skips blanks and takes `b` if it comes next.
    fn eat(&mut self, b: u8) -> bool {
        self.skip_ws();
        let yes = self.src.get(self.i) == Some(&b);
        self.i += usize::from(yes);
        yes
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, SyntaxError>) -> Result<T, SyntaxError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(format!("nested deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn sum(&mut self) -> Result<Node, SyntaxError> {
        let mut left = self.product()?;
        loop {
            let op = if self.eat(b'+') {
                Op::Add
            } else if self.eat(b'-') {
                Op::Sub
            } else {
                return Ok(left);
            };
            let right = self.product()?;
            left = self.node(Node::Bin(op, Box::new(left), Box::new(right)))?;
        }
    }

    fn product(&mut self) -> Result<Node, SyntaxError> {
        let mut left = self.unary()?;
        loop {
            let op = if self.eat(b'*') {
                Op::Mul
            } else if self.eat(b'/') {
                Op::Div
            } else if self.eat(b'%') {
                Op::Rem
            } else {
                return Ok(left);
            };
            let right = self.unary()?;
            left = self.node(Node::Bin(op, Box::new(left), Box::new(right)))?;
        }
    }

    fn unary(&mut self) -> Result<Node, SyntaxError> {
        if self.eat(b'-') {
            let inner = self.nested(Parser::unary)?;
            return self.node(Node::Neg(Box::new(inner)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Node, SyntaxError> {
        self.skip_ws();
        let start = self.i;
        match self.src.get(self.i) {
            Some(b'0'..=b'9') => {
                while self.src.get(self.i).is_some_and(u8::is_ascii_digit) {
                    self.i += 1;
                }
                let digits = std::str::from_utf8(&self.src[start..self.i]).expect("ASCII digits");
                let v = digits.parse().map_err(|_| SyntaxError {
                    offset: start,
                    message: format!("{digits} does not fit in a 64-bit integer"),
                })?;
                self.node(Node::Int(v))
            }
            Some(b) if b.is_ascii_alphabetic() || *b == b'_' => {
                while self.src.get(self.i).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
                    self.i += 1;
                }
                let name = std::str::from_utf8(&self.src[start..self.i]).expect("ASCII name");
                if !self.eat(b'(') {
                    return self.node(Node::Var(name.into(), start));
                }
                let func = match name {
                    "min" => Func::Min,
                    "max" => Func::Max,
                    "abs" => Func::Abs,
                    _ => {
                        return Err(SyntaxError {
                            offset: start,
                            message: format!("unknown function `{name}`; the functions are min, max and abs"),
                        });
                    }
                };
                let mut args = Vec::new();
                loop {
                    args.push(self.nested(Parser::sum)?);
                    if self.eat(b')') {
                        break;
                    }
                    if !self.eat(b',') {
                        return Err(self.error("expected `,` or `)` in the arguments"));
                    }
                }
                if func == Func::Abs && args.len() != 1 {
                    return Err(SyntaxError { offset: start, message: "`abs` takes one argument".into() });
                }
                self.node(Node::Call(func, args))
            }
            Some(b'(') => {
                self.i += 1;
                let inner = self.nested(Parser::sum)?;
                if !self.eat(b')') {
                    return Err(self.error("expected `)`"));
                }
                Ok(inner)
            }
            Some(_) => Err(self.error("expected an integer, a variable, a function or `(`")),
            None => Err(self.error("the expression ends where a value is expected")),
        }
    }
}

impl fmt::Display for Expr {
    /// The expression fully parenthesised (a parse of it gives the same expression).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn show(n: &Node, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match n {
                Node::Int(v) => write!(f, "{v}"),
                Node::Var(name, _) => f.write_str(name),
                Node::Neg(a) => {
                    f.write_str("-(")?;
                    show(a, f)?;
                    f.write_str(")")
                }
                Node::Bin(op, a, b) => {
                    f.write_str("(")?;
                    show(a, f)?;
                    let op = match op {
                        Op::Add => " + ",
                        Op::Sub => " - ",
                        Op::Mul => " * ",
                        Op::Div => " / ",
                        Op::Rem => " % ",
                    };
                    f.write_str(op)?;
                    show(b, f)?;
                    f.write_str(")")
                }
                Node::Call(func, args) => {
                    f.write_str(match func {
                        Func::Min => "min(",
                        Func::Max => "max(",
                        Func::Abs => "abs(",
                    })?;
                    for (i, a) in args.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        show(a, f)?;
                    }
                    f.write_str(")")
                }
            }
        }
        show(&self.node, f)
    }
}

/// For fuzzing: parse arbitrary bytes as an expression and evaluate it; must never panic.
pub fn fuzz_expr(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(e) = Expr::parse(text)
    {
        let _ = e.names();
        let _ = e.eval(&|n| match n {
            "a" => Some("7"),
            "b" => Some("-9223372036854775808"),
            "c" => Some("x"),
            _ => None,
        });
        // Shown fully parenthesised it reads back the same (when within the nesting limit).
        let shown = e.to_string();
        if let Ok(again) = Expr::parse(&shown) {
            assert_eq!(again.to_string(), shown, "display round-trips");
        }
    }
}

#[cfg(test)]
mod tests;
