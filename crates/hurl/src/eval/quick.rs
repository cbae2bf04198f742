//! An entry's checks compiled for the answer that passes them: what the load
//! engine meets on nearly every request.
//!
//! Worked out once per entry: the leaf of the one-pass reading
//! ([`crate::jsonpath::stream::Plan`]) each jsonpath query reads, and each
//! assert's test in a form that needs no dispatch on the query (`isInteger`
//! on a leaf, `==` a number, a header's text `contains` a literal or `matches`
//! a regex, ...). A run checks the status, reads the body in one pass, takes
//! the captures and runs every assert; it answers only "all of them hold". Anything
//! else (a failed check, an answer it cannot judge this way, such as a repeated or
//! non-ASCII header, or a float that may be an integer beyond 64 bits) sends the
//! entry to the general evaluator, which judges it from the start and says what
//! failed, so the failures and the captured variables are the general
//! evaluator's in every case. The property tests (`tests.rs`) hold the two equal.
//! A `cookie` query reads the answer's `Set-Cookie` headers in place, as the
//! general evaluator does (one function, [`super::query`]'s); the value of the
//! cookie an ASCII first `Set-Cookie` sets is read from its bytes, without the
//! check that makes them a `&str` (ASCII is text). A `url` query reads the last
//! hop's URL; a `redirects` query, through `count`, `nth N`, `first` or `last`
//! (then maybe `location`), reads the hop it names in place, without the list
//! the general evaluator builds; a jsonpath of one filter is read by its own
//! pass over the body ([`Filtered`]), which keeps one target and gives up on a
//! second. Entries with other filters, a version in the status line, other
//! queries or jsonpaths, templated operands or redacted captures are left to the
//! general evaluator.

use std::borrow::Cow;

use super::predicate::judge;
use super::{Answer, contains_short};
use crate::jsonpath::stream::{Filtered, Leaf, MAX, Plan};
use crate::model::{
    AssertKind, CookieAttr, Expected, Filter, FilterKind, IntArg, Predicate, PredicateFunc, Query, Response,
    Version,
};
use crate::template::Vars;
use crate::value::{BIG, Value};

/// An entry's checks compiled for an answer that passes them (see the module's notes).
#[derive(Debug, Clone)]
pub struct Quick {
    /// Each capture's leaf of the plan, and its variable's slot in the variables the checks
    /// were worked out with ([`Vars::index_at`]).
    captures: Vec<(usize, usize)>,
    asserts: Vec<Check>,
    /// Whether an assert reads the body as JSON by the plan (the captures, when there are
    /// any, do).
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
    /// A `cookie "NAME" == "VALUE"` assert's `NAME=VALUE`, when a `Set-Cookie` that begins
    /// with these bytes, then a `;` or its end, is sure to set the cookie to that value
    /// (neither holds a `;`, the name no `=`, and neither begins or ends with what trimming
    /// takes off): then the answer's first `Set-Cookie` is compared with it, not split.
    exact: Option<Box<[u8]>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Source {
    Status,
    /// The header the assert's query names (read as bytes; ASCII only).
    Header(Box<str>),
    /// A leaf of the plan.
    Json(usize),
    /// A cookie the answer sets, or one of its attributes.
    Cookie(Box<str>, CookieAttr),
    /// The URL of the last hop (`url`).
    Url,
    /// The redirects followed, through the assert's filters.
    Redirects(Hops),
    /// A jsonpath of one filter, read in its own pass over the body.
    Filtered(Box<Filtered>),
}

/// What a `redirects` query's filters take of the hops.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Hops {
    /// `count`.
    Count,
    /// `nth N` (`first`: 0, `last`: -1; from the end when negative), its `location` when
    /// `true`.
    Nth(i64, bool),
}

