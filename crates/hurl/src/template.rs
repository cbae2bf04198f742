//! Templates (`{{name}}`) and the variables of one iteration.
//!
//! A template is parsed once, at load time, into literal text and variable
//! references; rendering writes into a buffer the caller keeps between
//! requests, and variables keep their text buffers between iterations, so a
//! warm iteration renders without allocating. Two of Hurl's generators are
//! built in: `{{newUuid}}` (a version-4 UUID drawn from the workspace's
//! SplitMix64, so a seed repeats a run) and `{{newDate}}` (the wall clock,
//! RFC 3339 with microseconds, UTC).
//!
//! Where a variable lands decides how it is written: in a JSON string its
//! text is JSON-escaped, as a JSON value a string variable is quoted, and
//! elsewhere (URL, header, raw body) its text goes in as it is.

use bytes::BufMut;

use crate::error::Pos;

pub mod compiled;
mod head;
mod placeholder;
mod vars;

pub use head::{MAX_HEAD_VALUES, RenderError, Unwritable, unsafe_byte};
pub use placeholder::{Expr, ExprStart, Filter, FilterKind, IntArg, RegexArg};
pub use vars::{Hole, Value, Vars};

/// How a variable's text is written where it appears.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// As it is (URL, header value, raw body, quoted string of an assert).
    Plain,
    /// Inside a JSON string: JSON string escapes.
    JsonString,
    /// In place of a JSON value: a string is quoted and escaped, other kinds as they are.
    JsonValue,
}

/// One piece of a template.
#[derive(Debug, Clone)]
pub enum Part {
    Lit(Box<str>),
    Var {
        name: Box<str>,
        escape: Escape,
        pos: Pos,
    },
    /// Bytes written as they are: a `hex,`, `base64,` or `file,` body, a multipart file.
    Bytes(Box<[u8]>),
    /// A placeholder with filters or a function (`{{id urlEncode}}`, `{{getEnv "HOME"}}`),
    /// evaluated as Hurl evaluates an expression.
    Expr {
        expr: Box<Expr>,
        escape: Escape,
        pos: Pos,
    },
}

impl PartialEq for Part {
    /// Placeholders with filters compare by their source (filters hold regexes).
    fn eq(&self, other: &Part) -> bool {
        match (self, other) {
            (Part::Lit(a), Part::Lit(b)) => a == b,
            (Part::Var { name: a, escape: x, pos: p }, Part::Var { name: b, escape: y, pos: q }) => {
                a == b && x == y && p == q
            }
            (Part::Bytes(a), Part::Bytes(b)) => a == b,
            (Part::Expr { expr: a, escape: x, pos: p }, Part::Expr { expr: b, escape: y, pos: q }) => {
                a.source == b.source && x == y && p == q
            }
            _ => false,
        }
    }
}

/// A parsed template: literal text, variable references, bytes and expressions.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Template {
    pub parts: Vec<Part>,
}

/// The built-in generators, evaluated anew at each use.
pub const GENERATORS: [&str; 2] = ["newUuid", "newDate"];

impl Template {
    /// A template of literal text only.
    pub fn literal(s: &str) -> Template {
        let mut t = Template::default();
        t.push_str(s);
        t
    }

    /// Appends literal text, merging with a literal before it.
    pub fn push_str(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        if let Some(Part::Lit(last)) = self.parts.last_mut() {
            let mut joined = String::with_capacity(last.len() + s.len());
            joined.push_str(last);
            joined.push_str(s);
            *last = joined.into_boxed_str();
        } else {
            self.parts.push(Part::Lit(s.into()));
        }
    }

    /// Appends a variable reference.
    pub fn push_var(&mut self, name: &str, escape: Escape, pos: Pos) {
        self.parts.push(Part::Var { name: name.into(), escape, pos });
    }

    /// Appends bytes written as they are.
    pub fn push_bytes(&mut self, b: &[u8]) {
        self.parts.push(Part::Bytes(b.into()));
    }

    /// Moves the positions of its variables through `f`.
    pub fn map_positions(&mut self, f: impl Fn(Pos) -> Pos) {
        for p in &mut self.parts {
            if let Part::Var { pos, .. } | Part::Expr { pos, .. } = p {
                *pos = f(*pos);
            }
        }
    }

    /// The variables it refers to, in order, with their positions (a placeholder's, and
    /// those of its filters' arguments).
    pub fn vars(&self) -> Vec<(&str, Pos)> {
        let mut out = Vec::new();
        for p in &self.parts {
            match p {
                Part::Var { name, pos, .. } => out.push((&**name, *pos)),
                Part::Expr { expr, pos, .. } => {
                    if let ExprStart::Var(name) = &expr.start {
                        out.push((&**name, *pos));
                    }
                    for f in &expr.filters {
                        out.extend(f.kind.templates().into_iter().flat_map(Template::vars));
                    }
                }
                Part::Lit(_) | Part::Bytes(_) => {}
            }
        }
        out
    }

