//! A parser of Hurl's file format (hurl.dev, `docs/spec/grammar/hurl.grammar`
//! in Orange-OpenSource/hurl), written from the published grammar; see
//! docs/design.md for why not the `hurl_core` crate.
//!
//! The grammar is line-oriented: a request line, headers, request sections, a
//! body; then an optional `HTTP <status>` line with its own headers, sections
//! and body. The parser walks the file line by line (a JSON or XML body or a
//! multiline string may span lines) and builds the typed model of `model.rs`.
//! Every construct of Hurl 8's grammar is read into the model; what the engine
//! cannot do with one (an `[Options]` entry that needs a proxy, say) is refused
//! where the scenario is loaded, with its name and position, never skipped.
//!
//! One file per concern: [`body`] (request and response bodies), [`request`]
//! (request sections and `[Options]`), [`response`] (the status line and its
//! sections), [`query`] (queries, filters, predicates and their values).

use crate::error::{ErrorKind, ParseError, Pos};
use crate::model::{Entry, Header, HurlFile};
use crate::template::{Escape, Expr, ExprStart, Part, Template};

mod body;
pub(crate) use body::body_of;
mod query;
mod request;
mod response;

type Res<T> = Result<T, ParseError>;

/// Parses the text of a `.hurl` file; `file` names it in errors. A `file,name;`
/// body is refused: see [`parse_in`].
pub fn parse(file: &str, text: &str) -> Res<HurlFile> {
    parse_in(file, text, None)
}

/// As [`parse`], with the files a `file,name;` body is read from (beside the `.hurl`
/// file, or the TOML scenario for inline Hurl); `None` refuses such a body.
pub fn parse_in(file: &str, text: &str, files: Option<crate::files::Files<'_>>) -> Res<HurlFile> {
    let mut p = Parser::new(file, text);
    p.files = files;
    let mut entries = Vec::new();
    loop {
        p.skip_blank();
        if p.eof() {
            break;
        }
        entries.push(p.entry()?);
    }
    Ok(HurlFile { file: file.to_owned(), entries, disk: files.and_then(|f| f.disk()) })
}

/// What a line (without its leading spaces) starts.
#[derive(Debug, PartialEq, Eq)]
enum Kind<'a> {
    Section(&'a str),
    Http,
    Method,
    Body,
    KeyValue,
    Other,
}

struct Parser<'a> {
    file: &'a str,
    text: &'a str,
    /// Byte offset of each line's start.
    starts: Vec<usize>,
    /// The current line (index into `starts`).
    line: usize,
    /// Where `file,name;` bodies are read from, if anywhere.
    files: Option<crate::files::Files<'a>>,
    /// The variables set so far by `variable` options written out (`Some(value)`), or by
    /// a capture or an option with templates (`None`: known only once sent), last last:
    /// what a capture's name written with a template is read from.
    bound: Vec<(Box<str>, Option<Box<str>>)>,
}

/// A position within one line: `i` moves, `end` is the end of the line's content.
#[derive(Clone, Copy)]
struct Cur {
    i: usize,
    end: usize,
}