impl Hops {
    /// What `filters` take of the hops; `None` for filters compiled otherwise.
    fn of(filters: &[Filter]) -> Option<Hops> {
        let nth = |f: &Filter| match f.kind {
            FilterKind::First => Some(0),
            FilterKind::Last => Some(-1),
            FilterKind::Nth(IntArg::Literal(n)) => Some(n),
            _ => None,
        };
        Some(match filters {
            [f] if matches!(f.kind, FilterKind::Count) => Hops::Count,
            [f] => Hops::Nth(nth(f)?, false),
            [f, l] if matches!(l.kind, FilterKind::Location) => Hops::Nth(nth(f)?, true),
            _ => return None,
        })
    }
}

/// A predicate on a literal operand, tested without resolving it per answer.
#[derive(Debug, Clone)]
enum Test {
    IsInteger,
    IsString,
    IsBoolean,
    Exists,
    EqInt(i64),
    EqFloat(f64),
    /// `==` a quoted literal.
    EqText(Box<str>),
    /// `contains` a literal, on text.
    Contains(Box<str>),
    /// `startsWith` a literal, on text.
    StartsWith(Box<str>),
    /// `endsWith` a literal, on text.
    EndsWith(Box<str>),
    /// `matches`, on a header: its regex over bytes, the same on ASCII text (no UTF-8
    /// check of the value per answer); on other values, the general [`judge`].
    Matches(regex::bytes::Regex),
    /// Any other predicate without variables: the general [`judge`].
    General,
}

