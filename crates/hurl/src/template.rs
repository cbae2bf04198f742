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

use std::io::Write as _;
use std::time::SystemTime;

use stackbench_scenarios::rng::SplitMix64;

use crate::error::Pos;

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
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Lit(Box<str>),
    Var { name: Box<str>, escape: Escape, pos: Pos },
}

/// A parsed template: literal text and variable references.
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

    /// Moves the positions of its variables through `f`.
    pub fn map_positions(&mut self, f: impl Fn(Pos) -> Pos) {
        for p in &mut self.parts {
            if let Part::Var { pos, .. } = p {
                *pos = f(*pos);
            }
        }
    }

    /// The variables it refers to, in order, with their positions.
    pub fn vars(&self) -> impl Iterator<Item = (&str, Pos)> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var { name, pos, .. } => Some((&**name, *pos)),
            Part::Lit(_) => None,
        })
    }

    /// The text of a template without variables.
    pub fn as_literal(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [] => Some(""),
            [Part::Lit(s)] => Some(s),
            _ => None,
        }
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
            }
        }
        s
    }

    /// Writes the template with `vars` into `out` (appending).
    pub fn render(&self, vars: &mut Vars, out: &mut Vec<u8>) -> Result<(), RenderError> {
        for p in &self.parts {
            match p {
                Part::Lit(l) => out.extend_from_slice(l.as_bytes()),
                Part::Var { name, escape, pos } => vars
                    .write(name, *escape, out)
                    .map_err(|()| RenderError { name: name.to_string(), pos: *pos })?,
            }
        }
        Ok(())
    }
}

/// A template referred to a variable that has no value in this iteration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: variable `{name}` has no value")]
pub struct RenderError {
    pub name: String,
    pub pos: Pos,
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
}

/// A variable's value: its text and what the text stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    pub text: String,
    pub kind: Kind,
}

/// The variables of one iteration (few: a linear scan beats hashing) and the
/// generators' random source.
#[derive(Debug, Clone)]
pub struct Vars {
    slots: Vec<(Box<str>, Value, bool)>,
    pub rng: SplitMix64,
}

impl Vars {
    pub fn new(seed: u64) -> Vars {
        Vars { slots: Vec::new(), rng: SplitMix64(seed) }
    }

    /// Sets `name`, reusing its previous text buffer.
    pub fn set(&mut self, name: &str, text: &str, kind: Kind) {
        let v = self.slot(name);
        v.text.clear();
        v.text.push_str(text);
        v.kind = kind;
    }

    /// The value buffer of `name` to fill in place (it becomes set).
    pub fn slot(&mut self, name: &str) -> &mut Value {
        let i = if let Some(i) = self.slots.iter().position(|(n, _, _)| **n == *name) {
            i
        } else {
            self.slots.push((name.into(), Value { text: String::new(), kind: Kind::Null }, false));
            self.slots.len() - 1
        };
        self.slots[i].2 = true;
        &mut self.slots[i].1
    }

    /// The value buffer of `name` (it becomes set) and the random source, together.
    pub fn slot_and_rng(&mut self, name: &str) -> (&mut Value, &mut SplitMix64) {
        self.slot(name);
        let i = self.slots.iter().position(|(n, _, _)| **n == *name).expect("slot() added it");
        (&mut self.slots[i].1, &mut self.rng)
    }

    /// The value of `name`, if set in this iteration.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.slots.iter().find(|(n, _, set)| *set && **n == *name).map(|(_, v, _)| v)
    }

    /// Forgets the values of `names` (the captures), keeping their buffers.
    pub fn unset<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) {
        for name in names {
            if let Some(s) = self.slots.iter_mut().find(|(n, _, _)| **n == *name) {
                s.2 = false;
            }
        }
    }

    fn write(&mut self, name: &str, escape: Escape, out: &mut Vec<u8>) -> Result<(), ()> {
        match name {
            "newUuid" => {
                let (hi, lo) = (self.rng.next_u64(), self.rng.next_u64());
                write_uuid(hi, lo, escape == Escape::JsonValue, out);
                return Ok(());
            }
            "newDate" => {
                let q = if escape == Escape::JsonValue { "\"" } else { "" };
                let now = humantime::format_rfc3339_micros(SystemTime::now());
                write!(out, "{q}{now}{q}").expect("writing to a Vec cannot fail");
                return Ok(());
            }
            _ => {}
        }
        let v = self.get(name).ok_or(())?;
        match (escape, v.kind) {
            (Escape::Plain, _)
            | (Escape::JsonValue, Kind::Integer | Kind::Float | Kind::Bool | Kind::Null | Kind::Json) => {
                out.extend_from_slice(v.text.as_bytes());
            }
            (Escape::JsonString, _) => json_escape(&v.text, out),
            (Escape::JsonValue, Kind::String) => {
                out.push(b'"');
                json_escape(&v.text, out);
                out.push(b'"');
            }
        }
        Ok(())
    }
}

/// A version-4 UUID (RFC 9562) from 128 random bits, lower-case hex: each byte
/// written as two digits from a table, in a buffer appended once.
fn write_uuid(hi: u64, lo: u64, quoted: bool, out: &mut Vec<u8>) {
    // Where each byte's two digits go, after the opening quote and between the dashes.
    const AT: [usize; 16] = [1, 3, 5, 7, 10, 12, 15, 17, 20, 22, 25, 27, 29, 31, 33, 35];
    const PAIRS: [[u8; 2]; 256] = {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut t = [[0; 2]; 256];
        let mut i = 0;
        while i < 256 {
            t[i] = [HEX[i >> 4], HEX[i & 15]];
            i += 1;
        }
        t
    };
    let hi = (hi & !0xF000) | 0x4000; // version 4
    let lo = (lo & !(0b11 << 62)) | (0b10 << 62); // variant 10
    let bytes = ((u128::from(hi)) << 64 | u128::from(lo)).to_be_bytes();
    let mut text = *b"\"00000000-0000-0000-0000-000000000000\"";
    for (b, at) in bytes.iter().zip(AT) {
        [text[at], text[at + 1]] = PAIRS[usize::from(*b)];
    }
    out.extend_from_slice(if quoted { &text } else { &text[1..37] });
}

/// Writes `s` as the inside of a JSON string.
pub fn json_escape(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
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
        out.extend_from_slice(&bytes[start..i]);
        if esc.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 15)]);
        } else {
            out.extend_from_slice(esc);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
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
        assert_eq!(err, RenderError { name: "id".into(), pos: Pos { line: 3, col: 9 } });
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

    proptest! {
        /// The table-driven UUID is the bits' straightforward hex, dashes and version set.
        #[test]
        fn uuid_is_the_bits_in_hex(hi in any::<u64>(), lo in any::<u64>(), quoted in any::<bool>()) {
            let mut out = Vec::new();
            write_uuid(hi, lo, quoted, &mut out);
            let v = (u128::from((hi & !0xF000) | 0x4000) << 64) | u128::from((lo & !(0b11 << 62)) | (0b10 << 62));
            let hex = format!("{v:032x}");
            let dashed = format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..]);
            let want = if quoted { format!("\"{dashed}\"") } else { dashed };
            prop_assert_eq!(String::from_utf8(out).unwrap(), want);
        }
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

    #[test]
    fn unset_forgets_values() {
        let mut vars = Vars::new(1);
        vars.set("a", "1", Kind::Integer);
        vars.unset(["a"]);
        assert!(vars.get("a").is_none());
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
