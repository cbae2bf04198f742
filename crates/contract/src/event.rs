//! The event of the `event-log` and `dummy` scenarios: parsing and validation of
//! a request body, exactly as the contract's table says.
//!
//! | field | required | rule |
//! |---|---|---|
//! | `type` | yes | string, 1–64 chars of `[A-Za-z0-9_.:-]` |
//! | `source` | no | same rule; default `"unknown"` |
//! | `value` | no | finite JSON number; default `1.0` |
//! | `timestamp` | no | integer ms since the Unix epoch, `0 <= t < 2^53`; default: server time |
//!
//! Unknown keys are ignored. An explicit `null` for an optional field means
//! "use the default"; a key given twice is an error (JSON parsers disagree on
//! which one wins, so we refuse to guess).
//!
//! The parser works on the raw bytes with `serde_json`'s `RawValue`, so that
//! every error can name its field (serde's own type errors do not) and a body
//! without escapes is validated without allocating. A one-pass fast path
//! ([`fast`]) takes the bodies clients actually send first, and leaves
//! everything else, valid or not, to the serde path.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

mod fast;

/// Longest `type` or `source`, in characters.
pub const MAX_NAME_LEN: usize = 64;
/// Exclusive upper bound of `timestamp` (2^53, the largest integer a double holds exactly).
pub const TIMESTAMP_LIMIT: u64 = 1 << 53;
/// `source` when the body has none.
pub const DEFAULT_SOURCE: &str = "unknown";
/// `value` when the body has none.
pub const DEFAULT_VALUE: f64 = 1.0;
/// The characters allowed in `type` and `source`, as people read them.
pub const NAME_CHARSET: &str = "A-Z a-z 0-9 _ . : -";

/// A validated event. `kind` is the JSON field `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event<'a> {
    #[serde(rename = "type")]
    pub kind: Cow<'a, str>,
    pub source: Cow<'a, str>,
    pub value: f64,
    /// `None` when the body had no timestamp: the server stamps it.
    #[serde(rename = "timestamp", skip_serializing_if = "Option::is_none")]
    pub timestamp_ms: Option<u64>,
}

impl Event<'_> {
    /// The event with borrowed strings copied, to outlive the request body.
    pub fn into_owned(self) -> Event<'static> {
        Event {
            kind: Cow::Owned(self.kind.into_owned()),
            source: Cow::Owned(self.source.into_owned()),
            value: self.value,
            timestamp_ms: self.timestamp_ms,
        }
    }

    /// The timestamp to store: the event's own, or `now_ms` when it had none.
    pub fn timestamp_or(&self, now_ms: u64) -> u64 {
        self.timestamp_ms.unwrap_or(now_ms)
    }

    /// The event as a JSON body that [`parse_event`] accepts.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("an event always serializes")
    }
}

/// The fields of an event, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    Type,
    Source,
    Value,
    Timestamp,
}