impl Quick {
    /// The compiled checks of `r`, whose jsonpath queries `plan` reads (`None` when some
    /// check is left to the general evaluator).
    /// `vars` are the first user's: each capture's slot is looked up there once.
    pub(super) fn new(r: &Response, plan: &Plan, vars: &mut Vars) -> Option<Quick> {
        if r.version != Version::Any {
            return None;
        }
        // The `k`th jsonpath query, captures first, is the plan's `k`th path.
        let mut k = 0;
        let mut leaf = || {
            k += 1;
            plan.slot(k - 1)
        };
        let mut captures = Vec::with_capacity(r.captures.len());
        for c in &r.captures {
            match super::planned(&c.query) {
                Some(_) if c.filters.is_empty() && !c.redact => {
                    captures.push((leaf()?, vars.index(&c.name)));
                }
                _ => return None,
            }
        }
        let mut asserts = Vec::with_capacity(r.asserts.len());
        for (index, a) in r.asserts.iter().enumerate() {
            if a.kind == AssertKind::Body || !(a.filters.is_empty() || matches!(a.query, Query::Redirects)) {
                return None;
            }
            let source = match &a.query {
                Query::Status => Source::Status,
                Query::Header(t) => Source::Header(t.as_literal()?.into()),
                Query::JsonPath(p) => match p.filtered() {
                    Some(f) => Source::Filtered(Box::new(f.clone())),
                    None => Source::Json(leaf()?),
                },
                Query::Cookie { name, attr } => Source::Cookie(name.as_literal()?.into(), *attr),
                Query::Url => Source::Url,
                Query::Redirects => Source::Redirects(Hops::of(&a.filters)?),
                _ => return None,
            };
            // A bare `{{name}}` is never literal: it has a variable part.
            let literal = a.predicate.func.template().is_none_or(|t| t.as_literal().is_some());
            let test = match &a.predicate.func {
                PredicateFunc::IsInteger => Test::IsInteger,
                PredicateFunc::IsString => Test::IsString,
                PredicateFunc::IsBoolean => Test::IsBoolean,
                PredicateFunc::Exists => Test::Exists,
                PredicateFunc::Equal(Expected::Int(n)) => Test::EqInt(*n),
                PredicateFunc::Equal(Expected::Float(f)) => Test::EqFloat(*f),
                PredicateFunc::Equal(Expected::Str(t)) => Test::EqText(t.as_literal()?.into()),
                PredicateFunc::Contains(Expected::Str(t)) => Test::Contains(t.as_literal()?.into()),
                PredicateFunc::StartsWith(Expected::Str(t)) => Test::StartsWith(t.as_literal()?.into()),
                PredicateFunc::EndsWith(Expected::Str(t)) => Test::EndsWith(t.as_literal()?.into()),
                PredicateFunc::Matches(e) => {
                    let src = match e {
                        Expected::Regex(r) => r.as_str(),
                        Expected::Str(t) => t.as_literal()?,
                        _ => return None,
                    };
                    match regex::bytes::Regex::new(src) {
                        Ok(re) if matches!(source, Source::Header(_)) => Test::Matches(re),
                        _ => Test::General,
                    }
                }
                // Any other: the general `judge`, when its operand (if it has one) is literal.
                _ => literal.then_some(Test::General)?,
            };
            let exact = match (&source, &test) {
                (Source::Cookie(name, CookieAttr::Value), Test::EqText(value)) => exact_cookie(name, value),
                _ => None,
            };
            asserts.push(Check { index, source, test, not: a.predicate.not, exact });
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
        // A body that is not its own text (compressed, another charset) is decoded first by the
        // general evaluator, which decides.
        if json && (!answer.body_is_own_text() || plan.find(answer.body(), asserts, found).is_err()) {
            return false;
        }
        for (c, &(i, slot)) in r.captures.iter().zip(&self.captures) {
            // An integer (a count, an id), set without the value made.
            if let Leaf::Int(n) = found[i] {
                let slot = vars.index_at(slot, &c.name);
                if Value::set_int_at(n, vars, slot).is_err() {
                    return false;
                }
                continue;
            }
            match Value::from_leaf(&found[i]) {
                Some(Some(v)) => {
                    let slot = vars.index_at(slot, &c.name);
                    let set = v.set_at(vars, slot);
                    forget_borrowed(Some(v));
                    if set.is_err() {
                        return false;
                    }
                }
                _ => return false,
            }
        }
        if !asserts {
            return true;
        }
        self.asserts.iter().all(|c| {
            let p = &r.asserts[c.index].predicate;
            let v = match &c.source {
                Source::Status => Some(Value::Int(i64::from(answer.status()))),
                Source::Json(i) => {
                    // An integer or a plain string, the leaves most asserts read, tested in place.
                    if let Some(ok) = c.leaf_holds(&found[*i]) {
                        return ok;
                    }
                    match Value::from_leaf(&found[*i]) {
                        Some(v) => v,
                        None => return false,
                    }
                }
                Source::Header(name) => match answer.header_bytes(name) {
                    (None, _) => None,
                    // Text as the general evaluator reads it (ASCII is UTF-8), one header.
                    (Some(one), false) if crate::bytes::ascii(one) => return c.text(one, vars, scratch, p),
                    (Some(_), _) => return false,
                },
                Source::Cookie(name, attr) => {
                    let first = answer.first_set_cookie().0;
                    if let (Some(exact), Some(first)) = (&c.exact, first)
                        && sets_exactly(first, exact, answer.first_set_cookie_is_text())
                    {
                        return !c.not;
                    }
                    if *attr == CookieAttr::Value
                        && let Some(ok) = c.first_cookie_holds(first, name)
                    {
                        return ok;
                    }
                    match super::query::cookie(answer, name, *attr) {
                        Ok(v) => v,
                        // A date it cannot read: the general evaluator says so.
                        Err(_) => return false,
                    }
                }
                Source::Url => match answer.url() {
                    Some(url) => return c.text(url.as_bytes(), vars, scratch, p),
                    // Not known to the transport: the general evaluator says so.
                    None => return false,
                },
                Source::Redirects(Hops::Count) => Some(Value::Int(answer.redirects().len() as i64)),
                Source::Redirects(Hops::Nth(n, location)) => {
                    // The general evaluator's `nth`: from the end when negative.
                    let hops = answer.redirects();
                    let i = if *n < 0 { hops.len() as i64 + n } else { *n };
                    // Out of bounds: the general evaluator says so.
                    let Some(hop) = usize::try_from(i).ok().and_then(|i| hops.get(i)) else { return false };
                    if *location {
                        return c.text(hop.location.as_bytes(), vars, scratch, p);
                    }
                    Some(Value::Response { status: hop.status, location: Some(Cow::Borrowed(&hop.location)) })
                }
                Source::Filtered(f) => {
                    let mut one = None;
                    if !answer.body_is_own_text() || f.find(answer.body(), &mut one).is_none() {
                        return false;
                    }
                    match one {
                        None => None,
                        Some(leaf) => {
                            if let Some(ok) = c.leaf_holds(&leaf) {
                                return ok;
                            }
                            match Value::from_leaf(&leaf) {
                                Some(v) => v,
                                None => return false,
                            }
                        }
                    }
                }
            };
            let ok = c.holds(v.as_ref(), vars, scratch, p);
            forget_borrowed(v);
            ok
        })
    }
}

/// `name=value`, the bytes a `Set-Cookie` begins with when it sets cookie `name` to `value`
/// whatever follows them (a `;` or nothing): `None` when a header that begins so may still
/// set another cookie or another value ([`crate::cookies::name_value`] splits at the first
/// `=` and the first `;`, then trims), or when either is not ASCII.
fn exact_cookie(name: &str, value: &str) -> Option<Box<[u8]>> {
    // Trimming takes off white space and control bytes at the ends only (all at or below
    // a space, in ASCII).
    let ends = |s: &[u8]| s.first().is_none_or(|&b| b > b' ') && s.last().is_none_or(|&b| b > b' ');
    let (n, v) = (name.as_bytes(), value.as_bytes());
    let plain = !n.is_empty()
        && name.is_ascii()
        && value.is_ascii()
        && !n.contains(&b'=')
        && !n.contains(&b';')
        && !v.contains(&b';')
        && ends(n)
        && ends(v);
    plain.then(|| [n, b"=", v].concat().into_boxed_slice())
}

/// Whether the `Set-Cookie` value `header` begins with `exact` ([`exact_cookie`]), then a
/// `;` or its end, and is text, as the general evaluator reads it: known to be (`text`, the
/// jar read it as text), or ASCII.
#[inline]
fn sets_exactly(header: &[u8], exact: &[u8], text: bool) -> bool {
    header.len() >= exact.len()
        && crate::bytes::same(&header[..exact.len()], exact)
        && header.get(exact.len()).is_none_or(|&b| b == b';')
        && (text || crate::bytes::ascii(&header[exact.len()..]))
}

/// Drops `v`, without the call to its drop when it owns nothing (a number, a borrowed
/// string: nearly every value an assert reads from an answer).
#[inline]
fn forget_borrowed(v: Option<Value<'_>>) {
    match v {
        None
        | Some(
            Value::Null
            | Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Nodeset(_)
            | Value::Unit
            | Value::Str(Cow::Borrowed(_))
            | Value::Bytes(Cow::Borrowed(_)),
        ) => std::mem::forget(v),
        Some(v) => drop(v),
    }
}

impl Check {
    /// [`Check::holds`] of an integer or a plain string leaf, its value not made: `None` for
    /// any other leaf, or a test that needs the general [`judge`].
    #[expect(clippy::inline_always, reason = "called per jsonpath assert; a call costs more than the test")]
    #[inline(always)]
    fn leaf_holds(&self, l: &Leaf<'_>) -> Option<bool> {
        let ok = match (l, &self.test) {
            // A string the parsed document reads as a big integer ([`BIG`]): left to the
            // general evaluator.
            (Leaf::Str(s), _) if s.starts_with(BIG) => return None,
            (Leaf::Int(_), Test::IsInteger)
            | (Leaf::Str(_), Test::IsString)
            | (Leaf::Int(_) | Leaf::Str(_), Test::Exists) => true,
            (Leaf::Int(x), Test::EqInt(n)) => x == n,
            (Leaf::Int(x), Test::EqFloat(f)) => (*x as f64).partial_cmp(f) == Some(std::cmp::Ordering::Equal),
            (Leaf::Str(s), Test::EqText(t)) => **s == **t,
            (Leaf::Str(s), Test::StartsWith(t)) => s.starts_with(&**t),
            (Leaf::Str(s), Test::EndsWith(t)) => s.ends_with(&**t),
            (Leaf::Int(_), Test::IsString | Test::IsBoolean | Test::EqText(_))
            | (Leaf::Str(_), Test::IsInteger | Test::IsBoolean | Test::EqInt(_) | Test::EqFloat(_)) => false,
            _ => return None,
        };
        Some(ok != self.not)
    }

