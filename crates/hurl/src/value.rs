//! A query's value as Hurl types it (`runner::Value` in Hurl): what captures
//! keep, filters transform and predicates judge. Text and bytes borrow from the
//! answer where they can, so a `body contains` on every answer under load
//! copies nothing. Numbers keep Hurl's three kinds: an `i64`, a float, and an
//! integer beyond 64 bits kept as its digits (`1000000000000000000000 isInteger`
//! holds, as in Hurl).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use regex::Regex;

use crate::jsonpath::stream::Leaf;
use crate::template::{Kind, Vars, format_float};

/// A value, as a capture keeps it and a predicate judges it.
#[derive(Debug, Clone)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer beyond 64 bits: its digits (and sign) as written.
    BigInt(Box<str>),
    Float(f64),
    Str(Cow<'a, str>),
    Bytes(Cow<'a, [u8]>),
    Date(DateTime<Utc>),
    List(Vec<Value<'a>>),
    Object(Vec<(String, Value<'a>)>),
    /// An XPath node set: how many nodes.
    Nodeset(usize),
    Regex(Regex),
    /// A redirect: the status and where it pointed.
    Response {
        status: u16,
        location: Option<Cow<'a, str>>,
    },
    /// Something without a value (a cookie's `Secure` flag set).
    Unit,
}

/// The prefix of a JSON string that stands for an integer beyond 64 bits in a document read
/// by [`parse_json`] (a noncharacter and a word no answer sends).
pub(crate) const BIG: &str = "\u{FDD0}bigint:";

impl PartialEq for Value<'_> {
    /// Hurl's equality: numbers by value whatever their kind, lists and objects by members.
    fn eq(&self, other: &Value<'_>) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) | (Value::Unit, Value::Unit) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::Date(a), Value::Date(b)) => a == b,
            (Value::List(a), Value::List(b)) => a == b,
            (Value::Object(a), Value::Object(b)) => a == b,
            (Value::Nodeset(a), Value::Nodeset(b)) => a == b,
            (a, b) if a.is_number() && b.is_number() => a.compare(b) == Some(Ordering::Equal),
            _ => false,
        }
    }
}

impl<'a> Value<'a> {
    /// A leaf of the one-pass JSON reading as a query's value, as the general evaluator reads
    /// it: `Some(None)` for nothing found, `None` when it cannot tell (a float that may have been
    /// an integer beyond 64 bits, which the general evaluator keeps as an integer, or a string
    /// that begins as such an integer's mark, [`BIG`], does there).
    #[expect(clippy::option_option, reason = "cannot tell, nothing found, or a value")]
    pub(crate) fn from_leaf(l: &Leaf<'a>) -> Option<Option<Value<'a>>> {
        Some(match l {
            Leaf::Nothing => None,
            // A string the parsed document reads as a big integer (see [`BIG`]).
            Leaf::Str(s) if s.starts_with(BIG) => return None,
            Leaf::Str(s) => Some(Value::Str(Cow::Borrowed(*s))),
            Leaf::Int(n) => Some(Value::Int(*n)),
            Leaf::Value(serde_json::Value::Number(n))
                if n.as_f64().is_some_and(|f| f.fract() == 0.0 && f.abs() >= 9.2e18) =>
            {
                return None;
            }
            Leaf::Value(v) => Some(Value::from_json(v)),
        })
    }

    /// The value of a JSON document's node (strings copied; see [`BIG`]).
    pub fn from_json(v: &serde_json::Value) -> Value<'static> {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Value::Int(i),
                (None, _) if n.is_u64() => Value::BigInt(n.to_string().into()),
                (None, f) => Value::Float(f.unwrap_or(f64::NAN)),
            },
            serde_json::Value::String(s) => match s.strip_prefix(BIG) {
                Some(digits) => Value::BigInt(digits.into()),
                None => Value::Str(Cow::Owned(s.clone())),
            },
            serde_json::Value::Array(a) => Value::List(a.iter().map(Value::from_json).collect()),
            serde_json::Value::Object(o) => {
                Value::Object(o.iter().map(|(k, v)| (k.clone(), Value::from_json(v))).collect())
            }
        }
    }

    /// As JSON (a list or object captured, a value in a message).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Null | Value::Unit => serde_json::Value::Null,
            Value::Bool(b) => (*b).into(),
            Value::Int(n) => (*n).into(),
            Value::BigInt(s) => serde_json::from_str(s).unwrap_or_else(|_| s.to_string().into()),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into),
            Value::Str(s) => s.to_string().into(),
            Value::Bytes(b) => hex(b).into(),
            Value::Date(d) => format_date(d).into(),
            Value::List(l) => l.iter().map(Value::to_json).collect(),
            Value::Object(o) => {
                o.iter().map(|(k, v)| (k.clone(), v.to_json())).collect::<serde_json::Map<_, _>>().into()
            }
            Value::Nodeset(n) => (*n).into(),
            Value::Regex(r) => r.as_str().into(),
            Value::Response { status, location } => {
                serde_json::json!({"status": status, "location": location})
            }
        }
    }

    /// Owns what it borrows.
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Value::Str(s) => Value::Str(Cow::Owned(s.into_owned())),
            Value::Bytes(b) => Value::Bytes(Cow::Owned(b.into_owned())),
            Value::List(l) => Value::List(l.into_iter().map(Value::into_owned).collect()),
            Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, v.into_owned())).collect()),
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(b),
            Value::Int(n) => Value::Int(n),
            Value::BigInt(s) => Value::BigInt(s),
            Value::Float(f) => Value::Float(f),
            Value::Date(d) => Value::Date(d),
            Value::Nodeset(n) => Value::Nodeset(n),
            Value::Regex(r) => Value::Regex(r),
            Value::Response { status, location } => {
                Value::Response { status, location: location.map(|l| Cow::Owned(l.into_owned())) }
            }
            Value::Unit => Value::Unit,
        }
    }

    /// Hurl's name of its kind (`integer`, `string`, `list`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) | Value::BigInt(_) => "integer",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::Bytes(_) => "bytes",
            Value::Date(_) => "date",
            Value::List(_) => "list",
            Value::Object(_) => "object",
            Value::Nodeset(_) => "nodeset",
            Value::Regex(_) => "regex",
            Value::Response { .. } => "http response",
            Value::Unit => "unit",
        }
    }

    pub fn is_number(&self) -> bool {
        matches!(self, Value::Int(_) | Value::BigInt(_) | Value::Float(_))
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Hurl's order: strings as text, numbers by value, dates in time; `None` for others.
    pub fn compare(&self, other: &Value<'_>) -> Option<Ordering> {
        match (self, other) {
            (Value::Str(a), Value::Str(b)) => Some(a.as_ref().cmp(b.as_ref())),
            (Value::Date(a), Value::Date(b)) => Some(a.cmp(b)),
            (Value::Int(a), Value::Int(b)) => Some(a.cmp(b)),
            (Value::Int(a), Value::Float(b)) => Some(compare_floats(*a as f64, *b)),
            (Value::Float(a), Value::Int(b)) => Some(compare_floats(*a, *b as f64)),
            (Value::Float(a), Value::Float(b)) => Some(compare_floats(*a, *b)),
            (a, b) if a.is_number() && b.is_number() => {
                Some(compare_digits(&a.number_text(), &b.number_text()))
            }
            _ => None,
        }
    }

    /// A number as Hurl writes it (a whole float with `.0`).
    fn number_text(&self) -> String {
        match self {
            Value::Int(n) => n.to_string(),
            Value::BigInt(s) => s.to_string(),
            Value::Float(f) => format_float(*f),
            _ => String::new(),
        }
    }

    /// The size Hurl counts: a list's items, a string's bytes, a node set's nodes, an
    /// object's members, bytes.
    pub fn count(&self) -> Option<usize> {
        match self {
            Value::List(l) => Some(l.len()),
            Value::Str(s) => Some(s.len()),
            Value::Nodeset(n) => Some(*n),
            Value::Object(o) => Some(o.len()),
            Value::Bytes(b) => Some(b.len()),
            _ => None,
        }
    }

    /// The value as text where Hurl renders one into a template (`None` for a list, an
    /// object, bytes or a node set).
    pub fn render(&self) -> Option<Cow<'_, str>> {
        Some(match self {
            Value::Null => "null".into(),
            Value::Bool(b) => if *b { "true" } else { "false" }.into(),
            Value::Int(n) => itoa::Buffer::new().format(*n).to_owned().into(),
            Value::BigInt(s) => Cow::Borrowed(&**s),
            Value::Float(f) => format_float(*f).into(),
            Value::Str(s) => Cow::Borrowed(&**s),
            Value::Date(d) => format_date(d).into(),
            _ => return None,
        })
    }

    /// Keeps the value in `vars` as `name` (a capture). `Err` (its length) when that is
    /// longer than a capture may be ([`Vars::max_capture`]): the variable is then left
    /// without a value, and its buffer given back.
    pub fn set(&self, vars: &mut Vars, name: &str) -> Result<(), usize> {
        let i = vars.index(name);
        self.set_at(vars, i)
    }

    /// [`Value::set_at`] of `Value::Int(n)`, in line where the slot's buffer holds it already
    /// (a capture of the same integer, answer after answer).
    #[inline]
    pub(crate) fn set_int_at(n: i64, vars: &mut Vars, i: usize) -> Result<(), usize> {
        let mut digits = itoa::Buffer::new();
        let text = digits.format(n);
        if text.len() <= vars.max_capture && vars.keep_at(i, text, Kind::Integer) {
            return Ok(());
        }
        Value::Int(n).set_at(vars, i)
    }

    /// [`Value::set`] into slot `i` ([`Vars::index`]), its name already found.
    pub fn set_at(&self, vars: &mut Vars, i: usize) -> Result<(), usize> {
        let max = vars.max_capture;
        // A string or an integer, what captures nearly always take, is not copied again when
        // the slot's buffer holds it (the same capture, answer after answer).
        let mut digits = itoa::Buffer::new();
        let kept = match self {
            Value::Str(s) => Some((&**s, Kind::String)),
            Value::Int(n) => Some((digits.format(*n), Kind::Integer)),
            _ => None,
        };
        if let Some((text, kind)) = kept
            && text.len() <= max
            && vars.keep_at(i, text, kind)
        {
            return Ok(());
        }
        let slot = vars.slot_at(i);
        slot.text.clear();
        slot.kind = match self {
            Value::Str(s) => {
                slot.text.push_str(s);
                Kind::String
            }
            Value::Int(n) => {
                slot.text.push_str(itoa::Buffer::new().format(*n));
                Kind::Integer
            }
            Value::BigInt(s) => {
                slot.text.push_str(s);
                Kind::Integer
            }
            Value::Float(f) => {
                slot.text.push_str(&format_float(*f));
                Kind::Float
            }
            Value::Bool(b) => {
                slot.text.push_str(if *b { "true" } else { "false" });
                Kind::Bool
            }
            Value::Null | Value::Unit => {
                slot.text.push_str("null");
                Kind::Null
            }
            Value::Bytes(b) => {
                slot.text.push_str(&hex(b));
                Kind::Bytes
            }
            Value::Date(d) => {
                slot.text.push_str(&format_date(d));
                Kind::Date
            }
            Value::Nodeset(n) => {
                slot.text.push_str(itoa::Buffer::new().format(*n));
                Kind::Nodeset
            }
            v => {
                slot.text.push_str(&v.to_json().to_string());
                Kind::Json
            }
        };
        if slot.text.len() > max {
            let len = slot.text.len();
            slot.text = String::new();
            vars.unset_at(i);
            return Err(len);
        }
        // An answer's value: it may not write a request's host.
        vars.mark_untrusted(i);
        Ok(())
    }

    /// The value a variable holds, typed by its kind.
    pub fn of_var(v: &'a crate::template::Value) -> Value<'a> {
        match v.kind {
            Kind::String => Value::Str(Cow::Borrowed(&v.text)),
            Kind::Integer => {
                v.text.parse().map_or_else(|_| Value::BigInt(v.text.as_str().into()), Value::Int)
            }
            Kind::Float => Value::Float(v.text.parse().unwrap_or(f64::NAN)),
            Kind::Bool => Value::Bool(v.text == "true"),
            Kind::Null => Value::Null,
            Kind::Json => serde_json::from_str(&v.text).map_or(Value::Null, |j| Value::from_json(&j)),
            Kind::Bytes => Value::Bytes(Cow::Owned(unhex(&v.text))),
            Kind::Nodeset => Value::Nodeset(v.text.parse().unwrap_or(0)),
            Kind::Date => DateTime::parse_from_rfc3339(&v.text)
                .map_or_else(|_| Value::Str(Cow::Borrowed(&v.text)), |d| Value::Date(d.with_timezone(&Utc))),
        }
    }

    /// The actual value, for a failure message (long values are cut).
    pub fn describe(&self) -> String {
        let mut s = match self {
            Value::Str(s) => format!("{s:?}"),
            Value::Bytes(b) => format!("bytes <{}>", hex(b)),
            Value::Nodeset(n) => format!("a node set of {n}"),
            Value::Regex(r) => format!("/{}/", r.as_str()),
            Value::Unit => "present".to_owned(),
            Value::Date(d) => format!("date <{}>", format_date(d)),
            v => v.to_json().to_string(),
        };
        if s.len() > 200 {
            let mut cut = 200;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s.truncate(cut);
            s.push_str("...");
        }
        s
    }
}

