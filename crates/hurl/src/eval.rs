//! Running an entry against an answer: the request rendered into reusable
//! buffers, then the status check, the captures (which set variables for the
//! entries after, and for this entry's asserts) and the asserts, each failure
//! typed and placed at its `line:col`.
//!
//! The answer's body is parsed as JSON once per entry, and only when a
//! jsonpath query needs it: in one pass that keeps only what the entry's
//! paths reach ([`crate::jsonpath::stream`]) when they are singular, else
//! into a whole document.

use std::fmt;
use std::fmt::Write as _;

use serde_json::Value;

use crate::error::Pos;
use crate::jsonpath::JsonPath;
use crate::jsonpath::stream::{self, Leaf, Plan};
use crate::jsonpath::{Budget, Found, TooMuch};
use crate::model::{BodyKind, Entry, Expected, Filter, PredicateFunc, Query, Response};
use crate::template::{Kind, RenderError, Template, Vars};

mod quick;

pub use quick::Quick;

/// What the engine received, as the checks see it.
pub trait Answer {
    fn status(&self) -> u16;
    /// The `nth` (from 0) header named `name` (ASCII case-insensitive), as text.
    fn header(&self, name: &str, nth: usize) -> Option<&str>;
    /// The first header named `name` and whether another follows it; an answer that can
    /// tell in one look at its headers says so here.
    fn header_first(&self, name: &str) -> (Option<&str>, bool) {
        (self.header(name, 0), self.header(name, 1).is_some())
    }
    /// As [`Answer::header_first`], the value's bytes as received (not checked for UTF-8)
    /// and whether another header of that name follows, for an answer that can tell
    /// without reading its values as text.
    fn header_bytes(&self, name: &str) -> (Option<&[u8]>, bool) {
        let (first, more) = self.header_first(name);
        (first.map(str::as_bytes), more)
    }
    fn body(&self) -> &[u8];
}

/// A request rendered into buffers kept between requests.
#[derive(Debug, Default, Clone)]
pub struct Request {
    pub url: Vec<u8>,
    /// `Name: value\r\n` lines.
    pub headers: Vec<u8>,
    pub body: Vec<u8>,
}

/// A check that did not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// Where the check is written.
    pub pos: Pos,
    /// The check as written (`jsonpath "$.done" == false`, `HTTP 201`).
    pub source: String,
    pub kind: FailureKind,
}

/// Why a check did not hold.
#[derive(Debug, Clone, PartialEq)]
pub enum FailureKind {
    Status {
        expected: u16,
        actual: u16,
    },
    /// The query's value did not satisfy the predicate.
    Assert {
        actual: String,
    },
    /// The capture's query found nothing.
    Capture {
        name: String,
    },
    /// A jsonpath query met a body that is not JSON.
    NotJson,
    /// A jsonpath query went past the bound of one evaluation.
    TooMuch(TooMuch),
    /// A template of the check names a variable without a value.
    Render(RenderError),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: `{}`: ", self.pos, self.source)?;
        match &self.kind {
            FailureKind::Status { expected, actual } => write!(f, "expected status {expected}, got {actual}"),
            FailureKind::Assert { actual } => write!(f, "actual value is {actual}"),
            FailureKind::Capture { name } => write!(f, "capture `{name}` found no value"),
            FailureKind::NotJson => write!(f, "the answer's body is not JSON"),
            FailureKind::TooMuch(e) => write!(f, "{e}"),
            FailureKind::Render(e) => write!(f, "{e}"),
        }
    }
}

