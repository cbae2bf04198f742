//! A scenario file's HTTP/1.1 request compiled once per user: the request as
//! the one writer ([`crate::wire::write_http1_request`]) puts it on the wire,
//! its literal runs gathered and its variables resolved to their slots
//! ([`CompiledTemplate`]), so a request costs a copy of each run and the values of its
//! holes. A body whose length never varies (literals and `{{newUuid}}`) has
//! its `Content-Length` written once, at compile time; any other body is
//! rendered straight after a framing written for the last body's length, whose
//! digits are then set to the length rendered: when the two lengths have as
//! many digits (nearly always), that is all, with no copy of the body; when
//! not, the body is moved and framed as the writer frames it.
//!
//! The values of the holes in the request line and headers are checked as they are
//! written ([`CompiledTemplate::render_head`]): one holding a CR, LF or NUL, or more than the head
//! may carry, refuses the request, as rendering the entry does. A file's own `Host` takes
//! the place of the one computed from the target.
//!
//! An entry is compiled when its header names have no variables, its path
//! cannot render empty and no section or option adds to the request (its
//! origin is known when the file loads, [`stackbench_hurl::Routes`]); the
//! others are written by rendering the entry ([`stackbench_hurl::Entry::render`])
//! and the writer, as before. The property test holds the two equal.
//!
//! A user whose cookie jar holds cookies gets them in a `Cookie` line after the
//! entry's own headers: the request is then written in two parts, its head
//! lines and its framing with the body, and the line between them; an empty
//! jar (every file whose server sets no cookie) writes the request in one piece
//! as before.

use std::cell::Cell;

use bytes::{BufMut, BytesMut};
use stackbench_hurl::{CompiledTemplate, Entry, SentLine, TemplatePart, Unwritable, Vars, unsafe_byte};

use crate::wire::{request_target, write_http1_framing, write_http1_host, write_http1_method};

/// One entry's request, compiled against one user's variables.
#[derive(Debug, Clone)]
pub(super) struct Program {
    /// The request up to its framing; with a body of one length, the whole request.
    head: CompiledTemplate,
    /// The request line and header lines alone, and (a body of one length) its framing and
    /// body: `head` in two, for a `Cookie` line between them.
    lines: CompiledTemplate,
    rest: CompiledTemplate,
    /// A literal path's request with a `Cookie` line: `lines`, the line, `rest` in one piece,
    /// built for the line whose number ([`stackbench_hurl::SentLine`]) is `cookie` (0: none
    /// yet) and kept while the jar sends that line. A line that lasts is the jar's whole
    /// answer while the jar's stamp is `stamp` (the user's host and transport do not change,
    /// nor a literal path): then the jar is not asked.
    cookied: CompiledTemplate,
    cookie: u64,
    stamp: u64,
    lasting: bool,
    /// A body whose length varies: rendered after the head, then framed.
    body: Option<CompiledTemplate>,
    method: Box<str>,
    /// Where the request's path lies in what it writes, when it is literal (else it is looked
    /// for in the request line written).
    path_at: Option<std::ops::Range<usize>>,
    keepalive: bool,
    /// The length of the last body rendered (its digits are the framing's guess).
    last_len: Cell<usize>,
}

/// What [`write_http1_framing`] writes before a body's length.
const LENGTH: &[u8] = b"Content-Length: ";

