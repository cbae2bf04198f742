//! The response part of an entry: the `HTTP <status>` line, response headers
//! (asserts on the answer's headers), `[Captures]` and `[Asserts]`, with their
//! queries, the `count` filter and predicates. Queries, filters and predicates
//! of Hurl's grammar that the engine does not evaluate are refused by name.

use std::sync::OnceLock;

use regex::Regex;

use super::{Cur, Kind, OTHER_FILTERS, OTHER_PREDICATES, OTHER_QUERIES, Parser, Res, is_var_name, word_at};
use crate::error::ErrorKind;
use crate::jsonpath::JsonPath;
use crate::model::{Assert, Capture, Expected, Filter, Predicate, PredicateFunc, Query, Response};
use crate::template::{Escape, Template};

impl Parser<'_> {
    pub(super) fn response(&mut self) -> Res<Response> {
        let (_, mut c) = self.kind();
        let pos = self.pos(c.i);
        c.i += 4;
        if self.peek(c) == Some(b'/') {
            return Err(
                self.unsupported(c.i - 4, "an HTTP version in the status line (write `HTTP <status>`)")
            );
        }
        self.skip_sp(&mut c);
        let s = self.rest(c);
        let n = s.find(|ch: char| !(ch.is_ascii_digit() || ch == '*')).unwrap_or(s.len());
        let status = match &s[..n] {
            "*" => None,
            d => Some(
                d.parse::<u16>()
                    .ok()
                    .filter(|s| (100..=999).contains(s))
                    .ok_or_else(|| self.syntax(c.i, "expected a status (100 to 999, or `*`)"))?,
            ),
        };
        c.i += n;
        self.end_of_line(c)?;
        self.line += 1;
        let mut r = Response {
            pos,
            status,
            captures: Vec::new(),
            asserts: Vec::new(),
            plan: OnceLock::new(),
            quick: OnceLock::new(),
        };
        let mut section: Option<&str> = None;
        let mut seen: Vec<&str> = Vec::new();
        loop {
            self.skip_blank();
            if self.eof() {
                return Ok(r);
            }
            let (kind, mut c) = self.kind();
            match (kind, section) {
                (Kind::Section(name @ ("Captures" | "Asserts")), _) => {
                    if seen.contains(&name) {
                        return Err(self.syntax(c.i, format!("a second [{name}] section")));
                    }
                    seen.push(name);
                    section = Some(name);
                    c.i += name.len() + 2;
                    self.end_of_line(c)?;
                }
                (Kind::Section(name), _) => {
                    return Err(self.syntax(
                        c.i,
                        format!("[{name}] is not a response section (they are [Captures] and [Asserts])"),
                    ));
                }
                (Kind::Method | Kind::Http, _) => return Ok(r),
                (Kind::Body, _) => {
                    return Err(self.unsupported(
                        c.i,
                        "a response body (an implicit body assert; write `body == \"...\"` under [Asserts])",
                    ));
                }
                (Kind::KeyValue, None) => {
                    let at = c.i;
                    let name = self.key_string(&mut c)?;
                    let name = name
                        .as_literal()
                        .ok_or_else(|| self.unsupported(at, "a template in a response header's name"))?
                        .into();
                    self.colon(&mut c)?;
                    let value = self.value_string(&mut c)?;
                    let source = self.rest(Cur { i: at, end: c.end }).into();
                    let predicate =
                        Predicate { not: false, func: PredicateFunc::Equal(Expected::Str(value)) };
                    r.asserts.push(Assert {
                        pos: self.pos(at),
                        source,
                        query: Query::Header(name),
                        filters: Vec::new(),
                        predicate,
                    });
                }
                (_, Some("Captures")) => r.captures.push(self.capture(c)?),
                (_, Some(_)) => r.asserts.push(self.assert(c)?),
                (_, None) => {
                    return Err(
                        self.syntax(c.i, "expected a header, [Captures], [Asserts] or the next request")
                    );
                }
            }
            self.line += 1;
        }
    }

    fn capture(&self, mut c: Cur) -> Res<Capture> {
        let pos = self.pos(c.i);
        let at = c.i;
        let name = self.key_string(&mut c)?;
        let name = name.as_literal().filter(|n| is_var_name(n)).ok_or_else(|| {
            self.syntax(
                at,
                "a capture's name is a variable name (a letter, then letters, digits, `_` or `-`)",
            )
        })?;
        self.colon(&mut c)?;
        let query = self.query(&mut c)?;
        let filters = self.filters(&mut c)?;
        if word_at(self.rest(c).trim_start()) == "redact" {
            let at = c.i + self.rest(c).len() - self.rest(c).trim_start().len();
            return Err(self.unsupported(at, "`redact`"));
        }
        self.end_of_line(c)?;
        Ok(Capture { pos, name: name.into(), query, filters })
    }

    fn assert(&self, mut c: Cur) -> Res<Assert> {
        let pos = self.pos(c.i);
        let source = self.rest(c).trim_end().into();
        let query = self.query(&mut c)?;
        let filters = self.filters(&mut c)?;
        self.skip_sp(&mut c);
        let mut not = false;
        if word_at(self.rest(c)) == "not" {
            not = true;
            c.i += 3;
            if self.skip_sp(&mut c) == 0 {
                return Err(self.syntax(c.i, "expected a space after `not`"));
            }
        }
        let func = self.predicate(&mut c)?;
        self.end_of_line(c)?;
        Ok(Assert { pos, source, query, filters, predicate: Predicate { not, func } })
    }

    fn query(&self, c: &mut Cur) -> Res<Query> {
        let at = c.i;
        let w = word_at(self.rest(*c));
        c.i += w.len();
        let arg = |c: &mut Cur| -> Res<(String, usize)> {
            if self.skip_sp(c) == 0 {
                return Err(self.syntax(c.i, format!("expected a quoted argument after `{w}`")));
            }
            let at = c.i;
            let t = self.quoted_string(c)?;
            let s = t.as_literal().ok_or_else(|| self.unsupported(at, "a template in a query's argument"))?;
            Ok((s.to_owned(), at))
        };
        Ok(match w {
            "status" => Query::Status,
            "body" => Query::Body,
            "header" => Query::Header(arg(c)?.0.into()),
            "jsonpath" => {
                let (s, at) = arg(c)?;
                Query::JsonPath(
                    JsonPath::parse(&s).map_err(|(i, m)| self.err(at + 1 + i, ErrorKind::JsonPath(m)))?,
                )
            }
            "regex" => Query::Regex(self.regex(c, w)?),
            _ if OTHER_QUERIES.contains(&w) => return Err(self.unsupported(at, format!("the `{w}` query"))),
            "" => return Err(self.syntax(at, "expected a query (status, header, jsonpath, regex, body)")),
            _ => return Err(self.syntax(at, format!("unknown query `{w}`"))),
        })
    }

    /// A regex argument: a quoted string or `/regex/`.
    fn regex(&self, c: &mut Cur, after: &str) -> Res<Regex> {
        if self.skip_sp(c) == 0 {
            return Err(self.syntax(c.i, format!("expected a regex after `{after}`")));
        }
        let at = c.i;
        let src = if self.peek(*c) == Some(b'/') {
            let s = self.rest(*c);
            let mut out = String::new();
            let mut it = s.char_indices().skip(1);
            loop {
                match it.next() {
                    Some((i, '/')) => {
                        c.i += i + 1;
                        break out;
                    }
                    Some((_, '\\')) => match it.next() {
                        Some((_, '/')) => out.push('/'),
                        Some((_, ch)) => {
                            out.push('\\');
                            out.push(ch);
                        }
                        None => return Err(self.syntax(c.end, "unterminated regex")),
                    },
                    Some((_, ch)) => out.push(ch),
                    None => return Err(self.syntax(c.end, "unterminated regex")),
                }
            }
        } else {
            let t = self.quoted_string(c)?;
            t.as_literal().ok_or_else(|| self.unsupported(at, "a template in a regex"))?.to_owned()
        };
        Regex::new(&src).map_err(|e| self.err(at, ErrorKind::Regex(e.to_string())))
    }

    fn filters(&self, c: &mut Cur) -> Res<Vec<Filter>> {
        let mut filters = Vec::new();
        loop {
            let mut d = *c;
            self.skip_sp(&mut d);
            let w = word_at(self.rest(d));
            if w == "count" {
                filters.push(Filter::Count);
                d.i += w.len();
                *c = d;
            } else if OTHER_FILTERS.contains(&w) {
                return Err(self.unsupported(d.i, format!("the `{w}` filter")));
            } else {
                return Ok(filters);
            }
        }
    }

    fn predicate(&self, c: &mut Cur) -> Res<PredicateFunc> {
        let at = c.i;
        let s = self.rest(*c);
        let op = s.find([' ', '\t']).map_or(s, |n| &s[..n]);
        c.i += op.len();
        let needs_value = |c: &mut Cur| -> Res<()> {
            if self.skip_sp(c) == 0 {
                return Err(self.syntax(c.i, format!("expected a value after `{op}`")));
            }
            Ok(())
        };
        Ok(match op {
            "==" | "equals" => {
                needs_value(c)?;
                PredicateFunc::Equal(self.value(c)?)
            }
            "!=" | "notEquals" => {
                needs_value(c)?;
                PredicateFunc::NotEqual(self.value(c)?)
            }
            ">"
            | "greaterThan"
            | ">="
            | "greaterThanOrEquals"
            | "<"
            | "lessThan"
            | "<="
            | "lessThanOrEquals" => {
                needs_value(c)?;
                let vat = c.i;
                let v = self.value(c)?;
                if matches!(v, Expected::Null | Expected::Bool(_)) {
                    return Err(self.syntax(vat, format!("`{op}` compares with a number or a string")));
                }
                match op {
                    ">" | "greaterThan" => PredicateFunc::Greater(v),
                    ">=" | "greaterThanOrEquals" => PredicateFunc::GreaterOrEqual(v),
                    "<" | "lessThan" => PredicateFunc::Less(v),
                    _ => PredicateFunc::LessOrEqual(v),
                }
            }
            "startsWith" | "endsWith" | "contains" => {
                needs_value(c)?;
                if self.peek(*c) != Some(b'"') {
                    return Err(self.unsupported(c.i, format!("`{op}` with anything but a quoted string")));
                }
                let t = self.quoted_string(c)?;
                match op {
                    "startsWith" => PredicateFunc::StartsWith(t),
                    "endsWith" => PredicateFunc::EndsWith(t),
                    _ => PredicateFunc::Contains(t),
                }
            }
            "includes" => {
                needs_value(c)?;
                PredicateFunc::Includes(self.value(c)?)
            }
            "matches" => PredicateFunc::Matches(self.regex(c, op)?),
            "exists" => PredicateFunc::Exists,
            "isEmpty" => PredicateFunc::IsEmpty,
            "isInteger" => PredicateFunc::IsInteger,
            "isFloat" => PredicateFunc::IsFloat,
            "isBoolean" => PredicateFunc::IsBoolean,
            "isString" => PredicateFunc::IsString,
            "isCollection" => PredicateFunc::IsCollection,
            _ if OTHER_PREDICATES.contains(&op) => {
                return Err(self.unsupported(at, format!("the `{op}` predicate")));
            }
            "" => {
                return Err(self.syntax(
                    at,
                    "expected a predicate (==, !=, >, exists, isInteger, contains, matches, ...)",
                ));
            }
            _ => return Err(self.syntax(at, format!("unknown predicate `{op}`"))),
        })
    }

    /// A predicate's value: null, a boolean, a number, a quoted string or `{{var}}`.
    fn value(&self, c: &mut Cur) -> Res<Expected> {
        let s = self.rest(*c);
        let token = s.find([' ', '\t', '#']).map_or(s, |n| &s[..n]);
        let simple = match token {
            "null" => Some(Expected::Null),
            "true" => Some(Expected::Bool(true)),
            "false" => Some(Expected::Bool(false)),
            t if t.starts_with(|ch: char| ch.is_ascii_digit() || ch == '-') => {
                Some(if let Ok(n) = t.parse::<i64>() {
                    Expected::Int(n)
                } else {
                    Expected::Float(
                        t.parse::<f64>()
                            .ok()
                            .filter(|f| f.is_finite())
                            .ok_or_else(|| self.syntax(c.i, format!("`{t}` is not a number")))?,
                    )
                })
            }
            _ => None,
        };
        if let Some(v) = simple {
            c.i += token.len();
            return Ok(v);
        }
        match self.peek(*c) {
            Some(b'"') => Ok(Expected::Str(self.quoted_string(c)?)),
            Some(b'{') if s.starts_with("{{") => {
                let mut t = Template::default();
                self.template_expr(c, &mut t, Escape::Plain)?;
                Ok(Expected::Var(t))
            }
            Some(b'`') => Err(self.unsupported(c.i, "a backtick or multiline string as a predicate value")),
            _ if s.starts_with("hex,") || s.starts_with("base64,") || s.starts_with("file,") => {
                Err(self.unsupported(c.i, format!("a `{}` value", &s[..s.find(',').unwrap_or(0)])))
            }
            _ => Err(self.syntax(
                c.i,
                "expected a value: null, true, false, a number, a quoted string or {{variable}}",
            )),
        }
    }
}
