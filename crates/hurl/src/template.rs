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

use bytes::BufMut;

use stackbench_contract::rng::SplitMix64;

use crate::error::Pos;

pub mod compiled;
mod head;
mod placeholder;

pub use head::{MAX_HEAD_VALUES, RenderError, Unwritable, unsafe_byte};
pub use placeholder::{Expr, ExprStart, Filter, FilterKind, IntArg, RegexArg};

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

/// A variable's value: its text and what the text stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    pub text: String,
    pub kind: Kind,
}

/// Whether a variable has a value, and whence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    None,
    /// From the file or the user.
    Value,
    /// From an answer (a capture) or a data row: it may not write a request's host.
    Untrusted,
}

/// The variables of one iteration (few: a linear scan beats hashing) and the
/// generators' random source.
#[derive(Debug, Clone)]
pub struct Vars {
    slots: Vec<(Box<str>, Value, Held)>,
    pub rng: SplitMix64,
    /// Values never shown: `--secret`s and `redact` captures.
    secrets: Vec<Box<str>>,
    /// The longest value a capture may take ([`crate::files::Limits::max_capture`]).
    pub max_capture: usize,
}

impl Vars {
    pub fn new(seed: u64) -> Vars {
        Vars {
            slots: Vec::new(),
            rng: SplitMix64(seed),
            secrets: Vec::new(),
            max_capture: crate::files::DEFAULT_MAX_CAPTURE,
        }
    }

    /// Keeps `value` from being shown in any message ([`Vars::redact`]).
    pub fn add_secret(&mut self, value: &str) {
        if !value.is_empty() && !self.secrets.iter().any(|s| **s == *value) {
            self.secrets.push(value.into());
        }
    }

    /// `text` with every secret value replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for s in &self.secrets {
            out = out.replace(&**s, "***");
        }
        out
    }

    /// Sets `name`, reusing its previous text buffer.
    pub fn set(&mut self, name: &str, text: &str, kind: Kind) {
        let i = self.index(name);
        self.set_at(i, text, kind);
    }

    /// Sets slot `i` ([`Vars::index`]), reusing its previous text buffer.
    pub fn set_at(&mut self, i: usize, text: &str, kind: Kind) {
        let v = self.slot_at(i);
        v.text.clear();
        v.text.push_str(text);
        v.kind = kind;
    }

    /// The value buffer of `name` to fill in place (it becomes set).
    pub fn slot(&mut self, name: &str) -> &mut Value {
        let i = self.index(name);
        self.slot_at(i)
    }

    /// The value buffer of slot `i` ([`Vars::index`], it becomes set) and the random source.
    pub fn slot_and_rng_at(&mut self, i: usize) -> (&mut Value, &mut SplitMix64) {
        self.slots[i].2 = Held::Value;
        (&mut self.slots[i].1, &mut self.rng)
    }

    /// The value of `name`, if set in this iteration.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.get_at(self.find(name)?)
    }

    /// Forgets the values of `names` (the captures), keeping their buffers.
    pub fn unset<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) {
        for name in names {
            if let Some(s) = self.slots.iter_mut().find(|(n, _, _)| **n == *name) {
                s.2 = Held::None;
            }
        }
    }

    /// The slot of `name`, made (without a value) when it has none: where a compiled
    /// template ([`crate::compiled`]) finds the variable without looking its name up.
    pub fn index(&mut self, name: &str) -> usize {
        self.find(name).unwrap_or_else(|| {
            self.slots.push((name.into(), Value { text: String::new(), kind: Kind::Null }, Held::None));
            self.slots.len() - 1
        })
    }

    /// [`Vars::index`], tried first at `hint` (the slot `name` had in the variables a
    /// compiled check was worked out with): one comparison where those variables are laid
    /// out as these, a search where they are not.
    #[inline]
    pub fn index_at(&mut self, hint: usize, name: &str) -> usize {
        match self.slots.get(hint) {
            Some((n, _, _)) if **n == *name => hint,
            _ => self.index(name),
        }
    }

    fn find(&self, name: &str) -> Option<usize> {
        self.slots.iter().position(|(n, _, _)| **n == *name)
    }

    /// The value in slot `i` ([`Vars::index`]), if set in this iteration.
    pub fn get_at(&self, i: usize) -> Option<&Value> {
        self.slots.get(i).filter(|s| s.2 != Held::None).map(|(_, v, _)| v)
    }

    /// The value buffer of slot `i` ([`Vars::index`]) to fill in place (it becomes set, from
    /// the file or the user).
    pub fn slot_at(&mut self, i: usize) -> &mut Value {
        let s = &mut self.slots[i];
        s.2 = Held::Value;
        &mut s.1
    }

    /// Forgets the value of slot `i`, keeping its buffer.
    pub fn unset_at(&mut self, i: usize) {
        if let Some(s) = self.slots.get_mut(i) {
            s.2 = Held::None;
        }
    }

    /// Says that the value of slot `i`, if it has one, came from an answer or a data row: it
    /// may not write a request's host ([`Vars::untrusted`]).
    pub fn mark_untrusted(&mut self, i: usize) {
        if let Some(s) = self.slots.get_mut(i).filter(|s| s.2 != Held::None) {
            s.2 = Held::Untrusted;
        }
    }

    /// Whether `name` has a value from an answer (a capture) or a data row.
    pub fn untrusted(&self, name: &str) -> bool {
        self.find(name).is_some_and(|i| self.slots[i].2 == Held::Untrusted)
    }

    /// What a reference to `name`, written as `escape` says, stands for in these variables:
    /// a generator, or the variable's slot (made when it has none).
    pub fn hole(&mut self, name: &str, escape: Escape) -> Hole {
        let quoted = escape == Escape::JsonValue;
        match name {
            "newUuid" => Hole::Uuid { quoted },
            "newDate" => Hole::Date { quoted },
            _ => Hole::Var { slot: self.index(name) as u32, escape },
        }
    }

    /// Writes `name`'s value (or a generator's) into `out` as `escape` says; `Err` when it
    /// has none.
    pub(crate) fn write(&mut self, name: &str, escape: Escape, out: &mut Vec<u8>) -> Result<(), ()> {
        let hole = match name {
            "newUuid" | "newDate" => self.hole(name, escape),
            _ => Hole::Var { slot: self.find(name).ok_or(())? as u32, escape },
        };
        self.fill(hole, out).ok_or(())
    }

    /// Writes what `hole` stands for into `out`: the one writer of a template's variables,
    /// for [`Template::render`] and compiled templates alike. `None` when its variable has no
    /// value in this iteration.
    pub fn fill(&mut self, hole: Hole, out: &mut impl BufMut) -> Option<()> {
        let (slot, escape) = match hole {
            Hole::Uuid { quoted } => {
                let (hi, lo) = (self.rng.next_u64(), self.rng.next_u64());
                write_uuid(hi, lo, quoted, out);
                return Some(());
            }
            Hole::Date { quoted } => {
                let q = if quoted { "\"" } else { "" };
                let now = humantime::format_rfc3339_micros(SystemTime::now());
                write!(out.writer(), "{q}{now}{q}").expect("writing to a buffer cannot fail");
                return Some(());
            }
            Hole::Var { slot, escape } => (slot, escape),
        };
        let v = self.get_at(slot as usize)?;
        match (escape, v.kind) {
            (Escape::Plain, _)
            | (
                Escape::JsonValue,
                Kind::Integer | Kind::Float | Kind::Bool | Kind::Null | Kind::Json | Kind::Nodeset,
            ) => {
                out.put_slice(v.text.as_bytes());
            }
            (Escape::JsonString, _) => json_escape(&v.text, out),
            (Escape::JsonValue, Kind::String | Kind::Bytes | Kind::Date) => {
                out.put_u8(b'"');
                json_escape(&v.text, out);
                out.put_u8(b'"');
            }
        }
        Some(())
    }
}

