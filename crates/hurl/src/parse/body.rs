//! Request bodies: JSON (which may span lines, with templates as values or
//! inside strings), multiline strings (```` ``` ````) and one-line strings
//! (`` ` ``), and `file,name;` (a text file read when the scenario loads, from
//! the directory of the file the Hurl is written in). Bodies of bytes
//! (`base64,`, `hex,`), XML and GraphQL are refused.

use super::{Cur, Parser, Res};
use crate::model::{Body, BodyKind};
use crate::template::{Escape, Part, Template};

impl Parser<'_> {
    /// The body starting at `c` on the current line; leaves the parser on the line after it.
    pub(super) fn body(&mut self, c: Cur) -> Res<Body> {
        let s = self.rest(c);
        if s.starts_with('{') || s.starts_with('[') {
            return self.json(c);
        }
        if s.starts_with("```") {
            return self.multiline(c);
        }
        if s.starts_with('`') {
            let mut c = c;
            c.i += 1;
            let at = c.i - 1;
            let t = self.string_until(&mut c, |b| b == b'`', b"`#", |s| s)?;
            if self.peek(c) != Some(b'`') {
                return Err(self.syntax(at, "a `` ` `` string without its closing `` ` ``"));
            }
            c.i += 1;
            self.end_of_line(c)?;
            self.line += 1;
            return Ok(Body { kind: BodyKind::Raw, template: t });
        }
        if s.starts_with("file,") {
            return self.file_body(c);
        }
        let what = if s.starts_with('<') {
            "an XML body".to_owned()
        } else if s.starts_with('"') {
            "a JSON string as the whole body".to_owned()
        } else {
            format!("a `{}` body", &s[..s.find(',').unwrap_or(s.len())])
        };
        Err(self.unsupported(c.i, what))
    }

    /// `file,name;`: the file's text, read now, as a raw body (no templates in it or its
    /// name; a `Content-Type` is the entry's to give).
    fn file_body(&mut self, c: Cur) -> Res<Body> {
        let Some(files) = self.files else {
            return Err(self.unsupported(c.i, "a `file` body outside a scenario file"));
        };
        let at = c.i + "file,".len();
        let rest = &self.text[at..c.end];
        let Some(semi) = rest.find(';') else {
            return Err(self.syntax(c.i, "a `file,` body ends with `;` (`file,data.json;`)"));
        };
        let name = rest[..semi].trim_matches([' ', '\t']);
        if name.is_empty() {
            return Err(self.syntax(at, "a `file,` body names a file (`file,data.json;`)"));
        }
        if name.contains("{{") {
            return Err(self.unsupported(at, "a template in a `file` body's name"));
        }
        let (_, text) = files.read(name).map_err(|e| {
            let why = if e.kind() == std::io::ErrorKind::InvalidData {
                "it is not UTF-8 text".to_owned()
            } else {
                e.to_string()
            };
            let path = files.dir().join(name);
            self.err(at, crate::error::ErrorKind::Io(format!("cannot read {}: {why}", path.display())))
        })?;
        self.end_of_line(Cur { i: at + semi + 1, end: c.end })?;
        self.line += 1;
        Ok(Body { kind: BodyKind::Raw, template: Template::literal(&text) })
    }

    /// A JSON value, scanned to its closing bracket: templates inside strings are
    /// escaped as string content, others stand for a JSON value. The text is
    /// checked as JSON (templates replaced by placeholders) so a typo is
    /// refused at load time.
    fn json(&mut self, c: Cur) -> Res<Body> {
        let start = c.i;
        let b = self.text.as_bytes();
        let mut t = Template::default();
        let mut probe = String::new();
        let (mut depth, mut in_str, mut i, mut lit) = (0usize, false, start, start);
        let end = loop {
            if i >= b.len() {
                return Err(self.syntax(start, "a JSON body without its closing bracket"));
            }
            if b[i] == b'{' && b.get(i + 1) == Some(&b'{') {
                t.push_str(&self.text[lit..i]);
                probe.push_str(&self.text[lit..i]);
                self.line = self.starts.partition_point(|&s| s <= i) - 1;
                let mut cur = Cur { i, end: self.cur().end };
                let escape = if in_str { Escape::JsonString } else { Escape::JsonValue };
                self.template_expr(&mut cur, &mut t, escape)?;
                probe.push_str(if in_str { "x" } else { "0" });
                i = cur.i;
                lit = i;
                continue;
            }
            match (in_str, b[i]) {
                (true, b'\\') => i += 1,
                (_, b'"') => in_str = !in_str,
                (false, b'{' | b'[') => depth += 1,
                (false, b'}' | b']') => {
                    depth -= 1;
                    if depth == 0 {
                        break i + 1;
                    }
                }
                _ => {}
            }
            i += 1;
        };
        t.push_str(&self.text[lit..end]);
        probe.push_str(&self.text[lit..end]);
        if let Err(e) = serde_json::from_str::<serde_json::Value>(&probe) {
            let line = self.pos(start).line as usize + e.line() - 1;
            let col = if e.line() == 1 { self.pos(start).col as usize + e.column() - 1 } else { e.column() };
            let at = self.starts.get(line - 1).map_or(start, |s| s + col.saturating_sub(1));
            let msg = e.to_string();
            let msg = msg.split(" at line").next().unwrap_or(&msg);
            return Err(self.syntax(at.min(self.text.len()), format!("invalid JSON body: {msg}")));
        }
        self.line = self.starts.partition_point(|&s| s < end) - 1;
        let c = Cur { i: end, end: self.cur().end };
        self.end_of_line(c)?;
        self.line += 1;
        Ok(Body { kind: BodyKind::Json, template: t })
    }

    /// ```` ```type ```` ... ```` ``` ````: the lines between, as written (templates expanded as they are).
    fn multiline(&mut self, mut c: Cur) -> Res<Body> {
        let at = c.i;
        c.i += 3;
        let rest = self.rest(c);
        if let Some(close) = rest.find("```") {
            // One line: ```text```
            let mut inner = Cur { i: c.i, end: c.i + close };
            let t = self.raw_text(&mut inner)?;
            c.i += close + 3;
            self.end_of_line(c)?;
            self.line += 1;
            return Ok(Body { kind: BodyKind::Raw, template: t });
        }
        let ty = rest.trim_end();
        let kind = match ty {
            "" | "xml" => BodyKind::Raw,
            "json" => BodyKind::Json,
            "graphql" | "hex" | "base64" => {
                return Err(self.unsupported(c.i, format!("a multiline ```{ty} body")));
            }
            _ => return Err(self.syntax(c.i, format!("unknown multiline string type `{ty}`"))),
        };
        self.line += 1;
        let mut t = Template::default();
        loop {
            if self.eof() {
                return Err(self.syntax(at, "a multiline string without its closing ```"));
            }
            let mut line = self.cur();
            let trimmed = self.rest(line).trim();
            if trimmed == "```" {
                self.line += 1;
                return Ok(Body { kind, template: t });
            }
            let next = self.starts.get(self.line + 1).copied().unwrap_or(self.text.len());
            line.end = next;
            let piece = self.raw_text(&mut line)?;
            for p in piece.parts {
                match p {
                    Part::Lit(l) => t.push_str(&l),
                    v @ Part::Var { .. } => t.parts.push(v),
                }
            }
            self.line += 1;
        }
    }

    /// Text with templates and no escapes, up to `c.end`.
    fn raw_text(&self, c: &mut Cur) -> Res<Template> {
        let mut t = Template::default();
        let mut lit = c.i;
        while c.i < c.end {
            if self.rest(*c).starts_with("{{") {
                t.push_str(&self.text[lit..c.i]);
                self.template_expr(c, &mut t, Escape::Plain)?;
                lit = c.i;
            } else {
                c.i += self.rest(*c).chars().next().map_or(1, char::len_utf8);
            }
        }
        t.push_str(&self.text[lit..c.end]);
        Ok(t)
    }
}
