//! An entry's checks compiled for the answer that passes them: what the load
//! engine meets on nearly every request.
//!
//! Worked out once per entry: the leaf of the one-pass reading
//! ([`crate::jsonpath::stream::Plan`]) each jsonpath query reads, and each
//! assert's test in a form that needs no dispatch on the query (`isInteger`
//! on a leaf, `==` a number, a header's text `contains` a literal or `matches`
//! a regex, ...). A run checks the status, reads the body in one pass, takes
//! the captures and runs every assert; it answers only "all of them hold". Anything else (a failed
//! check, an answer it cannot judge this way, such as a repeated or non-ASCII
//! header) sends the entry to the general evaluator, which judges it from the
//! start and says what failed, so the failures and the captured variables are
//! the general evaluator's in every case. The property tests (`tests.rs`) hold
//! the two equal. Entries with filters, regex or body queries, templated
//! operands or captures from a header or the status are left to the general
//! evaluator.

use serde_json::Value;

use super::{Answer, Exp, Val, contains_short, equal, holds, set_var};
use crate::jsonpath::stream::{Leaf, MAX, Plan};
use crate::model::{Expected, PredicateFunc, Query, Response};
use crate::template::Vars;

/// An entry's checks compiled for an answer that passes them (see the module's notes).
#[derive(Debug, Clone)]
pub struct Quick {
    /// Each capture's leaf of the plan.
    captures: Vec<usize>,
    asserts: Vec<Check>,
    /// Whether an assert reads the body as JSON (the captures, when there are any, do).
    json_asserts: bool,
}

/// One assert: where its value comes from and what must hold of it.
#[derive(Debug, Clone)]
struct Check {
    /// The assert's index in the response.
    index: usize,
    source: Source,
    test: Test,
    not: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Source {
    Status,
    /// The header the assert's query names (read as bytes; ASCII only).
    Header,
    /// A leaf of the plan.
    Json(usize),
}

/// A predicate on a literal operand, tested without resolving it per answer.
#[derive(Debug, Clone)]
enum Test {
    IsInteger,
    IsString,
    IsBoolean,
    Exists,
    /// `==` a number.
    EqNum(f64),
    /// `==` a quoted literal.
    EqText(Box<str>),
    /// `contains` a literal, on text.
    Contains(Box<str>),
    /// `matches`, on a header: its regex over bytes, the same on ASCII text (no UTF-8
    /// check of the value per answer); on other values, the general [`holds`].
    Matches(regex::bytes::Regex),
    /// Any other predicate without variables: the general [`holds`].
    General,
}

impl Quick {
    /// The compiled checks of `r`, whose jsonpath queries `plan` reads (`None` when some
    /// check is left to the general evaluator).
    pub(super) fn new(r: &Response, plan: &Plan) -> Option<Quick> {
        // The `k`th jsonpath query, captures first, is the plan's `k`th path.
        let mut k = 0;
        let mut leaf = || {
            k += 1;
            plan.slot(k - 1)
        };
        let mut captures = Vec::with_capacity(r.captures.len());
        for c in &r.captures {
            match c.query {
                Query::JsonPath(_) if c.filters.is_empty() => captures.push(leaf()?),
                _ => return None,
            }
        }
        let mut asserts = Vec::with_capacity(r.asserts.len());
        for (index, a) in r.asserts.iter().enumerate() {
            if !a.filters.is_empty() {
                return None;
            }
            let source = match a.query {
                Query::Status => Source::Status,
                Query::Header(_) => Source::Header,
                Query::JsonPath(_) => Source::Json(leaf()?),
                Query::Regex(_) | Query::Body => return None,
            };
            // A bare `{{name}}` is never literal: it has a variable part.
            let literal = a.predicate.func.template().is_none_or(|t| t.as_literal().is_some());
            let test = match &a.predicate.func {
                PredicateFunc::IsInteger => Test::IsInteger,
                PredicateFunc::IsString => Test::IsString,
                PredicateFunc::IsBoolean => Test::IsBoolean,
                PredicateFunc::Exists => Test::Exists,
                PredicateFunc::Equal(Expected::Int(n)) => Test::EqNum(*n as f64),
                PredicateFunc::Equal(Expected::Float(f)) => Test::EqNum(*f),
                PredicateFunc::Equal(Expected::Str(t)) => Test::EqText(t.as_literal()?.into()),
                PredicateFunc::Contains(t) => Test::Contains(t.as_literal()?.into()),
                PredicateFunc::Matches(re) => match regex::bytes::Regex::new(re.as_str()) {
                    Ok(re) if source == Source::Header => Test::Matches(re),
                    _ => Test::General,
                },
                // Any other: the general `holds`, when its operand (if it has one) is literal.
                _ => literal.then_some(Test::General)?,
            };
            asserts.push(Check { index, source, test, not: a.predicate.not });
        }
        let json_asserts = asserts.iter().any(|c| matches!(c.source, Source::Json(_)));
        Some(Quick { captures, asserts, json_asserts })
    }