impl Field {
    /// The JSON key.
    pub const fn name(self) -> &'static str {
        match self {
            Field::Type => "type",
            Field::Source => "source",
            Field::Value => "value",
            Field::Timestamp => "timestamp",
        }
    }

    /// Every field, in the contract's order.
    const ALL: [Field; 4] = [Field::Type, Field::Source, Field::Value, Field::Timestamp];

    fn from_key(key: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|f| f.name() == key)
    }

    /// What a correct value of this field looks like.
    const fn rule(self) -> &'static str {
        match self {
            Field::Type | Field::Source => "a string of 1-64 characters from A-Z a-z 0-9 _ . : -",
            Field::Value => "a finite number",
            Field::Timestamp => "an integer number of milliseconds since the Unix epoch, 0 <= t < 2^53",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a body is not a valid event. Every message names the field and the rule,
/// so it can go straight into the `{"error": ...}` of a 400.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EventError {
    #[error("the body is not valid JSON ({0}); send an object like {{\"type\": \"page_view\"}}")]
    Malformed(String),
    #[error("the body must be a JSON object like {{\"type\": \"page_view\"}}, not {0}")]
    NotAnObject(&'static str),
    #[error("field `type` is required: {rule}", rule = Field::Type.rule())]
    MissingType,
    #[error("field `{0}` appears more than once; send it once")]
    Duplicate(Field),
    #[error("field `{field}` must be {rule}, not {found}", rule = field.rule())]
    WrongType { field: Field, found: &'static str },
    #[error("field `{field}` must be 1-64 characters long, got {len}")]
    BadLength { field: Field, len: usize },
    #[error("field `{field}` may only contain {NAME_CHARSET}; found {ch:?} at character {position}")]
    BadChar { field: Field, ch: char, position: usize },
    #[error("field `value` must be a finite number, got {0}")]
    NotFinite(String),
    #[error("field `timestamp` must be an integer number of milliseconds, got {0}")]
    NotInteger(String),
    #[error("field `timestamp` must be in 0 <= t < 2^53 (9007199254740992), got {0}")]
    OutOfRange(String),
}

impl EventError {
    /// The field this error is about, if it is about one.
    pub fn field(&self) -> Option<Field> {
        match self {
            EventError::Malformed(_) | EventError::NotAnObject(_) => None,
            EventError::MissingType => Some(Field::Type),
            EventError::Duplicate(field)
            | EventError::WrongType { field, .. }
            | EventError::BadLength { field, .. }
            | EventError::BadChar { field, .. } => Some(*field),
            EventError::NotFinite(_) => Some(Field::Value),
            EventError::NotInteger(_) | EventError::OutOfRange(_) => Some(Field::Timestamp),
        }
    }
}

/// Parses and validates a request body.
pub fn parse_event(body: &[u8]) -> Result<Event<'_>, EventError> {
    match fast::parse(body) {
        Some(event) => Ok(event),
        None => parse_event_with_serde(body),
    }
}

/// [`parse_event`] without its fast path: every body, every error message.
/// The same answers as [`parse_event`], slower; the reference the fast path is
/// tested and measured against (`crates/serve/examples/event_parse.rs`).
pub fn parse_event_with_serde(body: &[u8]) -> Result<Event<'_>, EventError> {
    let first = body.iter().copied().find(|b| !b.is_ascii_whitespace());
    if first != Some(b'{') {
        // Say what it is when it is JSON at all, else why it is not JSON.
        return Err(match serde_json::from_slice::<&RawValue>(body) {
            Ok(raw) => EventError::NotAnObject(json_kind(raw.get())),
            Err(e) => EventError::Malformed(e.to_string()),
        });
    }
    let raw =
        serde_json::from_slice::<RawEvent<'_>>(body).map_err(|e| EventError::Malformed(e.to_string()))?;
    if let Some(field) = raw.duplicate {
        return Err(EventError::Duplicate(field));
    }
    let kind = match raw.kind {
        None => return Err(EventError::MissingType),
        Some(raw) => name(Field::Type, raw)?,
    };
    let source = match raw.source.filter(|r| !is_null(r)) {
        None => Cow::Borrowed(DEFAULT_SOURCE),
        Some(raw) => name(Field::Source, raw)?,
    };
    let value = match raw.value.filter(|r| !is_null(r)) {
        None => DEFAULT_VALUE,
        Some(raw) => value(raw)?,
    };
    let timestamp_ms = match raw.timestamp.filter(|r| !is_null(r)) {
        None => None,
        Some(raw) => Some(timestamp(raw)?),
    };
    Ok(Event { kind, source, value, timestamp_ms })
}

/// Is `b` one of the characters of `type` and `source` ([`NAME_CHARSET`])?
const fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-')
}

/// Is `s` a valid `type`/`source`? `Err` says why, for `field`.
pub fn validate_name(field: Field, s: &str) -> Result<(), EventError> {
    let mut len = 0;
    for (position, ch) in s.chars().enumerate() {
        if !u8::try_from(ch).is_ok_and(is_name_byte) {
            return Err(EventError::BadChar { field, ch, position });
        }
        len += 1;
    }
    if len == 0 || len > MAX_NAME_LEN {
        return Err(EventError::BadLength { field, len });
    }
    Ok(())
}