/// A query's value.
#[derive(Debug, Clone, PartialEq)]
enum Val<'a> {
    Nothing,
    Json(&'a Value),
    /// A JSON string borrowed from the answer: the same as `Json(Value::String)`.
    JsonStr(&'a str),
    Str(&'a str),
    Int(i64),
    Many(Vec<&'a Value>),
    /// A header that the answer repeats: each of its values.
    Headers(Vec<&'a str>),
}

impl Entry {
    /// Renders the request into `req` (cleared first). A JSON body without a
    /// `Content-Type` header gets `application/json`, as in Hurl.
    pub fn render(&self, vars: &mut Vars, req: &mut Request) -> Result<(), RenderError> {
        req.url.clear();
        req.headers.clear();
        req.body.clear();
        self.url.render(vars, &mut req.url)?;
        let mut has_type = false;
        for h in &self.headers {
            let start = req.headers.len();
            h.name.render(vars, &mut req.headers)?;
            has_type |= req.headers[start..].eq_ignore_ascii_case(b"content-type");
            req.headers.extend_from_slice(b": ");
            h.value.render(vars, &mut req.headers)?;
            req.headers.extend_from_slice(b"\r\n");
        }
        req.headers.extend_from_slice(self.implied_headers(has_type));
        if let Some(body) = &self.body {
            body.template.render(vars, &mut req.body)?;
        }
        Ok(())
    }

    /// The header lines the request gets beside its own (`has_type`: whether one of them
    /// is `Content-Type`): a JSON body's `Content-Type: application/json`, as in Hurl.
    pub fn implied_headers(&self, has_type: bool) -> &'static [u8] {
        match &self.body {
            Some(b) if b.kind == BodyKind::Json && !has_type => b"Content-Type: application/json\r\n",
            _ => b"",
        }
    }

    /// Checks `answer`: status, then captures (setting `vars`), then asserts.
    /// Failures are appended to `failures`; `scratch` is a buffer kept between calls.
    pub fn check(
        &self,
        answer: &impl Answer,
        vars: &mut Vars,
        scratch: &mut Vec<u8>,
        failures: &mut Vec<Failure>,
    ) {
        self.check_some(answer, vars, scratch, failures, true);
    }

    /// As [`Entry::check`]; without `asserts` only the status and the captures (the load
    /// engine's answers between two `--check-every` turns: captures are always taken).
    pub fn check_some(
        &self,
        answer: &impl Answer,
        vars: &mut Vars,
        scratch: &mut Vec<u8>,
        failures: &mut Vec<Failure>,
        asserts: bool,
    ) {
        self.check_read(answer, vars, scratch, failures, asserts, true);
    }

    /// As [`Entry::check_some`]; without `one_pass` the body is always parsed into a whole
    /// document (the reference the tests hold the one pass to).
    pub(crate) fn check_read(
        &self,
        answer: &impl Answer,
        vars: &mut Vars,
        scratch: &mut Vec<u8>,
        failures: &mut Vec<Failure>,
        asserts: bool,
        one_pass: bool,
    ) {
        let Some(r) = &self.response else { return };
        if one_pass
            && let Some(plan) = r.plan.get_or_init(|| Json::plan(r))
            && let Some(quick) = r.quick.get_or_init(|| Quick::new(r, plan))
            && quick.passes(r, plan, answer, vars, scratch, asserts)
        {
            return;
        }
        Entry::check_general(r, answer, vars, scratch, failures, asserts, one_pass);
    }

    /// [`Entry::check_read`] past the compiled checks (which judge nearly every answer under
    /// load): the general evaluator, out of line so that the usual call stays small.
    #[inline(never)]
    fn check_general(
        r: &Response,
        answer: &impl Answer,
        vars: &mut Vars,
        scratch: &mut Vec<u8>,
        failures: &mut Vec<Failure>,
        asserts: bool,
        one_pass: bool,
    ) {
        if let Some(expected) = r.status
            && expected != answer.status()
        {
            failures.push(Failure {
                pos: r.pos,
                source: format!("HTTP {expected}"),
                kind: FailureKind::Status { expected, actual: answer.status() },
            });
        }
        let checked = if asserts { &r.asserts[..] } else { &[] };
        let json = Json::of(answer.body(), r, asserts, one_pass);
        // The number of jsonpath queries so far: the plan's `k`th path is the `k`th query's.
        let mut k = 0;
        for c in &r.captures {
            let source = || format!("{}: ...", c.name);
            let v = match query(&c.query, &c.filters, answer, &json, &mut k) {
                Err(kind) => {
                    failures.push(Failure { pos: c.pos, source: source(), kind });
                    continue;
                }
                Ok(Val::Nothing) => {
                    failures.push(Failure {
                        pos: c.pos,
                        source: source(),
                        kind: FailureKind::Capture { name: c.name.to_string() },
                    });
                    continue;
                }
                Ok(v) => v,
            };
            set_var(vars, &c.name, &v);
        }
        for a in checked {
            let fail = |kind| Failure { pos: a.pos, source: a.source.to_string(), kind };
            let v = match query(&a.query, &a.filters, answer, &json, &mut k) {
                Ok(v) => v,
                Err(kind) => {
                    failures.push(fail(kind));
                    continue;
                }
            };
            match holds(&a.predicate.func, &v, vars, scratch) {
                Ok(ok) if ok != a.predicate.not => {}
                Ok(_) => failures.push(fail(FailureKind::Assert { actual: describe(&v) })),
                Err(e) => failures.push(fail(FailureKind::Render(e))),
            }
        }
    }
}

/// The answer's body as the jsonpath queries of one check see it.
#[expect(clippy::large_enum_variant, reason = "on the stack by design: no allocation per answer")]
enum Json<'a, 'p> {
    /// No query needs it, or it is not JSON.
    Not,
    /// What each path of the plan found, in one pass.
    Found(&'p Plan, [Leaf<'a>; stream::MAX]),
    Whole(Value),
}

fn jsonpath(q: &Query) -> Option<&JsonPath> {
    match q {
        Query::JsonPath(p) => Some(p),
        _ => None,
    }
}

impl<'a, 'p> Json<'a, 'p> {
    /// `body` read for the jsonpath queries of `r`'s captures (and asserts when
    /// `asserts`), in `one_pass` when it can be.
    fn of(body: &'a [u8], r: &'p Response, asserts: bool, one_pass: bool) -> Json<'a, 'p> {
        let needed = r.captures.iter().any(|c| jsonpath(&c.query).is_some())
            || asserts && r.asserts.iter().any(|a| jsonpath(&a.query).is_some());
        if !needed {
            return Json::Not;
        }
        if one_pass && let Some(plan) = r.plan.get_or_init(|| Json::plan(r)) {
            let mut found = [const { Leaf::Nothing }; stream::MAX];
            return match plan.find(body, asserts, &mut found) {
                Ok(()) => Json::Found(plan, found),
                Err(_) => Json::Not,
            };
        }
        serde_json::from_slice(body).map_or(Json::Not, Json::Whole)
    }

    /// The one-pass plan of `r`'s jsonpath queries, captures first (see [`Plan::new`]).
    fn plan(r: &Response) -> Option<Plan> {
        let captures = r.captures.iter().filter_map(|c| jsonpath(&c.query));
        Plan::new(captures, r.asserts.iter().filter_map(|a| jsonpath(&a.query)))
    }
}

/// `Err` when a jsonpath query meets a body that is not JSON, or goes past its bound.
/// `k` counts the jsonpath queries asked so far, in the order [`Json::of`] was given them.
fn query<'a>(
    q: &Query,
    filters: &[Filter],
    answer: &'a impl Answer,
    json: &'a Json<'a, '_>,
    k: &mut usize,
) -> Result<Val<'a>, FailureKind> {
    let mut v = match q {
        Query::Status => Val::Int(i64::from(answer.status())),
        Query::Header(name) => match answer.header_first(name) {
            (None, _) => Val::Nothing,
            (Some(one), false) => Val::Str(one),
            (Some(_), true) => Val::Headers((0..).map_while(|i| answer.header(name, i)).collect()),
        },
        Query::JsonPath(p) => {
            *k += 1;
            match json {
                Json::Not => return Err(FailureKind::NotJson),
                Json::Whole(doc) => match p.eval(doc, &mut Budget::for_answer(answer.body().len())) {
                    Ok(Found::Nothing) => Val::Nothing,
                    Ok(Found::One(v)) => Val::Json(v),
                    Ok(Found::Many(v)) => Val::Many(v),
                    Err(e) => return Err(FailureKind::TooMuch(e)),
                },
                Json::Found(plan, found) => match plan.slot(*k - 1).map(|i| &found[i]) {
                    Some(Leaf::Value(v)) => Val::Json(v),
                    Some(Leaf::Str(s)) => Val::JsonStr(s),
                    Some(Leaf::Int(n)) => Val::Int(*n),
                    Some(Leaf::Nothing) | None => Val::Nothing,
                },
            }
        }
        Query::Regex(re) => std::str::from_utf8(answer.body())
            .ok()
            .and_then(|s| re.captures(s))
            .and_then(|c| c.get(1).or_else(|| c.get(0)))
            .map_or(Val::Nothing, |m| Val::Str(m.as_str())),
        Query::Body => std::str::from_utf8(answer.body()).map_or(Val::Nothing, Val::Str),
    };
    for f in filters {
        v = match (f, &v) {
            (Filter::Count, Val::Many(m)) => Val::Int(m.len() as i64),
            (Filter::Count, Val::Headers(h)) => Val::Int(h.len() as i64),
            (Filter::Count, Val::Json(Value::Array(a))) => Val::Int(a.len() as i64),
            (Filter::Count, _) => Val::Nothing,
        };
    }
    Ok(v)
}

