//! The fast path of `xpath`: the XPath 1.0 that Hurl files write (location paths on the
//! child, descendant, self, parent and attribute axes, name tests with namespace prefixes,
//! `text()`, `node()`, `comment()`, predicates, the operators, and the core string, number
//! and boolean functions), parsed here into a small tree and evaluated on a `roxmltree`
//! document (`fast/eval.rs`), which parses without interning a name or allocating a node.
//!
//! It gives sxd-xpath's answers, quirks included (a predicate `[1.5]` is `[1]`; `<` and `>`
//! compare the first node of a node set, not each), so a file is judged the same whichever
//! engine reads it: an expression this parser does not take (another axis, a variable, a
//! filter on a parenthesised expression, a function outside the list) goes to sxd whole, and
//! so does an evaluation that sxd would refuse (`count("x")`). A property test holds the two
//! engines' results equal on generated documents and expressions (`xpath/tests.rs`).

pub(super) mod eval;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    /// `=` (false) or `!=` (true).
    Equal(bool, Box<Expr>, Box<Expr>),
    Compare(Cmp, Box<Expr>, Box<Expr>),
    Arith(Op, Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
    Union(Box<Expr>, Box<Expr>),
    Path(Path),
    Literal(Box<str>),
    Number(f64),
    Call(Func, Vec<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// The functions of the fast path, each with the arguments it takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Func {
    Last,
    Position,
    Count,
    LocalName,
    String,
    Concat,
    StartsWith,
    Contains,
    SubstringBefore,
    SubstringAfter,
    StringLength,
    NormalizeSpace,
    Boolean,
    Not,
    True,
    False,
    Number,
    Sum,
    Floor,
    Ceiling,
    Round,
}

impl Func {
    /// The function named `name` called with `n` arguments, if the fast path has it (a
    /// wrong count is sxd's error to give).
    fn of(name: &str, n: usize) -> Option<Func> {
        let (f, min, max) = match name {
            "last" => (Func::Last, 0, 0),
            "position" => (Func::Position, 0, 0),
            "count" => (Func::Count, 1, 1),
            "local-name" => (Func::LocalName, 0, 1),
            "string" => (Func::String, 0, 1),
            "concat" => (Func::Concat, 2, usize::MAX),
            "starts-with" => (Func::StartsWith, 2, 2),
            "contains" => (Func::Contains, 2, 2),
            "substring-before" => (Func::SubstringBefore, 2, 2),
            "substring-after" => (Func::SubstringAfter, 2, 2),
            "string-length" => (Func::StringLength, 0, 1),
            "normalize-space" => (Func::NormalizeSpace, 0, 1),
            "boolean" => (Func::Boolean, 1, 1),
            "not" => (Func::Not, 1, 1),
            "true" => (Func::True, 0, 0),
            "false" => (Func::False, 0, 0),
            "number" => (Func::Number, 0, 1),
            "sum" => (Func::Sum, 1, 1),
            "floor" => (Func::Floor, 1, 1),
            "ceiling" => (Func::Ceiling, 1, 1),
            "round" => (Func::Round, 1, 1),
            _ => return None,
        };
        (min..=max).contains(&n).then_some(f)
    }
}

/// A location path: from the root or from the context node, through its steps.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Path {
    pub absolute: bool,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Step {
    pub axis: Axis,
    pub test: Test,
    pub predicates: Vec<Expr>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Axis {
    Child,
    Descendant,
    DescendantOrSelf,
    SelfNode,
    Parent,
    Attribute,
}

/// A node test; a prefix is its index in the expression's list of prefixes.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Test {
    /// A name, in no namespace or in the prefix's.
    Name(Option<usize>, Box<str>),
    /// `*` (any name of the axis's principal kind), or `p:*`.
    Any(Option<usize>),
    Node,
    Text,
    Comment,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok<'e> {
    Slash,
    DoubleSlash,
    LBracket,
    RBracket,
    LParen,
    RParen,
    At,
    Comma,
    Dot,
    DoubleDot,
    Pipe,
    Plus,
    Minus,
    Equal,
    NotEqual,
    Cmp(Cmp),
    /// An operator written as `*`, `div`, `mod`, `and` or `or`.
    Operator(&'e str),
    /// A name test: prefix and local part (`*` for any).
    Name(Option<&'e str>, &'e str),
    /// A function name or a node type, followed by `(`.
    Function(&'e str),
    /// An axis name, followed by `::`.
    Axis(&'e str),
    Literal(&'e str),
    Number(f64),
}

impl Tok<'_> {
    /// Whether a `*` or a name after this token is an operator (XPath 1.0, section 3.7).
    fn operator_follows(&self) -> bool {
        !matches!(
            self,
            Tok::At
                | Tok::Axis(_)
                | Tok::LParen
                | Tok::LBracket
                | Tok::Comma
                | Tok::Slash
                | Tok::DoubleSlash
                | Tok::Pipe
                | Tok::Plus
                | Tok::Minus
                | Tok::Equal
                | Tok::NotEqual
                | Tok::Cmp(_)
                | Tok::Operator(_)
        )
    }
}

fn name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')
}

/// The tokens of `expr`, or `None` where the fast path does not read it (a variable, a
/// character outside ASCII, anything unusual).
fn tokens(expr: &str) -> Option<Vec<Tok<'_>>> {
    let b = expr.as_bytes();
    let mut out: Vec<Tok<'_>> = Vec::new();
    let mut i = 0;
    let skip_ws = |mut j: usize| {
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        j
    };
    loop {
        i = skip_ws(i);
        let Some(&c) = b.get(i) else { break };
        let operator = out.last().is_some_and(Tok::operator_follows);
        let two = b.get(i + 1).copied();
        let (tok, len) = match c {
            b'/' if two == Some(b'/') => (Tok::DoubleSlash, 2),
            b'/' => (Tok::Slash, 1),
            b'[' => (Tok::LBracket, 1),
            b']' => (Tok::RBracket, 1),
            b'(' => (Tok::LParen, 1),
            b')' => (Tok::RParen, 1),
            b'@' => (Tok::At, 1),
            b',' => (Tok::Comma, 1),
            b'|' => (Tok::Pipe, 1),
            b'+' => (Tok::Plus, 1),
            b'-' => (Tok::Minus, 1),
            b'=' => (Tok::Equal, 1),
            b'!' if two == Some(b'=') => (Tok::NotEqual, 2),
            b'<' if two == Some(b'=') => (Tok::Cmp(Cmp::Le), 2),
            b'<' => (Tok::Cmp(Cmp::Lt), 1),
            b'>' if two == Some(b'=') => (Tok::Cmp(Cmp::Ge), 2),
            b'>' => (Tok::Cmp(Cmp::Gt), 1),
            b'*' if operator => (Tok::Operator("*"), 1),
            b'*' => (Tok::Name(None, "*"), 1),
            b'"' | b'\'' => {
                let end = i + 1 + b[i + 1..].iter().position(|&q| q == c)?;
                (Tok::Literal(&expr[i + 1..end]), end + 1 - i)
            }
            b'.' if two == Some(b'.') => (Tok::DoubleDot, 2),
            b'.' | b'0'..=b'9' => {
                let mut j = i;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if b.get(j) == Some(&b'.') {
                    j += 1;
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                }
                if c == b'.' && j == i + 1 {
                    (Tok::Dot, 1)
                } else {
                    (Tok::Number(expr[i..j].parse().ok()?), j - i)
                }
            }
            c if name_start(c) => {
                let (name, end) = qname(expr, i)?;
                let after = skip_ws(end);
                match name {
                    Tok::Name(None, n) if operator => {
                        if !matches!(n, "and" | "or" | "div" | "mod") {
                            return None;
                        }
                        (Tok::Operator(n), end - i)
                    }
                    Tok::Name(None, n) if b.get(after) == Some(&b'(') => (Tok::Function(n), end - i),
                    Tok::Name(None, n) if b[after..].starts_with(b"::") => {
                        out.push(Tok::Axis(n));
                        i = after + 2;
                        continue;
                    }
                    Tok::Name(Some(_), _) if b.get(after) == Some(&b'(') => return None,
                    name => (name, end - i),
                }
            }
            _ => return None,
        };
        out.push(tok);
        i += len;
    }
    Some(out)
}

/// The name test (`name`, `prefix:name` or `prefix:*`) at `i` of `expr`, and where it ends.
fn qname(expr: &str, i: usize) -> Option<(Tok<'_>, usize)> {
    let b = expr.as_bytes();
    let name_end = |mut j: usize| {
        while j < b.len() && name_char(b[j]) {
            j += 1;
        }
        j
    };
    let j = name_end(i);
    let first = &expr[i..j];
    if b.get(j) != Some(&b':') || b.get(j + 1) == Some(&b':') {
        return Some((Tok::Name(None, first), j));
    }
    match b.get(j + 1) {
        Some(b'*') => Some((Tok::Name(Some(first), "*"), j + 2)),
        Some(&c) if name_start(c) => {
            let m = name_end(j + 1);
            Some((Tok::Name(Some(first), &expr[j + 1..m]), m))
        }
        _ => None,
    }
}

/// `expr` parsed for the fast path, with `prefixes` (the expression's namespace prefixes,
/// as `xpath::prefixes` lists them) giving each prefixed name test its index; `None` where
/// the fast path does not take it.
pub(super) fn parse(expr: &str, prefixes: &[String]) -> Option<Expr> {
    let toks = tokens(expr)?;
    if toks.len() > MAX_TOKENS {
        return None;
    }
    let mut p = Parser { toks, at: 0, prefixes, depth: 0 };
    let e = p.or()?;
    (p.at == p.toks.len()).then_some(e)
}

struct Parser<'e, 'p> {
    toks: Vec<Tok<'e>>,
    at: usize,
    prefixes: &'p [String],
    /// How deep the expressions being read nest (bounded by [`MAX_DEPTH`]).
    depth: usize,
}

/// The deepest nesting of expressions the fast path reads.
const MAX_DEPTH: usize = 64;

/// The most tokens of an expression the fast path reads: its tree is no deeper, so its
/// evaluation's recursion is bounded too.
const MAX_TOKENS: usize = 128;

impl<'e> Parser<'e, '_> {
    fn peek(&self) -> Option<&Tok<'e>> {
        self.toks.get(self.at)
    }

    fn eat(&mut self, t: &Tok<'_>) -> bool {
        let found = self.peek() == Some(t);
        if found {
            self.at += 1;
        }
        found
    }

    fn operator(&mut self, names: &[&str]) -> Option<&'e str> {
        match self.peek() {
            Some(Tok::Operator(o)) if names.contains(o) => {
                let o = *o;
                self.at += 1;
                Some(o)
            }
            _ => None,
        }
    }

    fn or(&mut self) -> Option<Expr> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let mut e = self.and()?;
        while self.operator(&["or"]).is_some() {
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        self.depth -= 1;
        Some(e)
    }

    fn and(&mut self) -> Option<Expr> {
        let mut e = self.equality()?;
        while self.operator(&["and"]).is_some() {
            e = Expr::And(Box::new(e), Box::new(self.equality()?));
        }
        Some(e)
    }

    fn equality(&mut self) -> Option<Expr> {
        let mut e = self.relational()?;
        loop {
            let negated = if self.eat(&Tok::Equal) {
                false
            } else if self.eat(&Tok::NotEqual) {
                true
            } else {
                return Some(e);
            };
            e = Expr::Equal(negated, Box::new(e), Box::new(self.relational()?));
        }
    }

    fn relational(&mut self) -> Option<Expr> {
        let mut e = self.additive()?;
        while let Some(Tok::Cmp(c)) = self.peek() {
            let c = *c;
            self.at += 1;
            e = Expr::Compare(c, Box::new(e), Box::new(self.additive()?));
        }
        Some(e)
    }

    fn additive(&mut self) -> Option<Expr> {
        let mut e = self.multiplicative()?;
        loop {
            let op = if self.eat(&Tok::Plus) {
                Op::Add
            } else if self.eat(&Tok::Minus) {
                Op::Sub
            } else {
                return Some(e);
            };
            e = Expr::Arith(op, Box::new(e), Box::new(self.multiplicative()?));
        }
    }

    fn multiplicative(&mut self) -> Option<Expr> {
        let mut e = self.unary()?;
        while let Some(o) = self.operator(&["*", "div", "mod"]) {
            let op = match o {
                "*" => Op::Mul,
                "div" => Op::Div,
                _ => Op::Mod,
            };
            e = Expr::Arith(op, Box::new(e), Box::new(self.unary()?));
        }
        Some(e)
    }

    fn unary(&mut self) -> Option<Expr> {
        if self.eat(&Tok::Minus) {
            return Some(Expr::Neg(Box::new(self.unary()?)));
        }
        let mut e = self.path()?;
        while self.eat(&Tok::Pipe) {
            e = Expr::Union(Box::new(e), Box::new(self.path()?));
        }
        Some(e)
    }

    /// A location path or a primary expression (without predicates or steps after it).
    fn path(&mut self) -> Option<Expr> {
        match self.peek()? {
            Tok::Literal(s) => {
                let s = (*s).into();
                self.at += 1;
                return Some(Expr::Literal(s));
            }
            Tok::Number(n) => {
                let n = *n;
                self.at += 1;
                return Some(Expr::Number(n));
            }
            Tok::LParen => {
                self.at += 1;
                let e = self.or()?;
                return self.eat(&Tok::RParen).then_some(e);
            }
            Tok::Function(f) if !matches!(*f, "node" | "text" | "comment" | "processing-instruction") => {
                let name = *f;
                self.at += 2;
                let mut args = Vec::new();
                if !self.eat(&Tok::RParen) {
                    loop {
                        args.push(self.or()?);
                        if self.eat(&Tok::RParen) {
                            break;
                        }
                        if !self.eat(&Tok::Comma) {
                            return None;
                        }
                    }
                }
                return Some(Expr::Call(Func::of(name, args.len())?, args));
            }
            _ => {}
        }
        let mut steps = Vec::new();
        let absolute = match self.peek() {
            Some(Tok::Slash) => {
                self.at += 1;
                if !self.starts_step() {
                    return Some(Expr::Path(Path { absolute: true, steps }));
                }
                true
            }
            Some(Tok::DoubleSlash) => {
                self.at += 1;
                steps.push(descendant_or_self());
                true
            }
            _ => false,
        };
        loop {
            steps.push(self.step()?);
            if self.eat(&Tok::Slash) {
                continue;
            }
            if self.eat(&Tok::DoubleSlash) {
                steps.push(descendant_or_self());
                continue;
            }
            return Some(Expr::Path(Path { absolute, steps }));
        }
    }

    fn starts_step(&self) -> bool {
        matches!(
            self.peek(),
            Some(Tok::Dot | Tok::DoubleDot | Tok::At | Tok::Axis(_) | Tok::Name(..) | Tok::Function(_))
        )
    }

    fn step(&mut self) -> Option<Step> {
        let (axis, test) = if self.eat(&Tok::Dot) {
            (Axis::SelfNode, Test::Node)
        } else if self.eat(&Tok::DoubleDot) {
            (Axis::Parent, Test::Node)
        } else {
            self.axis_and_test()?
        };
        // sxd takes predicates after `.` and `..` too.
        let mut predicates = Vec::new();
        while self.eat(&Tok::LBracket) {
            predicates.push(self.or()?);
            if !self.eat(&Tok::RBracket) {
                return None;
            }
        }
        Some(Step { axis, test, predicates })
    }

    fn axis_and_test(&mut self) -> Option<(Axis, Test)> {
        let axis = match self.peek()? {
            Tok::At => Axis::Attribute,
            Tok::Axis(a) => match *a {
                "child" => Axis::Child,
                "descendant" => Axis::Descendant,
                "descendant-or-self" => Axis::DescendantOrSelf,
                "self" => Axis::SelfNode,
                "parent" => Axis::Parent,
                "attribute" => Axis::Attribute,
                _ => return None,
            },
            _ => Axis::Child,
        };
        if matches!(self.peek()?, Tok::At | Tok::Axis(_)) {
            self.at += 1;
        }
        let test = match self.peek()? {
            Tok::Name(prefix, local) => {
                let ns = match prefix {
                    Some(p) => Some(self.prefixes.iter().position(|q| q == p)?),
                    None => None,
                };
                if *local == "*" { Test::Any(ns) } else { Test::Name(ns, (*local).into()) }
            }
            Tok::Function(kind) => {
                let test = match *kind {
                    "node" => Test::Node,
                    "text" => Test::Text,
                    "comment" => Test::Comment,
                    _ => return None,
                };
                if self.toks.get(self.at + 1) != Some(&Tok::LParen)
                    || self.toks.get(self.at + 2) != Some(&Tok::RParen)
                {
                    return None;
                }
                self.at += 2;
                test
            }
            _ => return None,
        };
        self.at += 1;
        Some((axis, test))
    }
}

