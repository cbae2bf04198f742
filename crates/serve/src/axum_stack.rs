//! `event-log` and `dummy` on axum, with axum's own router (what an axum user
//! would write): one handler per route, a method fallback per path for 405 with
//! `Allow`, and a router fallback for 404. Validation and the store are
//! [`crate::app`]; this module only speaks axum.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{ALLOW, CONTENT_TYPE};
use axum::http::{HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use stackbench_contract::contract::{COUNT_PATH, EVENTS_PATH};

use crate::app::{self, Backend};
use crate::events::{ALLOW_COUNT, ALLOW_EVENTS, JSON, Rejection, json_in, read_body};

/// The event API over any backend.
pub fn router<B: Backend>(backend: Arc<B>) -> Router {
    Router::new()
        .route(
            EVENTS_PATH,
            post(post_event::<B>)
                .fallback(|m: Method, u: Uri| async move { wrong_method(&m, &u, ALLOW_EVENTS) }),
        )
        .route(
            COUNT_PATH,
            get(get_count::<B>)
                .fallback(|m: Method, u: Uri| async move { wrong_method(&m, &u, ALLOW_COUNT) }),
        )
        .fallback(not_found)
        .with_state(backend)
}

async fn post_event<B: Backend>(State(backend): State<Arc<B>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let headers = parts.headers;
    let bytes = match read_body(body).await {
        Ok(b) => b,
        Err(r) => return reject(&r, None),
    };
    let content_type = headers.get(CONTENT_TYPE).map(HeaderValue::as_bytes);
    match app::post_event(&*backend, content_type, &bytes).await {
        Ok(body) => json_in(headers, StatusCode::OK, Body::from(body)),
        Err(r) => reject(&r, None),
    }
}

async fn get_count<B: Backend>(State(backend): State<Arc<B>>) -> Response {
    match app::get_count(&*backend).await {
        Ok(body) => json(StatusCode::OK, body),
        Err(r) => reject(&r, None),
    }
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
    use crate::app::Dummy;
    use axum::http::HeaderMap;
    use axum::http::header::CONTENT_LENGTH;
    use http_body_util::BodyExt as _;
    use stackbench_contract::contract::MAX_BODY_BYTES;
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
        let resp = router(Arc::new(Dummy)).oneshot(req.body(body.into()).unwrap()).await.unwrap();
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
    async fn axum_serves_the_contract() {
        use crate::contract_tests::{Case, Outcome, check_contract};
        check_contract("axum", |backend, case: Case| {
            Box::pin(async move {
                let mut req = Request::builder().method(case.method).uri(case.path);
                for (k, v) in &case.headers {
                    req = req.header(*k, v.as_str());
                }
                let resp = router(backend).oneshot(req.body(Body::from(case.body)).unwrap()).await.unwrap();
                let status = resp.status().as_u16();
                let headers = resp.headers().clone();
                let body = resp.into_body().collect().await.unwrap().to_bytes().to_vec();
                Outcome::new(status, &headers, body)
            })
        })
        .await;
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
            .body(Body::new(crate::contract_tests::Declared(100_000)))
            .unwrap();
        assert_eq!(router(Arc::new(Dummy)).oneshot(req).await.unwrap().status(), 413);
    }
}