    /// [`Check::holds`] of the value of the cookie named `name`, when the answer's first
    /// `Set-Cookie` (`first`) sets it and is ASCII: read from its bytes, without a check that
    /// they are text. `None` otherwise (the general [`super::query::cookie`] reads the others),
    /// or for a test that needs the value made.
    #[inline]
    fn first_cookie_holds(&self, first: Option<&[u8]>, name: &str) -> Option<bool> {
        let (found, value) = crate::cookies::name_value_ascii(first?)?;
        if !crate::bytes::same(found, name.as_bytes()) {
            return None;
        }
        let ok = match &self.test {
            Test::EqText(t) => crate::bytes::same(value, t.as_bytes()),
            Test::StartsWith(t) => value.starts_with(t.as_bytes()),
            Test::EndsWith(t) => value.ends_with(t.as_bytes()),
            Test::IsString | Test::Exists => true,
            Test::IsInteger | Test::IsBoolean | Test::EqInt(_) | Test::EqFloat(_) => false,
            Test::Contains(_) | Test::Matches(_) | Test::General => return None,
        };
        Some(ok != self.not)
    }

    /// Whether the assert holds of `v` (`None`: nothing found).
    fn holds(&self, v: Option<&Value<'_>>, vars: &mut Vars, scratch: &mut Vec<u8>, p: &Predicate) -> bool {
        let Some(v) = v else {
            return judge(p, None, vars, scratch).is_ok();
        };
        let ok = match &self.test {
            Test::IsInteger => matches!(v, Value::Int(_) | Value::BigInt(_)),
            Test::IsString => matches!(v, Value::Str(_)),
            Test::IsBoolean => matches!(v, Value::Bool(_)),
            Test::Exists => !matches!(v, Value::Nodeset(0)),
            // Hurl's equality of numbers, without a value made to compare with.
            Test::EqInt(n) => match v {
                Value::Int(x) => x == n,
                Value::Float(x) => x.partial_cmp(&(*n as f64)) == Some(std::cmp::Ordering::Equal),
                _ => false,
            },
            Test::EqFloat(f) => match v {
                Value::Float(x) => x.partial_cmp(f) == Some(std::cmp::Ordering::Equal),
                Value::Int(x) => (*x as f64).partial_cmp(f) == Some(std::cmp::Ordering::Equal),
                _ => false,
            },
            Test::EqText(t) => v.as_str() == Some(t),
            // On a value other than text: the general [`judge`] (a type it does not apply to).
            Test::StartsWith(t) | Test::EndsWith(t) => match v {
                Value::Str(s) if matches!(self.test, Test::StartsWith(_)) => s.starts_with(&**t),
                Value::Str(s) => s.ends_with(&**t),
                _ => return judge(p, Some(v), vars, scratch).is_ok(),
            },
            Test::Contains(_) | Test::Matches(_) | Test::General => {
                return judge(p, Some(v), vars, scratch).is_ok();
            }
        };
        ok != self.not
    }