/// A JSON document, integers beyond 64 bits kept as their digits (see [`BIG`]): serde's
/// reading would make them floats, and Hurl keeps them as integers.
pub fn parse_json(text: &[u8]) -> Result<serde_json::Value, serde_json::Error> {
    match big_integers(text) {
        None => serde_json::from_slice(text),
        Some(marked) => serde_json::from_slice(&marked),
    }
}

/// `text` with each integer of 20 digits or more made a string [`BIG`]`digits`, or `None`
/// when it has none (nearly always: one pass, no copy).
fn big_integers(text: &[u8]) -> Option<Vec<u8>> {
    let mut spans = Vec::new();
    let (mut i, mut in_str) = (0, false);
    while i < text.len() {
        let b = text[i];
        if in_str {
            match b {
                b'\\' => i += 1,
                b'"' => in_str = false,
                _ => {}
            }
        } else if b == b'"' {
            in_str = true;
        } else if b == b'-' || b.is_ascii_digit() {
            let start = i;
            i += usize::from(b == b'-');
            while i < text.len() && text[i].is_ascii_digit() {
                i += 1;
            }
            let integral = !matches!(text.get(i), Some(b'.' | b'e' | b'E'));
            let digits = &text[start..i];
            if integral
                && std::str::from_utf8(digits)
                    .is_ok_and(|d| d.parse::<i64>().is_err() && d.parse::<u64>().is_err())
            {
                spans.push(start..i);
            }
            while i < text.len() && matches!(text[i], b'.' | b'e' | b'E' | b'+' | b'-' | b'0'..=b'9') {
                i += 1;
            }
            continue;
        }
        i += 1;
    }
    if spans.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() + spans.len() * 16);
    let mut from = 0;
    for s in spans {
        out.extend_from_slice(&text[from..s.start]);
        out.push(b'"');
        out.extend_from_slice(BIG.as_bytes());
        out.extend_from_slice(&text[s.clone()]);
        out.push(b'"');
        from = s.end;
    }
    out.extend_from_slice(&text[from..]);
    Some(out)
}

