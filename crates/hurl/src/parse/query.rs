//! Captures and asserts: every query, filter and predicate of Hurl 8, and the
//! values a predicate takes (null, booleans, numbers of any size, quoted,
//! backtick and multiline strings, `hex,`, `base64,`, `file,`, `/regex/` and
//! `{{placeholder}}`). A jsonpath or regex written without templates is
//! compiled here, so a mistake in one is refused with its position.

use regex::Regex;

use super::{Cur, Parser, Res, is_var_name, word_at};
use crate::error::ErrorKind;
use crate::jsonpath::JsonPath;
use crate::model::{
    Assert, AssertKind, Capture, CertField, CookieAttr, Expected, Filter, FilterKind, IntArg, Predicate,
    PredicateFunc, Query, RegexArg,
};
use crate::template::{Escape, Part, Template};

impl Parser<'_> {
    pub(super) fn capture(&self, mut c: Cur) -> Res<Capture> {
        let pos = self.pos(c.i);
        let at = c.i;
        let name = self.key_string(&mut c)?;
        let name = match name.as_literal() {
            Some(n) => n.to_owned(),
            None => self.bound_name(at, &name)?,
        };
        if !is_var_name(&name) {
            return Err(self.syntax(
                at,
                "a capture's name is a variable name (a letter, then letters, digits, `_` or `-`)",
            ));
        }
        self.colon(&mut c)?;
        let query = self.query(&mut c)?;
        let filters = self.filters(&mut c)?;
        let mut d = c;
        self.skip_sp(&mut d);
        let redact = word_at(self.rest(d)) == "redact";
        if redact {
            c.i = d.i + "redact".len();
        }
        self.end_of_line(c)?;
        Ok(Capture { pos, name: name.into(), query, filters, redact })
    }

    /// A capture's name written with templates (`{{key}}: body`), read when the file loads
    /// from the `variable` options written out before it (in its entry or one before), as
    /// Hurl would render it: the captures after it are known by name when the file loads.
    fn bound_name(&self, at: usize, name: &Template) -> Res<String> {
        let mut out = String::new();
        for part in &name.parts {
            let value = match part {
                Part::Lit(l) => Some(&**l),
                Part::Var { name, .. } => {
                    self.bound.iter().rev().find(|(n, _)| n == name).and_then(|(_, v)| v.as_deref())
                }
                Part::Bytes(_) | Part::Expr { .. } => None,
            };
            let Some(value) = value else {
                return Err(self.unsupported(
                    at,
                    "a capture's name with a template whose value is known only once sent: stackbench reads \
                     a capture's name when the file loads, from a `variable` option written out before it \
                     (`variable: key=name`), or write the name itself",
                ));
            };
            out.push_str(value);
        }
        Ok(out)
    }

    /// An assert, and the offset where it ends (a multiline string value may span lines).
    pub(super) fn assert(&self, mut c: Cur) -> Res<(Assert, usize)> {
        let pos = self.pos(c.i);
        let source = self.rest(c).trim_end().into();
        let query = self.query(&mut c)?;
        let filters = self.filters(&mut c)?;
        if self.skip_sp(&mut c) == 0 && self.peek(c).is_some() {
            return Err(self.syntax(c.i, "expected a space before the predicate"));
        }
        let mut not = false;
        if word_at(self.rest(c)) == "not" {
            let mut d = c;
            d.i += 3;
            if self.skip_sp(&mut d) > 0 {
                not = true;
                c = d;
            }
        }
        let func = self.predicate(&mut c)?;
        self.end_of_line(c)?;
        let a = Assert {
            pos,
            source,
            kind: AssertKind::Explicit,
            query,
            filters,
            predicate: Predicate { not, func },
        };
        Ok((a, c.i))
    }

    fn query(&self, c: &mut Cur) -> Res<Query> {
        let at = c.i;
        let w = word_at(self.rest(*c));
        c.i += w.len();
        Ok(match w {
            "status" => Query::Status,
            "version" => Query::Version,
            "url" => Query::Url,
            "ip" => Query::Ip,
            "duration" => Query::Duration,
            "redirects" => Query::Redirects,
            "body" => Query::Body,
            "bytes" => Query::Bytes,
            "rawbytes" => Query::RawBytes,
            "sha256" => Query::Sha256,
            "md5" => Query::Md5,
            "header" => Query::Header(self.quoted_arg(c, w)?.0),
            "variable" => Query::Variable(self.quoted_arg(c, w)?.0),
            "xpath" => Query::XPath(self.quoted_arg(c, w)?.0),
            "jsonpath" => Parser::jsonpath(self.quoted_arg(c, w)?.0),
            "regex" => Query::Regex(self.regex_arg(c, w)?),
            "cookie" => {
                let (t, at) = self.quoted_arg(c, w)?;
                self.cookie(t, at)?
            }
            "certificate" => {
                let (t, at) = self.quoted_arg(c, w)?;
                let field = match t.as_literal() {
                    Some("Subject") => CertField::Subject,
                    Some("Issuer") => CertField::Issuer,
                    Some("Start-Date") => CertField::StartDate,
                    Some("Expire-Date") => CertField::ExpireDate,
                    Some("Serial-Number") => CertField::SerialNumber,
                    Some("Subject-Alt-Name") => CertField::SubjectAltName,
                    Some("Value") => CertField::Value,
                    _ => {
                        return Err(self.syntax(
                            at,
                            "a certificate's field is Subject, Issuer, Start-Date, Expire-Date, Serial-Number, Subject-Alt-Name or Value",
                        ));
                    }
                };
                Query::Certificate(field)
            }
            "" => return Err(self.syntax(at, "expected a query (status, header, jsonpath, body, ...)")),
            _ => return Err(self.syntax(at, format!("unknown query `{w}`"))),
        })
    }

    /// A space and a quoted string after `after`, and where the string starts.
    fn quoted_arg(&self, c: &mut Cur, after: &str) -> Res<(Template, usize)> {
        if self.skip_sp(c) == 0 {
            return Err(self.syntax(c.i, format!("expected a quoted argument after `{after}`")));
        }
        let at = c.i;
        Ok((self.quoted_string(c)?, at))
    }

    /// A jsonpath query: compiled now when it has no template. One that does not compile is
    /// kept to fail where it is evaluated, as in Hurl (which reads a jsonpath when it runs
    /// the query); the load engine refuses it when the file loads ([`crate::invalid_jsonpath`]).
    fn jsonpath(t: Template) -> Query {
        match t.as_literal().map(JsonPath::parse) {
            Some(Ok(p)) => Query::JsonPath(p),
            _ => Query::JsonPathTemplate(t),
        }
    }

    /// `cookie "name"` or `cookie "name[Attribute]"`.
    fn cookie(&self, t: Template, at: usize) -> Res<Query> {
        let Some(s) = t.as_literal() else {
            return Ok(Query::Cookie { name: t, attr: CookieAttr::Value });
        };
        let Some((name, rest)) = s.split_once('[') else {
            return Ok(Query::Cookie { name: t, attr: CookieAttr::Value });
        };
        let attr = match rest.strip_suffix(']') {
            Some("Value") => CookieAttr::Value,
            Some("Expires") => CookieAttr::Expires,
            Some("Max-Age") => CookieAttr::MaxAge,
            Some("Domain") => CookieAttr::Domain,
            Some("Path") => CookieAttr::Path,
            Some("Secure") => CookieAttr::Secure,
            Some("HttpOnly") => CookieAttr::HttpOnly,
            Some("SameSite") => CookieAttr::SameSite,
            _ => {
                return Err(self.syntax(
                    at + 1 + name.len(),
                    "a cookie's attribute is Value, Expires, Max-Age, Domain, Path, Secure, HttpOnly or SameSite",
                ));
            }
        };
        Ok(Query::Cookie { name: Template::literal(name), attr })
    }

    /// A regex argument: a quoted string or `/regex/`, compiled now when it has no template.
    fn regex_arg(&self, c: &mut Cur, after: &str) -> Res<RegexArg> {
        if self.skip_sp(c) == 0 {
            return Err(self.syntax(c.i, format!("expected a regex after `{after}`")));
        }
        let at = c.i;
        if self.peek(*c) == Some(b'/') {
            return Ok(RegexArg::Literal(self.slash_regex(c)?));
        }
        let t = self.quoted_string(c)?;
        match t.as_literal() {
            Some(src) => Ok(RegexArg::Literal(
                Regex::new(src).map_err(|e| self.err(at, ErrorKind::Regex(e.to_string())))?,
            )),
            None => Ok(RegexArg::Template(t)),
        }
    }

    /// `/regex/` at `c` (`\/` is a slash).
    fn slash_regex(&self, c: &mut Cur) -> Res<Regex> {
        let at = c.i;
        let s = self.rest(*c);
        let mut out = String::new();
        let mut it = s.char_indices().skip(1);
        loop {
            match it.next() {
                Some((i, '/')) => {
                    c.i += i + 1;
                    break;
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
        Regex::new(&out).map_err(|e| self.err(at, ErrorKind::Regex(e.to_string())))
    }

    /// Filters after a query (or a placeholder's name), each after a space.
    pub(super) fn filters(&self, c: &mut Cur) -> Res<Vec<Filter>> {
        let mut filters = Vec::new();
        loop {
            let mut d = *c;
            if self.skip_sp(&mut d) == 0 {
                return Ok(filters);
            }
            let at = d.i;
            let w = word_at(self.rest(d));
            let Some(kind) = self.filter(&mut d, w)? else { return Ok(filters) };
            filters.push(Filter { pos: self.pos(at), kind });
            *c = d;
        }
    }

    /// The filter named `w` at `c`, with its arguments; `None` when `w` names none.
    fn filter(&self, c: &mut Cur, w: &str) -> Res<Option<FilterKind>> {
        let simple = match w {
            "base64Decode" => Some(FilterKind::Base64Decode),
            "base64Encode" => Some(FilterKind::Base64Encode),
            "base64UrlSafeDecode" => Some(FilterKind::Base64UrlSafeDecode),
            "base64UrlSafeEncode" => Some(FilterKind::Base64UrlSafeEncode),
            "count" => Some(FilterKind::Count),
            "daysAfterNow" => Some(FilterKind::DaysAfterNow),
            "daysBeforeNow" => Some(FilterKind::DaysBeforeNow),
            "first" => Some(FilterKind::First),
            "htmlEscape" => Some(FilterKind::HtmlEscape),
            "htmlUnescape" => Some(FilterKind::HtmlUnescape),
            "last" => Some(FilterKind::Last),
            "location" => Some(FilterKind::Location),
            "toFloat" => Some(FilterKind::ToFloat),
            "toHex" => Some(FilterKind::ToHex),
            "toInt" => Some(FilterKind::ToInt),
            "toString" => Some(FilterKind::ToString),
            "urlDecode" => Some(FilterKind::UrlDecode),
            "urlEncode" => Some(FilterKind::UrlEncode),
            "utf8Decode" => Some(FilterKind::Utf8Decode),
            "utf8Encode" => Some(FilterKind::Utf8Encode),
            _ => None,
        };
        if let Some(k) = simple {
            c.i += w.len();
            return Ok(Some(k));
        }
        let one = |c: &mut Cur| -> Res<Template> {
            c.i += w.len();
            Ok(self.quoted_arg(c, w)?.0)
        };
        Ok(Some(match w {
            "decode" | "charsetDecode" => FilterKind::CharsetDecode(one(c)?),
            "format" | "dateFormat" => FilterKind::DateFormat(one(c)?),
            "jsonpath" => FilterKind::JsonPath(one(c)?),
            "split" => FilterKind::Split(one(c)?),
            "toDate" => FilterKind::ToDate(one(c)?),
            "urlQueryParam" => FilterKind::UrlQueryParam(one(c)?),
            "xpath" => FilterKind::XPath(one(c)?),
            "regex" => {
                c.i += w.len();
                FilterKind::Regex(self.regex_arg(c, w)?)
            }
            "replace" | "replaceRegex" => {
                c.i += w.len();
                let pattern = if w == "replace" {
                    RegexArg::Template(self.quoted_arg(c, w)?.0)
                } else {
                    self.regex_arg(c, w)?
                };
                let with = self.quoted_arg(c, w)?.0;
                match (w, pattern) {
                    ("replace", RegexArg::Template(t)) => FilterKind::Replace(t, with),
                    (_, p) => FilterKind::ReplaceRegex(p, with),
                }
            }
            "nth" => {
                c.i += w.len();
                if self.skip_sp(c) == 0 {
                    return Err(self.syntax(c.i, "expected an integer after `nth`"));
                }
                if self.rest(*c).starts_with("{{") {
                    let mut t = Template::default();
                    self.template_expr(c, &mut t, Escape::Plain)?;
                    FilterKind::Nth(IntArg::Var(t))
                } else {
                    let s = self.rest(*c);
                    let n = s.find(|ch: char| !(ch.is_ascii_digit() || ch == '-')).unwrap_or(s.len());
                    let i =
                        s[..n].parse().map_err(|_| self.syntax(c.i, "expected an integer after `nth`"))?;
                    c.i += n;
                    FilterKind::Nth(IntArg::Literal(i))
                }
            }
            _ => return Ok(None),
        }))
    }

    fn predicate(&self, c: &mut Cur) -> Res<PredicateFunc> {
        let at = c.i;
        let s = self.rest(*c);
        let symbols = s.find(|ch: char| !"=!<>".contains(ch)).unwrap_or(s.len());
        let op = match s.find([' ', '\t']) {
            _ if symbols > 0 => &s[..symbols],
            Some(n) => &s[..n],
            None => s,
        };
        c.i += op.len();
        let spaced = |c: &mut Cur, min: usize| -> Res<()> {
            if self.skip_sp(c) < min {
                return Err(self.syntax(c.i, format!("expected a value after `{op}`")));
            }
            Ok(())
        };
        let value = |c: &mut Cur, min: usize| -> Res<Expected> {
            spaced(c, min)?;
            self.value(c)
        };
        let ordered = |c: &mut Cur| -> Res<Expected> {
            let vat = c.i + self.rest(*c).len() - self.rest(*c).trim_start().len();
            let v = value(c, 0)?;
            if !matches!(
                v,
                Expected::Int(_)
                    | Expected::BigInt(_)
                    | Expected::Float(_)
                    | Expected::Str(_)
                    | Expected::Var(_)
            ) {
                return Err(self.syntax(vat, format!("`{op}` compares with a number or a string")));
            }
            Ok(v)
        };
        Ok(match op {
            "==" | "equals" => PredicateFunc::Equal(value(c, 0)?),
            "!=" | "notEquals" => PredicateFunc::NotEqual(value(c, 0)?),
            ">" | "greaterThan" => PredicateFunc::Greater(ordered(c)?),
            ">=" | "greaterThanOrEquals" => PredicateFunc::GreaterOrEqual(ordered(c)?),
            "<" | "lessThan" => PredicateFunc::Less(ordered(c)?),
            "<=" | "lessThanOrEquals" => PredicateFunc::LessOrEqual(ordered(c)?),
            "startsWith" | "endsWith" => {
                let vat = c.i + 1;
                let v = value(c, 1)?;
                if !matches!(v, Expected::Str(_) | Expected::Bytes(_)) {
                    return Err(self.syntax(vat, format!("`{op}` takes a string, `hex,` or `base64,`")));
                }
                if op == "startsWith" { PredicateFunc::StartsWith(v) } else { PredicateFunc::EndsWith(v) }
            }
            "contains" => PredicateFunc::Contains(value(c, 1)?),
            "includes" => PredicateFunc::Includes(value(c, 1)?),
            "matches" => {
                let vat = c.i + 1;
                let v = value(c, 1)?;
                match v {
                    Expected::Str(ref t) => {
                        if let Some(src) = t.as_literal() {
                            Regex::new(src).map_err(|e| self.err(vat, ErrorKind::Regex(e.to_string())))?;
                        }
                        PredicateFunc::Matches(v)
                    }
                    Expected::Regex(_) => PredicateFunc::Matches(v),
                    _ => return Err(self.syntax(vat, "`matches` takes a quoted string or a `/regex/`")),
                }
            }
            "exists" => PredicateFunc::Exists,
            "isEmpty" => PredicateFunc::IsEmpty,
            "isInteger" => PredicateFunc::IsInteger,
            "isFloat" => PredicateFunc::IsFloat,
            "isBoolean" => PredicateFunc::IsBoolean,
            "isString" => PredicateFunc::IsString,
            "isCollection" => PredicateFunc::IsCollection,
            "isDate" => PredicateFunc::IsDate,
            "isIsoDate" => PredicateFunc::IsIsoDate,
            "isList" => PredicateFunc::IsList,
            "isObject" => PredicateFunc::IsObject,
            "isNumber" => PredicateFunc::IsNumber,
            "isIpv4" => PredicateFunc::IsIpv4,
            "isIpv6" => PredicateFunc::IsIpv6,
            "isUuid" => PredicateFunc::IsUuid,
            "" => {
                return Err(self.syntax(
                    at,
                    "expected a predicate (==, !=, >, exists, isInteger, contains, matches, ...)",
                ));
            }
            _ => return Err(self.syntax(at, format!("unknown predicate `{op}`"))),
        })
    }

    /// A predicate's value.
    fn value(&self, c: &mut Cur) -> Res<Expected> {
        let s = self.rest(*c);
        let token = s.find([' ', '\t', '#']).map_or(s, |n| &s[..n]);
        let simple = match token {
            "null" => Some(Expected::Null),
            "true" => Some(Expected::Bool(true)),
            "false" => Some(Expected::Bool(false)),
            t if t.starts_with(|ch: char| ch.is_ascii_digit() || ch == '-') => Some(self.number(c.i, t)?),
            _ => None,
        };
        if let Some(v) = simple {
            c.i += token.len();
            return Ok(v);
        }
        if s.starts_with("hex,") || s.starts_with("base64,") || s.starts_with("file,") {
            let (_, t, end) = self.bytes_value(*c)?;
            if end > c.end {
                return Err(self.syntax(c.i, "a predicate's value is on its line"));
            }
            c.i = end;
            let bytes: Vec<u8> = t
                .parts
                .iter()
                .flat_map(|p| match p {
                    crate::template::Part::Bytes(b) => b.to_vec(),
                    crate::template::Part::Lit(l) => l.as_bytes().to_vec(),
                    _ => Vec::new(),
                })
                .collect();
            return Ok(Expected::Bytes(bytes.into()));
        }
        match self.peek(*c) {
            Some(b'"') => Ok(Expected::Str(self.quoted_string(c)?)),
            Some(b'`') if s.starts_with("```") => {
                if let Some(close) = s[3..].find("```") {
                    let mut inner = Cur { i: c.i + 3, end: c.i + 3 + close };
                    let t = self.raw_text(&mut inner, true)?;
                    c.i += close + 6;
                    return Ok(Expected::Str(t));
                }
                // Over several lines: the text from the next line to the closing ```.
                let hint = s[3..].trim_end();
                if !matches!(hint, "" | "json" | "xml" | "raw" | "graphql") {
                    return Err(self.syntax(c.i + 3, format!("unknown multiline string type `{hint}`")));
                }
                let start = c.end + self.text[c.end..].find('\n').map_or(self.text.len() - c.end, |n| n + 1);
                let close = self.text[start..]
                    .find("```")
                    .map(|n| start + n)
                    .ok_or_else(|| self.syntax(c.i, "a multiline string without its closing ```"))?;
                let mut inner = Cur { i: start, end: close };
                // A GraphQL string stands for the body Hurl would send: `{"query":...}`.
                let t = match hint {
                    "graphql" => {
                        // The GraphQL reader moves along the lines, as a body's does: on a copy.
                        let (file, text, line) = (self.file, self.text, self.line);
                        let mut p =
                            super::Parser { file, text, starts: self.starts.clone(), line, files: None, bound: Vec::new() };
                        p.graphql(start, close)?
                    }
                    _ => self.raw_text(&mut inner, hint != "raw")?,
                };
                let mut line_end = self.text[close..].find('\n').map_or(self.text.len(), |n| close + n);
                if line_end > close && self.text.as_bytes()[line_end - 1] == b'\r' {
                    line_end -= 1;
                }
                *c = Cur { i: close + 3, end: line_end };
                Ok(Expected::Str(t))
            }
            Some(b'`') => Ok(Expected::Str(self.backtick(c)?)),
            Some(b'/') => Ok(Expected::Regex(self.slash_regex(c)?)),
            Some(b'{') if s.starts_with("{{") => {
                let mut t = Template::default();
                self.template_expr(c, &mut t, Escape::Plain)?;
                Ok(Expected::Var(t))
            }
            _ => Err(self.syntax(
                c.i,
                "expected a value: null, true, false, a number, a string, hex, base64, file, a /regex/ or {{variable}}",
            )),
        }
    }

    /// A number as Hurl reads one: an integer (beyond 64 bits kept as its digits) or a
    /// float (digits on both sides of the point).
    fn number(&self, at: usize, t: &str) -> Res<Expected> {
        let bad = || self.syntax(at, format!("`{t}` is not a number"));
        let digits = t.strip_prefix('-').unwrap_or(t);
        let (int, frac) = digits.split_once('.').map_or((digits, None), |(a, b)| (a, Some(b)));
        if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) || int.len() > 1 && int.starts_with('0')
        {
            return Err(bad());
        }
        match frac {
            Some(f) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => {
                Ok(Expected::Float(t.parse().map_err(|_| bad())?))
            }
            Some(_) => Err(bad()),
            None => Ok(t.parse().map_or_else(|_| Expected::BigInt(t.into()), Expected::Int)),
        }
    }
}