    /// Whether `answer` passes every check of `r` (its asserts only when `asserts`), its
    /// captures set in `vars`; `false` when one fails or it cannot tell.
    pub(super) fn passes(
        &self,
        r: &Response,
        plan: &Plan,
        answer: &impl Answer,
        vars: &mut Vars,
        scratch: &mut Vec<u8>,
        asserts: bool,
    ) -> bool {
        if r.status.is_some_and(|s| s != answer.status()) {
            return false;
        }
        // Most entries read one or two paths: a short array is cheaper to set up and drop.
        match plan.paths() {
            0..=2 => {
                let mut found = [const { Leaf::Nothing }; 2];
                let ok = self.run(r, plan, answer, vars, scratch, asserts, &mut found);
                // Dropped as `Leaf::put` drops: no call for leaves that own nothing.
                Leaf::clear(&mut found);
                std::mem::forget(found);
                ok
            }
            _ => self.run(r, plan, answer, vars, scratch, asserts, &mut [const { Leaf::Nothing }; MAX]),
        }
    }

    /// [`Quick::passes`] past the status, with a place in `found` for each path of `plan`.
    #[expect(clippy::too_many_arguments, reason = "the caller's arguments and its buffer")]
    fn run<'a>(
        &self,
        r: &Response,
        plan: &Plan,
        answer: &'a impl Answer,
        vars: &mut Vars,
        scratch: &mut Vec<u8>,
        asserts: bool,
        found: &mut [Leaf<'a>],
    ) -> bool {
        let json = !self.captures.is_empty() || asserts && self.json_asserts;
        if json && plan.find(answer.body(), asserts, found).is_err() {
            return false;
        }
        for (c, &i) in r.captures.iter().zip(&self.captures) {
            match leaf(&found[i]) {
                Val::Nothing => return false,
                v => set_var(vars, &c.name, &v),
            }
        }
        if !asserts {
            return true;
        }
        self.asserts.iter().all(|c| {
            let a = &r.asserts[c.index];
            let v = match c.source {
                Source::Status => Val::Int(i64::from(answer.status())),
                Source::Json(i) => leaf(&found[i]),
                Source::Header => {
                    let Query::Header(name) = &a.query else { return false };
                    match answer.header_bytes(name) {
                        (None, _) => Val::Nothing,
                        // Text as the general evaluator reads it (ASCII is UTF-8), one header.
                        (Some(one), false) if one.is_ascii() => {
                            return c.text(one, vars, scratch, &a.predicate.func);
                        }
                        (Some(_), _) => return false,
                    }
                }
            };
            c.holds(&v, vars, scratch, &a.predicate.func)
        })
    }
}

impl Check {
    /// Whether the assert holds of `v`.
    fn holds(&self, v: &Val<'_>, vars: &mut Vars, scratch: &mut Vec<u8>, p: &PredicateFunc) -> bool {
        let ok = match &self.test {
            Test::IsInteger => {
                matches!(v, Val::Int(_)) || matches!(v, Val::Json(Value::Number(n)) if !n.is_f64())
            }
            Test::IsString => super::as_str(v).is_some(),
            Test::IsBoolean => matches!(v, Val::Json(Value::Bool(_))),
            Test::Exists => !matches!(v, Val::Nothing),
            Test::EqNum(n) => equal(v, &Exp::Num(*n)),
            Test::EqText(t) => equal(v, &Exp::Text(t)),
            Test::Contains(_) | Test::Matches(_) | Test::General => match holds(p, v, vars, scratch) {
                Ok(ok) => ok,
                Err(_) => return false,
            },
        };
        ok != self.not
    }

    /// Whether the assert holds of a single ASCII header value `text`.
    fn text(&self, text: &[u8], vars: &mut Vars, scratch: &mut Vec<u8>, p: &PredicateFunc) -> bool {
        let ok = match &self.test {
            Test::IsString | Test::Exists => true,
            Test::IsInteger | Test::IsBoolean | Test::EqNum(_) => false,
            Test::EqText(t) => text == t.as_bytes(),
            Test::Contains(t) if text.len() <= 64 => contains_short(text, t.as_bytes()),
            Test::Matches(re) => re.is_match(text),
            Test::Contains(_) | Test::General => {
                let Ok(s) = std::str::from_utf8(text) else { return false };
                return self.holds(&Val::Str(s), vars, scratch, p);
            }
        };
        ok != self.not
    }
}

/// A leaf as a query's value, as the general evaluator reads it.
fn leaf<'a>(l: &'a Leaf<'a>) -> Val<'a> {
    match l {
        Leaf::Nothing => Val::Nothing,
        Leaf::Str(s) => Val::JsonStr(s),
        Leaf::Int(n) => Val::Int(*n),
        Leaf::Value(v) => Val::Json(v),
    }
}
