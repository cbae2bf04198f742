//! Running an entry against an answer as Hurl runs it: the request rendered
//! into reusable buffers ([`render`]), then the checks in Hurl's order: the
//! version and the status (a wrong one ends the check there), the captures (a
//! capture that fails ends it there; each sets a variable for the entries
//! after, and for this entry's asserts), then every assert, each failure typed
//! and placed at its `line:col`.
//!
//! Under load most answers pass, and [`quick`] judges those without building
//! the body's document; anything else goes to the general evaluator, which
//! reads the body once per check: decoded by its `Content-Encoding` and
//! charset, parsed as JSON once for every jsonpath query that one pass over the
//! body does not answer ([`query`]).

use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

use crate::error::Pos;
use crate::jsonpath::stream::Plan;
use crate::model::{AssertKind, Entry, Response, Version};
use crate::template::{Escape, Expr, ExprStart, Part, RenderError, Template, Vars};

mod filter;
mod options;
mod predicate;
mod query;
mod quick;
mod render;

use crate::value::Value;
pub use options::{REACH_OPTIONS, Reach, RunOptions};
use quick::Quick;
pub use render::has_dot_segment;

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
    /// [`Answer::header_bytes`] of `Set-Cookie`, which the cookie jar reads from every answer:
    /// an answer that keeps its first one at hand gives it without a look for the name. As
    /// received: the jar and the compiled `cookie` checks read it as text only when they must.
    fn first_set_cookie(&self) -> (Option<&[u8]>, bool) {
        self.header_bytes("set-cookie")
    }
    /// Whether [`Answer::first_set_cookie`]'s value is known to be text (UTF-8) without a look
    /// at its bytes: the load engine's cookie jar has just stored it, or passed over it as the
    /// header it stored last. `false`: not known (the compiled checks then look).
    fn first_set_cookie_is_text(&self) -> bool {
        false
    }
    /// As [`Answer::header_first`], the value's bytes as received (not checked for UTF-8)
    /// and whether another header of that name follows, for an answer that can tell
    /// without reading its values as text.
    fn header_bytes(&self, name: &str) -> (Option<&[u8]>, bool) {
        let (first, more) = self.header_first(name);
        (first.map(str::as_bytes), more)
    }
    /// The body as received (after the transfer's framing, before any `Content-Encoding`).
    fn body(&self) -> &[u8];
    /// The first `Content-Encoding` and `Content-Type` values as received (as
    /// [`Answer::header_bytes`]), which say whether the body is its own text: an answer that
    /// keeps them at hand gives them without a look for the names.
    fn body_labels(&self) -> (Option<&[u8]>, Option<&[u8]>) {
        (self.header_bytes("content-encoding").0, self.header_bytes("content-type").0)
    }
    /// Whether [`Answer::body`] is its own text: no `Content-Encoding`, and UTF-8 (no charset,
    /// or UTF-8's). The compiled checks read only such a body in place; any other the general
    /// evaluator decodes first.
    #[inline]
    fn body_is_own_text(&self) -> bool {
        let (encoding, content_type) = self.body_labels();
        query::own_text(encoding, content_type)
    }
    /// The HTTP version of the answer (`1.1`, `2`), when the transport knows it.
    fn version(&self) -> Option<&str> {
        None
    }
    /// The URL the answer is for, when the transport knows it.
    fn url(&self) -> Option<&str> {
        None
    }
    /// The address the answer came from, when the transport knows it.
    fn ip(&self) -> Option<std::net::IpAddr> {
        None
    }
    /// The time from the request's send to the whole answer, when the transport knows it.
    fn duration(&self) -> Option<Duration> {
        None
    }
    /// The redirects followed to reach this answer, in order (none unless the entry asked).
    fn redirects(&self) -> &[Redirect] {
        &[]
    }
}

/// A request rendered into buffers kept between requests.
#[derive(Debug, Default, Clone)]
pub struct Request {
    pub url: Vec<u8>,
    /// `Name: value\r\n` lines.
    pub headers: Vec<u8>,
    pub body: Vec<u8>,
    /// The method, when it is not the entry's (a redirect that changed it to `GET`).
    pub method: Option<&'static str>,
    /// Where the value of the `Cookie` line of `[Cookies]` begins in `headers`, if it has
    /// one: the jar's cookies go before it, in the same line, as curl sends them.
    pub cookies_at: Option<usize>,
    /// How its connection reaches the server, when the entry's `[Options]` say
    /// ([`Reach`]).
    pub reach: Option<Box<Reach>>,
}