impl<'a> Parser<'a> {
    fn new(file: &'a str, text: &'a str) -> Parser<'a> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        if starts.last() == Some(&text.len()) && !text.is_empty() {
            starts.pop();
        }
        Parser { file, text, starts, line: 0, files: None, bound: Vec::new() }
    }

    fn eof(&self) -> bool {
        self.line >= self.starts.len() || self.starts[self.line] >= self.text.len()
    }

    /// The current line's content, without its `\n` or `\r\n`.
    fn cur(&self) -> Cur {
        let start = self.starts[self.line];
        let mut end = self.text[start..].find('\n').map_or(self.text.len(), |n| start + n);
        if end > start && self.text.as_bytes()[end - 1] == b'\r' {
            end -= 1;
        }
        Cur { i: start, end }
    }

    fn pos(&self, at: usize) -> Pos {
        let line = self.starts.partition_point(|&s| s <= at).max(1) - 1;
        // An offset inside a character (an error's place counted in bytes by another
        // parser) names the character it falls in.
        let at = self.text.floor_char_boundary(at.min(self.text.len())).max(self.starts[line]);
        let col = self.text[self.starts[line]..at].chars().count() + 1;
        Pos { line: line as u32 + 1, col: col as u32 }
    }

    fn err(&self, at: usize, kind: ErrorKind) -> ParseError {
        ParseError { file: self.file.to_owned(), pos: self.pos(at), kind }
    }

    fn syntax(&self, at: usize, msg: impl Into<String>) -> ParseError {
        self.err(at, ErrorKind::Syntax(msg.into()))
    }

    fn unsupported(&self, at: usize, what: impl Into<String>) -> ParseError {
        self.err(at, ErrorKind::Unsupported(what.into()))
    }

    fn rest(&self, c: Cur) -> &'a str {
        &self.text[c.i..c.end]
    }

    fn peek(&self, c: Cur) -> Option<u8> {
        (c.i < c.end).then(|| self.text.as_bytes()[c.i])
    }

    fn skip_sp(&self, c: &mut Cur) -> usize {
        let from = c.i;
        while matches!(self.peek(*c), Some(b' ' | b'\t')) {
            c.i += 1;
        }
        c.i - from
    }

    /// Skips blank and comment-only lines.
    fn skip_blank(&mut self) {
        while !self.eof() {
            let mut c = self.cur();
            self.skip_sp(&mut c);
            if c.i < c.end && self.peek(c) != Some(b'#') {
                return;
            }
            self.line += 1;
        }
    }

    /// The rest of a line must be spaces and an optional comment.
    fn end_of_line(&self, mut c: Cur) -> Res<()> {
        self.skip_sp(&mut c);
        match self.peek(c) {
            None | Some(b'#') => Ok(()),
            _ => Err(self.syntax(c.i, format!("unexpected `{}`", self.rest(c)))),
        }
    }

    fn kind(&self) -> (Kind<'a>, Cur) {
        let mut c = self.cur();
        self.skip_sp(&mut c);
        let s = self.rest(c);
        let word = s.find(|ch: char| !ch.is_ascii_alphabetic()).map_or(s, |n| &s[..n]);
        let key = key_len(s);
        let kind = if s.starts_with("{{") && templated_key(s) {
            Kind::KeyValue
        } else if let Some(name) = section_name(s) {
            Kind::Section(name)
        } else if word == "HTTP" && matches!(s.as_bytes().get(4), Some(b' ' | b'\t' | b'/')) {
            Kind::Http
        } else if s.starts_with(['{', '[', '`', '"', '<'])
            || s.starts_with("base64,")
            || s.starts_with("hex,")
            || s.starts_with("file,")
            || is_json_scalar(s)
        {
            Kind::Body
        } else if s.starts_with("{{")
            || key > 0 && s[key..].trim_start_matches([' ', '\t']).starts_with(':')
            || key > 0
                && s[key..]
                    .trim_end()
                    .strip_prefix(';')
                    .is_some_and(|r| r.trim().is_empty() || r.trim_start().starts_with('#'))
        {
            Kind::KeyValue
        } else if !word.is_empty()
            && word.bytes().all(|b| b.is_ascii_uppercase())
            && matches!(s.as_bytes().get(word.len()), Some(b' ' | b'\t'))
        {
            Kind::Method
        } else {
            Kind::Other
        };
        (kind, c)
    }

    fn entry(&mut self) -> Res<Entry> {
        let (kind, mut c) = self.kind();
        if kind != Kind::Method {
            let what = if kind == Kind::Http {
                "an `HTTP` line without a request before it"
            } else {
                "expected a request line `METHOD URL`"
            };
            return Err(self.syntax(c.i, what));
        }
        let pos = self.pos(c.i);
        let m = self.rest(c).find([' ', '\t']).unwrap_or(0);
        let method = &self.rest(c)[..m];
        c.i += m;
        self.skip_sp(&mut c);
        let at = c.i;
        let url = self.value_string(&mut c)?;
        if url.parts.is_empty() {
            return Err(self.syntax(at, "the request line has no URL"));
        }
        self.line += 1;
        let mut entry = Entry::new(pos, method, url);
        let mut sections: Vec<&str> = Vec::new();
        loop {
            self.skip_blank();
            if self.eof() {
                return Ok(entry);
            }
            let (kind, mut c) = self.kind();
            match kind {
                Kind::KeyValue if entry.body.is_none() && sections.is_empty() => {
                    entry.headers.push(self.header(&mut c)?);
                    self.line += 1;
                }
                Kind::Section(name) if entry.body.is_none() => {
                    if matches!(name, "Captures" | "Asserts") {
                        return Err(
                            self.syntax(c.i, format!("[{name}] must follow the `HTTP <status>` line"))
                        );
                    }
                    let canonical = request::canonical(name)
                        .ok_or_else(|| self.syntax(c.i, format!("unknown section [{name}]")))?;
                    if sections.contains(&canonical) {
                        return Err(self.syntax(c.i, format!("a second [{name}] section")));
                    }
                    sections.push(canonical);
                    c.i += name.len() + 2;
                    self.end_of_line(c)?;
                    self.line += 1;
                    self.request_section(canonical, &mut entry)?;
                }
                Kind::Body if entry.body.is_none() => self.request_body(c, &mut entry)?,
                Kind::Http => {
                    self.bind_options(&entry);
                    let response = self.response()?;
                    self.bound.extend(response.captures.iter().map(|c| (c.name.clone(), None)));
                    entry.response = Some(response);
                    return Ok(entry);
                }
                Kind::Method => {
                    self.bind_options(&entry);
                    return Ok(entry);
                }
                _ => {
                    return Err(self.syntax(
                        c.i,
                        "expected a header, a section, a body, `HTTP <status>` or the next request",
                    ));
                }
            }
        }
    }

    /// Notes the variables `entry`'s `variable` options set (see `bound`).
    fn bind_options(&mut self, entry: &Entry) {
        for o in &entry.options {
            if let crate::model::OptionValue::Variable { name, text, .. } = &o.value {
                self.bound.push((name.clone(), text.as_literal().map(Into::into)));
            }
        }
    }

    /// `name: value` or `name;` (an empty value) at `c`.
    fn header(&self, c: &mut Cur) -> Res<Header> {
        let pos = self.pos(c.i);
        let name = self.key_string(c)?;
        let mut d = *c;
        self.skip_sp(&mut d);
        if self.peek(d) == Some(b';') {
            d.i += 1;
            self.end_of_line(d)?;
            *c = Cur { i: d.end, end: d.end };
            return Ok(Header { pos, name, value: Template::default() });
        }
        self.colon(c)?;
        let value = self.value_string(c)?;
        Ok(Header { pos, name, value })
    }

    fn colon(&self, c: &mut Cur) -> Res<()> {
        self.skip_sp(c);
        if self.peek(*c) != Some(b':') {
            return Err(self.syntax(c.i, "expected `:`"));
        }
        c.i += 1;
        self.skip_sp(c);
        Ok(())
    }

    /// `{{ expr }}` at `c` (which is at `{{`), appended to `t`: a variable or `newUuid` /
    /// `newDate` alone, or an expression (a function, or filters after the name).
    fn template_expr(&self, c: &mut Cur, t: &mut Template, escape: Escape) -> Res<()> {
        let at = c.i;
        c.i += 2;
        self.skip_sp(c);
        let start = c.i;
        let s = self.rest(*c);
        let n = s.find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '-')).unwrap_or(s.len());
        let name = &s[..n];
        if !is_var_name(name) {
            return Err(self.syntax(c.i, "expected a variable name after `{{`"));
        }
        c.i += n;
        let env = if name == "getEnv" {
            if self.skip_sp(c) == 0 {
                return Err(self.syntax(c.i, "`getEnv` takes the variable's name: `{{getEnv \"HOME\"}}`"));
            }
            let q = self.quoted_string(c)?;
            let v = q.as_literal().ok_or_else(|| self.unsupported(c.i, "a template in `getEnv`'s name"))?;
            Some(v.to_owned())
        } else {
            None
        };
        let filters = self.filters(c)?;
        self.skip_sp(c);
        if !self.rest(*c).starts_with("}}") {
            return Err(self.syntax(c.i, "expected `}}`"));
        }
        let source = self.text[start..c.i].trim_end().into();
        c.i += 2;
        let pos = self.pos(at);
        if env.is_none() && filters.is_empty() {
            t.push_var(name, escape, pos);
            return Ok(());
        }
        let start = match (name, env) {
            (_, Some(v)) => ExprStart::Env(v.into()),
            ("newUuid", _) => ExprStart::NewUuid,
            ("newDate", _) => ExprStart::NewDate,
            _ => ExprStart::Var(name.into()),
        };
        t.parts.push(Part::Expr { expr: Box::new(Expr { start, filters, source }), escape, pos });
        Ok(())
    }

    /// An escape after `\` (at `c`, which points past the backslash).
    fn escape(&self, c: &mut Cur, extra: &[u8], out: &mut String) -> Res<()> {
        let at = c.i - 1;
        let Some(b) = self.peek(*c) else {
            return Err(self.syntax(at, "a `\\` at the end of the line"));
        };
        c.i += 1;
        match b {
            b'\\' => out.push('\\'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let s = self.rest(*c);
                let close = s
                    .find('}')
                    .filter(|_| s.starts_with('{'))
                    .ok_or_else(|| self.syntax(at, "expected `\\u{hex}`"))?;
                let ch = u32::from_str_radix(&s[1..close], 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| self.syntax(at, "not a Unicode scalar value"))?;
                out.push(ch);
                c.i += close + 1;
            }
            b if extra.contains(&b) => out.push(b as char),
            _ => return Err(self.syntax(at, "unknown escape")),
        }
        Ok(())
    }

    /// Text up to the end of the line or a comment, trailing spaces trimmed.
    fn value_string(&self, c: &mut Cur) -> Res<Template> {
        self.string_until(c, |_| false, b"#", |s| s.trim_end_matches([' ', '\t']))
    }

    fn key_string(&self, c: &mut Cur) -> Res<Template> {
        let at = c.i;
        let t = self.string_until(
            c,
            |b| !(b.is_ascii_alphanumeric() || b"_-.[]@$\\".contains(&b) || b >= 0x80),
            b"#:",
            |s| s,
        )?;
        if t.parts.is_empty() {
            return Err(self.syntax(at, "expected a name"));
        }
        Ok(t)
    }

    fn quoted_string(&self, c: &mut Cur) -> Res<Template> {
        let at = c.i;
        if self.peek(*c) != Some(b'"') {
            return Err(self.syntax(at, "expected a quoted string"));
        }
        c.i += 1;
        let t = self.string_until(c, |b| b == b'"', b"\"", |s| s)?;
        if self.peek(*c) != Some(b'"') {
            return Err(self.syntax(at, "a quoted string without its closing `\"`"));
        }
        c.i += 1;
        Ok(t)
    }

    /// Reads templated text until `stop` (or the end of the line or an unescaped `#`
    /// for unquoted text); `trim` applies to the last literal piece.
    fn string_until(
        &self,
        c: &mut Cur,
        stop: impl Fn(u8) -> bool,
        escapes: &[u8],
        trim: impl Fn(&str) -> &str,
    ) -> Res<Template> {
        let mut t = Template::default();
        let mut lit = String::new();
        let unquoted = !escapes.contains(&b'"') && !escapes.contains(&b'`');
        while let Some(b) = self.peek(*c) {
            if self.rest(*c).starts_with("{{") {
                t.push_str(&lit);
                lit.clear();
                self.template_expr(c, &mut t, Escape::Plain)?;
            } else if stop(b) || (unquoted && b == b'#') {
                break;
            } else if b == b'\\' {
                c.i += 1;
                self.escape(c, escapes, &mut lit)?;
            } else {
                let ch = self.rest(*c).chars().next().expect("not at the end");
                lit.push(ch);
                c.i += ch.len_utf8();
            }
        }
        t.push_str(trim(&lit));
        Ok(t)
    }
}

