//! The response part of an entry: the status line (`HTTP 200`, `HTTP/1.1 200`,
//! `HTTP/2 *`), header lines (each an assert that one of the answer's values of
//! that header is the one written), `[Captures]` and `[Asserts]`, and a body
//! (an implicit assert that the answer's body is the one written).

use super::{Cur, Kind, Parser, Res};
use crate::model::{
    Assert, AssertKind, BodyKind, Expected, Predicate, PredicateFunc, Query, Response, Version,
};

impl Parser<'_> {
    pub(super) fn response(&mut self) -> Res<Response> {
        let (_, mut c) = self.kind();
        let pos = self.pos(c.i);
        c.i += 4;
        let version = if self.peek(c) == Some(b'/') {
            let v = self.rest(c).split([' ', '\t']).next().unwrap_or("");
            let version = match v {
                "/1.0" => Version::Http10,
                "/1.1" => Version::Http11,
                "/2" => Version::Http2,
                "/3" => Version::Http3,
                _ => {
                    return Err(self
                        .syntax(c.i, "the version is `HTTP/1.0`, `HTTP/1.1`, `HTTP/2`, `HTTP/3` or `HTTP`"));
                }
            };
            c.i += v.len();
            version
        } else {
            Version::Any
        };
        if self.skip_sp(&mut c) == 0 {
            return Err(self.syntax(c.i, "expected a space and a status after the version"));
        }
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
        let mut r = Response { pos, version, status, captures: Vec::new(), asserts: Vec::new() };
        let mut section: Option<&str> = None;
        let mut seen: Vec<&str> = Vec::new();
        let mut body = false;
        loop {
            self.skip_blank();
            if self.eof() {
                return Ok(r);
            }
            let (kind, mut c) = self.kind();
            match (kind, section) {
                (Kind::Section(name @ ("Captures" | "Asserts")), _) if !body => {
                    if seen.contains(&name) {
                        return Err(self.syntax(c.i, format!("a second [{name}] section")));
                    }
                    seen.push(name);
                    section = Some(name);
                    c.i += name.len() + 2;
                    self.end_of_line(c)?;
                }
                (Kind::Section(name), _) if !body => {
                    return Err(self.syntax(
                        c.i,
                        format!("[{name}] is not a response section (they are [Captures] and [Asserts])"),
                    ));
                }
                (Kind::Method | Kind::Http, _) => return Ok(r),
                (Kind::Body, _) if !body => {
                    body = true;
                    let a = self.body_assert(c)?;
                    r.asserts.push(a);
                    continue;
                }
                (Kind::KeyValue, None) if !body => {
                    r.asserts.push(self.header_assert(c)?);
                }
                (_, Some("Captures")) if !body => r.captures.push(self.capture(c)?),
                (_, Some(_)) if !body => {
                    let (a, end) = self.assert(c)?;
                    r.asserts.push(a);
                    self.line = self.starts.partition_point(|&s| s <= end) - 1;
                }
                _ => {
                    return Err(self.syntax(
                        c.i,
                        "expected a header, [Captures], [Asserts], a body or the next request",
                    ));
                }
            }
            self.line += 1;
        }
    }

    /// A header line under the status line: one of the answer's values of that header is it.
    fn header_assert(&self, mut c: Cur) -> Res<crate::model::Assert> {
        let at = c.i;
        let h = self.header(&mut c)?;
        let source = self.rest(Cur { i: at, end: self.cur().end }).trim_end().into();
        Ok(Assert {
            pos: self.pos(at),
            source,
            kind: AssertKind::Header,
            query: Query::Header(h.name),
            filters: Vec::new(),
            predicate: Predicate { not: false, func: PredicateFunc::Equal(Expected::Str(h.value)) },
        })
    }

    /// The body under the status line: the answer's body is it (as text, or as bytes for
    /// `hex,`, `base64,` and a `file,` that is not text).
    fn body_assert(&mut self, c: Cur) -> Res<Assert> {
        let pos = self.pos(c.i);
        let first = self.rest(c).trim_end();
        let source = match first.char_indices().nth(40) {
            Some((cut, _)) => format!("{}...", &first[..cut]),
            None => first.to_owned(),
        };
        let body = self.body(c)?;
        let (query, expected) = match body.kind {
            BodyKind::Bytes => {
                let bytes = match body.template.parts.first() {
                    Some(crate::template::Part::Bytes(b)) => b.clone(),
                    _ => Box::default(),
                };
                (Query::Bytes, Expected::Bytes(bytes))
            }
            _ => (Query::Body, Expected::Str(body.template)),
        };
        Ok(Assert {
            pos,
            source: source.into(),
            kind: AssertKind::Body,
            query,
            filters: Vec::new(),
            predicate: Predicate { not: false, func: PredicateFunc::Equal(expected) },
        })
    }
}