impl Program {
    /// `entry` for `authority`, the first `from` parts of its URL standing for `prefix` (its
    /// path where the request goes), its variables found in `vars`. `None` when it cannot be
    /// compiled (see above).
    pub(super) fn compile(
        entry: &Entry,
        vars: &mut Vars,
        (prefix, from): (&[u8], usize),
        authority: &str,
        keepalive: bool,
    ) -> Option<Program> {
        let mut head = CompiledTemplate::default();
        let mut line = Vec::new();
        write_http1_method(&mut line, &entry.method);
        head.push_bytes(&line);
        // The path: where the request goes, then the URL's parts after its origin.
        let mut path = CompiledTemplate::default();
        path.push_bytes(prefix);
        let adds = |o: &&stackbench_hurl::EntryOption| {
            matches!(o.name, "header" | "user" | "compressed" | "location" | "location-trusted")
        };
        if !entry.is_plain() || entry.options.iter().any(|o| adds(&o)) {
            return None;
        }
        for p in entry.url.parts.get(from..)? {
            match p {
                // A dot segment is taken out of the rendered URL (unless `path-as-is`).
                TemplatePart::Lit(l) if stackbench_hurl::has_dot_segment(l.as_bytes()) => return None,
                TemplatePart::Lit(l) => path.push_bytes(l.as_bytes()),
                TemplatePart::Var { name, escape, .. } => path.push_hole(vars.hole(name, *escape)),
                TemplatePart::Bytes(_) | TemplatePart::Expr { .. } => return None,
            }
        }
        if path.literal().is_empty() && !path.is_literal() {
            return None; // it may render empty, which the writer sends as `/`
        }
        if unsafe_byte(prefix).is_some() {
            return None; // the interpreter refuses it, for each request
        }
        let mut path_at = None;
        if path.is_literal() {
            let (start, target) = (head.literal().len(), request_target(path.literal()));
            path_at = Some(start..start + target.len());
            head.push_bytes(target);
        } else {
            head.push_compiled(&path);
        }
        line.clear();
        write_http1_host(&mut line, (!entry.own_host()).then_some(authority));
        head.push_bytes(&line);
        let (mut has_type, mut has_accept) = (false, false);
        for h in &entry.headers {
            let name = h.name.as_literal()?;
            has_type |= name.eq_ignore_ascii_case("content-type");
            has_accept |= name.eq_ignore_ascii_case("accept");
            head.push_bytes(name.as_bytes());
            head.push_bytes(b": ");
            head.push_template(&h.value, vars)?;
            head.push_bytes(b"\r\n");
        }
        head.push_bytes(entry.implied_headers(has_type));
        head.push_bytes(Entry::implied_accept(has_accept));
        let lines = head.clone();
        let mut rest = CompiledTemplate::default();
        let mut body = CompiledTemplate::default();
        if let Some(b) = &entry.body {
            body.push_template(&b.template, vars)?;
        }
        let body = match body.fixed_len() {
            Some(len) => {
                line.clear();
                write_http1_framing(&mut line, &entry.method, len, keepalive);
                rest.push_bytes(&line);
                rest.push_compiled(&body);
                head.push_compiled(&rest);
                None
            }
            None => Some(body),
        };
        let last_len = Cell::new(body.as_ref().map_or(0, |b| b.literal().len()));
        Some(Program {
            head,
            lines,
            rest,
            cookied: CompiledTemplate::default(),
            cookie: 0,
            stamp: 0,
            lasting: false,
            body,
            method: entry.method.clone(),
            path_at,
            keepalive,
            last_len,
        })
    }

    /// Appends the request to `out`, with the values of `vars`; `body` is a buffer kept
    /// between requests. `Err` when a variable it uses has no value, or one of its line or
    /// headers cannot carry ([`CompiledTemplate::render_head`]; then `out` may hold a part of it).
    pub(super) fn write(
        &self,
        vars: &mut Vars,
        body: &mut Vec<u8>,
        out: &mut BytesMut,
    ) -> Result<(), Unwritable> {
        self.head.render_head(vars, out)?;
        self.write_body(vars, body, out)
    }

    /// The request's path and where it lies in what it writes, when it is literal: then the
    /// `Cookie` line it carries is known before it is written ([`Program::write_cookied`]).
    pub(super) fn literal_path(&self) -> Option<(&[u8], std::ops::Range<usize>)> {
        // Nothing but the method's literal bytes comes before a literal path.
        let at = self.path_at.clone()?;
        Some((self.lines.literal().get(at.clone())?, at))
    }

