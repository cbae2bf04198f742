//! `event-log` and `dummy` on bare hyper 1 (what a team writes when it wants
//! no framework): one `service_fn` that matches on the path and the method,
//! served by hyper-util's HTTP/1.1 + h2c connection builder with an accept
//! loop of our own. Validation and the store are [`crate::app`].

use std::convert::Infallible;
use std::fmt::Display;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{ALLOW, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::body::Body;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use stackbench_scenarios::contract::{COUNT_PATH, EVENTS_PATH, MAX_BODY_BYTES};
use tokio::net::TcpListener;

use crate::app::{self, Backend};
use crate::events::{ALLOW_COUNT, ALLOW_EVENTS, Rejection, check_declared_length};
use crate::server::{ServeError, shutdown_signal};

const JSON: HeaderValue = HeaderValue::from_static("application/json");
/// In-flight requests get this long to finish after SIGTERM.
const DRAIN: Duration = Duration::from_secs(10);

/// Answers one request. Generic over the body so tests can call it with a
/// [`Full`] body, without a socket.
pub async fn handle<B, Bd>(backend: &B, req: Request<Bd>) -> Response<Full<Bytes>>
where
    B: Backend,
    Bd: Body<Data = Bytes>,
    Bd::Error: Display + std::error::Error + Send + Sync + 'static,
{
    let (parts, body) = req.into_parts();
    let method = &parts.method;
    let path = parts.uri.path();
    let result = match path {
        EVENTS_PATH if method == Method::POST => match read_body(&parts.headers, body).await {
            Ok(bytes) => {
                let content_type = parts.headers.get(CONTENT_TYPE).map(HeaderValue::as_bytes);
                app::post_event(backend, content_type, &bytes).await
            }
            Err(r) => Err(r),
        },
        COUNT_PATH if method == Method::GET || method == Method::HEAD => app::get_count(backend).await,
        EVENTS_PATH => return wrong_method(method, path, ALLOW_EVENTS),
        COUNT_PATH => return wrong_method(method, path, ALLOW_COUNT),
        _ => Err(Rejection::not_found(method.as_str(), path)),
    };
    match result {
        Ok(body) => json(StatusCode::OK, body),
        Err(r) => reject(&r, None),
    }
}

/// Reads the body within the 64 KiB limit: a declared length over it is refused
/// before reading; a chunked body is cut at the limit.
async fn read_body<Bd>(headers: &http::HeaderMap, body: Bd) -> Result<Bytes, Rejection>
where
    Bd: Body<Data = Bytes>,
    Bd::Error: std::error::Error + Send + Sync + 'static,
{
    check_declared_length(headers.get(CONTENT_LENGTH).map(HeaderValue::as_bytes))?;
    match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<LengthLimitError>() => Err(Rejection::too_large()),
        Err(e) => Err(Rejection::new(400, format!("could not read the request body: {e}"))),
    }
}

fn wrong_method(method: &Method, path: &str, allow: &'static str) -> Response<Full<Bytes>> {
    reject(&Rejection::method_not_allowed(method.as_str(), path, allow), Some(allow))
}

fn json(status: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(CONTENT_TYPE, JSON);
    resp
}

fn reject(r: &Rejection, allow: Option<&'static str>) -> Response<Full<Bytes>> {
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST);
    let mut resp = json(status, r.body());
    if let Some(allow) = allow {
        resp.headers_mut().insert(ALLOW, HeaderValue::from_static(allow));
    }
    resp
}

/// Serves `backend` on `listener` until SIGTERM/SIGINT, then lets in-flight
/// requests finish (at most [`DRAIN`]).
pub async fn serve_hyper<B: Backend>(listener: TcpListener, backend: Arc<B>) -> Result<(), ServeError> {
    let builder = auto::Builder::new(TokioExecutor::new());
    let graceful = GracefulShutdown::new();
    let mut shutdown = pin!(shutdown_signal());
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) if is_per_connection(&e) => continue,
                Err(e) => {
                    // EMFILE and friends: wait for connections to close, as hyper's examples do.
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = tcp.set_nodelay(true);
        let backend = backend.clone();
        let service = service_fn(move |req| {
            let backend = backend.clone();
            async move { Ok::<_, Infallible>(handle(&*backend, req).await) }
        });
        let conn = graceful.watch(builder.serve_connection(TokioIo::new(tcp), service).into_owned());
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(DRAIN, graceful.shutdown()).await;
    Ok(())
}

fn is_per_connection(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::Interrupted
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::Dummy;
    use crate::contract_tests::{Case, Outcome, check_contract};

    async fn call<B: Backend>(backend: &B, case: &Case) -> Outcome {
        let mut req = Request::builder().method(case.method).uri(case.path);
        for (k, v) in &case.headers {
            req = req.header(*k, v.as_str());
        }
        let resp = handle(backend, req.body(Full::new(Bytes::from(case.body.clone()))).unwrap()).await;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp.into_body().collect().await.unwrap().to_bytes().to_vec();
        Outcome::new(status, &headers, body)
    }

    #[tokio::test]
    async fn hyper_serves_the_contract() {
        check_contract("hyper", |backend, case| Box::pin(async move { call(&*backend, &case).await })).await;
        let case = Case::post(r#"{"type":"a"}"#);
        assert_eq!(call(&Dummy, &case).await.status, 200);
    }
}
