//! Request sections: `[Query]`, `[Form]`, `[Multipart]`, `[Cookies]`,
//! `[BasicAuth]` (each by its short or long name) and `[Options]`, whose every
//! entry Hurl 8 documents is read into the model with the value it takes
//! ([`crate::model::options::OPTIONS`]).

use std::time::Duration;

use super::{Cur, Kind, Parser, Res, is_var_name};
use crate::model::options::{Arg, EntryOption, OptionValue, ValueKind, option};
use crate::model::{Entry, MultipartParam, Param};
use crate::template::{Kind as VarKind, Template};

/// A request section's one name (long names mapped to short ones), if it is one.
pub(super) fn canonical(name: &str) -> Option<&'static str> {
    Some(match name {
        "Query" | "QueryStringParams" => "Query",
        "Form" | "FormParams" => "Form",
        "Multipart" | "MultipartFormData" => "Multipart",
        "Cookies" => "Cookies",
        "BasicAuth" => "BasicAuth",
        "Options" => "Options",
        _ => return None,
    })
}

impl Parser<'_> {
    /// The lines of section `name` (its header line read), into `entry`.
    pub(super) fn request_section(&mut self, name: &str, entry: &mut Entry) -> Res<()> {
        loop {
            self.skip_blank();
            if self.eof() {
                return Ok(());
            }
            let (kind, mut c) = self.kind();
            if !matches!(kind, Kind::KeyValue | Kind::Other) {
                return Ok(());
            }
            let pos = self.pos(c.i);
            match name {
                "Options" => entry.options.push(self.option(c)?),
                "Multipart" => entry.multipart.push(self.multipart_param(c)?),
                "BasicAuth" => {
                    if entry.basic_auth.is_some() {
                        return Err(self.syntax(c.i, "[BasicAuth] has one line: `user: password`"));
                    }
                    entry.basic_auth = Some(self.param(&mut c)?);
                }
                _ => {
                    let p = self.param(&mut c)?;
                    match name {
                        "Query" => entry.query.push(p),
                        "Form" => entry.form.push(p),
                        _ => entry.cookies.push(p),
                    }
                }
            }
            let _ = pos;
            self.line += 1;
        }
    }

    /// `name: value`.
    fn param(&self, c: &mut Cur) -> Res<Param> {
        let pos = self.pos(c.i);
        let name = self.key_string(c)?;
        self.colon(c)?;
        let value = self.value_string(c)?;
        Ok(Param { pos, name, value })
    }

    /// `name: value` or `name: file,path; content-type`.
    fn multipart_param(&self, mut c: Cur) -> Res<MultipartParam> {
        let pos = self.pos(c.i);
        let name = self.key_string(&mut c)?;
        self.colon(&mut c)?;
        if !self.rest(c).starts_with("file,") {
            let value = self.value_string(&mut c)?;
            return Ok(MultipartParam::Field(Param { pos, name, value }));
        }
        let at = c.i + "file,".len();
        let (filename, end) = self.file_name(c, at)?;
        let filename = filename
            .as_literal()
            .ok_or_else(|| self.unsupported(at, "a template in a multipart `file,` name"))?
            .to_owned();
        let data = self.read_file(at, &filename)?;
        let mut after = Cur { i: end, end: c.end };
        self.skip_sp(&mut after);
        let content_type = if matches!(self.peek(after), None | Some(b'#')) {
            Template::literal(content_type_of(&filename))
        } else {
            self.value_string(&mut after)?
        };
        Ok(MultipartParam::File { pos, name, filename: filename.into(), content_type, data: data.into() })
    }

    /// One `[Options]` line.
    fn option(&self, mut c: Cur) -> Res<EntryOption> {
        let pos = self.pos(c.i);
        let at = c.i;
        let s = self.rest(c);
        let n = s.find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '-' || ch == '.')).unwrap_or(s.len());
        let Some(&(name, kind, effect)) = option(&s[..n]) else {
            return Err(self.syntax(at, format!("unknown option `{}`", &s[..n])));
        };
        if let crate::model::options::Effect::Refused(why) = effect {
            return Err(self.unsupported(at, format!("the `{name}` option ({why})")));
        }
        c.i += n;
        self.colon(&mut c)?;
        let vat = c.i;
        let value = match kind {
            ValueKind::Text => OptionValue::Text(self.value_string(&mut c)?),
            ValueKind::Variable => self.variable_option(&mut c)?,
            ValueKind::Verbosity => {
                let w = super::word_at(self.rest(c));
                if !matches!(w, "brief" | "verbose" | "debug") {
                    return Err(self.syntax(vat, "`verbosity` is `brief`, `verbose` or `debug`"));
                }
                c.i += w.len();
                OptionValue::Verbosity(w.into())
            }
            ValueKind::Bool
            | ValueKind::Count
            | ValueKind::Natural
            | ValueKind::Millis
            | ValueKind::Seconds => self.scalar_option(&mut c, name, kind)?,
        };
        self.end_of_line(c)?;
        Ok(EntryOption { pos, name, value })
    }

    /// A boolean, count, natural or duration option's value: a literal or `{{name}}`.
    fn scalar_option(&self, c: &mut Cur, name: &str, kind: ValueKind) -> Res<OptionValue> {
        let at = c.i;
        if self.rest(*c).starts_with("{{") {
            let mut t = Template::default();
            self.template_expr(c, &mut t, crate::template::Escape::Plain)?;
            return Ok(match kind {
                ValueKind::Bool => OptionValue::Bool(Arg::Var(t)),
                ValueKind::Count => OptionValue::Count(Arg::Var(t)),
                ValueKind::Natural => OptionValue::Natural(Arg::Var(t)),
                _ => OptionValue::Duration(Arg::Var(t)),
            });
        }
        let s = self.rest(*c);
        let token = s.split([' ', '\t', '#']).next().unwrap_or("");
        let bad = |what: &str| self.syntax(at, format!("`{name}` takes {what}"));
        let value = match kind {
            ValueKind::Bool => match token {
                "true" => OptionValue::Bool(Arg::Literal(true)),
                "false" => OptionValue::Bool(Arg::Literal(false)),
                _ => return Err(bad("`true` or `false`")),
            },
            ValueKind::Count => match token.parse::<i64>() {
                Ok(n) if n >= -1 => OptionValue::Count(Arg::Literal(n)),
                _ => return Err(bad("a count (a whole number, or -1 for no end)")),
            },
            ValueKind::Natural => {
                OptionValue::Natural(Arg::Literal(token.parse().map_err(|_| bad("a whole number"))?))
            }
            _ => {
                let digits = token.find(|ch: char| !ch.is_ascii_digit()).unwrap_or(token.len());
                let n: u64 =
                    token[..digits].parse().map_err(|_| bad("a duration (`500`, `500ms`, `2s`, `1m`)"))?;
                let d = match (&token[digits..], kind) {
                    ("ms", _) | ("", ValueKind::Millis) => Duration::from_millis(n),
                    ("s" | "", _) => Duration::from_secs(n),
                    ("m", _) => Duration::from_secs(n.saturating_mul(60)),
                    _ => return Err(bad("a duration (`500`, `500ms`, `2s`, `1m`)")),
                };
                OptionValue::Duration(Arg::Literal(d))
            }
        };
        c.i += token.len();
        Ok(value)
    }

    /// `variable: name=value`: the value a null, a boolean, a number, or a string (quoted
    /// or not), with templates.
    fn variable_option(&self, c: &mut Cur) -> Res<OptionValue> {
        let at = c.i;
        let s = self.rest(*c);
        let eq = s.find('=').ok_or_else(|| self.syntax(at, "`variable` is `name=value`"))?;
        let name = s[..eq].trim();
        if !is_var_name(name) {
            return Err(self.syntax(at, "a variable's name is a letter, then letters, digits, `_` or `-`"));
        }
        c.i += eq + 1;
        let vat = c.i;
        let (text, kind) = if self.peek(*c) == Some(b'"') {
            (self.quoted_string(c)?, VarKind::String)
        } else {
            let t = self.value_string(c)?;
            let kind = t.as_literal().map_or(VarKind::String, crate::template::Kind::infer);
            (t, kind)
        };
        let _ = vat;
        Ok(OptionValue::Variable { name: name.into(), text, kind })
    }

    /// The bytes of `name` (beside the file the Hurl is written in), read now.
    pub(super) fn read_file(&self, at: usize, name: &str) -> Res<Vec<u8>> {
        let Some(files) = self.files else {
            return Err(self.unsupported(at, "a `file,` outside a scenario file"));
        };
        if name.is_empty() {
            return Err(self.syntax(at, "`file,` names a file (`file,data.json;`)"));
        }
        files.read_bytes(name).map_err(|e| {
            let path = files.dir().join(name);
            self.err(at, crate::error::ErrorKind::Io(format!("cannot read {}: {e}", path.display())))
        })
    }
}

/// The content type Hurl gives a multipart file by its extension.
fn content_type_of(filename: &str) -> &'static str {
    match filename.rsplit_once('.').map(|(_, e)| e) {
        Some("gif") => "image/gif",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("png") => "image/png",
        Some("svg") => "image/svg+xml",
        Some("txt") => "text/plain",
        Some("htm" | "html") => "text/html",
        Some("pdf") => "application/pdf",
        Some("xml") => "application/xml",
        _ => "application/octet-stream",
    }
}
