//! Response checkers for the reference contestants' own tests: is this response the
//! right answer to that request? (Under load and in `verify`, the built-in scenarios'
//! files check the answers; these say the same in Rust, next to the servers' code.)
//!
//! The success path allocates nothing: JSON is read with borrowed deserializers and
//! protobuf with [`crate::bubble::for_each_in_list`]. For gRPC, pass HTTP status 200,
//! content type `application/grpc` and the unframed message.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::contract::is_json_content_type;
use crate::dbread;
use crate::event::Key;

/// The parts of a response a checker looks at.
#[derive(Debug, Clone, Copy)]
pub struct ResponseView<'a> {
    pub status: u16,
    /// The `Content-Type` header value, if any.
    pub content_type: Option<&'a [u8]>,
    pub body: &'a [u8],
}

/// What the right answer to a request looks like. Cheap to clone.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// `event-log`: `200 {"count": N}` with `N >= min`.
    Count { min: u64 },
    /// `dummy`: `200 {"count": N}` with exactly this `N`.
    CountExactly(u64),
    /// `db-read`: `200`, rows `min(a,b)` and `max(a,b)` of the data set.
    Rows { a: u32, b: u32 },
    /// `bubble-sort` over gRPC: a protobuf `List` equal to this sorted list.
    SortedProto(Arc<[i32]>),
    /// `bubble-sort` over Connect JSON: `200 {"data": [...]}` equal to this sorted list.
    SortedJson(Arc<[i32]>),
    /// A contract error: this status and a JSON `{"error": "<non-empty>"}` body.
    Error { status: u16 },
}

/// Why a response is wrong. The message says which rule it broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    #[error("expected HTTP status {expected}, got {got}")]
    Status { expected: u16, got: u16 },
    #[error("expected Content-Type: application/json, got {}", got.as_deref().unwrap_or("none"))]
    ContentType { got: Option<String> },
    #[error("wrong body: {reason}; body starts with {preview:?}")]
    Body { reason: Cow<'static, str>, preview: String },
}

impl CheckError {
    fn body(reason: impl Into<Cow<'static, str>>, body: &[u8]) -> Self {
        let end = body.len().min(120);
        CheckError::Body {
            reason: reason.into(),
            preview: String::from_utf8_lossy(&body[..end]).into_owned(),
        }
    }
}

/// Checks one response against what its request expects.
pub fn check(expect: &Expect, resp: &ResponseView<'_>) -> Result<(), CheckError> {
    let status = match expect {
        Expect::Error { status } => *status,
        _ => 200,
    };
    if resp.status != status {
        return Err(CheckError::Status { expected: status, got: resp.status });
    }
    if !matches!(expect, Expect::SortedProto(_)) && !resp.content_type.is_some_and(is_json_content_type) {
        return Err(CheckError::ContentType {
            got: resp.content_type.map(|v| String::from_utf8_lossy(v).into_owned()),
        });
    }
    let body = resp.body;
    match expect {
        Expect::Count { min } => match count(body)? {
            n if n >= *min => Ok(()),
            n => Err(CheckError::body(format!("count {n} is below {min}"), body)),
        },
        Expect::CountExactly(want) => match count(body)? {
            n if n == *want => Ok(()),
            n => Err(CheckError::body(format!("count is {n}, expected exactly {want}"), body)),
        },
        Expect::Rows { a, b } => rows(body, *a, *b),
        Expect::SortedProto(sorted) => {
            let mut it = sorted.iter();
            let mut mismatch = false;
            crate::bubble::for_each_in_list(body, |v| {
                mismatch = it.next() != Some(&v);
                !mismatch
            })
            .map_err(|e| CheckError::body(format!("not a List message: {e}"), body))?;
            if mismatch || it.next().is_some() {
                return Err(CheckError::body("the list is not the sorted input", body));
            }
            Ok(())
        }
        Expect::SortedJson(sorted) => {
            let mut de = serde_json::Deserializer::from_slice(body);
            match (DataSeed(sorted).deserialize(&mut de), de.end()) {
                (Ok(true), Ok(())) => Ok(()),
                (Ok(false), _) => Err(CheckError::body("`data` is not the sorted input", body)),
                (Err(e), _) | (Ok(_), Err(e)) => {
                    Err(CheckError::body(format!("expected {{\"data\": [...]}}: {e}"), body))
                }
            }
        }
        Expect::Error { .. } => match serde_json::from_slice::<ErrorBody<'_>>(body) {
            Ok(e) if !e.error.trim().is_empty() => Ok(()),
            Ok(_) => Err(CheckError::body("`error` is empty", body)),
            Err(e) => Err(CheckError::body(format!("expected {{\"error\": \"...\"}}: {e}"), body)),
        },
    }
}

#[derive(Deserialize)]
struct CountBody {
    count: u64,
}

#[derive(Deserialize)]
struct ErrorBody<'a> {
    #[serde(borrow)]
    error: Cow<'a, str>,
}

#[derive(Deserialize)]
struct Row<'a> {
    id: u32,
    #[serde(borrow)]
    name: Cow<'a, str>,
    price: u32,
}

fn count(body: &[u8]) -> Result<u64, CheckError> {
    serde_json::from_slice::<CountBody>(body)
        .map(|c| c.count)
        .map_err(|e| CheckError::body(format!("expected {{\"count\": N}}: {e}"), body))
}