    /// As [`Program::write`], with the `Cookie` line `cookie` gives ([`SentLine`]: the line the
    /// user's jar, whose stamp is `stamp`, sends on this request) after the entry's header
    /// lines: the request with the line is built once per line, then written as one piece;
    /// `cookie` is given the request's literal path ([`Program::literal_path`]; none: no line),
    /// and is not called while a line that lasts holds.
    pub(super) fn write_cookied<'s>(
        &mut self,
        stamp: u64,
        cookie: impl FnOnce(&[u8]) -> Option<SentLine<'s>>,
        vars: &mut Vars,
        body: &mut Vec<u8>,
        out: &mut BytesMut,
    ) -> Result<(), Unwritable> {
        if !(self.lasting && self.stamp == stamp) {
            let Some(line) = self.literal_path().and_then(|(path, _)| cookie(path)) else {
                self.lasting = false;
                return self.write(vars, body, out);
            };
            if self.cookie != line.number {
                self.cookied.clear();
                self.cookied.push_compiled(&self.lines);
                self.cookied.push_bytes(line.text);
                self.cookied.push_compiled(&self.rest);
                self.cookie = line.number;
            }
            (self.stamp, self.lasting) = (stamp, line.lasting);
        }
        self.cookied.render_head(vars, out)?;
        self.write_body(vars, body, out)
    }

    /// As [`Program::write`], with the line `cookie` writes after the entry's header lines
    /// (given where the request's path lies in `out`).
    pub(super) fn write_with(
        &self,
        vars: &mut Vars,
        body: &mut Vec<u8>,
        out: &mut BytesMut,
        cookie: impl FnOnce(&mut BytesMut, std::ops::Range<usize>),
    ) -> Result<(), Unwritable> {
        let at = out.len();
        self.lines.render_head(vars, out)?;
        let path = self.path_at.clone().unwrap_or_else(|| crate::flow::request_path(&out[at..]));
        cookie(out, at + path.start..at + path.end);
        self.rest.render_head(vars, out)?;
        self.write_body(vars, body, out)
    }

    /// The body whose length varies, rendered and framed after the head (a body of one
    /// length is in the head: nothing to call).
    #[inline]
    fn write_body(&self, vars: &mut Vars, body: &mut Vec<u8>, out: &mut BytesMut) -> Result<(), Unwritable> {
        match &self.body {
            None => Ok(()),
            Some(b) => self.write_varying(b, vars, body, out),
        }
    }

    /// [`Program::write_body`] of a body whose length varies.
    #[inline(never)]
    fn write_varying(
        &self,
        b: &CompiledTemplate,
        vars: &mut Vars,
        body: &mut Vec<u8>,
        out: &mut BytesMut,
    ) -> Result<(), Unwritable> {
        let (guess, at) = (self.last_len.get(), out.len());
        write_http1_framing(out, &self.method, guess, self.keepalive);
        let framed = out.len();
        b.render(vars, out).ok_or(Unwritable::NoValue)?;
        let len = out.len() - framed;
        self.last_len.set(len);
        if len != 0 && guess != 0 && len.ilog10() == guess.ilog10() {
            // Both framings write a `Content-Length` of as many digits: only those differ.
            debug_assert!(out[at..].starts_with(LENGTH));
            let (mut digits, place) = (itoa::Buffer::new(), at + LENGTH.len());
            let digits = digits.format(len).as_bytes();
            out[place..place + digits.len()].copy_from_slice(digits);
            return Ok(());
        }
        body.clear();
        body.extend_from_slice(&out[framed..]);
        out.truncate(at);
        write_http1_framing(out, &self.method, len, self.keepalive);
        out.put_slice(body);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use stackbench_hurl::{Body, BodyKind, Escape, Header, Kind, Pos, Request, Template};

    use super::*;
    use crate::wire::write_http1_request;

    const NAMES: [&str; 4] = ["a", "b", "unset", "newUuid"];

    /// A template from literal pieces and references to [`NAMES`].
    fn template(parts: &[(String, Option<usize>)], escape: Escape) -> Template {
        let mut t = Template::default();
        for (lit, var) in parts {
            match var {
                None => t.push_str(lit),
                Some(v) => t.push_var(NAMES[*v], escape, Pos::default()),
            }
        }
        t
    }

    fn parts() -> impl Strategy<Value = Vec<(String, Option<usize>)>> {
        let part = prop_oneof![
            "[a-z/é\" ]{0,4}".prop_map(|s| (s, None)),
            (0..4usize).prop_map(|v| (String::new(), Some(v))),
        ];
        proptest::collection::vec(part, 0..4)
    }

    proptest! {
        /// A compiled request is what rendering the entry and the writer put on the wire,
        /// from the same random source; it fails where rendering fails, and for the same
        /// reason (a value without, or holding a CR, LF or NUL in the URL or a header).
        #[test]
        fn writes_what_the_interpreter_writes(
            method in prop_oneof![Just("GET"), Just("POST"), Just("DELETE")],
            url in parts(),
            headers in proptest::collection::vec(("[A-Za-z-]{1,12}", parts()), 0..3),
            body in proptest::option::of((any::<bool>(), parts())),
            // No `@`: one in a URL's authority is credentials, which the rendering takes out
            // of the URL (as curl does) and a target's authority never has. CR, LF and NUL:
            // both paths refuse them alike.
            values in proptest::collection::vec(("[ -?A-~é\r\n\x00]{0,5}", prop_oneof![Just(Kind::String), Just(Kind::Integer)]), 2),
            prefix in prop_oneof![Just(""), Just("/api")],
            keepalive in any::<bool>(),
            seed in any::<u64>(),
            guess in proptest::option::of(prop_oneof![Just(0usize), 1..20usize, 95..105usize, 1000..1001usize]),
            cookie in proptest::option::of("[a-z=; ]{1,8}"),
        ) {
            let base = format!("http://h:1{prefix}");
            let mut url_t = Template::default();
            url_t.push_var("base_url", Escape::Plain, Pos::default());
            for p in &template(&url, Escape::Plain).parts {
                match p {
                    TemplatePart::Lit(l) => url_t.push_str(l),
                    TemplatePart::Var { name, escape, pos } => url_t.push_var(name, *escape, *pos),
                    p => url_t.parts.push(p.clone()),
                }
            }
            let mut entry = Entry::new(Pos::default(), method, url_t);
            entry.headers = headers.iter().map(|(n, v)| Header { pos: Pos::default(), name: Template::literal(n), value: template(v, Escape::Plain) }).collect();
            entry.body = body.as_ref().map(|(json, b)| Body {
                kind: if *json { BodyKind::Json } else { BodyKind::Raw },
                template: template(b, if *json { Escape::JsonValue } else { Escape::Plain }),
            });
            let mut vars = Vars::new(seed);
            vars.set("base_url", &base, Kind::String);
            for (name, (text, kind)) in NAMES.iter().zip(&values) {
                vars.set(name, text, *kind);
            }
            let origin = "http://h:1".len();
            let host = (!entry.own_host()).then_some("h:1");
            let program = Program::compile(&entry, &mut vars, (prefix.as_bytes(), 1), "h:1", keepalive);
            let (mut a, mut b) = (vars.clone(), vars.clone());
            let mut req = Request::default();
            let mut want = Vec::new();
            let rendered = entry.render(&mut a, &mut req);
            if rendered.is_ok() {
                write_http1_request(&mut want, method, host, &req.url[origin..], &req.headers, &req.body, keepalive);
            }
            let Some(program) = program else {
                // Only a path of variables alone is left to the interpreter here.
                prop_assert!(prefix.is_empty() && url.iter().all(|(l, _)| l.is_empty()) && url.iter().any(|(_, v)| v.is_some()));
                return Ok(());
            };
            let mut got = BytesMut::new();
            let written = program.write(&mut b, &mut Vec::new(), &mut got);
            prop_assert_eq!(written.as_ref().err(), rendered.as_ref().err().map(|e| &e.why));
            if written.is_ok() {
                prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
                prop_assert_eq!(a.rng.0, b.rng.0);
                // The path's place kept from compiling holds the path the interpreter wrote.
                if let Some(at) = &program.path_at {
                    let path = request_target(&req.url[origin..]);
                    prop_assert_eq!(String::from_utf8_lossy(&got[at.clone()]), String::from_utf8_lossy(path));
                }
            }
            // With a `Cookie` line: the one piece built for a line writes what the two parts
            // around it write; a line of another number is built anew; none, as no line.
            if let (Some(value), true) = (&cookie, program.literal_path().is_some()) {
                let mut program = program.clone();
                let lines = [format!("Cookie: {value}\r\n"), format!("Cookie: {value}; x=1\r\n")];
                // (the jar's stamp, the line's number, whether it lasts): a line that lasts is
                // the line while the stamp holds; one that does not may change at any request.
                let steps = [
                    (5, 1, true),
                    (5, 1, true),
                    (6, 2, false),
                    (6, 2, false),
                    (6, 3, false),
                    (6, 3, true),
                    (6, 3, true),
                    (7, 2, true),
                ];
                for (stamp, number, lasting) in steps {
                    let (mut c, mut d) = (vars.clone(), vars.clone());
                    let mut want = BytesMut::new();
                    let line = lines[usize::from(number == 2)].as_bytes();
                    let w = program.write_with(&mut c, &mut Vec::new(), &mut want, |out, _| out.extend_from_slice(line));
                    let mut got = BytesMut::new();
                    let sent = SentLine { text: line, number, lasting };
                    let g = program.write_cookied(stamp, |_| Some(sent), &mut d, &mut Vec::new(), &mut got);
                    prop_assert_eq!(g.as_ref().err(), w.as_ref().err());
                    if g.is_ok() {
                        prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
                    }
                }
                let (mut c, mut d) = (vars.clone(), vars.clone());
                let (mut want, mut got) = (BytesMut::new(), BytesMut::new());
                let w = program.write(&mut c, &mut Vec::new(), &mut want);
                let g = program.write_cookied(8, |_| None, &mut d, &mut Vec::new(), &mut got);
                prop_assert_eq!(g.as_ref().err(), w.as_ref().err());
                prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
                // A literal path is the one the request line holds, where it says.
                if let (Some((path, at)), true) = (program.literal_path(), w.is_ok()) {
                    prop_assert_eq!(path, &want[at]);
                    prop_assert_eq!(path, request_target(&req.url[origin..]));
                }
            }
            // Again, after a body of another length (the framing's guess is then wrong).
            if let Some(guess) = guess {
                program.last_len.set(guess);
                let (mut c, mut d) = (vars.clone(), vars.clone());
                let mut want = Vec::new();
                if entry.render(&mut c, &mut req).is_ok() {
                    write_http1_request(&mut want, method, host, &req.url[origin..], &req.headers, &req.body, keepalive);
                }
                let mut got = BytesMut::from(&b"x"[..]);
                if program.write(&mut d, &mut Vec::new(), &mut got).is_ok() {
                    prop_assert_eq!(String::from_utf8_lossy(&got[1..]), String::from_utf8_lossy(&want));
                }
            }
        }
    }
}
