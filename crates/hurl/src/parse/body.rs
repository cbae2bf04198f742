//! Bodies, of a request or of an implicit body assert: JSON of any value (which
//! may span lines, with templates as values or inside strings), XML, multiline
//! strings (```` ``` ````, ```` ```json ````, ```` ```xml ````, ```` ```graphql ````,
//! ```` ```raw ````), one-line strings (`` ` ``), and bytes: `hex,`, `base64,` and
//! `file,name;` (read when the scenario loads, from the directory of the file
//! the Hurl is written in; a request's is read again when `verify` sends it).

use base64::Engine as _;

use super::{Cur, Parser, Res};
use crate::model::{Body, BodyKind, Entry, FileBody};
use crate::template::{Escape, Part, Template};

impl Parser<'_> {
    /// The body starting at `c` on the current line; leaves the parser on the line after it.
    pub(super) fn body(&mut self, c: Cur) -> Res<Body> {
        let s = self.rest(c);
        if s.starts_with("```") {
            return self.multiline(c);
        }
        if s.starts_with('`') {
            let mut c = c;
            let t = self.backtick(&mut c)?;
            self.end_of_line(c)?;
            self.line += 1;
            return Ok(Body { kind: BodyKind::Raw, template: t });
        }
        if s.starts_with('<') {
            return self.xml(c);
        }
        if s.starts_with("file,") || s.starts_with("hex,") || s.starts_with("base64,") {
            let (kind, template, end) = self.bytes_value(c)?;
            self.line = self.starts.partition_point(|&s| s < end) - 1;
            self.end_of_line(Cur { i: end, end: self.cur().end })?;
            self.line += 1;
            return Ok(Body { kind, template });
        }
        self.json(c)
    }

    /// A `` `string` `` at `c` (escapes and templates as Hurl reads them); `c` moves past it.
    pub(super) fn backtick(&self, c: &mut Cur) -> Res<Template> {
        let at = c.i;
        c.i += 1;
        let t = self.string_until(c, |b| b == b'`', b"`#", |s| s)?;
        if self.peek(*c) != Some(b'`') {
            return Err(self.syntax(at, "a `` ` `` string without its closing `` ` ``"));
        }
        c.i += 1;
        Ok(t)
    }

    /// `hex,...;`, `base64,...;` (which may span lines) or `file,name;` at `c` (read now):
    /// the bytes as a template (a `file,` of UTF-8 text stays text), and the offset past the `;`.
    pub(super) fn bytes_value(&self, c: Cur) -> Res<(BodyKind, Template, usize)> {
        let s = self.rest(c);
        let (prefix, at) = if s.starts_with("hex,") {
            ("hex", c.i + 4)
        } else if s.starts_with("base64,") {
            ("base64", c.i + 7)
        } else {
            let at = c.i + "file,".len();
            let (name, end) = self.file_name(c, at)?;
            let name =
                name.as_literal().ok_or_else(|| self.unsupported(at, "a template in a `file,` name here"))?;
            let body = body_of(self.read_file(at, name)?);
            return Ok((body.kind, body.template, end));
        };
        let semi = self.text[at..]
            .find(';')
            .map(|n| at + n)
            .filter(|&e| prefix == "base64" || e <= c.end)
            .ok_or_else(|| self.syntax(c.i, format!("a `{prefix},` value ends with `;`")))?;
        let inner = &self.text[at..semi];
        let bytes = if prefix == "hex" {
            let digits: String = inner.chars().filter(|ch| !ch.is_whitespace()).collect();
            if !digits.len().is_multiple_of(2) || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(self.syntax(at, "`hex,` takes pairs of hex digits"));
            }
            (0..digits.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).expect("hex"))
                .collect()
        } else {
            let text: String = inner.chars().filter(|ch| !ch.is_whitespace()).collect();
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| self.syntax(at, format!("`base64,` is not base64: {e}")))?
        };
        let mut t = Template::default();
        t.push_bytes(&bytes);
        Ok((BodyKind::Bytes, t, semi + 1))
    }

    /// The name of `file,name;` (`at` is past `file,`; escapes and templates as Hurl reads
    /// them: `file,with\ space;`, `file,{{name}};`) and the offset past its `;`.
    pub(super) fn file_name(&self, c: Cur, at: usize) -> Res<(Template, usize)> {
        let mut n = Cur { i: at, end: c.end };
        self.skip_sp(&mut n);
        let name =
            self.string_until(&mut n, |b| b == b';', b"#; {}:", |s| s.trim_end_matches([' ', '\t']))?;
        if self.peek(n) != Some(b';') {
            return Err(self.syntax(c.i, "a `file,` value ends with `;` (`file,data.json;`)"));
        }
        if name.parts.is_empty() {
            return Err(self.syntax(at, "`file,` names a file (`file,data.json;`)"));
        }
        Ok((name, n.i + 1))
    }

    /// A request's body at `c`, set in `entry`; leaves the parser on the line after it. A
    /// `file,name;` body is read now when its name is written out; one that cannot be read
    /// yet (a file written by an earlier request) is refused by a load, read by `verify` when
    /// it sends the request, as Hurl reads it ([`crate::model::FileBody`]).
    pub(super) fn request_body(&mut self, c: Cur, entry: &mut Entry) -> Res<()> {
        if !self.rest(c).starts_with("file,") {
            entry.body = Some(self.body(c)?);
            return Ok(());
        }
        let at = c.i + "file,".len();
        let (name, end) = self.file_name(c, at)?;
        self.end_of_line(Cur { i: end, end: c.end })?;
        self.line += 1;
        let Some(files) = self.files else {
            return Err(self.unsupported(at, "a `file,` outside a scenario file"));
        };
        if files.disk().is_none() && name.as_literal().is_none() {
            return Err(self.unsupported(at, "a template in a `file,` name of an embedded file"));
        }
        let mut file = FileBody { pos: self.pos(at), name, unread: None };
        let mut body = Body { kind: BodyKind::Bytes, template: Template::default() };
        if let Some(name) = file.name.as_literal() {
            match self.read_file(at, name) {
                Ok(bytes) => body = body_of(bytes),
                Err(e) => file.unread = Some(e.kind.to_string()),
            }
        }
        entry.body = Some(body);
        entry.body_file = Some(Box::new(file));
        Ok(())
    }

    /// A JSON value (an object or array may span lines), scanned to its end: templates
    /// inside strings are escaped as string content, others stand for a JSON value. The
    /// text is checked as JSON (templates replaced by placeholders) so a typo is refused at
    /// load time.
    fn json(&mut self, c: Cur) -> Res<Body> {
        let (template, end) = self.json_at(c.i)?;
        self.line = self.starts.partition_point(|&s| s < end) - 1;
        let c = Cur { i: end, end: self.cur().end };
        self.end_of_line(c)?;
        self.line += 1;
        Ok(Body { kind: BodyKind::Json, template })
    }

    /// The JSON value starting at byte `start`: its template and the offset past it.
    pub(super) fn json_at(&mut self, start: usize) -> Res<(Template, usize)> {
        let b = self.text.as_bytes();
        let mut t = Template::default();
        let mut probe = String::new();
        let (mut depth, mut in_str, mut i, mut lit) = (0usize, false, start, start);
        let scalar = !matches!(b.get(start), Some(b'{' | b'['));
        let end = loop {
            if i >= b.len() || scalar && !in_str && b[i] == b'\n' {
                if scalar {
                    // An escape at the very end steps one past it.
                    break i.min(b.len());
                }
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
                (_, b'"') => {
                    in_str = !in_str;
                    if scalar && !in_str {
                        break i + 1;
                    }
                }
                (false, b'{' | b'[') => depth += 1,
                (false, b'}' | b']') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break i + 1;
                    }
                }
                (false, b' ' | b'\t' | b'#' | b'\r') if scalar => break i,
                _ => {}
            }
            i += 1;
        };
        t.push_str(&self.text[lit..end]);
        probe.push_str(&self.text[lit..end]);
        if let Err(e) = serde_json::from_str::<serde_json::Value>(&probe) {
            // serde_json counts the column in bytes; `pos` turns the byte offset into a
            // column of characters.
            let first = self.pos(start).line as usize - 1;
            let line = first + e.line() - 1;
            let col = if e.line() == 1 { start - self.starts[first] + e.column() } else { e.column() };
            let at = self.starts.get(line).map_or(start, |s| s + col.saturating_sub(1));
            let msg = e.to_string();
            let msg = msg.split(" at line").next().unwrap_or(&msg);
            return Err(self.syntax(at.min(self.text.len()), format!("invalid JSON body: {msg}")));
        }
        Ok((t, end))
    }

    /// An XML document, as written (no templates), to the end of its root element.
    fn xml(&mut self, c: Cur) -> Res<Body> {
        let end = xml_end(self.text, c.i)
            .ok_or_else(|| self.syntax(c.i, "an XML body without the end of its root element"))?;
        let template = Template::literal(&self.text[c.i..end]);
        self.line = self.starts.partition_point(|&s| s < end) - 1;
        self.end_of_line(Cur { i: end, end: self.cur().end })?;
        self.line += 1;
        Ok(Body { kind: BodyKind::Xml, template })
    }

    /// ```` ```type ```` ... ```` ``` ````: the text up to the next ```` ``` ```` (templates
    /// expanded, but for `raw`), or ```` ```text``` ```` on one line.
    pub(super) fn multiline(&mut self, c: Cur) -> Res<Body> {
        let at = c.i;
        let rest = &self.text[c.i + 3..c.end];
        if let Some(close) = rest.find("```") {
            // One line: ```text```
            let mut inner = Cur { i: c.i + 3, end: c.i + 3 + close };
            let t = self.raw_text(&mut inner, true)?;
            self.end_of_line(Cur { i: c.i + 3 + close + 3, end: c.end })?;
            self.line += 1;
            return Ok(Body { kind: BodyKind::Raw, template: t });
        }
        let hint = rest.trim_end_matches([' ', '\t']);
        let kind = match hint {
            "" | "raw" => BodyKind::Raw,
            "json" => BodyKind::Json,
            "xml" => BodyKind::Xml,
            "graphql" | "graphql," => BodyKind::GraphQl,
            _ => return Err(self.syntax(c.i + 3, format!("unknown multiline string type `{hint}`"))),
        };
        let start = self.starts.get(self.line + 1).copied().unwrap_or(self.text.len());
        let close = self.text[start..]
            .find("```")
            .map(|n| start + n)
            .ok_or_else(|| self.syntax(at, "a multiline string without its closing ```"))?;
        let mut inner = Cur { i: start, end: close };
        let template = match kind {
            BodyKind::GraphQl => self.graphql(start, close)?,
            _ => self.raw_text(&mut inner, hint != "raw")?,
        };
        self.line = self.starts.partition_point(|&s| s <= close) - 1;
        self.end_of_line(Cur { i: close + 3, end: self.cur().end })?;
        self.line += 1;
        Ok(Body { kind, template })
    }

    /// A GraphQL query between `start` and `end` (with `variables {...}` last, maybe), as
    /// Hurl sends it: `{"query":"...","variables":{...}}`, the query trimmed.
    pub(super) fn graphql(&mut self, start: usize, end: usize) -> Res<Template> {
        let text = &self.text[start..end];
        let mut query_end = end;
        let mut variables = None;
        let mut from = 0;
        while let Some(n) = text[from..].find("\nvariables") {
            let v = start + from + n + "\nvariables".len();
            let open = v + self.text[v..end].len() - self.text[v..end].trim_start().len();
            if self.text.as_bytes().get(open) == Some(&b'{') {
                let (t, after) = self.json_at(open)?;
                if self.text[after..end].trim().is_empty() {
                    variables = Some(t);
                    query_end = start + from + n + 1;
                    break;
                }
            }
            from += n + 1;
        }
        let raw = &self.text[start..query_end];
        let lead = raw.len() - raw.trim_start().len();
        let mut q = Cur { i: start + lead, end: start + raw.trim_end().len() };
        let query = self.raw_text(&mut q, true)?;
        let mut t = Template::literal("{\"query\":\"");
        for p in query.parts {
            match p {
                Part::Lit(l) => {
                    let quoted = serde_json::to_string(&*l).expect("a string");
                    t.push_str(&quoted[1..quoted.len() - 1]);
                }
                Part::Var { name, pos, .. } => t.push_var(&name, Escape::JsonString, pos),
                Part::Expr { expr, pos, .. } => {
                    t.parts.push(Part::Expr { expr, escape: Escape::JsonString, pos });
                }
                Part::Bytes(b) => t.parts.push(Part::Bytes(b)),
            }
        }
        t.push_str("\"");
        if let Some(v) = variables {
            t.push_str(",\"variables\":");
            t.parts.extend(compact_json(v).parts);
        }
        t.push_str("}");
        Ok(t)
    }

    /// Text with templates (when `templates`) and no escapes, up to `c.end`.
    pub(super) fn raw_text(&self, c: &mut Cur, templates: bool) -> Res<Template> {
        let mut t = Template::default();
        let mut lit = c.i;
        while c.i < c.end {
            if templates && self.text[c.i..c.end].starts_with("{{") {
                t.push_str(&self.text[lit..c.i]);
                let line_end = self.text[c.i..c.end].find('\n').map_or(c.end, |n| c.i + n);
                let mut inner = Cur { i: c.i, end: line_end };
                self.template_expr(&mut inner, &mut t, Escape::Plain)?;
                c.i = inner.i;
                lit = c.i;
            } else {
                c.i += self.text[c.i..].chars().next().map_or(1, char::len_utf8);
            }
        }
        t.push_str(&self.text[lit..c.end]);
        Ok(t)
    }
}

