//! The HTTP rules of `event-log` and `dummy`, independent of any HTTP stack:
//! which request is accepted, and the exact status and JSON of every refusal.
//! Order of checks, as the contract implies: the body size (413, body not
//! processed), then the `Content-Type` (400), then the event rules (400).

use bytes::{Bytes, BytesMut};
use http::header::CONTENT_TYPE;
use http::{HeaderMap, HeaderValue, StatusCode};
use http_body_util::BodyExt as _;
use stackbench_contract::contract::{self, MAX_BODY_BYTES};
use stackbench_contract::event::{Event, parse_event};

/// The routes an event server answers, for 404 messages.
pub const ROUTES: [&str; 2] = ["POST /events", "GET /events/count"];
/// `Allow` of `/events`.
pub const ALLOW_EVENTS: &str = "POST";
/// `Allow` of `/events/count`.
pub const ALLOW_COUNT: &str = "GET, HEAD";

/// A refused request: status and the one-sentence message of its JSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub status: u16,
    pub message: String,
}

impl Rejection {
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        Rejection { status, message: message.into() }
    }

    /// `{"error": "<message>"}`.
    pub fn body(&self) -> Bytes {
        Bytes::from(contract::error_body(&self.message))
    }

    pub fn not_found(method: &str, path: &str) -> Self {
        Rejection::new(404, contract::not_found_message(method, path, &ROUTES))
    }

    pub fn method_not_allowed(method: &str, path: &str, allow: &str) -> Self {
        Rejection::new(405, contract::method_not_allowed_message(method, path, allow))
    }

    pub fn too_large() -> Self {
        Rejection::new(413, contract::too_large_message())
    }
}

/// `Content-Type` of every answer.
pub const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// A JSON answer whose headers go in `headers`, the request's own map, emptied
/// here: hyper keeps the map of each answer and parses the connection's next
/// request into it, so no map is allocated per answer (two buffers and their
/// frees, about 2% of `sb-dummy --stack hyper`'s instructions per request).
pub fn json_in<Bd>(mut headers: HeaderMap, status: StatusCode, body: Bd) -> http::Response<Bd> {
    headers.clear();
    headers.insert(CONTENT_TYPE, JSON);
    let mut resp = http::Response::new(body);
    *resp.status_mut() = status;
    *resp.headers_mut() = headers;
    resp
}

/// Reads a request body within the 64 KiB limit: a declared length over it is
/// refused before reading ([`check_body_length`]), a chunked body is cut at the limit.
pub async fn read_body<Bd>(body: Bd) -> Result<Bytes, Rejection>
where
    Bd: hyper::body::Body<Data = Bytes>,
    Bd::Error: std::fmt::Display,
{
    check_body_length(&body)?;
    read_frames(body).await
}

/// The 413 rule on a hyper body's declared length, before reading any of it.
///
/// The length is the one hyper decoded from `Content-Length` and frames the
/// body by (its size hint), so it is not parsed a second time here: reading
/// the header again cost about 2% of `sb-dummy --stack hyper`'s instructions
/// per request (a header-map lookup and a number parse). A body without a
/// declared length (chunked) has a lower bound of 0 and is cut while read.
pub fn check_body_length<Bd: hyper::body::Body>(body: &Bd) -> Result<(), Rejection> {
    if body.size_hint().lower() > MAX_BODY_BYTES as u64 { Err(Rejection::too_large()) } else { Ok(()) }
}

/// [`read_body`] after the declared length was checked: the frames, within the
/// limit. A body that arrives in one piece (the usual case) is handed on as it
/// is, without a copy or an allocation.
pub async fn read_frames<Bd>(body: Bd) -> Result<Bytes, Rejection>
where
    Bd: hyper::body::Body<Data = Bytes>,
    Bd::Error: std::fmt::Display,
{
    let mut body = std::pin::pin!(body);
    let (mut first, mut joined) = (Bytes::new(), None::<BytesMut>);
    let mut total = 0;
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|e| Rejection::new(400, format!("could not read the request body: {e}")))?;
        // Trailers carry nothing the contract reads.
        let Ok(data) = frame.into_data() else { continue };
        total += data.len();
        if total > MAX_BODY_BYTES {
            return Err(Rejection::too_large());
        }
        match &mut joined {
            Some(joined) => joined.extend_from_slice(&data),
            None if first.is_empty() => first = data,
            None => {
                let mut j = BytesMut::with_capacity(first.len() + data.len());
                j.extend_from_slice(&first);
                j.extend_from_slice(&data);
                joined = Some(j);
            }
        }
        // A body with a declared length ends with its last byte: no poll to hear so.
        if body.is_end_stream() {
            break;
        }
    }
    Ok(joined.map_or(first, BytesMut::freeze))
}

