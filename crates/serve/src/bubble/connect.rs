//! The Connect protocol's unary JSON form of `BubbleSort` (`--rest`):
//! `POST /sort.v1.SortService/BubbleSort` with `Content-Type: application/json`
//! and `{"data": [...]}`, answering `{"data": [...]}`.
//!
//! The body follows the proto3 JSON mapping of `List`: `data` is an array of
//! int32 written as JSON numbers (or as decimal strings, which proto3 JSON
//! also allows); a missing or `null` `data` is the empty list; unknown keys
//! are ignored. Errors follow stackbench's common HTTP rules, a JSON body
//! `{"error": "..."}`, plus the Connect error `code`:
//!
//! | request | status | `code` |
//! |---|---|---|
//! | more than 10,000 numbers | 400 | `invalid_argument` |
//! | not `{"data": [int32, ...]}` | 400 | `invalid_argument` |
//! | `Content-Type` neither JSON nor gRPC | 415 | `unknown` (Connect's rule for an unsupported codec) |
//! | body over 4 MiB | 413 | `resource_exhausted` |

use std::fmt;

use axum::body::Body;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use stackbench_contract::bubble::MAX_LEN;

use super::service::{MAX_MESSAGE_BYTES, Sorter, TooLong};

/// A refused JSON request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub status: StatusCode,
    /// The Connect error code.
    pub code: &'static str,
    pub message: String,
}

impl JsonError {
    fn invalid(message: impl Into<String>) -> Self {
        JsonError { status: StatusCode::BAD_REQUEST, code: "invalid_argument", message: message.into() }
    }

    pub fn too_large() -> Self {
        JsonError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            code: "resource_exhausted",
            message: format!(
                "the request body is larger than {MAX_MESSAGE_BYTES} bytes (4 MiB); send at most {MAX_LEN} numbers"
            ),
        }
    }

    pub fn unsupported_media_type(got: Option<&HeaderValue>, rest: bool) -> Self {
        let got =
            got.map_or_else(|| "none".to_owned(), |v| format!("{:?}", String::from_utf8_lossy(v.as_bytes())));
        let message = if rest {
            format!(
                "Content-Type {got} is not supported; send application/json ({{\"data\": [...]}}) or \
                 application/grpc"
            )
        } else {
            format!(
                "Content-Type {got} is not supported: this server speaks gRPC (application/grpc); start it \
                 with --rest to also accept Connect JSON"
            )
        };
        JsonError { status: StatusCode::UNSUPPORTED_MEDIA_TYPE, code: "unknown", message }
    }
}

impl From<TooLong> for JsonError {
    fn from(e: TooLong) -> Self {
        JsonError::invalid(e.to_string())
    }
}

impl IntoResponse for JsonError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message, "code": self.code }).to_string();
        json(self.status, body.into())
    }
}