/// The offset past the root element of the XML document starting at `start` (a prolog,
/// comments and a doctype may come before it), or `None` when it does not end.
fn xml_end(text: &str, start: usize) -> Option<usize> {
    let b = text.as_bytes();
    let (mut i, mut depth) = (start, 0usize);
    let find = |from: usize, what: &str| text[from..].find(what).map(|n| from + n + what.len());
    loop {
        if depth == 0 {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
        }
        if i >= b.len() {
            return None;
        }
        let rest = &text[i..];
        i = if rest.starts_with("<?") {
            find(i, "?>")?
        } else if rest.starts_with("<!--") {
            find(i, "-->")?
        } else if rest.starts_with("<![CDATA[") {
            find(i, "]]>")?
        } else if rest.starts_with("<!") {
            // A doctype, maybe with an internal subset in brackets.
            let mut j = i + 2;
            let mut brackets = 0i32;
            while j < b.len() && !(b[j] == b'>' && brackets == 0) {
                brackets += i32::from(b[j] == b'[') - i32::from(b[j] == b']');
                j += 1;
            }
            (j < b.len()).then_some(j + 1)?
        } else if rest.starts_with("</") {
            let j = find(i, ">")?;
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(j);
            }
            j
        } else if rest.starts_with('<') {
            let mut j = i + 1;
            let mut quote = None;
            while j < b.len() {
                match (quote, b[j]) {
                    (None, b'"' | b'\'') => quote = Some(b[j]),
                    (Some(q), c) if c == q => quote = None,
                    (None, b'>') => break,
                    _ => {}
                }
                j += 1;
            }
            if j >= b.len() {
                return None;
            }
            if b[j - 1] == b'/' {
                if depth == 0 {
                    return Some(j + 1);
                }
            } else {
                depth += 1;
            }
            j + 1
        } else if depth == 0 {
            return None;
        } else {
            i + rest.find('<')?
        };
    }
}