    /// Whether the assert holds of the text `text`: a `&str`'s bytes, or a single ASCII
    /// header value.
    fn text(&self, text: &[u8], vars: &mut Vars, scratch: &mut Vec<u8>, p: &Predicate) -> bool {
        let ok = match &self.test {
            Test::IsString | Test::Exists => true,
            Test::IsInteger | Test::IsBoolean | Test::EqInt(_) | Test::EqFloat(_) => false,
            Test::EqText(t) => text == t.as_bytes(),
            Test::StartsWith(t) => text.starts_with(t.as_bytes()),
            Test::EndsWith(t) => text.ends_with(t.as_bytes()),
            Test::Contains(t) if text.len() <= 64 => contains_short(text, t.as_bytes()),
            Test::Matches(re) => re.is_match(text),
            Test::Contains(_) | Test::General => {
                let Ok(s) = std::str::from_utf8(text) else { return false };
                return self.holds(Some(&Value::Str(Cow::Borrowed(s))), vars, scratch, p);
            }
        };
        ok != self.not
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{exact_cookie, sets_exactly};

    /// Bytes a `Set-Cookie` (or a cookie's name or value) is made of: the separators, what
    /// trimming takes off, a non-ASCII byte and letters.
    fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![
            Just(b'='),
            Just(b';'),
            Just(b' '),
            Just(b'\t'),
            Just(b'\x0b'),
            Just(0xc3u8),
            Just(0xa9u8),
            b'a'..b'd'
        ];
        proptest::collection::vec(byte, 0..max)
    }