/// A variable reference resolved against one [`Vars`]: a generator, or a variable's slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hole {
    /// `{{newUuid}}`; `quoted` in place of a JSON value.
    Uuid {
        quoted: bool,
    },
    /// `{{newDate}}`; `quoted` in place of a JSON value.
    Date {
        quoted: bool,
    },
    Var {
        slot: u32,
        escape: Escape,
    },
}

impl Hole {
    /// The length of what it writes, when that is always the same.
    pub fn fixed_len(self) -> Option<usize> {
        match self {
            Hole::Uuid { quoted } => Some(36 + 2 * usize::from(quoted)),
            Hole::Date { .. } | Hole::Var { .. } => None,
        }
    }
}

/// A version-4 UUID (RFC 9562) from 128 random bits, lower-case hex: the 32 digits made at
/// once ([`hex_digits`]), placed between the dashes, appended once.
fn write_uuid(hi: u64, lo: u64, quoted: bool, out: &mut impl BufMut) {
    let hi = (hi & !0xF000) | 0x4000; // version 4
    let lo = (lo & !(0b11 << 62)) | (0b10 << 62); // variant 10
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: SSE2, which `hex_digits` enables, is part of every x86-64 CPU (the baseline
    // this target compiles for).
    let (h, l) = unsafe { hex_digits(hi, lo) };
    #[cfg(not(target_arch = "x86_64"))]
    let (h, l) = hex_digits(hi, lo);
    let mut text = *b"\"00000000-0000-0000-0000-000000000000\"";
    text[1..9].copy_from_slice(&h[..8]);
    text[10..14].copy_from_slice(&h[8..12]);
    text[15..19].copy_from_slice(&h[12..]);
    text[20..24].copy_from_slice(&l[..4]);
    text[25..37].copy_from_slice(&l[4..]);
    // Each length a constant: a few moves, not a call to copy a length known only here.
    if quoted {
        out.put_slice(&text);
    } else {
        out.put_slice(&text[1..37]);
    }
}

/// The 16 lower-case hex digits of `hi` and of `lo`, most significant first: SSE2 (every
/// x86-64 has it) makes all 32 in a few vector operations.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn hex_digits(hi: u64, lo: u64) -> ([u8; 16], [u8; 16]) {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_and_si128, _mm_cmpgt_epi8, _mm_cvtsi128_si64, _mm_set_epi64x,
        _mm_set1_epi8, _mm_srli_epi16, _mm_unpackhi_epi8, _mm_unpackhi_epi64, _mm_unpacklo_epi8,
    };
    // Byte `j` of the text order (`hi`'s most significant first) in lane `j`.
    let v = _mm_set_epi64x(lo.swap_bytes() as i64, hi.swap_bytes() as i64);
    let nibble = _mm_set1_epi8(0x0F);
    let (high, low) = (_mm_and_si128(_mm_srli_epi16::<4>(v), nibble), _mm_and_si128(v, nibble));
    // `0`..`9`, then `a`..`f`: 0x27 more from 10 on.
    let digits = |n: __m128i| {
        let letters = _mm_and_si128(_mm_cmpgt_epi8(n, _mm_set1_epi8(9)), _mm_set1_epi8(0x27));
        _mm_add_epi8(_mm_add_epi8(n, _mm_set1_epi8(0x30)), letters)
    };
    let bytes = |x: __m128i| {
        let mut o = [0; 16];
        o[..8].copy_from_slice(&_mm_cvtsi128_si64(x).to_le_bytes());
        o[8..].copy_from_slice(&_mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)).to_le_bytes());
        o
    };
    // Each byte's high nibble, then its low one.
    (bytes(digits(_mm_unpacklo_epi8(high, low))), bytes(digits(_mm_unpackhi_epi8(high, low))))
}

