//! A path with one filter, `$.a.b[?(@.k == 'x')].c`, answered in one pass over a
//! plain document (see [`super`]) without building it: the singular steps lead to
//! the filtered array; at each of its elements the filter's operands (the
//! element's singular members, `@` itself) and the target (the singular steps
//! after the filter) are read as one [`Plan`] reads an answer, and at the
//! element's end the filter is tested (members come in any order) with the
//! general evaluator's comparison ([`compare_sides`]); the targets of the
//! elements that pass are the result, in order, as [`JsonPath::eval`] gives them.
//!
//! Filters taken: comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`) of such members
//! and literals, existence tests of members (`[?(@.k)]`), and `&&`, `||`, `!`
//! of those. Anything else (functions, `$` inside the filter, a filter on an
//! object's members, which `serde_json` orders by name, an operand or a target
//! that is an object or array, an integer past `i64`) gives up: the caller
//! evaluates the path on the parsed document, which decides.

use serde_json::Value;

use super::Scan;
use crate::jsonpath::filter::{Expr, Op, Operand, Side, compare_sides};
use crate::jsonpath::stream::{Leaf, MAX, Plan};
use crate::jsonpath::{Budget, JsonPath, Selector, Step};

/// The most steps before the filter: with the scan's own bound on depth (32) the
/// document read stays well within `serde_json`'s (128).
const PREFIX: usize = 16;

/// A path of one filter, compiled for the one-pass reading (see the module's notes).
#[derive(Debug, Clone, PartialEq)]
pub struct Filtered {
    /// The singular steps to the filtered array.
    prefix: Vec<Step>,
    cond: Cond,
    /// The paths read at each element, from it: the target's, then the operands'.
    plan: Plan,
    /// The target's place among the plan's paths.
    target: usize,
    /// The most units of [`Budget`] that [`JsonPath::eval`] spends on an element: a unit for
    /// each step of each operand as written, the element kept, each step of the target.
    cost: usize,
}

/// A filter, its operands read from the plan's places.
#[derive(Debug, Clone, PartialEq)]
enum Cond {
    Or(Vec<Cond>),
    And(Vec<Cond>),
    Not(Box<Cond>),
    /// The member at this place exists.
    Exists(usize),
    Compare(Term, Op, Term),
}

#[derive(Debug, Clone, PartialEq)]
enum Term {
    /// What the plan found at this place.
    Found(usize),
    Literal(Value),
}

impl Filtered {
    /// The one-pass reading of a path of `steps`: `None` unless it is singular steps, one
    /// filter this pass answers, then singular steps.
    pub(crate) fn new(steps: &[Step]) -> Option<Filtered> {
        let k = steps.iter().position(|s| !matches!(s, Step::Name(_) | Step::Index(0..)))?;
        let Step::Select { descendant: false, selectors } = &steps[k] else { return None };
        let [Selector::Filter(expr)] = selectors.as_slice() else { return None };
        let after = &steps[k + 1..];
        let singular = after.iter().all(|s| matches!(s, Step::Name(_) | Step::Index(_)));
        let target = JsonPath { steps: after.to_vec(), singular, filtered: None };
        if k > PREFIX || !target.streamable() {
            return None;
        }
        let mut operands = Vec::new();
        let cond = Cond::new(expr, &mut operands)?;
        let cost = operands.iter().map(|o| o.steps.len()).sum::<usize>() + 1 + target.steps.len();
        let plan = Plan::new([&target], &operands)?;
        // The `k`th operand is the plan's path given `k + 1`th (the target is given first).
        let cond = cond.placed(&plan)?;
        Some(Filtered { prefix: steps[..k].to_vec(), cond, target: plan.slot(0)?, plan, cost })
    }

    /// The targets of the filtered elements of `body`, into `found` (emptied first); `None`
    /// when this pass cannot tell (then `found` means nothing), when `found` cannot keep
    /// them all, or when the evaluation on the document might go past its [`Budget`] (it
    /// would fail there: see [`TooMuch`]).
    ///
    /// [`TooMuch`]: crate::jsonpath::TooMuch
    pub fn find<'a>(&self, body: &'a [u8], found: &mut impl Found<'a>) -> Option<()> {
        found.clear();
        let mut out = [const { Leaf::Nothing }; MAX];
        let mut s = Scan { b: body, i: 0, plan: &self.plan, out: &mut out };
        s.ws();
        let mut elements = 0;
        let ok = self.at(&mut s, 0, found, &mut elements);
        s.ws();
        let end = s.i == body.len();
        Leaf::clear(&mut out);
        let most = self.prefix.len() + elements * self.cost;
        (ok.is_some() && end && Budget::for_answer(body.len()).spend(most).is_ok()).then_some(())
    }

    /// The value at `s`, `k` steps of the prefix taken to reach it; `elements` counts the
    /// elements filtered.
    fn at<'a>(
        &self,
        s: &mut Scan<'_, 'a>,
        k: usize,
        found: &mut impl Found<'a>,
        elements: &mut usize,
    ) -> Option<()> {
        match (*s.b.get(s.i)?, self.prefix.get(k)) {
            (b'[', None) => self.filter(s, found, elements),
            // An object's members filtered: `serde_json` orders them by name.
            (b'{', None) => None,
            (b'{', Some(Step::Name(name))) => s.members(Scan::string, |s, key| {
                if key == name.as_bytes() {
                    // A repeated name: only its last value counts.
                    found.clear();
                    self.at(s, k + 1, found, elements)
                } else {
                    s.value(k + 1, 0)
                }
            }),
            (b'[', Some(&Step::Index(want))) => {
                s.elements(
                    |s, n| if n == want { self.at(s, k + 1, found, elements) } else { s.value(k + 1, 0) },
                )
            }
            // A scalar, or a value the next step does not go into: read, nothing found.
            _ => s.value(k, 0),
        }
    }

    /// The filtered array at `s`: each element read, tested at its end.
    fn filter<'a>(
        &self,
        s: &mut Scan<'_, 'a>,
        found: &mut impl Found<'a>,
        elements: &mut usize,
    ) -> Option<()> {
        let places = self.plan.paths();
        let all = (1u32 << places) - 1;
        s.elements(|s, _| {
            *elements += 1;
            Leaf::clear(&mut s.out[..places]);
            // The element is the root of the plan's paths; its depth in the document is
            // at most `PREFIX + 1` more than the scan counts.
            s.value(0, all)?;
            if self.cond.holds(s.out)? {
                let t = std::mem::take(&mut s.out[self.target]);
                if !matches!(t, Leaf::Nothing) {
                    found.push(t)?;
                }
            }
            Some(())
        })
    }
}