    proptest! {
        /// A `Set-Cookie` taken as setting the cookie exactly sets it, to that value, as the
        /// byte reading of the general evaluator's split finds it; an answer built to set it
        /// is taken so whenever the name and value allow it.
        #[test]
        fn an_exact_cookie_is_what_the_split_finds(
            name in bytes(4),
            value in bytes(4),
            header in bytes(12),
            rest in bytes(8),
            built in any::<bool>(),
        ) {
            let (Ok(n), Ok(v)) = (std::str::from_utf8(&name), std::str::from_utf8(&value)) else {
                return Ok(());
            };
            let Some(exact) = exact_cookie(n, v) else { return Ok(()) };
            let header = if built { [exact.as_ref(), b";", &rest].concat() } else { header };
            let split = crate::cookies::name_value_ascii(&header);
            if sets_exactly(&header, &exact, false) {
                prop_assert_eq!(split, Some((&name[..], &value[..])));
            }
            if built && rest.is_ascii() {
                prop_assert!(sets_exactly(&header, &exact, false));
            }
            // Known to be text (the jar read it so), any UTF-8 header taken as setting the
            // cookie sets it as the general evaluator's split of the text finds it.
            if let Ok(text) = std::str::from_utf8(&header) {
                if sets_exactly(&header, &exact, true) {
                    let (n, v, _) = crate::cookies::name_value(text).expect("a name and value");
                    prop_assert_eq!((n.as_bytes(), v.as_bytes()), (&name[..], &value[..]));
                }
                prop_assert!(!sets_exactly(&header, &exact, false) || sets_exactly(&header, &exact, true));
            }
        }
    }

    /// Names and values a split or trimming would read otherwise are not compared exactly.
    #[test]
    fn only_plain_cookies_are_compared_exactly() {
        assert_eq!(exact_cookie("sid", "3f2a9c").as_deref(), Some(&b"sid=3f2a9c"[..]));
        assert_eq!(exact_cookie("sid", "").as_deref(), Some(&b"sid="[..]));
        for (name, value) in [
            ("", "x"),
            ("a=b", "x"),
            ("a;", "x"),
            ("sid", "a;b"),
            (" sid", "x"),
            ("sid", "x "),
            ("sid", "\u{e9}"),
        ] {
            assert_eq!(exact_cookie(name, value), None, "{name:?} {value:?}");
        }
        for text in [false, true] {
            assert!(sets_exactly(b"sid=3f2a9c; Path=/", b"sid=3f2a9c", text));
            assert!(sets_exactly(b"sid=3f2a9c", b"sid=3f2a9c", text));
            assert!(!sets_exactly(b"sid=3f2a9cd; Path=/", b"sid=3f2a9c", text));
            assert!(!sets_exactly(b"sid=3f2a9c ; Path=/", b"sid=3f2a9c", text));
        }
        // Not ASCII: text only when known to be (a lone 0xe9 is not UTF-8; the jar would not
        // have read it as text).
        assert!(!sets_exactly(b"sid=3f2a9c; Path=/\xe9", b"sid=3f2a9c", false));
        assert!(!sets_exactly("sid=3f2a9c; Path=/\u{e9}".as_bytes(), b"sid=3f2a9c", false));
        assert!(sets_exactly("sid=3f2a9c; Path=/\u{e9}".as_bytes(), b"sid=3f2a9c", true));
    }
}