fn set_var(vars: &mut Vars, name: &str, v: &Val<'_>) {
    let slot = vars.slot(name);
    slot.text.clear();
    slot.kind = match v {
        Val::Json(Value::String(s)) => {
            slot.text.push_str(s);
            Kind::String
        }
        Val::Str(s) | Val::JsonStr(s) => {
            slot.text.push_str(s);
            Kind::String
        }
        // Integers as serde_json writes them (itoa), without the formatting machinery.
        Val::Json(Value::Number(n)) => {
            if let Some(i) = n.as_i64() {
                slot.text.push_str(itoa::Buffer::new().format(i));
            } else if let Some(u) = n.as_u64() {
                slot.text.push_str(itoa::Buffer::new().format(u));
            } else {
                write!(slot.text, "{n}").expect("writing to a String cannot fail");
            }
            if n.is_f64() { Kind::Float } else { Kind::Integer }
        }
        Val::Int(n) => {
            slot.text.push_str(itoa::Buffer::new().format(*n));
            Kind::Integer
        }
        Val::Json(Value::Bool(b)) => {
            slot.text.push_str(if *b { "true" } else { "false" });
            Kind::Bool
        }
        Val::Json(Value::Null) | Val::Nothing => {
            slot.text.push_str("null");
            Kind::Null
        }
        Val::Json(j) => {
            slot.text.push_str(&j.to_string());
            Kind::Json
        }
        Val::Many(m) => {
            slot.text.push_str(&serde_json::to_string(m).unwrap_or_default());
            Kind::Json
        }
        Val::Headers(h) => {
            slot.text.push_str(&serde_json::to_string(h).unwrap_or_default());
            Kind::Json
        }
    };
}

