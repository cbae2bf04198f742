//! The reader of a path's text, and filter expressions (`[?...]`): RFC 9535's
//! logical expressions, comparisons of literals and singular queries, existence
//! tests, and the functions `length`, `count`, `match`, `search` and `value`.

use std::cmp::Ordering;

use serde_json::Value;

use super::{Budget, JsonPath, Selector, Step, TooMuch};

type Res<T> = Result<T, (usize, String)>;

/// A filter expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Or(Vec<Expr>),
    And(Vec<Expr>),
    Not(Box<Expr>),
    /// An existence test: the query finds something (or the function's result is true).
    Test(Operand),
    Compare(Operand, Op, Operand),
}

/// A comparison's operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// One side of a comparison, or what a test or a function reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Literal(Value),
    /// A query from the current node (`@`) or the root (`$`).
    Query {
        root: bool,
        path: JsonPath,
    },
    Function(Box<str>, Vec<Operand>),
}

/// A value an operand evaluates to.
enum Val<'a> {
    Nothing,
    One(std::borrow::Cow<'a, Value>),
    Nodes(Vec<&'a Value>),
    Logical(bool),
}

impl Expr {
    /// Whether `node` passes the filter (`root` is the document).
    pub fn test(&self, root: &Value, node: &Value, budget: &mut Budget) -> Result<bool, TooMuch> {
        Ok(match self {
            Expr::Or(a) => {
                for e in a {
                    if e.test(root, node, budget)? {
                        return Ok(true);
                    }
                }
                false
            }
            Expr::And(a) => {
                for e in a {
                    if !e.test(root, node, budget)? {
                        return Ok(false);
                    }
                }
                true
            }
            Expr::Not(e) => !e.test(root, node, budget)?,
            Expr::Test(o) => match o.eval(root, node, budget)? {
                Val::Nothing => false,
                Val::Nodes(n) => !n.is_empty(),
                Val::Logical(b) => b,
                Val::One(_) => true,
            },
            Expr::Compare(a, op, b) => {
                let (a, b) = (a.eval(root, node, budget)?.single(), b.eval(root, node, budget)?.single());
                compare(a.as_deref(), *op, b.as_deref())
            }
        })
    }
}

impl<'a> Val<'a> {
    /// The value a comparison reads: a singular query's node, or nothing.
    fn single(self) -> Option<std::borrow::Cow<'a, Value>> {
        match self {
            Val::One(v) => Some(v),
            Val::Nodes(n) if n.len() == 1 => Some(std::borrow::Cow::Borrowed(n[0])),
            Val::Logical(b) => Some(std::borrow::Cow::Owned(Value::Bool(b))),
            _ => None,
        }
    }
}

impl Operand {
    fn eval<'a>(&self, root: &'a Value, node: &'a Value, budget: &mut Budget) -> Result<Val<'a>, TooMuch> {
        Ok(match self {
            Operand::Literal(v) => Val::One(std::borrow::Cow::Owned(v.clone())),
            Operand::Query { root: r, path } => {
                Val::Nodes(path.nodes(root, if *r { root } else { node }, budget)?)
            }
            Operand::Function(name, args) => {
                let arg = |i: usize, budget: &mut Budget| -> Result<Val<'a>, TooMuch> {
                    args.get(i).map_or(Ok(Val::Nothing), |a| a.eval(root, node, budget))
                };
                match &**name {
                    "length" => match arg(0, budget)?.single().as_deref() {
                        Some(Value::String(s)) => Val::One(std::borrow::Cow::Owned(s.chars().count().into())),
                        Some(Value::Array(a)) => Val::One(std::borrow::Cow::Owned(a.len().into())),
                        Some(Value::Object(o)) => Val::One(std::borrow::Cow::Owned(o.len().into())),
                        _ => Val::Nothing,
                    },
                    "count" => match arg(0, budget)? {
                        Val::Nodes(n) => Val::One(std::borrow::Cow::Owned(n.len().into())),
                        _ => Val::Nothing,
                    },
                    "value" => match arg(0, budget)? {
                        Val::Nodes(n) if n.len() == 1 => Val::One(std::borrow::Cow::Borrowed(n[0])),
                        _ => Val::Nothing,
                    },
                    "match" | "search" => {
                        let (s, re) = (arg(0, budget)?.single(), arg(1, budget)?.single());
                        let ok = match (s.as_deref(), re.as_deref()) {
                            (Some(Value::String(s)), Some(Value::String(re))) => {
                                let re = if &**name == "match" { format!("^(?:{re})$") } else { re.clone() };
                                regex::Regex::new(&re).is_ok_and(|r| r.is_match(s))
                            }
                            _ => false,
                        };
                        Val::Logical(ok)
                    }
                    _ => Val::Nothing,
                }
            }
        })
    }
}