/// A redirect followed to reach an answer (the `redirects` query).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub status: u16,
    /// Where it pointed: an absolute URL, as the file would write it.
    pub location: String,
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
    Version {
        expected: &'static str,
        actual: String,
    },
    /// The query's value did not satisfy the predicate.
    Assert {
        actual: String,
    },
    /// The query's value is of a type the predicate does not apply to (it fails negated too).
    Type {
        actual: String,
    },
    /// The capture's query (or a filter) found nothing.
    Capture {
        name: String,
    },
    /// The capture's value is longer than a capture may be (`--max-capture`): it is left
    /// without a value, as when its query finds nothing.
    CaptureTooLong {
        name: String,
        len: usize,
        max: usize,
    },
    /// A jsonpath query met a body that is not JSON.
    NotJson,
    /// A jsonpath query went past the bound of one evaluation.
    TooMuch(crate::jsonpath::TooMuch),
    /// The query or a filter could not be evaluated: why (Hurl's error).
    Error(String),
    /// A template of the check names a variable without a value.
    Render(RenderError),
}

impl From<String> for FailureKind {
    fn from(why: String) -> FailureKind {
        FailureKind::Error(why)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: `{}`: ", self.pos, self.source)?;
        match &self.kind {
            FailureKind::Status { expected, actual } => write!(f, "expected status {expected}, got {actual}"),
            FailureKind::Version { expected, actual } => {
                write!(f, "expected HTTP/{expected}, got HTTP/{actual}")
            }
            FailureKind::Assert { actual } => write!(f, "actual value is {actual}"),
            FailureKind::Type { actual } => {
                write!(f, "actual value is {actual}, a type the predicate does not apply to")
            }
            FailureKind::Capture { name } => write!(f, "capture `{name}` found no value"),
            FailureKind::CaptureTooLong { name, len, max } => write!(
                f,
                "capture `{name}` would take {len} bytes, more than {max}, the most a capture may take \
                 (--max-capture raises it; `max_capture` in a plan)"
            ),
            FailureKind::NotJson => write!(f, "the answer's body is not JSON"),
            FailureKind::TooMuch(e) => write!(f, "{e}"),
            FailureKind::Error(e) => f.write_str(e),
            FailureKind::Render(e) => write!(f, "{e}"),
        }
    }
}

/// An entry's checks compiled for the answer that passes them ([`quick`]), worked out at the
/// first check. The syntax tree knows nothing of the evaluator: whoever checks many answers
/// to one entry (the load engine) keeps one of these beside it.
#[derive(Debug, Default, Clone)]
pub struct Compiled {
    /// The response's jsonpath queries as one pass over an answer follows them (`None` when
    /// it cannot).
    plan: OnceLock<Option<Plan>>,
    /// Its checks compiled for an answer that passes them (`None` when some check is left to
    /// the general evaluator).
    quick: OnceLock<Option<Quick>>,
}

impl Compiled {
    /// Whether the checks were compiled (after a first check, for an entry they cover).
    #[cfg(test)]
    pub(crate) fn is_compiled(&self) -> bool {
        self.quick.get().is_some_and(Option::is_some)
    }
}

impl Entry {
    /// Checks `answer`: version and status, then captures (setting `vars`), then asserts.
    /// Failures are appended to `failures`; `scratch` is a buffer kept between calls. The
    /// general evaluator judges it; [`Entry::check_some`] first tries the compiled checks.
    pub fn check(
        &self,
        answer: &impl Answer,
        vars: &mut Vars,
        scratch: &mut Vec<u8>,
        failures: &mut Vec<Failure>,
    ) {
        self.check_read(None, answer, vars, scratch, failures, true);
    }

    /// As [`Entry::check`], with the entry's checks compiled into `compiled` at the first call;
    /// without `asserts` only the status and the captures (the load engine's answers between
    /// two `--check-every` turns: captures are always taken).
    pub fn check_some(
        &self,
        compiled: &Compiled,
        answer: &impl Answer,
        vars: &mut Vars,
        scratch: &mut Vec<u8>,
        failures: &mut Vec<Failure>,
        asserts: bool,
    ) {
        self.check_read(Some(compiled), answer, vars, scratch, failures, asserts);
    }

    /// As [`Entry::check_some`]; without `compiled` the general evaluator judges every answer
    /// (the reference the tests hold the compiled checks to).
    pub(crate) fn check_read(
        &self,
        compiled: Option<&Compiled>,
        answer: &impl Answer,
        vars: &mut Vars,
        scratch: &mut Vec<u8>,
        failures: &mut Vec<Failure>,
        asserts: bool,
    ) {
        let Some(r) = &self.response else { return };
        let one_pass = compiled.and_then(|c| c.plan.get_or_init(|| plan(r)).as_ref());
        if let (Some(c), Some(plan)) = (compiled, one_pass)
            && let Some(quick) = c.quick.get_or_init(|| Quick::new(r, plan, vars))
        {
            if quick.passes(r, plan, answer, vars, scratch, asserts) {
                return;
            }
            // The general evaluator sets what it captures, and nothing else.
            vars.unset(r.captures.iter().map(|c| &*c.name));
        }
        Entry::check_general(r, one_pass, answer, vars, scratch, failures, asserts);
    }