    /// The text of a template without variables.
    pub fn as_literal(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [] => Some(""),
            [Part::Lit(s)] => Some(s),
            _ => None,
        }
    }

    /// The bytes of its literal text.
    pub fn literal_len(&self) -> usize {
        self.parts.iter().map(|p| if let Part::Lit(l) = p { l.len() } else { 0 }).sum()
    }

    /// The template as written (`/todos/{{todo_id}}`), for names and messages.
    pub fn source(&self) -> String {
        let mut s = String::new();
        for p in &self.parts {
            match p {
                Part::Lit(l) => s.push_str(l),
                Part::Var { name, .. } => {
                    s.push_str("{{");
                    s.push_str(name);
                    s.push_str("}}");
                }
                Part::Expr { expr, .. } => {
                    s.push_str("{{");
                    s.push_str(&expr.source);
                    s.push_str("}}");
                }
                Part::Bytes(b) => {
                    let _ = std::fmt::Write::write_fmt(&mut s, format_args!("<{} bytes>", b.len()));
                }
            }
        }
        s
    }
}

/// What a variable's text stands for (it decides quoting in JSON and comparisons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    String,
    Integer,
    Float,
    Bool,
    Null,
    /// An array or object, kept as its JSON text.
    Json,
    /// Bytes, kept as lower-case hex.
    Bytes,
    /// A date, kept as Hurl writes one (`2026-01-31T12:00:00.000000Z`).
    Date,
    /// An XPath node set, kept as how many nodes it holds.
    Nodeset,
}

impl Kind {
    /// The kind Hurl gives a value written on its command line or in a variables file:
    /// `true`/`false`, `null`, an integer (of any size), a float, else a string.
    pub fn infer(text: &str) -> Kind {
        match text {
            "true" | "false" => Kind::Bool,
            "null" => Kind::Null,
            _ if text.parse::<i64>().is_ok() => Kind::Integer,
            _ if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => Kind::Integer,
            _ if text.parse::<f64>().is_ok_and(f64::is_finite) && !text.contains(char::is_alphabetic) => {
                Kind::Float
            }
            _ => Kind::String,
        }
    }
}

/// A float as Hurl writes it: a whole one with `.0`.
pub fn format_float(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e16 { format!("{f}.0") } else { f.to_string() }
}

/// A value given on the command line or in a variables file (`--variable n=3`), as Hurl
/// reads it: its text and kind inferred ([`Kind::infer`]), a value in double quotes a string.
/// A number is kept as Hurl writes it (`1.70` is the float `1.7`, `007` the integer `7`).
pub fn cli_value(text: &str) -> (std::borrow::Cow<'_, str>, Kind) {
    use std::borrow::Cow;
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(inner) => (Cow::Borrowed(inner), Kind::String),
        None => match Kind::infer(text) {
            Kind::Float => {
                let f: f64 = text.parse().unwrap_or(f64::NAN);
                (Cow::Owned(format_float(f)), Kind::Float)
            }
            Kind::Integer => match text.parse::<i64>() {
                Ok(n) => (Cow::Owned(n.to_string()), Kind::Integer),
                Err(_) => (Cow::Borrowed(text), Kind::Integer),
            },
            kind => (Cow::Borrowed(text), kind),
        },
    }
}

/// Writes `s` as the inside of a JSON string.
pub fn json_escape(s: &str, out: &mut impl BufMut) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    // Most values (words, numbers, ids) have nothing to escape: one copy.
    if !needs_escape(bytes) {
        out.put_slice(bytes);
        return;
    }
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => b"",
            _ => continue,
        };
        out.put_slice(&bytes[start..i]);
        if esc.is_empty() {
            out.put_slice(b"\\u00");
            out.put_u8(HEX[usize::from(b >> 4)]);
            out.put_u8(HEX[usize::from(b & 15)]);
        } else {
            out.put_slice(esc);
        }
        start = i + 1;
    }
    out.put_slice(&bytes[start..]);
}

