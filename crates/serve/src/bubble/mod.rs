//! The `bubble-sort` reference contestant (the "Bubble Benchmark"): the
//! `sort.v1.SortService/BubbleSort` gRPC service on tonic over h2c, and with
//! `--rest` the same call as Connect JSON on the same port.
//!
//! One axum router carries both: `POST /sort.v1.SortService/BubbleSort` goes
//! to the tonic service when its `Content-Type` is `application/grpc` (or
//! `application/grpc+proto`), and to the Connect JSON handler when it is
//! `application/json` and `--rest` is on; anything else is 415, as the gRPC
//! and Connect specifications ask. The server ([`crate::server::serve_axum`])
//! speaks HTTP/2 with prior knowledge and HTTP/1.1 on the one port.
//!
//! Code generation: `build.rs` compiles `proto/sort/v1/sort.proto` with protox
//! (a protobuf compiler in Rust, no `protoc` needed) and tonic-prost-build.

pub mod codec;
pub mod connect;
pub mod service;
pub mod sort;

pub use sort::SortKind;

/// The code generated from `proto/sort/v1/sort.proto`: `List`, the server
/// (`sort_service_server`) and the client (`sort_service_client`).
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod proto {
    tonic::include_proto!("sort.v1");
}

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{ALLOW, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use stackbench_contract::bubble::{GRPC_PATH, MAX_LEN};
use tokio::net::TcpListener;
use tonic::codegen::Service as _;

use crate::server::{self, ServeError};
use connect::JsonError;
use proto::sort_service_server::SortServiceServer;
use service::Sorter;

/// How the contestant serves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Also answer the Connect JSON form of the call.
    pub rest: bool,
    /// Which bubble sort runs.
    pub sort: SortKind,
}

/// What a `--help` or a start line says the server speaks.
pub fn protocols(opts: Options) -> &'static str {
    if opts.rest { "gRPC (h2c) and Connect JSON" } else { "gRPC (h2c)" }
}

#[derive(Clone)]
struct Endpoint {
    grpc: SortServiceServer<Sorter>,
    sorter: Sorter,
    opts: Options,
}

/// The whole contestant as a router (testable without a socket).
pub fn router(opts: Options) -> Router {
    let sorter = Sorter::new(opts.sort);
    let endpoint = Endpoint { grpc: service::grpc_service(sorter.clone()), sorter, opts };
    Router::new()
        .route(GRPC_PATH, post(bubble_sort).fallback(wrong_method))
        .fallback(not_found)
        .with_state(endpoint)
}

/// The runtime the contestant runs on. With one CPU available (pinned with
/// `taskset` or a cpuset, as benchmarks run it) a current-thread runtime:
/// every wake-up stays on the one thread and there is no work-stealing
/// bookkeeping (measured: about 3% more calls per CPU-second than a
/// multi-thread runtime with one worker). With more CPUs, a worker per CPU.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if cpus == 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()
    }
}

/// Serves the contestant on `listener` until SIGTERM or Ctrl-C, then drains.
pub async fn serve(listener: TcpListener, opts: Options) -> Result<(), ServeError> {
    server::serve_axum(listener, router(opts)).await
}

/// Is this a gRPC request? (`application/grpc`, optionally `+proto` or
/// parameters; not `application/grpc-web`, which this server does not speak.)
fn is_grpc(headers: &HeaderMap) -> bool {
    headers.get(CONTENT_TYPE).is_some_and(|v| {
        let v = v.as_bytes();
        v.strip_prefix(b"application/grpc")
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"+proto") || rest.starts_with(b";"))
    })
}

async fn bubble_sort(State(mut ep): State<Endpoint>, req: Request) -> Response {
    if is_grpc(req.headers()) {
        return match ep.grpc.call(req).await {
            Ok(resp) => standard_size_status(resp).map(Body::new),
            Err(never) => match never {},
        };
    }
    let json = req
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| stackbench_contract::contract::is_json_content_type(v.as_bytes()));
    if ep.opts.rest && json {
        let (parts, body) = req.into_parts();
        return connect::bubble_sort_json(&ep.sorter, &parts.headers, body).await;
    }
    JsonError::unsupported_media_type(req.headers().get(CONTENT_TYPE), ep.opts.rest).into_response()
}

/// tonic refuses a message over its decoding limit with `OUT_OF_RANGE`; the
/// gRPC status code table (grpc/doc/statuscodes.md) says a request larger
/// than a configured limit is `RESOURCE_EXHAUSTED`, which grpc-go, grpc-java
/// and the C core send. Clients retry and report by that code, so it is
/// mapped, with a sentence saying what to do. Other answers pass untouched
/// (one header lookup).
fn standard_size_status(resp: http::Response<tonic::body::Body>) -> http::Response<tonic::body::Body> {
    if resp.headers().get(tonic::Status::GRPC_STATUS).is_none_or(|v| v.as_bytes() != b"11") {
        return resp;
    }
    match tonic::Status::from_header_map(resp.headers()) {
        Some(s) if s.message().contains("message length too large") => tonic::Status::resource_exhausted(
            format!("{}; a bubble-sort request holds at most {MAX_LEN} numbers", s.message()),
        )
        .into_http(),
        _ => resp,
    }
}

fn routes_message(opts: Options) -> String {
    format!("this server answers POST {GRPC_PATH} ({})", protocols(opts))
}

async fn wrong_method(req: Request) -> Response {
    let message = format!("{GRPC_PATH} does not accept {}; allowed: POST", req.method());
    let mut resp =
        JsonError { status: StatusCode::METHOD_NOT_ALLOWED, code: "unknown", message }.into_response();
    resp.headers_mut().insert(ALLOW, HeaderValue::from_static("POST"));
    resp
}

async fn not_found(State(ep): State<Endpoint>, req: Request) -> Response {
    let what = format!("no method {} {}", req.method(), req.uri().path());
    let message = format!("{what}; {}", routes_message(ep.opts));
    if is_grpc(req.headers()) {
        return tonic::Status::unimplemented(message).into_http::<Body>();
    }
    JsonError { status: StatusCode::NOT_FOUND, code: "unimplemented", message }.into_response()
}