/// [`hex_digits`] elsewhere, with word operations.
#[cfg(not(target_arch = "x86_64"))]
fn hex_digits(hi: u64, lo: u64) -> ([u8; 16], [u8; 16]) {
    (hex(hi), hex(lo))
}

/// The 16 lower-case hex digits of `x`, most significant first.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn hex(x: u64) -> [u8; 16] {
    /// The eight nibbles of `x` one per byte, the most significant in the lowest byte.
    fn spread(x: u32) -> u64 {
        // Byte `j` of the text order (most significant first) to byte `2j`, ...
        let z = u64::from(x.swap_bytes());
        let z = (z | z << 16) & 0x0000_FFFF_0000_FFFF;
        let z = (z | z << 8) & 0x00FF_00FF_00FF_00FF;
        // ... then its high nibble stays there and its low one goes to byte `2j + 1`.
        ((z >> 4) & 0x000F_000F_000F_000F) | ((z & 0x000F_000F_000F_000F) << 8)
    }
    const ONES: u64 = 0x0101_0101_0101_0101;
    let digits = |n: u64| {
        // `0`..`9`, then `a`..`f`: 0x27 more from 10 on.
        let letters = ((n + 6 * ONES) >> 4) & ONES;
        (n + 0x30 * ONES + letters * 0x27).to_le_bytes()
    };
    let mut out = [0; 16];
    out[..8].copy_from_slice(&digits(spread((x >> 32) as u32)));
    out[8..].copy_from_slice(&digits(spread(x as u32)));
    out
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

        /// The digits made at once are those of the word operations, on every machine.
        #[test]
        fn hex_digits_are_the_words_digits(hi in any::<u64>(), lo in any::<u64>()) {
            #[cfg(target_arch = "x86_64")]
            #[allow(unsafe_code)]
            // SAFETY: as in `write_uuid`: every x86-64 CPU has SSE2.
            let digits = unsafe { hex_digits(hi, lo) };
            #[cfg(not(target_arch = "x86_64"))]
            let digits = hex_digits(hi, lo);
            prop_assert_eq!(digits, (hex(hi), hex(lo)));
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

        /// The word-at-a-time test finds what a byte-by-byte look finds, wherever it lies.
        #[test]
        fn needs_escape_finds_every_escaped_byte(s in "[a-z~\"\\\\\\x00-\\x1f\\x7f-\\u{3ff}]{0,24}") {
            let want = s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\');
            prop_assert_eq!(needs_escape(s.as_bytes()), want);
        }

        /// A slot found from a hint is the one the search finds, whether the hint is right,
        /// another variable's slot or past the end; the variables are left as the search
        /// leaves them.
        #[test]
        fn a_hinted_slot_is_the_searched_one(names in proptest::collection::vec("[a-c]{1,2}", 0..6), name in "[a-c]{1,2}", hint in 0..8usize) {
            let mut hinted = Vars::new(1);
            for n in &names {
                hinted.index(n);
            }
            let mut searched = hinted.clone();
            prop_assert_eq!(hinted.index_at(hint, &name), searched.index(&name));
            prop_assert_eq!(hinted.slots, searched.slots);
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