fn name(field: Field, raw: &RawValue) -> Result<Cow<'_, str>, EventError> {
    let text = raw.get();
    if !text.starts_with('"') {
        return Err(EventError::WrongType { field, found: json_kind(text) });
    }
    let inner = &text[1..text.len() - 1];
    let s = if inner.contains('\\') {
        Cow::Owned(serde_json::from_str::<String>(text).map_err(|e| EventError::Malformed(e.to_string()))?)
    } else {
        Cow::Borrowed(inner)
    };
    validate_name(field, &s)?;
    Ok(s)
}

fn value(raw: &RawValue) -> Result<f64, EventError> {
    let text = raw.get();
    if !is_number(text) {
        return Err(EventError::WrongType { field: Field::Value, found: json_kind(text) });
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(EventError::NotFinite(text.to_owned())),
    }
}

fn timestamp(raw: &RawValue) -> Result<u64, EventError> {
    let text = raw.get();
    if !is_number(text) {
        return Err(EventError::WrongType { field: Field::Timestamp, found: json_kind(text) });
    }
    if text.contains(['.', 'e', 'E']) {
        return Err(EventError::NotInteger(text.to_owned()));
    }
    if let Some(magnitude) = text.strip_prefix('-') {
        // "-0" is zero, every other negative is out of range.
        return if magnitude.bytes().all(|b| b == b'0') {
            Ok(0)
        } else {
            Err(EventError::OutOfRange(text.to_owned()))
        };
    }
    match text.parse::<u64>() {
        Ok(t) if t < TIMESTAMP_LIMIT => Ok(t),
        _ => Err(EventError::OutOfRange(text.to_owned())),
    }
}

fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

fn is_number(text: &str) -> bool {
    text.starts_with(|c: char| c == '-' || c.is_ascii_digit())
}

/// The JSON type of a raw value, as an article and a noun for messages.
fn json_kind(text: &str) -> &'static str {
    match text.as_bytes().first() {
        Some(b'"') => "a string",
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// The body split into the four known fields, unvalidated.
#[derive(Default)]
struct RawEvent<'a> {
    kind: Option<&'a RawValue>,
    source: Option<&'a RawValue>,
    value: Option<&'a RawValue>,
    timestamp: Option<&'a RawValue>,
    /// The first known key seen twice; the rest of the body is still parsed so
    /// that malformed JSON is reported as such.
    duplicate: Option<Field>,
}

impl<'de> Deserialize<'de> for RawEvent<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(RawEventVisitor)
    }
}

struct RawEventVisitor;

impl<'de> Visitor<'de> for RawEventVisitor {
    type Value = RawEvent<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an event object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut raw = RawEvent::default();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let Some(field) = Field::from_key(&key.0) else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let slot = match field {
                Field::Type => &mut raw.kind,
                Field::Source => &mut raw.source,
                Field::Value => &mut raw.value,
                Field::Timestamp => &mut raw.timestamp,
            };
            let value = map.next_value::<&'de RawValue>()?;
            if slot.is_some() {
                raw.duplicate.get_or_insert(field);
            } else {
                *slot = Some(value);
            }
        }
        Ok(raw)
    }
}

