//! JSONPath (RFC 9535, as Hurl 8 evaluates it) compiled once and evaluated
//! over `serde_json` values.
//!
//! Paths: the root `$`, child names (`.name`, `['name']`, `["name"]`), indexes
//! (`[0]`, `[-1]` from the end), wildcards (`.*`, `[*]`), descendants (`..name`,
//! `..*`, `..[...]`), slices (`[1:3]`, `[::2]`), unions (`[0,2]`, `['a','b']`)
//! and filters (`[?@.price < 10]`, `[?(@.id == 'x')]`, with `&&`, `||`, `!`,
//! existence tests and the functions `length`, `count`, `match`, `search`,
//! `value`). A path of names and indexes only is *singular*: it yields at most
//! one value, and the one-pass reading of [`stream`] follows it, as it reads a
//! path of one filter on singular members ([`stream::Filtered`]). What a query
//! yields is Hurl's: nothing, the one value found, or the list of them.
//!
//! One evaluation is bounded ([`Budget`]): each value it visits or keeps costs
//! one unit, and it may spend two per byte of the answer, or [`MIN_BUDGET`] when
//! that is more, so overlapping descendant steps (`$..a..a..a` on a deep chain)
//! stop with [`TooMuch`] instead of taking the machine's memory.

use serde_json::Value;

mod filter;
pub mod stream;

pub use filter::Expr;

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Name(Box<str>),
    Index(i64),
    Wildcard,
    Descendant(Box<str>),
    /// `..*`: every value below.
    DescendantAll,
    /// `[sel, sel, ...]` (after `..` when `descendant`): names, indexes, slices, `*`, filters.
    Select {
        descendant: bool,
        selectors: Vec<Selector>,
    },
}

/// One selector of a bracketed list.
#[derive(Debug, Clone, PartialEq)]
pub enum Selector {
    Name(Box<str>),
    Index(i64),
    Wildcard,
    Slice { start: Option<i64>, end: Option<i64>, step: i64 },
    Filter(Box<Expr>),
}

/// A compiled path.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    steps: Vec<Step>,
    singular: bool,
    /// Its one-pass reading, when it has one filter that pass can answer ([`stream::Filtered`]).
    filtered: Option<Box<stream::Filtered>>,
}

/// The least units an evaluation may spend, however small the answer.
pub const MIN_BUDGET: usize = 1_000_000;

/// Units an evaluation may spend per byte of the answer.
pub const BUDGET_PER_BYTE: usize = 2;

/// What one evaluation may still spend: a unit per value visited or kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    left: usize,
    limit: usize,
}

impl Budget {
    /// The budget of an evaluation over an answer of `len` bytes.
    pub fn for_answer(len: usize) -> Budget {
        Budget::new(len.saturating_mul(BUDGET_PER_BYTE).max(MIN_BUDGET))
    }

    /// A budget of `limit` units.
    pub fn new(limit: usize) -> Budget {
        Budget { left: limit, limit }
    }

    /// Spends `n` units; `Err` past the limit.
    #[inline]
    pub fn spend(&mut self, n: usize) -> Result<(), TooMuch> {
        match self.left.checked_sub(n) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(TooMuch { limit: self.limit }),
        }
    }
}

/// An evaluation went past its [`Budget`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the jsonpath visited or kept more than {limit} values and was stopped (one evaluation may visit \
     or keep {BUDGET_PER_BYTE} values per byte of the answer, at least {MIN_BUDGET}): its `..` steps \
     overlap on this answer"
)]
pub struct TooMuch {
    pub limit: usize,
}

/// What a path found.
#[derive(Debug, Clone, PartialEq)]
pub enum Found<'a> {
    /// A singular path that led nowhere.
    Nothing,
    One(&'a Value),
    Many(Vec<&'a Value>),
}

impl JsonPath {
    /// Compiles `src`; the error says what is wrong, at which character (0-based).
    pub fn parse(src: &str) -> Result<JsonPath, (usize, String)> {
        let mut p = filter::Reader { s: src, i: 0 };
        if !p.eat("$") {
            return Err((0, "must start with `$`".into()));
        }
        let steps = p.steps()?;
        if p.i < src.len() {
            return Err((p.i, format!("unexpected `{}`", &src[p.i..])));
        }
        let singular = steps.iter().all(|s| matches!(s, Step::Name(_) | Step::Index(_)));
        let filtered = stream::Filtered::new(&steps).map(Box::new);
        Ok(JsonPath { steps, singular, filtered })
    }

    /// Whether it yields at most one value.
    pub fn is_singular(&self) -> bool {
        self.singular
    }

    /// Its one-pass reading, for a path of one filter that pass answers.
    pub fn filtered(&self) -> Option<&stream::Filtered> {
        self.filtered.as_deref()
    }

    /// Evaluates the path on `root`, spending from `budget` for each value visited or kept
    /// (see the module's notes); a singular path does not allocate and spends nothing.
    pub fn eval<'a>(&self, root: &'a Value, budget: &mut Budget) -> Result<Found<'a>, TooMuch> {
        if self.singular {
            return Ok(self.steps.iter().try_fold(root, child).map_or(Found::Nothing, Found::One));
        }
        Ok(Found::Many(self.nodes(root, root, budget)?))
    }

    /// Every value the path reaches from `current` (`root` is `$` in filters).
    pub(crate) fn nodes<'a>(
        &self,
        root: &'a Value,
        current: &'a Value,
        budget: &mut Budget,
    ) -> Result<Vec<&'a Value>, TooMuch> {
        let mut cur = vec![current];
        let mut next = Vec::new();
        for s in &self.steps {
            for v in cur.drain(..) {
                let before = next.len();
                match s {
                    Step::Name(_) | Step::Index(_) => next.extend(child(v, s)),
                    Step::Wildcard => children(v, &mut next),
                    Step::Descendant(name) => named(v, name, &mut next, budget)?,
                    Step::DescendantAll => descend(v, &mut children, &mut next, budget)?,
                    Step::Select { descendant: false, selectors } => {
                        select(root, v, selectors, &mut next, budget)?;
                    }
                    Step::Select { descendant: true, selectors } => {
                        let mut all = vec![v];
                        descend(v, &mut children, &mut all, budget)?;
                        for x in all {
                            select(root, x, selectors, &mut next, budget)?;
                        }
                    }
                }
                budget.spend(next.len() - before)?;
            }
            std::mem::swap(&mut cur, &mut next);
        }
        Ok(cur)
    }
}