fn as_str<'a>(v: &Val<'a>) -> Option<&'a str> {
    match v {
        Val::Str(s) | Val::JsonStr(s) => Some(s),
        Val::Json(Value::String(s)) => Some(s),
        _ => None,
    }
}

fn as_num(v: &Val<'_>) -> Option<f64> {
    match v {
        Val::Int(n) => Some(*n as f64),
        Val::Json(Value::Number(n)) => n.as_f64(),
        _ => None,
    }
}

/// The expected value, resolved: a number, text, or JSON.
enum Exp<'s> {
    Num(f64),
    Text(&'s str),
    Json(Value),
}

/// A template's text: a literal as written (checked once, at load), else rendered into `scratch`.
fn render<'s>(t: &'s Template, vars: &mut Vars, scratch: &'s mut Vec<u8>) -> Result<&'s str, RenderError> {
    if let Some(s) = t.as_literal() {
        return Ok(s);
    }
    scratch.clear();
    t.render(vars, scratch)?;
    Ok(std::str::from_utf8(scratch).unwrap_or(""))
}

fn resolve<'s>(e: &'s Expected, vars: &mut Vars, scratch: &'s mut Vec<u8>) -> Result<Exp<'s>, RenderError> {
    Ok(match e {
        Expected::Null => Exp::Json(Value::Null),
        Expected::Bool(b) => Exp::Json(Value::Bool(*b)),
        Expected::Int(n) => Exp::Num(*n as f64),
        Expected::Float(f) => Exp::Num(*f),
        Expected::Str(t) => Exp::Text(render(t, vars, scratch)?),
        Expected::Var(t) => {
            let name = t.vars().next().map(|(n, _)| n).unwrap_or_default();
            match vars.get(name).map(|v| v.kind) {
                Some(Kind::Integer | Kind::Float) => {
                    Exp::Num(render(t, vars, scratch)?.parse().unwrap_or(f64::NAN))
                }
                Some(Kind::Bool | Kind::Null | Kind::Json) => {
                    Exp::Json(serde_json::from_str(render(t, vars, scratch)?).unwrap_or(Value::Null))
                }
                _ => Exp::Text(render(t, vars, scratch)?),
            }
        }
    })
}