fn rows(body: &[u8], a: u32, b: u32) -> Result<(), CheckError> {
    let got: (Row<'_>, Row<'_>) = serde_json::from_slice(body)
        .map_err(|e| CheckError::body(format!("expected two rows [{{id, name, price}}, ...]: {e}"), body))?;
    for (row, id) in [got.0, got.1].iter().zip(dbread::answer_ids(a, b)) {
        if row.id != id {
            return Err(CheckError::body(
                format!("expected rows {:?} in id order", dbread::answer_ids(a, b)),
                body,
            ));
        }
        let name_ok = row.name.strip_prefix("item-").and_then(|n| n.parse::<u32>().ok()) == Some(id)
            && !row.name[5..].starts_with('0');
        if !name_ok || row.price != dbread::price(id) {
            return Err(CheckError::body(format!("row {id} differs from the data set"), body));
        }
    }
    Ok(())
}

/// Reads `{"data": [...]}` and says whether `data` equals the expected list,
/// without collecting it.
struct DataSeed<'a>(&'a [i32]);

impl<'de> DeserializeSeed<'de> for DataSeed<'_> {
    type Value = bool;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DataSeed<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object with `data`")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut result = None;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if key == "data" && result.is_none() {
                result = Some(map.next_value_seed(SeqEq(self.0))?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        // proto3 JSON omits an empty repeated field.
        Ok(result.unwrap_or(self.0.is_empty()))
    }
}

struct SeqEq<'a>(&'a [i32]);

impl<'de> DeserializeSeed<'de> for SeqEq<'_> {
    type Value = bool;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for SeqEq<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of int32")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        let mut equal = true;
        let mut it = self.0.iter();
        while let Some(v) = seq.next_element::<i32>()? {
            equal &= it.next() == Some(&v);
        }
        Ok(equal && it.next().is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bubble;

    fn json(status: u16, body: &str) -> ResponseView<'_> {
        ResponseView { status, content_type: Some(b"application/json"), body: body.as_bytes() }
    }

    #[test]
    fn counts() {
        assert_eq!(check(&Expect::Count { min: 3 }, &json(200, r#"{"count":3}"#)), Ok(()));
        assert!(check(&Expect::Count { min: 3 }, &json(200, r#"{"count":2}"#)).is_err());
        assert!(check(&Expect::Count { min: 1 }, &json(200, r#"{"count":-1}"#)).is_err());
        assert!(check(&Expect::Count { min: 1 }, &json(200, r#"{"count":1.5}"#)).is_err());
        assert_eq!(check(&Expect::CountExactly(1), &json(200, r#"{ "count" : 1 , "x": [] }"#)), Ok(()));
        assert!(check(&Expect::CountExactly(1), &json(200, r#"{"count":2}"#)).is_err());
        assert_eq!(
            check(&Expect::CountExactly(1), &json(503, r#"{"count":1}"#)),
            Err(CheckError::Status { expected: 200, got: 503 })
        );
        let text = ResponseView { status: 200, content_type: Some(b"text/plain"), body: br#"{"count":1}"# };
        assert!(matches!(check(&Expect::CountExactly(1), &text), Err(CheckError::ContentType { .. })));
    }

    #[test]
    fn rows() {
        let mut s = String::new();
        dbread::write_answer(&mut s, 9, 3);
        assert_eq!(check(&Expect::Rows { a: 9, b: 3 }, &json(200, &s)), Ok(()));
        assert!(check(&Expect::Rows { a: 9, b: 4 }, &json(200, &s)).is_err());
        let swapped = r#"[{"id":9,"name":"item-9","price":7271},{"id":3,"name":"item-3","price":3757}]"#;
        assert!(check(&Expect::Rows { a: 9, b: 3 }, &json(200, swapped)).is_err());
        let bad_price = r#"[{"id":3,"name":"item-3","price":1},{"id":9,"name":"item-9","price":7271}]"#;
        assert!(check(&Expect::Rows { a: 9, b: 3 }, &json(200, bad_price)).is_err());
        let one = r#"[{"id":3,"name":"item-3","price":3757}]"#;
        assert!(check(&Expect::Rows { a: 3, b: 3 }, &json(200, one)).is_err());
    }

    #[test]
    fn sorted_proto_and_json() {
        let sorted: Arc<[i32]> = bubble::SEED_SORTED.clone().into();
        let mut msg = Vec::new();
        bubble::encode_list(&sorted, &mut msg);
        let grpc = ResponseView { status: 200, content_type: Some(b"application/grpc"), body: &msg };
        assert_eq!(check(&Expect::SortedProto(sorted.clone()), &grpc), Ok(()));
        let mut unsorted = Vec::new();
        bubble::encode_list(&bubble::SEED, &mut unsorted);
        let grpc = ResponseView { body: &unsorted, ..grpc };
        assert!(check(&Expect::SortedProto(sorted.clone()), &grpc).is_err());
        let truncated = ResponseView { body: &msg[..msg.len() - 4], ..grpc };
        assert!(check(&Expect::SortedProto(sorted.clone()), &truncated).is_err());

        let body = serde_json::json!({ "data": &*sorted }).to_string();
        assert_eq!(check(&Expect::SortedJson(sorted.clone()), &json(200, &body)), Ok(()));
        let short = serde_json::json!({ "data": &sorted[1..] }).to_string();
        assert!(check(&Expect::SortedJson(sorted), &json(200, &short)).is_err());
        assert_eq!(check(&Expect::SortedJson(Arc::from([])), &json(200, "{}")), Ok(()));
    }

    #[test]
    fn errors() {
        let e = Expect::Error { status: 400 };
        assert_eq!(check(&e, &json(400, r#"{"error":"field `type` is required"}"#)), Ok(()));
        assert!(check(&e, &json(400, r#"{"error":""}"#)).is_err());
        assert!(check(&e, &json(400, "bad request")).is_err());
        assert!(check(&e, &json(404, r#"{"error":"x"}"#)).is_err());
    }
}