impl JsonPath {
    /// A singular path's steps from `from` on, taken from `v`.
    pub(crate) fn walk<'a>(&self, v: &'a Value, from: usize) -> Option<&'a Value> {
        self.steps[from..].iter().try_fold(v, child)
    }
}

fn child<'a>(v: &'a Value, s: &Step) -> Option<&'a Value> {
    match (s, v) {
        (Step::Name(n), Value::Object(o)) => o.get(&**n),
        (Step::Index(i), Value::Array(a)) => index(a, *i),
        _ => None,
    }
}

fn index(a: &[Value], i: i64) -> Option<&Value> {
    let i = if i < 0 { a.len() as i64 + i } else { i };
    usize::try_from(i).ok().and_then(|i| a.get(i))
}

fn children<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::Array(a) => out.extend(a.iter()),
        Value::Object(o) => out.extend(o.values()),
        _ => {}
    }
}

/// `v` and every value below it, each given to `each` in document order, spending a unit
/// per value visited. The depth is the document's, which `serde_json` bounds (128).
fn descend<'a>(
    v: &'a Value,
    each: &mut dyn FnMut(&'a Value, &mut Vec<&'a Value>),
    out: &mut Vec<&'a Value>,
    budget: &mut Budget,
) -> Result<(), TooMuch> {
    budget.spend(1)?;
    each(v, out);
    match v {
        Value::Object(o) => o.values().try_for_each(|c| descend(c, each, out, budget)),
        Value::Array(a) => a.iter().try_for_each(|c| descend(c, each, out, budget)),
        _ => Ok(()),
    }
}

/// The members named `name` at any depth below `v`, spending a unit from `budget` per value
/// visited (the common `..name`, without [`descend`]'s call per value).
fn named<'a>(v: &'a Value, name: &str, out: &mut Vec<&'a Value>, budget: &mut Budget) -> Result<(), TooMuch> {
    budget.spend(1)?;
    match v {
        Value::Object(o) => {
            out.extend(o.get(name));
            o.values().try_for_each(|c| named(c, name, out, budget))
        }
        Value::Array(a) => a.iter().try_for_each(|c| named(c, name, out, budget)),
        _ => Ok(()),
    }
}

/// The values of `v` its selectors pick, in order.
fn select<'a>(
    root: &'a Value,
    v: &'a Value,
    sels: &[Selector],
    out: &mut Vec<&'a Value>,
    budget: &mut Budget,
) -> Result<(), TooMuch> {
    for s in sels {
        match (s, v) {
            (Selector::Name(n), Value::Object(o)) => out.extend(o.get(&**n)),
            (Selector::Index(i), Value::Array(a)) => out.extend(index(a, *i)),
            (Selector::Wildcard, _) => children(v, out),
            (Selector::Slice { start, end, step }, Value::Array(a)) => slice(a, *start, *end, *step, out),
            (Selector::Filter(e), Value::Array(a)) => {
                for x in a {
                    if e.test(root, x, budget)? {
                        out.push(x);
                    }
                }
            }
            (Selector::Filter(e), Value::Object(o)) => {
                for x in o.values() {
                    if e.test(root, x, budget)? {
                        out.push(x);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// RFC 9535's slice of `a`.
fn slice<'a>(a: &'a [Value], start: Option<i64>, end: Option<i64>, step: i64, out: &mut Vec<&'a Value>) {
    let len = a.len() as i64;
    let norm = |i: i64| if i >= 0 { i } else { len + i };
    if step > 0 {
        let lo = start.map_or(0, norm).clamp(0, len);
        let hi = end.map_or(len, norm).clamp(0, len);
        let mut i = lo;
        while i < hi {
            out.push(&a[i as usize]);
            i += step;
        }
    } else if step < 0 {
        let hi = start.map_or(len - 1, norm).clamp(-1, len - 1);
        let lo = end.map_or(-1, norm).clamp(-1, len - 1);
        let mut i = hi;
        while i > lo {
            out.push(&a[i as usize]);
            i += step;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