/// One side of a comparison as RFC 9535 compares it: nothing, a number (by its value
/// whatever its kind), a string (by its characters), or another value (by its members).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Side<'a> {
    Nothing,
    Number(f64),
    Str(&'a str),
    Other(&'a Value),
}

impl<'a> Side<'a> {
    pub(crate) fn of(v: Option<&'a Value>) -> Side<'a> {
        match v {
            None => Side::Nothing,
            Some(Value::Number(n)) => Side::Number(n.as_f64().unwrap_or(f64::NAN)),
            Some(Value::String(s)) => Side::Str(s),
            Some(v) => Side::Other(v),
        }
    }
}

/// RFC 9535's comparison: nothing equals nothing; numbers and strings order.
fn compare(a: Option<&Value>, op: Op, b: Option<&Value>) -> bool {
    compare_sides(Side::of(a), op, Side::of(b))
}

/// [`compare`] of two sides (the one-pass reading compares what it found without making values).
pub(crate) fn compare_sides(a: Side<'_>, op: Op, b: Side<'_>) -> bool {
    let eq = |a: Side<'_>, b: Side<'_>| match (a, b) {
        (Side::Nothing, Side::Nothing) => true,
        (Side::Number(x), Side::Number(y)) => x.partial_cmp(&y) == Some(Ordering::Equal),
        (Side::Str(x), Side::Str(y)) => x == y,
        (Side::Other(x), Side::Other(y)) => x == y,
        _ => false,
    };
    let lt = |a: Side<'_>, b: Side<'_>| match (a, b) {
        (Side::Number(x), Side::Number(y)) => x.partial_cmp(&y) == Some(Ordering::Less),
        (Side::Str(x), Side::Str(y)) => x < y,
        _ => false,
    };
    match op {
        Op::Eq => eq(a, b),
        Op::Ne => !eq(a, b),
        Op::Lt => lt(a, b),
        Op::Le => lt(a, b) || eq(a, b),
        Op::Gt => lt(b, a),
        Op::Ge => lt(b, a) || eq(a, b),
    }
}

/// The text of a path, read from `i`.
pub(super) struct Reader<'s> {
    pub(super) s: &'s str,
    pub(super) i: usize,
}

impl Reader<'_> {
    fn rest(&self) -> &str {
        &self.s[self.i..]
    }

    pub(super) fn eat(&mut self, t: &str) -> bool {
        let ok = self.rest().starts_with(t);
        if ok {
            self.i += t.len();
        }
        ok
    }

    fn ws(&mut self) {
        while self.rest().starts_with([' ', '\t', '\n', '\r']) {
            self.i += 1;
        }
    }

    fn err<T>(&self, msg: impl Into<String>) -> Res<T> {
        Err((self.i, msg.into()))
    }

    /// Segments until the text ends or something that is not one.
    pub(super) fn steps(&mut self) -> Res<Vec<Step>> {
        let mut steps = Vec::new();
        loop {
            if self.eat("..") {
                if self.eat("*") {
                    steps.push(Step::DescendantAll);
                } else if self.rest().starts_with('[') {
                    steps.push(Step::Select { descendant: true, selectors: self.bracket()? });
                } else {
                    steps.push(Step::Descendant(self.name()?.into()));
                }
            } else if self.eat(".") {
                if self.eat("*") {
                    steps.push(Step::Wildcard);
                } else {
                    steps.push(Step::Name(self.name()?.into()));
                }
            } else if self.rest().starts_with('[') {
                let selectors = self.bracket()?;
                steps.push(match selectors.as_slice() {
                    [Selector::Name(n)] => Step::Name(n.clone()),
                    [Selector::Index(i)] => Step::Index(*i),
                    [Selector::Wildcard] => Step::Wildcard,
                    _ => Step::Select { descendant: false, selectors },
                });
            } else {
                return Ok(steps);
            }
        }
    }

    /// A member name after `.` or `..`: a letter, `_` or non-ASCII, then digits too.
    fn name(&mut self) -> Res<&str> {
        let start = self.i;
        let len = self
            .rest()
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii()))
            .unwrap_or(self.rest().len());
        if len == 0 || self.rest().starts_with(|c: char| c.is_ascii_digit()) {
            return self.err("a name must follow `.` (write other names `['name-1']`)");
        }
        self.i += len;
        if self.rest().starts_with('-') {
            return self.err("`-` is not part of a name after `.` (write `['name-with-dash']`)");
        }
        Ok(&self.s[start..start + len])
    }

    /// `[selector, ...]`.
    fn bracket(&mut self) -> Res<Vec<Selector>> {
        let open = self.i;
        self.i += 1;
        let mut out = Vec::new();
        loop {
            self.ws();
            out.push(self.selector()?);
            self.ws();
            if self.eat("]") {
                return Ok(out);
            }
            if !self.eat(",") {
                return if self.i >= self.s.len() {
                    Err((open, "`[` without `]`".into()))
                } else {
                    self.err("expected `,` or `]`")
                };
            }
        }
    }

    fn selector(&mut self) -> Res<Selector> {
        if self.eat("*") {
            return Ok(Selector::Wildcard);
        }
        if self.eat("?") {
            self.ws();
            return Ok(Selector::Filter(Box::new(self.or()?)));
        }
        if self.rest().starts_with(['\'', '"']) {
            return Ok(Selector::Name(self.string()?.into()));
        }
        let start = self.int()?;
        self.ws();
        if !self.rest().starts_with(':') {
            return start
                .map(Selector::Index)
                .map_or_else(|| self.err("expected an index, a slice, `*`, a quoted name or `?`"), Ok);
        }
        self.i += 1;
        self.ws();
        let end = self.int()?;
        self.ws();
        let step = if self.eat(":") {
            self.ws();
            self.int()?.unwrap_or(1)
        } else {
            1
        };
        Ok(Selector::Slice { start, end, step })
    }

    /// An optional integer.
    fn int(&mut self) -> Res<Option<i64>> {
        let r = self.rest();
        let n = r.char_indices().take_while(|&(k, c)| c.is_ascii_digit() || c == '-' && k == 0).count();
        if n == 0 || &r[..n] == "-" {
            return Ok(None);
        }
        let v = r[..n].parse().map_err(|_| (self.i, format!("`{}` is not an index", &r[..n])))?;
        self.i += n;
        Ok(Some(v))
    }

    /// A quoted string, with JSON's escapes.
    fn string(&mut self) -> Res<String> {
        let q = self.rest().chars().next().expect("a quote");
        let start = self.i;
        self.i += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.rest().chars().next() else {
                return Err((start, "a string without its closing quote".into()));
            };
            self.i += c.len_utf8();
            match c {
                c if c == q => return Ok(out),
                '\\' => {
                    let e = self.rest().chars().next().unwrap_or(' ');
                    self.i += e.len_utf8();
                    out.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'b' => '\u{8}',
                        'f' => '\u{c}',
                        'u' => {
                            let hex = self
                                .rest()
                                .get(..4)
                                .ok_or((self.i, "expected four hex digits".to_owned()))?
                                .to_owned();
                            self.i += 4;
                            u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32).unwrap_or('\u{fffd}')
                        }
                        c => c,
                    });
                }
                c => out.push(c),
            }
        }
    }

    fn or(&mut self) -> Res<Expr> {
        let mut a = vec![self.and()?];
        while {
            self.ws();
            self.eat("||")
        } {
            self.ws();
            a.push(self.and()?);
        }
        Ok(if a.len() == 1 { a.pop().expect("one") } else { Expr::Or(a) })
    }

    fn and(&mut self) -> Res<Expr> {
        let mut a = vec![self.basic()?];
        while {
            self.ws();
            self.eat("&&")
        } {
            self.ws();
            a.push(self.basic()?);
        }
        Ok(if a.len() == 1 { a.pop().expect("one") } else { Expr::And(a) })
    }

    fn basic(&mut self) -> Res<Expr> {
        self.ws();
        if self.eat("!") {
            self.ws();
            return Ok(Expr::Not(Box::new(self.basic()?)));
        }
        if self.eat("(") {
            let e = self.or()?;
            self.ws();
            if !self.eat(")") {
                return self.err("expected `)`");
            }
            return Ok(e);
        }
        let a = self.operand()?;
        self.ws();
        let op =
            [("==", Op::Eq), ("!=", Op::Ne), ("<=", Op::Le), (">=", Op::Ge), ("<", Op::Lt), (">", Op::Gt)]
                .into_iter()
                .find(|(t, _)| self.rest().starts_with(t));
        let Some((t, op)) = op else { return Ok(Expr::Test(a)) };
        self.i += t.len();
        self.ws();
        let b = self.operand()?;
        Ok(Expr::Compare(a, op, b))
    }

    fn operand(&mut self) -> Res<Operand> {
        let r = self.rest();
        if r.starts_with('@') || r.starts_with('$') {
            let root = r.starts_with('$');
            self.i += 1;
            let steps = self.steps()?;
            let singular = steps.iter().all(|s| matches!(s, Step::Name(_) | Step::Index(_)));
            return Ok(Operand::Query { root, path: JsonPath { steps, singular, filtered: None } });
        }
        if r.starts_with(['\'', '"']) {
            return Ok(Operand::Literal(Value::String(self.string()?)));
        }
        for (word, v) in [("true", Value::Bool(true)), ("false", Value::Bool(false)), ("null", Value::Null)] {
            if r.starts_with(word) && !r[word.len()..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
                self.i += word.len();
                return Ok(Operand::Literal(v));
            }
        }
        let n = r.find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c))).unwrap_or(r.len());
        if n > 0 {
            let v: Value = serde_json::from_str(&r[..n])
                .map_err(|_| (self.i, format!("`{}` is not a number", &r[..n])))?;
            self.i += n;
            return Ok(Operand::Literal(v));
        }
        let f = r.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(r.len());
        if f > 0 && r[f..].starts_with('(') {
            let name = &r[..f];
            if !matches!(name, "length" | "count" | "match" | "search" | "value") {
                return self.err(format!("unknown function `{name}`"));
            }
            let name: Box<str> = name.into();
            self.i += f + 1;
            let mut args = Vec::new();
            loop {
                self.ws();
                if self.eat(")") {
                    break;
                }
                args.push(self.operand()?);
                self.ws();
                if !self.eat(",") && !self.rest().starts_with(')') {
                    return self.err("expected `,` or `)`");
                }
            }
            return Ok(Operand::Function(name, args));
        }
        self.err("expected `@`, `$`, a literal or a function")
    }
}