/// `//`'s step: `descendant-or-self::node()`.
fn descendant_or_self() -> Step {
    Step { axis: Axis::DescendantOrSelf, test: Test::Node, predicates: Vec::new() }
}

/// Whether `e` can select text nodes (`text()`, or `node()` on the child and descendant
/// axes) into a result or a predicate's context: sxd keeps a text node per run of characters,
/// per reference and per CDATA section where XPath's data model (roxmltree's, libxml2's) keeps
/// one, so on a body with references or CDATA such an expression is sxd's to answer.
pub(super) fn sees_text_nodes(e: &Expr) -> bool {
    match e {
        Expr::Or(a, b)
        | Expr::And(a, b)
        | Expr::Equal(_, a, b)
        | Expr::Compare(_, a, b)
        | Expr::Arith(_, a, b)
        | Expr::Union(a, b) => sees_text_nodes(a) || sees_text_nodes(b),
        Expr::Neg(a) => sees_text_nodes(a),
        Expr::Call(_, args) => args.iter().any(sees_text_nodes),
        Expr::Literal(_) | Expr::Number(_) => false,
        Expr::Path(p) => {
            let mut text = false;
            for s in &p.steps {
                text = match (&s.test, s.axis) {
                    (Test::Node, Axis::SelfNode) => text,
                    (Test::Text, _)
                    | (Test::Node, Axis::Child | Axis::Descendant | Axis::DescendantOrSelf) => true,
                    _ => false,
                };
                if s.predicates.iter().any(sees_text_nodes) || (text && !s.predicates.is_empty()) {
                    return true;
                }
            }
            text
        }
    }
}