fn equal(actual: &Val<'_>, expected: &Exp<'_>) -> bool {
    match expected {
        Exp::Num(n) => as_num(actual) == Some(*n),
        Exp::Text(t) => as_str(actual) == Some(*t),
        Exp::Json(json) => match actual {
            Val::Json(found) => *found == json,
            // A JSON integer read in one pass; the same number as `serde_json` keeps it.
            Val::Int(n) => json.as_i64() == Some(*n),
            Val::JsonStr(found) => matches!(json, Value::String(s) if s == found),
            Val::Many(many) => {
                matches!(json, Value::Array(list) if list.len() == many.len() && list.iter().zip(many).all(|(l, m)| l == *m))
            }
            _ => false,
        },
    }
}

fn holds(
    p: &PredicateFunc,
    v: &Val<'_>,
    vars: &mut Vars,
    scratch: &mut Vec<u8>,
) -> Result<bool, RenderError> {
    use std::cmp::Ordering;
    let order =
        |e: &Expected, vars: &mut Vars, scratch: &mut Vec<u8>| -> Result<Option<Ordering>, RenderError> {
            Ok(match resolve(e, vars, scratch)? {
                Exp::Num(n) => as_num(v).and_then(|x| x.partial_cmp(&n)),
                Exp::Text(t) => as_str(v).map(|x| x.cmp(t)),
                Exp::Json(_) => None,
            })
        };
    let text = |t: &Template,
                vars: &mut Vars,
                scratch: &mut Vec<u8>,
                f: fn(&str, &str) -> bool|
     -> Result<bool, RenderError> {
        let s = as_str(v);
        let t = render(t, vars, scratch)?;
        Ok(s.is_some_and(|s| f(s, t)))
    };
    Ok(match p {
        PredicateFunc::Equal(e) => equal(v, &resolve(e, vars, scratch)?),
        PredicateFunc::NotEqual(e) => !matches!(v, Val::Nothing) && !equal(v, &resolve(e, vars, scratch)?),
        PredicateFunc::Greater(e) => order(e, vars, scratch)? == Some(Ordering::Greater),
        PredicateFunc::GreaterOrEqual(e) => {
            matches!(order(e, vars, scratch)?, Some(Ordering::Greater | Ordering::Equal))
        }
        PredicateFunc::Less(e) => order(e, vars, scratch)? == Some(Ordering::Less),
        PredicateFunc::LessOrEqual(e) => {
            matches!(order(e, vars, scratch)?, Some(Ordering::Less | Ordering::Equal))
        }
        PredicateFunc::StartsWith(t) => text(t, vars, scratch, |s, t| s.starts_with(t))?,
        PredicateFunc::EndsWith(t) => text(t, vars, scratch, |s, t| s.ends_with(t))?,
        PredicateFunc::Contains(t) => {
            let t = render(t, vars, scratch)?;
            match v {
                // On a collection (newer Hurl): one of its strings is the text.
                Val::Many(m) => m.iter().any(|x| x.as_str() == Some(t)),
                Val::Headers(h) => h.contains(&t),
                Val::Json(Value::Array(a)) => a.iter().any(|x| x.as_str() == Some(t)),
                _ => as_str(v).is_some_and(|s| contains(s, t)),
            }
        }
        PredicateFunc::Includes(e) => {
            let e = resolve(e, vars, scratch)?;
            match v {
                Val::Many(m) => m.iter().any(|x| equal(&Val::Json(x), &e)),
                Val::Headers(h) => h.iter().any(|x| equal(&Val::Str(x), &e)),
                Val::Json(Value::Array(a)) => a.iter().any(|x| equal(&Val::Json(x), &e)),
                _ => false,
            }
        }
        PredicateFunc::Matches(re) => as_str(v).is_some_and(|s| re.is_match(s)),
        PredicateFunc::Exists => !matches!(v, Val::Nothing) && !matches!(v, Val::Many(m) if m.is_empty()),
        PredicateFunc::IsEmpty => match v {
            Val::Many(m) => m.is_empty(),
            Val::Headers(_) => false,
            Val::Json(Value::Array(a)) => a.is_empty(),
            Val::Json(Value::Object(o)) => o.is_empty(),
            _ => as_str(v).is_some_and(str::is_empty),
        },
        PredicateFunc::IsInteger => {
            matches!(v, Val::Int(_)) || matches!(v, Val::Json(Value::Number(n)) if !n.is_f64())
        }
        PredicateFunc::IsFloat => matches!(v, Val::Json(Value::Number(n)) if n.is_f64()),
        PredicateFunc::IsBoolean => matches!(v, Val::Json(Value::Bool(_))),
        PredicateFunc::IsString => as_str(v).is_some(),
        PredicateFunc::IsCollection => {
            matches!(v, Val::Many(_) | Val::Headers(_) | Val::Json(Value::Array(_) | Value::Object(_)))
        }
    })
}