    /// [`Entry::check_read`] past the compiled checks (which judge nearly every answer under
    /// load): the general evaluator, out of line so that the usual call stays small. With
    /// `one_pass`, the plan of the entry's singular jsonpaths, those are read in one pass
    /// over the body rather than on its parsed document.
    #[inline(never)]
    fn check_general(
        r: &Response,
        one_pass: Option<&Plan>,
        answer: &impl Answer,
        vars: &mut Vars,
        scratch: &mut Vec<u8>,
        failures: &mut Vec<Failure>,
        asserts: bool,
    ) {
        if let (Some(expected), Some(actual)) = (r.version.number(), answer.version())
            && expected != actual
            && !(r.version == Version::Http11 && actual == "1.0")
        {
            let source = format!("HTTP/{expected}");
            let kind = FailureKind::Version { expected, actual: actual.to_owned() };
            failures.push(Failure { pos: r.pos, source, kind });
            return;
        }
        if let Some(expected) = r.status
            && expected != answer.status()
        {
            let kind = FailureKind::Status { expected, actual: answer.status() };
            failures.push(Failure { pos: r.pos, source: format!("HTTP {expected}"), kind });
            return;
        }
        let body = query::Body::of(answer, one_pass);
        for c in &r.captures {
            let fail = |kind| Failure { pos: c.pos, source: format!("{}: ...", c.name), kind };
            match evaluate(&c.query, &c.filters, answer, &body, vars, scratch) {
                Ok(Some(v)) => {
                    if c.redact
                        && let Value::Str(s) = &v
                    {
                        vars.add_secret(s);
                    }
                    if let Err(len) = v.set(vars, &c.name) {
                        let (name, max) = (c.name.to_string(), vars.max_capture);
                        failures.push(fail(FailureKind::CaptureTooLong { name, len, max }));
                        return;
                    }
                }
                Ok(None) => {
                    failures.push(fail(FailureKind::Capture { name: c.name.to_string() }));
                    return;
                }
                Err(kind) => {
                    failures.push(fail(kind));
                    return;
                }
            }
        }
        if !asserts {
            return;
        }
        for a in &r.asserts {
            let fail = |kind| Failure { pos: a.pos, source: a.source.to_string(), kind };
            let v = match evaluate(&a.query, &a.filters, answer, &body, vars, scratch) {
                Ok(v) => v,
                Err(kind) => {
                    failures.push(fail(kind));
                    continue;
                }
            };
            // A header line under the status: one of the header's values is the one written.
            let v = match (a.kind, v) {
                (AssertKind::Header, Some(Value::List(values))) => {
                    let expected = a.predicate.func.expected().map(|e| predicate::expected(e, vars, scratch));
                    match expected {
                        Some(Ok(e)) => {
                            values.iter().find(|x| **x == e).cloned().or(Some(Value::List(values)))
                        }
                        _ => Some(Value::List(values)),
                    }
                }
                (_, v) => v,
            };
            match predicate::judge(&a.predicate, v.as_ref(), vars, scratch) {
                Ok(()) => {}
                Err(predicate::Miss::False) => {
                    let actual =
                        v.as_ref().map_or_else(|| "none (nothing found)".to_owned(), Value::describe);
                    failures.push(fail(FailureKind::Assert { actual: vars.redact(&actual) }));
                }
                Err(predicate::Miss::Type) => {
                    let actual = v.as_ref().map_or_else(String::new, Value::describe);
                    failures.push(fail(FailureKind::Type { actual: vars.redact(&actual) }));
                }
                Err(predicate::Miss::Operand(e)) => failures.push(fail(FailureKind::Render(e))),
            }
        }
    }
}

/// A query's value through its filters; `Err` when the query or a filter fails.
fn evaluate<'b>(
    q: &crate::model::Query,
    filters: &[crate::model::Filter],
    answer: &'b impl Answer,
    body: &'b query::Body<'b>,
    vars: &mut Vars,
    scratch: &mut Vec<u8>,
) -> Result<Option<Value<'b>>, FailureKind> {
    let mut v = query::query(q, answer, body, vars, scratch)?;
    for f in filters {
        let Some(input) = v else {
            return Err(FailureKind::Error(format!("{}: the filter has no value to work on", f.pos)));
        };
        v = filter::apply(&f.kind, input, vars, scratch)
            .map_err(|e| FailureKind::Error(format!("{}: {e}", f.pos)))?;
    }
    Ok(v)
}