/// A JSON template without the whitespace between its tokens, as Hurl sends a GraphQL
/// query's `variables` (`{"id":"x"}`): the literal text outside strings loses its spaces,
/// tabs and line breaks; strings and templates are kept as they are.
fn compact_json(t: Template) -> Template {
    let (mut in_string, mut escaped) = (false, false);
    let mut out = Template::default();
    for p in t.parts {
        let Part::Lit(l) = p else {
            out.parts.push(p);
            continue;
        };
        let mut kept = String::with_capacity(l.len());
        for c in l.chars() {
            if in_string {
                (in_string, escaped) = (escaped || c != '"', !escaped && c == '\\');
            } else if c == '"' {
                in_string = true;
            } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
                continue;
            }
            kept.push(c);
        }
        out.push_str(&kept);
    }
    out
}

/// The body of a file's bytes: text (UTF-8) stays text, as written; other bytes as they are.
pub(crate) fn body_of(bytes: Vec<u8>) -> Body {
    match String::from_utf8(bytes) {
        Ok(text) => Body { kind: BodyKind::Raw, template: Template::literal(&text) },
        Err(e) => {
            let mut template = Template::default();
            template.push_bytes(e.as_bytes());
            Body { kind: BodyKind::Bytes, template }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::xml_end;

    #[test]
    fn xml_ends_with_its_root_element() {
        let doc = "<?xml version=\"1.0\"?>\n<!DOCTYPE a [<!ENTITY x \"y\">]>\n<!-- c -->\n<a b=\"1>\"><c/><![CDATA[</a>]]>t</a>\nHTTP 200";
        assert_eq!(&doc[..xml_end(doc, 0).unwrap()], &doc[..doc.find("\nHTTP").unwrap()]);
        assert_eq!(xml_end("<a/> x", 0), Some(4));
        assert_eq!(xml_end("<a><b></a>", 0), None);
        assert_eq!(xml_end("<a>", 0), None);
    }
}