/// A map key, borrowed when it has no escapes.
pub(crate) struct Key<'a>(pub(crate) Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(body: &str) -> EventError {
        parse_event(body.as_bytes()).expect_err(body)
    }

    #[test]
    fn the_contract_example_is_accepted() {
        let e = parse_event(
            br#"{"type": "page_view", "source": "web", "value": 1.5, "timestamp": 1764460800000}"#,
        )
        .unwrap();
        assert_eq!(e.kind, "page_view");
        assert_eq!(e.source, "web");
        assert!((e.value - 1.5).abs() < f64::EPSILON);
        assert_eq!(e.timestamp_ms, Some(1_764_460_800_000));
    }

    #[test]
    fn defaults_apply_to_missing_and_null_fields() {
        for body in [r#"{"type":"a"}"#, r#"{"type":"a","source":null,"value":null,"timestamp":null}"#] {
            let e = parse_event(body.as_bytes()).unwrap();
            assert_eq!(e.source, DEFAULT_SOURCE);
            assert!((e.value - DEFAULT_VALUE).abs() < f64::EPSILON);
            assert_eq!(e.timestamp_ms, None);
            assert_eq!(e.timestamp_or(42), 42);
        }
    }

    #[test]
    fn unknown_keys_are_ignored_whatever_their_type() {
        let e = parse_event(br#"{"x":{"deep":[1,{"y":null}]},"type":"t","z":"\u00e9"}"#).unwrap();
        assert_eq!(e.kind, "t");
    }

    #[test]
    fn escaped_strings_are_decoded_then_validated() {
        let e = parse_event(br#"{"type":"page\u005fview"}"#).unwrap();
        assert_eq!(e.kind, "page_view");
        assert!(matches!(err(r#"{"type":"a\u0020b"}"#), EventError::BadChar { ch: ' ', .. }));
    }

    #[test]
    fn name_limits() {
        assert!(parse_event(format!(r#"{{"type":"{}"}}"#, "a".repeat(64)).as_bytes()).is_ok());
        assert_eq!(
            err(&format!(r#"{{"type":"{}"}}"#, "a".repeat(65))),
            EventError::BadLength { field: Field::Type, len: 65 }
        );
        assert_eq!(err(r#"{"type":""}"#), EventError::BadLength { field: Field::Type, len: 0 });
        assert_eq!(
            err(r#"{"type":"ok","source":"wé"}"#),
            EventError::BadChar { field: Field::Source, ch: 'é', position: 1 }
        );
    }

    #[test]
    fn value_rules() {
        assert_eq!(err(r#"{"type":"t","value":1e400}"#), EventError::NotFinite("1e400".into()));
        assert_eq!(
            err(r#"{"type":"t","value":"1"}"#),
            EventError::WrongType { field: Field::Value, found: "a string" }
        );
        assert!(parse_event(br#"{"type":"t","value":-1.7976931348623157e308}"#).is_ok());
    }

    #[test]
    fn timestamp_rules() {
        assert_eq!(parse_event(br#"{"type":"t","timestamp":0}"#).unwrap().timestamp_ms, Some(0));
        assert_eq!(parse_event(br#"{"type":"t","timestamp":-0}"#).unwrap().timestamp_ms, Some(0));
        let max = TIMESTAMP_LIMIT - 1;
        assert_eq!(
            parse_event(format!(r#"{{"type":"t","timestamp":{max}}}"#).as_bytes()).unwrap().timestamp_ms,
            Some(max)
        );
        for bad in ["9007199254740992", "-1", "184467440737095516150"] {
            assert!(
                matches!(err(&format!(r#"{{"type":"t","timestamp":{bad}}}"#)), EventError::OutOfRange(_)),
                "{bad}"
            );
        }
        for bad in ["1.5", "1e3", "1.0"] {
            assert!(
                matches!(err(&format!(r#"{{"type":"t","timestamp":{bad}}}"#)), EventError::NotInteger(_)),
                "{bad}"
            );
        }
    }

    #[test]
    fn body_shape_errors() {
        assert!(matches!(err(""), EventError::Malformed(_)));
        assert!(matches!(err("{\"type\":"), EventError::Malformed(_)));
        assert!(matches!(err("{\"type\":\"a\"} trailing"), EventError::Malformed(_)));
        assert_eq!(err("[1]"), EventError::NotAnObject("an array"));
        assert_eq!(err(" 12 "), EventError::NotAnObject("a number"));
        assert_eq!(err("{}"), EventError::MissingType);
        assert_eq!(err(r#"{"type":"a","type":"b"}"#), EventError::Duplicate(Field::Type));
        assert_eq!(err(r#"{"type":null}"#), EventError::WrongType { field: Field::Type, found: "null" });
    }

    #[test]
    fn messages_name_the_field_and_the_rule() {
        let msg = err(r#"{"type":"bad type"}"#).to_string();
        assert!(msg.contains("`type`") && msg.contains("A-Z a-z 0-9"), "{msg}");
        let msg = err(r#"{"type":"t","timestamp":true}"#).to_string();
        assert!(msg.contains("`timestamp`") && msg.contains("a boolean"), "{msg}");
    }

    #[test]
    fn clean_bodies_borrow() {
        let e = parse_event(br#"{"type":"a","source":"b"}"#).unwrap();
        assert!(matches!(e.kind, Cow::Borrowed(_)) && matches!(e.source, Cow::Borrowed(_)));
    }
}
