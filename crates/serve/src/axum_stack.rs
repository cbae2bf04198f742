//! The `dummy` contract on axum, with axum's own router (what an axum user
//! would write): one handler per route, a method fallback per path for 405 with
//! `Allow`, and a router fallback for 404. Validation is [`crate::events`].

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::header::{ALLOW, CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use stackbench_scenarios::contract::{COUNT_PATH, EVENTS_PATH, MAX_BODY_BYTES};

use crate::events::{ALLOW_COUNT, ALLOW_EVENTS, Rejection, accept_event, check_declared_length};

/// The answer of `dummy`, to every valid event and to `GET /events/count`.
const COUNT_ONE: &[u8] = b"{\"count\":1}";
const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// The `dummy` service: parse and validate the event, answer `{"count":1}`.
pub fn dummy_router() -> Router {
    Router::new()
        .route(
            EVENTS_PATH,
            post(post_event_dummy)
                .fallback(|m: Method, u: Uri| async move { wrong_method(&m, &u, ALLOW_EVENTS) }),
        )
        .route(
            COUNT_PATH,
            get(count_dummy).fallback(|m: Method, u: Uri| async move { wrong_method(&m, &u, ALLOW_COUNT) }),
        )
        .fallback(not_found)
}

async fn post_event_dummy(headers: HeaderMap, body: Body) -> Response {
    let bytes = match read_body(&headers, body).await {
        Ok(b) => b,
        Err(r) => return reject(&r, None),
    };
    match accept_event(headers.get(CONTENT_TYPE).map(HeaderValue::as_bytes), &bytes) {
        Ok(_) => json(StatusCode::OK, Bytes::from_static(COUNT_ONE)),
        Err(r) => reject(&r, None),
    }
}

async fn count_dummy() -> Response {
    json(StatusCode::OK, Bytes::from_static(COUNT_ONE))
}

/// Reads the body within the 64 KiB limit: a declared length over it is refused
/// before reading; a chunked body is cut at the limit.
pub async fn read_body(headers: &HeaderMap, body: Body) -> Result<Bytes, Rejection> {
    check_declared_length(headers.get(CONTENT_LENGTH).map(HeaderValue::as_bytes))?;
    axum::body::to_bytes(body, MAX_BODY_BYTES).await.map_err(|e| {
        let e = e.into_inner();
        if e.is::<http_body_util::LengthLimitError>() {
            Rejection::too_large()
        } else {
            Rejection::new(400, format!("could not read the request body: {e}"))
        }
    })
}

fn wrong_method(method: &Method, uri: &Uri, allow: &'static str) -> Response {
    reject(&Rejection::method_not_allowed(method.as_str(), uri.path(), allow), Some(allow))
}

async fn not_found(req: Request) -> Response {
    reject(&Rejection::not_found(req.method().as_str(), req.uri().path()), None)
}

/// A JSON response.
pub fn json(status: StatusCode, body: Bytes) -> Response {
    (status, [(CONTENT_TYPE, JSON)], body).into_response()
}

/// The JSON error response of a rejection, with `Allow` for a 405.
pub fn reject(r: &Rejection, allow: Option<&'static str>) -> Response {
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST);
    let mut resp = json(status, r.body());
    if let Some(allow) = allow {
        resp.headers_mut().insert(ALLOW, HeaderValue::from_static(allow));
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;
    use tower::ServiceExt as _;

    async fn call(
        method: &str,
        path: &str,
        ct: Option<&str>,
        body: impl Into<Body>,
    ) -> (u16, HeaderMap, String) {
        let mut req = Request::builder().method(method).uri(path);
        if let Some(ct) = ct {
            req = req.header(CONTENT_TYPE, ct);
        }
        let resp = dummy_router().oneshot(req.body(body.into()).unwrap()).await.unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        (status, headers, String::from_utf8(body.to_vec()).unwrap())
    }

    fn error_of(body: &str) -> String {
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        v["error"].as_str().unwrap().to_owned()
    }

    #[tokio::test]
    async fn valid_event_counts_one() {
        let (status, headers, body) =
            call("POST", "/events", Some("application/json"), r#"{"type":"page_view","value":2}"#).await;
        assert_eq!((status, body.as_str()), (200, r#"{"count":1}"#));
        assert_eq!(headers[CONTENT_TYPE], "application/json");
        let (status, _, body) = call("GET", "/events/count", None, Body::empty()).await;
        assert_eq!((status, body.as_str()), (200, r#"{"count":1}"#));
    }

    #[tokio::test]
    async fn invalid_events_name_the_field() {
        for (body, field) in [
            (r#"{"source":"web"}"#, "`type`"),
            (r#"{"type":"a","source":"x y"}"#, "`source`"),
            (r#"{"type":"a","value":"1"}"#, "`value`"),
            (r#"{"type":"a","timestamp":-5}"#, "`timestamp`"),
        ] {
            let (status, headers, resp) = call("POST", "/events", Some("application/json"), body).await;
            assert_eq!(status, 400, "{body}");
            assert_eq!(headers[CONTENT_TYPE], "application/json");
            assert!(error_of(&resp).contains(field), "{body}: {resp}");
        }
        let (status, _, resp) = call("POST", "/events", Some("application/json"), "{nope").await;
        assert!(status == 400 && error_of(&resp).contains("not valid JSON"), "{resp}");
    }

    #[tokio::test]
    async fn content_type_is_required() {
        let (status, _, resp) = call("POST", "/events", Some("text/plain"), r#"{"type":"a"}"#).await;
        assert!(status == 400 && error_of(&resp).contains("Content-Type"), "{resp}");
        let (status, _, _) = call("POST", "/events", None, r#"{"type":"a"}"#).await;
        assert_eq!(status, 400);
    }

    #[tokio::test]
    async fn unknown_paths_and_methods() {
        let (status, headers, resp) = call("GET", "/nope", None, Body::empty()).await;
        assert_eq!(status, 404);
        assert_eq!(headers[CONTENT_TYPE], "application/json");
        assert!(error_of(&resp).contains("POST /events"));
        let (status, headers, resp) = call("GET", "/events", None, Body::empty()).await;
        assert_eq!((status, &headers[ALLOW]), (405, &HeaderValue::from_static("POST")));
        assert!(error_of(&resp).contains("GET"));
        let (status, headers, _) = call("DELETE", "/events/count", None, Body::empty()).await;
        assert_eq!((status, &headers[ALLOW]), (405, &HeaderValue::from_static("GET, HEAD")));
    }

    #[tokio::test]
    async fn large_bodies_are_refused() {
        let big = format!(r#"{{"type":"a","pad":"{}"}}"#, "x".repeat(MAX_BODY_BYTES));
        // No Content-Length (as with a chunked body): cut at the limit while reading.
        let (status, headers, resp) = call("POST", "/events", Some("application/json"), big.clone()).await;
        assert_eq!(status, 413);
        assert_eq!(headers[CONTENT_TYPE], "application/json");
        assert!(error_of(&resp).contains("64 KiB"));
        // A declared length over the limit is refused before reading anything.
        let req = Request::builder()
            .method("POST")
            .uri("/events")
            .header(CONTENT_TYPE, "application/json")
            .header(CONTENT_LENGTH, "100000")
            .body(Body::from("{}"))
            .unwrap();
        assert_eq!(dummy_router().oneshot(req).await.unwrap().status(), 413);
    }
}
