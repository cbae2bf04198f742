//! `event-log` and `dummy` on bare hyper 1 (what a team writes when it wants
//! no framework): one `service_fn` that matches on the path and the method,
//! served by the accept loop all our hyper-based servers share
//! ([`crate::server::serve_http`]: HTTP/1.1 + h2c, or both over TLS). Validation and the store are [`crate::app`].

use std::convert::Infallible;
use std::fmt::Display;
use std::sync::Arc;

use bytes::Bytes;
use http::header::{ALLOW, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Body;
use hyper::service::service_fn;
use stackbench_contract::contract::{COUNT_PATH, EVENTS_PATH};

use crate::app::{self, Backend};
use crate::events::{ALLOW_COUNT, ALLOW_EVENTS, Rejection, check_body_length, json_in, read_frames};
use crate::server::{Accept, ServeError, serve_http};

/// Answers one request. Generic over the body so tests can call it with a
/// [`Full`] body, without a socket.
///
/// Routing and the checks that need the request head happen here, before the
/// future is made, so the future carries only what the awaits need (the body,
/// the header map, the backend), not the whole request: hyper moves it
/// around by value for every request (measured: 768 bytes as an `async fn`).
///
/// The answer goes out in the request's own header map, emptied ([`json_in`]).
///
/// The output is the `Result` hyper's service wants, never an error: made
/// here rather than by a wrapper around this future, which would move the
/// whole future once more (an `async` block at its first poll, `map` twice
/// when it completes).
pub fn handle<B, Bd>(
    backend: Arc<B>,
    req: Request<Bd>,
) -> impl Future<Output = Result<Response<Full<Bytes>>, Infallible>> + Send + 'static
where
    B: Backend,
    Bd: Body<Data = Bytes> + Send + 'static,
    Bd::Error: Display,
{
    let (parts, body) = req.into_parts();
    let (method, path) = (&parts.method, parts.uri.path());
    let plan = match path {
        EVENTS_PATH if method == Method::POST => match check_body_length(&body) {
            Ok(()) => Plan::Post(body),
            Err(r) => Plan::Reject(r, None),
        },
        COUNT_PATH if method == Method::GET || method == Method::HEAD => Plan::Count,
        EVENTS_PATH => wrong_method(method, path, ALLOW_EVENTS),
        COUNT_PATH => wrong_method(method, path, ALLOW_COUNT),
        _ => Plan::Reject(Rejection::not_found(method.as_str(), path), None),
    };
    let headers = parts.headers;
    async move {
        let result = match plan {
            Plan::Reject(r, allow) => return Ok(reject(headers, &r, allow)),
            Plan::Count => app::get_count(&*backend).await,
            Plan::Post(body) => match read_frames(body).await {
                Ok(bytes) => {
                    let content_type = headers.get(CONTENT_TYPE).map(HeaderValue::as_bytes);
                    app::post_event(&*backend, content_type, &bytes).await
                }
                Err(r) => Err(r),
            },
        };
        Ok(match result {
            Ok(body) => json(headers, StatusCode::OK, body),
            Err(r) => reject(headers, &r, None),
        })
    }
}

/// What [`handle`] decided from the request head.
enum Plan<Bd> {
    /// Read the body, validate the event, hand it to the backend.
    Post(Bd),
    /// Ask the backend for the count.
    Count,
    /// Refused from the head alone (404, 405 with its `Allow`, 413 on the
    /// declared length). The response is built in the future, not here: a
    /// whole `Response` in this enum made every request's future 144 bytes
    /// larger, and hyper moves that future by value several times a request.
    Reject(Rejection, Option<&'static str>),
}

fn wrong_method<Bd>(method: &Method, path: &str, allow: &'static str) -> Plan<Bd> {
    Plan::Reject(Rejection::method_not_allowed(method.as_str(), path, allow), Some(allow))
}

/// A JSON answer in the request's header map ([`json_in`]).
fn json(headers: HeaderMap, status: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
    json_in(headers, status, Full::new(body))
}

fn reject(headers: HeaderMap, r: &Rejection, allow: Option<&'static str>) -> Response<Full<Bytes>> {
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST);
    let mut resp = json(headers, status, r.body());
    if let Some(allow) = allow {
        resp.headers_mut().insert(ALLOW, HeaderValue::from_static(allow));
    }
    resp
}

/// Serves `backend` on `listener` until SIGTERM/SIGINT, then lets in-flight
/// requests finish ([`crate::server::serve_http`]).
pub async fn serve_hyper<B: Backend>(listener: Accept, backend: Arc<B>) -> Result<(), ServeError> {
    serve_http(listener, move || {
        let backend = backend.clone();
        service_fn(move |req| handle(backend.clone(), req))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::Dummy;
    use crate::contract_tests::{Case, Outcome, check_contract};
    use http_body_util::BodyExt as _;

    async fn call<B: Backend>(backend: Arc<B>, case: &Case) -> Outcome {
        let mut req = Request::builder().method(case.method).uri(case.path);
        for (k, v) in &case.headers {
            req = req.header(*k, v.as_str());
        }
        let Ok(resp) = handle(backend, req.body(Full::new(Bytes::from(case.body.clone()))).unwrap()).await;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp.into_body().collect().await.unwrap().to_bytes().to_vec();
        Outcome::new(status, &headers, body)
    }

    #[tokio::test]
    async fn hyper_serves_the_contract() {
        check_contract("hyper", |backend, case| Box::pin(async move { call(backend, &case).await })).await;
        let case = Case::post(r#"{"type":"a"}"#);
        assert_eq!(call(Arc::new(Dummy), &case).await.status, 200);
    }
}