/// Where [`Filtered::find`] keeps the targets it finds: a list, or a place for one (the
/// compiled checks, which allocate nothing per answer).
pub trait Found<'a> {
    fn clear(&mut self);
    /// Keeps `leaf` after the others; `None` when it cannot.
    fn push(&mut self, leaf: Leaf<'a>) -> Option<()>;
}

impl<'a> Found<'a> for Vec<Leaf<'a>> {
    fn clear(&mut self) {
        Vec::clear(self);
    }
    fn push(&mut self, leaf: Leaf<'a>) -> Option<()> {
        Vec::push(self, leaf);
        Some(())
    }
}

/// At most one target: [`Found::push`] refuses a second.
impl<'a> Found<'a> for Option<Leaf<'a>> {
    fn clear(&mut self) {
        *self = None;
    }
    fn push(&mut self, leaf: Leaf<'a>) -> Option<()> {
        if self.is_some() {
            return None;
        }
        *self = Some(leaf);
        Some(())
    }
}

impl Cond {
    /// The filter `e`, each member it reads pushed on `operands` (its place for now is
    /// its index there: see [`Cond::placed`]); `None` for a filter this pass does not take.
    fn new(e: &Expr, operands: &mut Vec<JsonPath>) -> Option<Cond> {
        fn member(o: &Operand, operands: &mut Vec<JsonPath>) -> Option<usize> {
            match o {
                Operand::Query { root: false, path } if path.streamable() => {
                    operands.push(path.clone());
                    Some(operands.len() - 1)
                }
                _ => None,
            }
        }
        Some(match e {
            Expr::Or(a) => Cond::Or(a.iter().map(|e| Cond::new(e, operands)).collect::<Option<_>>()?),
            Expr::And(a) => Cond::And(a.iter().map(|e| Cond::new(e, operands)).collect::<Option<_>>()?),
            Expr::Not(e) => Cond::Not(Box::new(Cond::new(e, operands)?)),
            Expr::Test(o) => Cond::Exists(member(o, operands)?),
            Expr::Compare(a, op, b) => {
                let mut term = |o: &Operand| match o {
                    Operand::Literal(v) => Some(Term::Literal(v.clone())),
                    o => member(o, operands).map(Term::Found),
                };
                let a = term(a)?;
                Cond::Compare(a, *op, term(b)?)
            }
        })
    }

    /// The operands' indexes made places of `plan` (which dedups the same member read twice).
    fn placed(self, plan: &Plan) -> Option<Cond> {
        let place = |k: usize| plan.slot(k + 1);
        let all = |a: Vec<Cond>| a.into_iter().map(|c| c.placed(plan)).collect::<Option<_>>();
        let term = |t: Term| match t {
            Term::Found(k) => place(k).map(Term::Found),
            lit @ Term::Literal(_) => Some(lit),
        };
        Some(match self {
            Cond::Or(a) => Cond::Or(all(a)?),
            Cond::And(a) => Cond::And(all(a)?),
            Cond::Not(c) => Cond::Not(Box::new(c.placed(plan)?)),
            Cond::Exists(k) => Cond::Exists(place(k)?),
            Cond::Compare(a, op, b) => Cond::Compare(term(a)?, op, term(b)?),
        })
    }

    /// Whether an element whose members are `out` passes; `None` when this pass cannot tell.
    fn holds(&self, out: &[Leaf<'_>]) -> Option<bool> {
        Some(match self {
            Cond::Or(a) => {
                for c in a {
                    if c.holds(out)? {
                        return Some(true);
                    }
                }
                false
            }
            Cond::And(a) => {
                for c in a {
                    if !c.holds(out)? {
                        return Some(false);
                    }
                }
                true
            }
            Cond::Not(c) => !c.holds(out)?,
            Cond::Exists(i) => !matches!(out[*i], Leaf::Nothing),
            Cond::Compare(a, op, b) => compare_sides(a.side(out)?, *op, b.side(out)?),
        })
    }
}

impl Term {
    /// The side of a comparison it is; `None` for an integer past `i64` (the parsed document
    /// keeps one of 20 digits or more as a big integer, not a number).
    fn side<'s>(&'s self, out: &'s [Leaf<'_>]) -> Option<Side<'s>> {
        Some(match self {
            Term::Literal(v) => Side::of(Some(v)),
            Term::Found(i) => match &out[*i] {
                Leaf::Nothing => Side::Nothing,
                Leaf::Str(s) => Side::Str(s),
                Leaf::Int(n) => Side::Number(*n as f64),
                Leaf::Value(Value::Number(n)) if !n.is_i64() => return None,
                Leaf::Value(v) => Side::of(Some(v)),
            },
        })
    }
}

#[cfg(test)]
mod tests;