/// Whether `bytes` holds one that JSON escapes in a string (a control byte, `"` or `\\`),
/// looked for eight bytes at a time. Every byte is read from `bytes` (words may overlap,
/// which cannot change a yes or no), so no copy of a remainder is made.
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    /// Bytes that need no escape, for the places of a word that a short text leaves over.
    const LETTERS: u64 = u64::from_le_bytes([b'a'; 8]);
    // Whether a byte of `w` is below `n` (n <= 128): exact as a yes or no for the word.
    let below = |w: u64, n: u64| w.wrapping_sub(n * ONES) & !w & HIGH != 0;
    let escaped = |w: u64| {
        below(w, 0x20) || below(w ^ (u64::from(b'"') * ONES), 1) || below(w ^ (u64::from(b'\\') * ONES), 1)
    };
    let n = bytes.len();
    let u16_at = |at: usize| u64::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
    let u32_at = |at: usize| u64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes")));
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"));
    // Short texts: their first and last bytes in one word, letters in the places left over.
    match n {
        0 => false,
        1 => escaped(u64::from(bytes[0]) | LETTERS << 8),
        2..=3 => escaped(u16_at(0) | u16_at(n - 2) << 16 | LETTERS << 32),
        4..=7 => escaped(u32_at(0) | u32_at(n - 4) << 32),
        // Whole words, then the last eight bytes (overlapping the word before them).
        _ => (0..n / 8).any(|i| escaped(u64_at(8 * i))) || escaped(u64_at(n - 8)),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn tpl(parts: &[(&str, Option<Escape>)]) -> Template {
        let mut t = Template::default();
        for (s, e) in parts {
            match e {
                None => t.push_str(s),
                Some(e) => t.push_var(s, *e, Pos::default()),
            }
        }
        t
    }

    #[test]
    fn renders_by_context() {
        let mut vars = Vars::new(1);
        vars.set("t", "a\"b", Kind::String);
        vars.set("n", "42", Kind::Integer);
        let t = tpl(&[
            ("{\"s\": \"", None),
            ("t", Some(Escape::JsonString)),
            ("\", \"v\": ", None),
            ("t", Some(Escape::JsonValue)),
            (", \"n\": ", None),
            ("n", Some(Escape::JsonValue)),
            ("}", None),
        ]);
        let mut out = Vec::new();
        t.render(&mut vars, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v, serde_json::json!({"s": "a\"b", "v": "a\"b", "n": 42}));
    }

    #[test]
    fn unknown_variable_is_an_error_with_its_position() {
        let mut t = Template::literal("/x/");
        t.push_var("id", Escape::Plain, Pos { line: 3, col: 9 });
        let err = t.render(&mut Vars::new(1), &mut Vec::new()).unwrap_err();
        assert_eq!(err, RenderError::no_value("id", Pos { line: 3, col: 9 }));
    }

    #[test]
    fn uuid_is_version_4_and_seeded() {
        let t = tpl(&[("newUuid", Some(Escape::Plain))]);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        t.render(&mut Vars::new(7), &mut a).unwrap();
        t.render(&mut Vars::new(7), &mut b).unwrap();
        assert_eq!(a, b);
        let s = String::from_utf8(a).unwrap();
        assert_eq!(s.len(), 36);
        assert_eq!(&s[14..15], "4");
        assert!(matches!(&s[19..20], "8" | "9" | "a" | "b"), "{s}");
    }

    #[test]
    fn date_is_rfc3339() {
        let t = tpl(&[("newDate", Some(Escape::Plain))]);
        let mut out = Vec::new();
        t.render(&mut Vars::new(1), &mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        humantime::parse_rfc3339(&s).unwrap();
    }

    #[test]
    fn source_shows_variables() {
        let t = tpl(&[("/todos/", None), ("todo_id", Some(Escape::Plain))]);
        assert_eq!(t.source(), "/todos/{{todo_id}}");
    }

    proptest! {
        #[test]
        fn json_string_escape_roundtrips(s in ".*", lit in "[a-z ]{0,8}") {
            let mut vars = Vars::new(1);
            vars.set("v", &s, Kind::String);
            let t = tpl(&[("[\"", None), (&lit, None), ("v", Some(Escape::JsonString)), ("\", ", None), ("v", Some(Escape::JsonValue)), ("]", None)]);
            let mut out = Vec::new();
            t.render(&mut vars, &mut out).unwrap();
            let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
            prop_assert_eq!(v, serde_json::json!([format!("{lit}{s}"), s]));
        }

        /// The word-at-a-time test finds what a byte-by-byte look finds, wherever it lies.
        #[test]
        fn needs_escape_finds_every_escaped_byte(s in "[a-z~\"\\\\\\x00-\\x1f\\x7f-\\u{3ff}]{0,24}") {
            let want = s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\');
            prop_assert_eq!(needs_escape(s.as_bytes()), want);
        }


        #[test]
        fn plain_render_is_concatenation(parts in proptest::collection::vec(("[a-z/]{0,6}", "[^{}]{0,6}"), 0..6)) {
            let mut vars = Vars::new(1);
            let mut t = Template::default();
            let mut expected = String::new();
            for (i, (lit, val)) in parts.iter().enumerate() {
                let name = format!("v{i}");
                vars.set(&name, val, Kind::String);
                t.push_str(lit);
                t.push_var(&name, Escape::Plain, Pos::default());
                expected.push_str(lit);
                expected.push_str(val);
            }
            let mut out = b"keep".to_vec();
            t.render(&mut vars, &mut out).unwrap();
            prop_assert_eq!(out, format!("keep{expected}").into_bytes());
        }
    }
}