fn compare_floats(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// Two numbers written in decimal, compared by value (Hurl's order of big integers).
fn compare_digits(a: &str, b: &str) -> Ordering {
    fn parts(s: &str) -> (bool, &str, &str) {
        let (neg, s) = s.strip_prefix('-').map_or((false, s), |r| (true, r));
        let (i, d) = s.split_once('.').unwrap_or((s, ""));
        (neg, i.trim_start_matches('0'), d.trim_end_matches('0'))
    }
    let ((na, ia, da), (nb, ib, db)) = (parts(a), parts(b));
    let magnitude = ia.len().cmp(&ib.len()).then_with(|| ia.cmp(ib)).then_with(|| da.cmp(db));
    match (na, nb) {
        (false, false) => magnitude,
        (true, true) => magnitude.reverse(),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
    }
}

/// A date as Hurl renders one: `%Y-%m-%dT%H:%M:%S.%6fZ`.
pub fn format_date(d: &DateTime<Utc>) -> String {
    d.format("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()
}

/// Lower-case hex.
pub fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        write!(s, "{x:02x}").expect("writing to a String cannot fail");
    }
    s
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).filter_map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn big_integers_stay_integers() {
        let doc = parse_json(br#"{"a": 1000000000000000000000, "b": -12345678901234567890123, "c": 1.5e30, "d": "1000000000000000000000", "e": 9223372036854775807}"#).unwrap();
        assert_eq!(Value::from_json(&doc["a"]), Value::BigInt("1000000000000000000000".into()));
        assert_eq!(Value::from_json(&doc["b"]).kind(), "integer");
        assert_eq!(Value::from_json(&doc["c"]).kind(), "float");
        assert_eq!(Value::from_json(&doc["d"]).kind(), "string");
        assert_eq!(Value::from_json(&doc["e"]), Value::Int(i64::MAX));
        assert!(big_integers(br#"{"a": [1, 2.5, "x\"1234567890123456789012"]}"#).is_none());
    }

    #[test]
    fn numbers_compare_across_kinds() {
        assert_eq!(Value::Int(3), Value::Float(3.0));
        assert_eq!(
            Value::BigInt("1000000000000000000000".into()).compare(&Value::Int(5)),
            Some(Ordering::Greater)
        );
        assert_eq!(
            Value::BigInt("-1000000000000000000000".into()).compare(&Value::Int(5)),
            Some(Ordering::Less)
        );
        assert_ne!(Value::Int(1), Value::Str("1".into()));
        assert_eq!(Value::Str("a".into()).compare(&Value::Int(1)), None);
    }

    proptest! {
        /// A capture set over the buffer its slot keeps from the value before (forgotten or
        /// not, as an iteration forgets its captures) leaves the variable as a slot that
        /// never held a value does: its text, kind, whether it is set and from an answer, or
        /// the refusal of a value longer than a capture may be.
        #[test]
        fn a_capture_set_again_is_set_as_a_new_one(
            values in proptest::collection::vec(
                (prop_oneof![
                    (0i64..3).prop_map(Value::Int),
                    "[0-3]{0,2}".prop_map(|s| Value::Str(s.into())),
                    Just(Value::Float(1.0)),
                    Just(Value::Bool(true)),
                ], any::<bool>()),
                1..8,
            ),
            max in 0usize..3,
        ) {
            let mut kept = Vars::new(1);
            kept.max_capture = max;
            let slot = kept.index("c");
            for (v, forget) in &values {
                if *forget {
                    kept.unset_at(slot);
                }
                let mut new = Vars::new(1);
                new.max_capture = max;
                let fresh = new.index("c");
                prop_assert_eq!(v.set_at(&mut kept, slot), v.set_at(&mut new, fresh));
                prop_assert_eq!(kept.get_at(slot), new.get_at(fresh));
                prop_assert_eq!(kept.untrusted("c"), new.untrusted("c"));
            }
        }
    }
}