/// `haystack.contains(needle)`; a short haystack (a header, a field) is searched
/// directly, without building the two-way searcher `str::contains` sets up per call.
fn contains(haystack: &str, needle: &str) -> bool {
    if haystack.len() > 64 {
        return haystack.contains(needle);
    }
    contains_short(haystack.as_bytes(), needle.as_bytes())
}

/// [`contains`] on bytes, for a haystack of up to 64 of them: the places of the needle's
/// first byte found eight bytes at a time, the rest compared at each.
fn contains_short(h: &[u8], n: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let Some((&first, rest)) = n.split_first() else { return true };
    let Some(last) = h.len().checked_sub(n.len()) else { return false };
    let mut i = 0;
    while i <= last {
        if let Some(word) = h.get(i..i + 8) {
            // The lowest zero byte of `w` is the first `first` (higher ones may be false).
            let w = u64::from_le_bytes(word.try_into().expect("eight bytes")) ^ (u64::from(first) * ONES);
            let zero = w.wrapping_sub(ONES) & !w & (0x80 * ONES);
            if zero == 0 {
                i += 8;
                continue;
            }
            i += zero.trailing_zeros() as usize / 8;
            if i > last {
                return false;
            }
        } else if h[i] != first {
            i += 1;
            continue;
        }
        if h[i + 1..i + n.len()] == *rest {
            return true;
        }
        i += 1;
    }
    false
}

/// The actual value, for a failure message (long values are cut).
fn describe(v: &Val<'_>) -> String {
    let mut s = match v {
        Val::Nothing => "none (nothing found)".to_owned(),
        Val::Json(j) => j.to_string(),
        Val::JsonStr(s) => Value::from(*s).to_string(),
        Val::Str(s) => format!("{s:?}"),
        Val::Int(n) => n.to_string(),
        Val::Many(m) => serde_json::to_string(m).unwrap_or_default(),
        Val::Headers(h) => serde_json::to_string(h).unwrap_or_default(),
    };
    if s.len() > 200 {
        let mut cut = 200;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

#[cfg(test)]
mod tests;
