//! `event-log` and `dummy` on actix-web 4, written the way an actix user
//! would: one `web::resource` per path with its routes and a
//! `default_service` for 405 with `Allow`, and the app's `default_service` for
//! 404. actix runs one single-threaded runtime per worker (one worker per
//! core); the backend is shared through `web::Data`. Validation and the store
//! are [`crate::app`].

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use bytes::Bytes;
use stackbench_contract::contract::{COUNT_PATH, EVENTS_PATH, MAX_BODY_BYTES};

use crate::app::{self, Backend};
use crate::events::{ALLOW_COUNT, ALLOW_EVENTS, Rejection, check_declared_length};
use crate::server::{ServeError, shutdown_signal};

/// Seconds in-flight requests get to finish after SIGTERM.
const DRAIN_SECS: u64 = 10;

/// Registers the event routes for backend `B` (its `web::Data<B>` must be in
/// the app). Use with [`not_found`] as the app's default service.
pub fn configure<B: Backend>(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource(EVENTS_PATH)
            .route(web::post().to(post_event::<B>))
            .default_service(web::to(|req: HttpRequest| async move { wrong_method(&req, ALLOW_EVENTS) })),
    )
    .service(
        web::resource(COUNT_PATH)
            .route(web::get().to(get_count::<B>))
            .route(web::head().to(get_count::<B>))
            .default_service(web::to(|req: HttpRequest| async move { wrong_method(&req, ALLOW_COUNT) })),
    );
}

async fn post_event<B: Backend>(
    backend: web::Data<B>,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let bytes = match read_body(&req, payload).await {
        Ok(b) => b,
        Err(r) => return reject(&r, None),
    };
    let content_type = req.headers().get(header::CONTENT_TYPE).map(HeaderValue::as_bytes);
    match app::post_event(&**backend, content_type, &bytes).await {
        Ok(body) => json(StatusCode::OK, body),
        Err(r) => reject(&r, None),
    }
}

async fn get_count<B: Backend>(backend: web::Data<B>) -> HttpResponse {
    match app::get_count(&**backend).await {
        Ok(body) => json(StatusCode::OK, body),
        Err(r) => reject(&r, None),
    }
}

/// Reads the body within the 64 KiB limit: a declared length over it is refused
/// before reading; a chunked body is cut at the limit.
async fn read_body(req: &HttpRequest, payload: web::Payload) -> Result<Bytes, Rejection> {
    check_declared_length(req.headers().get(header::CONTENT_LENGTH).map(HeaderValue::as_bytes))?;
    match payload.to_bytes_limited(MAX_BODY_BYTES).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e)) => Err(Rejection::new(400, format!("could not read the request body: {e}"))),
        Err(_) => Err(Rejection::too_large()),
    }
}

/// The app's default service: 404 naming the routes.
pub async fn not_found(req: HttpRequest) -> HttpResponse {
    reject(&Rejection::not_found(req.method().as_str(), req.path()), None)
}

fn wrong_method(req: &HttpRequest, allow: &'static str) -> HttpResponse {
    reject(&Rejection::method_not_allowed(req.method().as_str(), req.path(), allow), Some(allow))
}

fn json(status: StatusCode, body: Bytes) -> HttpResponse {
    let mut resp = HttpResponse::with_body(status, body).map_into_boxed_body();
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

fn reject(r: &Rejection, allow: Option<&'static str>) -> HttpResponse {
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST);
    let mut resp = json(status, r.body());
    if let Some(allow) = allow {
        resp.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
    }
    resp
}

/// Serves `backend` on `listener` with one actix worker per core until
/// SIGTERM/SIGINT, then drains; over TLS with a rustls configuration (actix-web's
/// `rustls-0_23` feature: its own handshake, with its default 3 s timeout). Must run
/// inside an actix `System` (`actix_web::rt::System::new().block_on(...)`).
pub async fn serve_actix<B: Backend>(
    listener: std::net::TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    backend: Arc<B>,
    workers: usize,
) -> Result<(), ServeError> {
    let data = web::Data::from(backend);
    let server = HttpServer::new(move || {
        App::new().app_data(data.clone()).configure(configure::<B>).default_service(web::to(not_found))
    })
    .workers(workers.max(1))
    .tcp_nodelay(true)
    .disable_signals()
    .shutdown_timeout(DRAIN_SECS);
    let server = match tls {
        None => server.listen(listener),
        Some(config) => server.listen_rustls_0_23(listener, Arc::unwrap_or_clone(config)),
    };
    let server = server.map_err(ServeError::Serve)?.run();
    let handle = server.handle();
    actix_web::rt::spawn(async move {
        shutdown_signal().await;
        handle.stop(true).await;
    });
    server.await.map_err(ServeError::Serve)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract_tests::{Case, Outcome, check_contract};
    use actix_web::test;

    async fn call<B: Backend>(backend: Arc<B>, case: Case) -> Outcome {
        let app = test::init_service(
            App::new()
                .app_data(web::Data::from(backend))
                .configure(configure::<B>)
                .default_service(web::to(not_found)),
        )
        .await;
        let mut req = test::TestRequest::default()
            .method(actix_web::http::Method::from_bytes(case.method.as_bytes()).unwrap())
            .uri(case.path);
        for (k, v) in &case.headers {
            req = req.insert_header((*k, v.as_str()));
        }
        let resp = test::call_service(&app, req.set_payload(case.body.clone()).to_request()).await;
        let status = resp.status().as_u16();
        let headers: Vec<(String, String)> = resp
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
            .collect();
        let body = test::read_body(resp).await.to_vec();
        Outcome::from_pairs(status, &headers, body)
    }

    #[actix_web::test]
    async fn actix_serves_the_contract() {
        check_contract("actix", |backend, case| Box::pin(call(backend, case))).await;
    }
}