/// The 413 rule on a declared `Content-Length`, before reading any of the body,
/// for a stack whose body type does not carry the length (actix-web).
pub fn check_declared_length(content_length: Option<&[u8]>) -> Result<(), Rejection> {
    let declared =
        content_length.and_then(|v| std::str::from_utf8(v).ok()).and_then(|v| v.trim().parse::<u64>().ok());
    match declared {
        Some(n) if n > MAX_BODY_BYTES as u64 => Err(Rejection::too_large()),
        _ => Ok(()),
    }
}

/// Validates a whole `POST /events` request (body already read within the limit).
pub fn accept_event<'a>(content_type: Option<&[u8]>, body: &'a [u8]) -> Result<Event<'a>, Rejection> {
    if body.len() > MAX_BODY_BYTES {
        return Err(Rejection::too_large());
    }
    if !content_type.is_some_and(contract::is_json_content_type) {
        return Err(Rejection::new(400, contract::wrong_content_type_message(content_type)));
    }
    parse_event(body).map_err(|e| Rejection::new(400, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract_tests::Declared;

    const JSON: Option<&[u8]> = Some(b"application/json");

    #[test]
    fn order_of_rules() {
        let big = vec![b' '; MAX_BODY_BYTES + 1];
        assert_eq!(accept_event(None, &big).unwrap_err().status, 413);
        assert_eq!(accept_event(Some(b"text/plain"), br#"{"type":"a"}"#).unwrap_err().status, 400);
        assert_eq!(accept_event(None, br#"{"type":"a"}"#).unwrap_err().status, 400);
        let e = accept_event(JSON, br#"{"type":"a b"}"#).unwrap_err();
        assert!(e.status == 400 && e.message.contains("`type`"), "{e:?}");
        assert_eq!(accept_event(JSON, br#"{"type":"a"}"#).unwrap().kind, "a");
    }

    /// A body of the given pieces, then `end`.
    fn chunked(
        pieces: Vec<Bytes>,
        end: Option<&'static str>,
    ) -> impl hyper::body::Body<Data = Bytes, Error = &'static str> {
        let frames = pieces.into_iter().map(|p| Ok(hyper::body::Frame::data(p))).chain(end.map(Err));
        http_body_util::StreamBody::new(futures_util::stream::iter(frames))
    }

    #[tokio::test]
    async fn bodies_are_read_whole_within_the_limit() {
        // One piece: handed on as it is, no copy.
        let one = Bytes::from_static(br#"{"type":"a"}"#);
        let read = read_body(chunked(vec![one.clone()], None)).await.unwrap();
        assert_eq!(read.as_ptr(), one.as_ptr());
        // Several pieces (empty ones too) are joined in order.
        let pieces = ["", "{\"ty", "", "pe\":", "\"a\"}"].map(|p| Bytes::from_static(p.as_bytes())).to_vec();
        assert_eq!(read_body(chunked(pieces, None)).await.unwrap(), &br#"{"type":"a"}"#[..]);
        assert_eq!(read_body(chunked(vec![], None)).await.unwrap(), &b""[..]);
        // Exactly the limit is read; one byte more is a 413, however it is cut.
        let half = Bytes::from(vec![b' '; MAX_BODY_BYTES / 2]);
        let full = read_body(chunked(vec![half.clone(), half.clone()], None)).await.unwrap();
        assert_eq!(full.len(), MAX_BODY_BYTES);
        let over = chunked(vec![half.clone(), half, Bytes::from_static(b" ")], None);
        assert_eq!(read_body(over).await.unwrap_err().status, 413);
        // A body that fails midway is a 400 that says so.
        let broken = chunked(vec![Bytes::from_static(b"{")], Some("connection reset"));
        let e = read_body(broken).await.unwrap_err();
        assert!(e.status == 400 && e.message.contains("connection reset"), "{e:?}");
        // A declared length over the limit is refused before reading.
        assert_eq!(read_body(Declared(MAX_BODY_BYTES as u64 + 1)).await.unwrap_err().status, 413);
        assert!(check_body_length(&Declared(MAX_BODY_BYTES as u64)).is_ok());
    }

    #[test]
    fn declared_length_over_the_limit_is_413() {
        assert!(check_declared_length(Some(b"65536")).is_ok());
        assert_eq!(check_declared_length(Some(b"65537")).unwrap_err().status, 413);
        assert!(check_declared_length(None).is_ok());
        assert_eq!(check_declared_length(Some(b" +70000 ")).unwrap_err().status, 413);
        assert!(check_declared_length(Some(b"99999999999999999999999")).is_ok(), "not a u64: hyper decides");
    }
}