/// The one-pass plan of `r`'s jsonpath queries, captures first (see [`crate::jsonpath::stream::Plan::new`]).
fn plan(r: &Response) -> Option<Plan> {
    Plan::new(
        r.captures.iter().filter_map(|c| planned(&c.query)),
        r.asserts.iter().filter_map(|a| planned(&a.query)),
    )
}

/// The jsonpath of `q` that the entry's [`Plan`] follows: any but a path of one filter, which
/// its own pass reads ([`crate::jsonpath::stream::Filtered`]).
fn planned(q: &crate::model::Query) -> Option<&crate::jsonpath::JsonPath> {
    match q {
        crate::model::Query::JsonPath(p) if p.filtered().is_none() => Some(p),
        _ => None,
    }
}

/// The value of a bare placeholder (a predicate's `{{name}}`, `nth {{i}}`), typed.
pub(crate) fn placeholder_value(t: &Template, vars: &mut Vars) -> Result<Value<'static>, RenderError> {
    match t.parts.as_slice() {
        [Part::Var { name, pos, .. }] => match &**name {
            "newUuid" | "newDate" => expr_value(
                &Expr { start: start_of(name), filters: Vec::new(), source: name.clone() },
                *pos,
                vars,
            ),
            _ => vars
                .get(name)
                .map(|v| Value::of_var(v).into_owned())
                .ok_or_else(|| RenderError::no_value(name, *pos)),
        },
        [Part::Expr { expr, pos, .. }] => expr_value(expr, *pos, vars),
        _ => Ok(Value::Str(std::borrow::Cow::Owned(t.render_string(vars)?))),
    }
}

fn start_of(name: &str) -> ExprStart {
    match name {
        "newUuid" => ExprStart::NewUuid,
        "newDate" => ExprStart::NewDate,
        _ => ExprStart::Var(name.into()),
    }
}

/// An expression's value: its start, through its filters.
fn expr_value(e: &Expr, pos: Pos, vars: &mut Vars) -> Result<Value<'static>, RenderError> {
    let why = |why: String| RenderError::expr(&e.source, pos, why);
    let mut v = match &e.start {
        ExprStart::Var(name) => vars
            .get(name)
            .map(|v| Value::of_var(v).into_owned())
            .ok_or_else(|| RenderError::no_value(name, pos))?,
        ExprStart::NewUuid => {
            let mut out = Vec::new();
            vars.fill(crate::template::Hole::Uuid { quoted: false }, &mut out);
            Value::Str(std::borrow::Cow::Owned(String::from_utf8_lossy(&out).into_owned()))
        }
        ExprStart::NewDate => Value::Date(chrono::Utc::now()),
        ExprStart::Env(name) => Value::Str(std::borrow::Cow::Owned(
            std::env::var(&**name)
                .map_err(|_| why(format!("the environment variable `{name}` is not set")))?,
        )),
    };
    let mut scratch = Vec::new();
    for f in &e.filters {
        v = filter::apply(&f.kind, v, vars, &mut scratch)
            .map_err(|w| why(format!("`{}`: {w}", e.source)))?
            .ok_or_else(|| why(format!("`{}`: a filter found nothing", e.source)))?
            .into_owned();
    }
    Ok(v)
}

/// Renders a placeholder with filters or a function (see [`Part::Expr`]) as `escape` says.
pub(crate) fn render_expr(
    e: &Expr,
    escape: Escape,
    pos: Pos,
    vars: &mut Vars,
    out: &mut Vec<u8>,
) -> Result<(), RenderError> {
    let v = expr_value(e, pos, vars)?;
    let why = |why: String| RenderError::expr(&e.source, pos, why);
    if let (Escape::JsonValue, Value::List(_) | Value::Object(_)) = (escape, &v) {
        out.extend_from_slice(v.to_json().to_string().as_bytes());
        return Ok(());
    }
    let text = v.render().ok_or_else(|| why(format!("`{}` is {}, which has no text", e.source, v.kind())))?;
    let quoted = escape == Escape::JsonValue && matches!(v, Value::Str(_) | Value::Date(_));
    match escape {
        Escape::JsonString => crate::template::json_escape(&text, out),
        _ if quoted => {
            out.push(b'"');
            crate::template::json_escape(&text, out);
            out.push(b'"');
        }
        _ => out.extend_from_slice(text.as_bytes()),
    }
    Ok(())
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

#[cfg(test)]
mod tests;