/// A JSON response.
pub fn json(status: StatusCode, body: Bytes) -> Response {
    (status, [(CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
}

/// Answers one Connect JSON call.
pub async fn bubble_sort_json(sorter: &Sorter, headers: &HeaderMap, body: Body) -> Response {
    match call(sorter, headers, body).await {
        Ok(body) => json(StatusCode::OK, body),
        Err(e) => e.into_response(),
    }
}

async fn call(sorter: &Sorter, headers: &HeaderMap, body: Body) -> Result<Bytes, JsonError> {
    let declared = headers.get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_MESSAGE_BYTES as u64) {
        return Err(JsonError::too_large());
    }
    let bytes = axum::body::to_bytes(body, MAX_MESSAGE_BYTES).await.map_err(|e| {
        if e.into_inner().is::<http_body_util::LengthLimitError>() {
            JsonError::too_large()
        } else {
            JsonError::invalid("could not read the request body")
        }
    })?;
    let data = parse_list(&bytes)?;
    let sorted = sorter.sort(data).await?;
    Ok(render_list(&sorted))
}

/// Parses `{"data": [...]}`. A list longer than [`MAX_LEN`] is counted, not
/// stored, and refused with its length.
pub fn parse_list(body: &[u8]) -> Result<Vec<i32>, JsonError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let parsed = de::Deserializer::deserialize_map(&mut de, ListVisitor).and_then(|l| de.end().map(|()| l));
    match parsed {
        Ok(Parsed { data, len }) => {
            if len > MAX_LEN {
                Err(TooLong { len }.into())
            } else {
                Ok(data)
            }
        }
        Err(e) => Err(JsonError::invalid(format!("the body must be {{\"data\": [int32, ...]}}: {e}"))),
    }
}

/// `{"data":[...]}`.
pub fn render_list(data: &[i32]) -> Bytes {
    let mut out = Vec::with_capacity(12 + data.len() * 11);
    out.extend_from_slice(b"{\"data\":");
    serde_json::to_writer(&mut out, data).expect("writing to a Vec cannot fail");
    out.push(b'}');
    Bytes::from(out)
}

/// The list read so far: its first [`MAX_LEN`] numbers and its full length.
#[derive(Default)]
struct Parsed {
    data: Vec<i32>,
    len: usize,
}

struct ListVisitor;

impl<'de> Visitor<'de> for ListVisitor {
    type Value = Parsed;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object {\"data\": [...]}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parsed, A::Error> {
        let mut parsed: Option<Parsed> = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "data" {
                if parsed.is_some() {
                    return Err(de::Error::duplicate_field("data"));
                }
                parsed = Some(map.next_value_seed(DataSeed)?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(parsed.unwrap_or_default())
    }
}

/// `data`: an array of int32, or `null`.
struct DataSeed;

impl<'de> DeserializeSeed<'de> for DataSeed {
    type Value = Parsed;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Parsed, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DataSeed {
    type Value = Parsed;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("`data` as an array of int32")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Parsed, E> {
        Ok(Parsed::default())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Parsed, A::Error> {
        let mut parsed =
            Parsed { data: Vec::with_capacity(seq.size_hint().unwrap_or(1024).min(MAX_LEN)), len: 0 };
        while let Some(Int32(v)) = seq.next_element()? {
            if parsed.len < MAX_LEN {
                parsed.data.push(v);
            }
            parsed.len += 1;
        }
        Ok(parsed)
    }
}

/// One element of `data`: a JSON integer in the int32 range, or a string
/// holding one (proto3 JSON).
struct Int32(i32);

impl<'de> de::Deserialize<'de> for Int32 {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Int32Visitor)
    }
}

struct Int32Visitor;

impl Visitor<'_> for Int32Visitor {
    type Value = Int32;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an int32 (-2147483648 to 2147483647)")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int32, E> {
        i32::try_from(v).map(Int32).map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int32, E> {
        i32::try_from(v).map(Int32).map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Int32, E> {
        // proto3 JSON accepts `1.0` and `1e3` for integers, never a fraction.
        if v.fract() == 0.0 && v >= f64::from(i32::MIN) && v <= f64::from(i32::MAX) {
            Ok(Int32(v as i32))
        } else {
            Err(E::invalid_value(de::Unexpected::Float(v), &self))
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Int32, E> {
        v.parse().map(Int32).map_err(|_| E::invalid_value(de::Unexpected::Str(v), &self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_proto3_json_forms() {
        assert_eq!(parse_list(br#"{"data":[3,1,2]}"#).unwrap(), [3, 1, 2]);
        assert_eq!(
            parse_list(br#"{"data":["-7", 2147483647, -2147483648, 1e2, 4.0]}"#).unwrap(),
            [-7, i32::MAX, i32::MIN, 100, 4]
        );
        assert_eq!(parse_list(br#"{"data":[]}"#).unwrap(), Vec::<i32>::new());
        assert_eq!(parse_list(br#"{"data":null}"#).unwrap(), Vec::<i32>::new());
        assert_eq!(parse_list(br"{}").unwrap(), Vec::<i32>::new());
        assert_eq!(parse_list(br#"{"other":{"x":[1]},"data":[1]}"#).unwrap(), [1]);
    }

    #[test]
    fn refusals_say_what_is_wrong() {
        for (body, needle) in [
            (&br#"{"data":[2147483648]}"#[..], "2147483648"),
            (br#"{"data":[1.5]}"#, "1.5"),
            (br#"{"data":["x"]}"#, "\"x\""),
            (br#"{"data":[1],"data":[2]}"#, "duplicate field `data`"),
            (br#"{"data":{"a":1}}"#, "array of int32"),
            (br"[1,2]", "{\"data\": [int32, ...]}"),
            (br#"{"data":[1]} x"#, "trailing"),
            (b"{nope", "key must be a string"),
        ] {
            let e = parse_list(body).unwrap_err();
            assert_eq!((e.status, e.code), (StatusCode::BAD_REQUEST, "invalid_argument"));
            assert!(e.message.contains(needle), "{}: {}", String::from_utf8_lossy(body), e.message);
        }
    }

    #[test]
    fn too_many_numbers_are_counted_not_stored() {
        let body = format!("{{\"data\":[{}1]}}", "1,".repeat(MAX_LEN + 4));
        let e = parse_list(body.as_bytes()).unwrap_err();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        assert!(e.message.contains(&(MAX_LEN + 5).to_string()), "{}", e.message);
        let body = format!("{{\"data\":[{}1]}}", "1,".repeat(MAX_LEN - 1));
        assert_eq!(parse_list(body.as_bytes()).unwrap().len(), MAX_LEN);
    }

    #[test]
    fn renders_data() {
        assert_eq!(&render_list(&[-1, 0, 2])[..], br#"{"data":[-1,0,2]}"#);
        assert_eq!(&render_list(&[])[..], br#"{"data":[]}"#);
    }
}