/// `[Name]` at the start of `s`: a section's name (letters and digits, as Hurl reads one).
fn section_name(s: &str) -> Option<&str> {
    let r = s.strip_prefix('[')?;
    let w = word_at(r);
    (r[w.len()..].starts_with(']') && !w.is_empty() && !matches!(w, "true" | "false" | "null")).then_some(w)
}

/// A line that is a JSON scalar alone: a number, `true`, `false` or `null` (a body).
fn is_json_scalar(s: &str) -> bool {
    let token = s.split([' ', '\t', '#']).next().unwrap_or("");
    matches!(token, "true" | "false" | "null")
        || token.starts_with(|c: char| c.is_ascii_digit() || c == '-')
            && serde_json::from_str::<serde_json::Value>(token).is_ok()
}

fn word_at(s: &str) -> &str {
    let n = s.find(|ch: char| !ch.is_ascii_alphanumeric()).unwrap_or(s.len());
    &s[..n]
}

/// The length of a key-string's plain text at the start of `s` (escapes included).
fn key_len(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if i + 1 < b.len() && b[i + 1].is_ascii() => i += 2,
            c if c.is_ascii_alphanumeric() || b"_-.[]@$".contains(&c) || c >= 0x80 => i += 1,
            _ => break,
        }
    }
    i
}

/// Whether `s` (which starts with `{{`) is a key with placeholders followed by `:` or `;`
/// (`{{name}}: value`), not a JSON body that starts with one.
fn templated_key(s: &str) -> bool {
    let mut rest = s;
    loop {
        if let Some(r) = rest.strip_prefix("{{") {
            let Some(close) = r.find("}}") else { return false };
            rest = &r[close + 2..];
        } else {
            let n = key_len(rest);
            if n == 0 {
                break;
            }
            rest = &rest[n..];
        }
    }
    let rest = rest.trim_start_matches([' ', '\t']);
    rest.starts_with(':') || rest.starts_with(';')
}

/// Hurl's variable names: a letter, then letters, digits, `_` or `-`.
pub fn is_var_name(s: &str) -> bool {
    s.starts_with(|ch: char| ch.is_ascii_alphabetic())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
pub(crate) mod tests;
