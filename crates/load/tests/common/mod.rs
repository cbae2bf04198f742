//! Real servers for the engine's tests, started in-process on port 0: an
//! HTTP/1.1 + h2c (prior knowledge) server and a gRPC `bubble-sort` service,
//! both on hyper, plus a raw TCP server that hangs up without answering.
//! They count connections and requests so tests can check what the engine
//! really sent. (The load crate must not depend on stackbench-serve.)

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use stackbench_contract::bubble;

/// How the test server behaves.
#[derive(Debug, Clone, Default)]
pub struct Behavior {
    /// Hold every answer this long.
    pub delay: Option<Duration>,
    /// Requests arriving in `[from, until)` after the server started wait until `until`.
    pub stall: Option<(Duration, Duration)>,
    /// `(extra, over)`: a server that warms up, like a JIT: each answer is held `extra` more at
    /// the start, less and less until none `over` after the start (on top of `delay`).
    pub slow_start: Option<(Duration, Duration)>,
    /// gRPC: answer every call with this `grpc-status` (and no message), whatever it sends.
    pub grpc_status: Option<u16>,
    /// gRPC: answer the list as sent, unsorted.
    pub unsorted: bool,
    /// How every HTTP answer to a path not listed in `answer` is shaped (the built-in
    /// `dummy`'s `POST /events`, say).
    pub shape: Shape,
}

/// The shape of an answer: `{"count":1}` by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Shape {
    #[default]
    Count1,
    /// `{"count":2}`: wrong for `dummy`.
    Wrong,
    /// `{"count":1}` in three chunks.
    Chunked,
    /// `{"count":1}` with `Connection: close`.
    Close,
}

/// What the server saw.
#[derive(Debug, Default)]
pub struct Stats {
    pub connections: AtomicU64,
    pub requests: AtomicU64,
    pub h2_requests: AtomicU64,
    /// How long the server held each delayed answer.
    pub holds: Mutex<Vec<Duration>>,
}

pub struct TestServer {
    pub addr: SocketAddr,
    pub stats: Arc<Stats>,
    _runtime: tokio::runtime::Runtime,
}

impl TestServer {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

/// Starts the HTTP/1.1 + h2c server (gRPC `bubble-sort` included) on 127.0.0.1:0.
pub fn start(behavior: Behavior) -> TestServer {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let stats = Arc::new(Stats::default());
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    let (st, behavior) = (Arc::clone(&stats), Arc::new(behavior));
    let born = Instant::now();
    runtime.spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else { continue };
            let _ = tcp.set_nodelay(true);
            st.connections.fetch_add(1, Ordering::Relaxed);
            let (st, behavior) = (Arc::clone(&st), Arc::clone(&behavior));
            tokio::spawn(async move {
                let svc = service_fn(move |req| answer(req, Arc::clone(&st), Arc::clone(&behavior), born));
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tcp), svc)
                    .await;
            });
        }
    });
    TestServer { addr, stats, _runtime: runtime }
}

pub use stackbench_testkit::frames::Frames;

fn json(status: u16, body: &str) -> Response<Frames> {
    let mut frames = VecDeque::new();
    frames.push_back(Frame::data(Bytes::from(body.to_owned())));
    let mut r = Response::new(Frames(frames));
    *r.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
    r.headers_mut().insert("content-type", "application/json".parse().unwrap());
    r.headers_mut().insert("content-length", body.len().to_string().parse().unwrap());
    r
}

async fn answer(
    req: Request<Incoming>,
    stats: Arc<Stats>,
    behavior: Arc<Behavior>,
    born: Instant,
) -> Result<Response<Frames>, Infallible> {
    let arrived = Instant::now();
    stats.requests.fetch_add(1, Ordering::Relaxed);
    if req.version() == hyper::Version::HTTP_2 {
        stats.h2_requests.fetch_add(1, Ordering::Relaxed);
    }
    let path = req.uri().path().to_owned();
    let body = req.into_body().collect().await.map(http_body_util::Collected::to_bytes).unwrap_or_default();
    if let Some((from, until)) = behavior.stall {
        let since = arrived - born;
        if since >= from && since < until {
            tokio::time::sleep_until((born + until).into()).await;
        }
    }
    let cold = behavior.slow_start.map_or(Duration::ZERO, |(extra, over)| {
        extra.mul_f64(1.0 - ((arrived - born).as_secs_f64() / over.as_secs_f64()).min(1.0))
    });
    if let Some(d) = behavior.delay.map(|d| d + cold).or((!cold.is_zero()).then_some(cold)) {
        // A blocking thread's sleep (the kernel's high-resolution timer), not tokio's 1 ms wheel,
        // so the hold is what the test asked for.
        let until = arrived + d;
        let _ = tokio::task::spawn_blocking(move || {
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
        })
        .await;
        stats.holds.lock().unwrap().push(arrived.elapsed());
    }
    let shape = match path.as_str() {
        "/wrong" => Shape::Wrong,
        "/chunked" => Shape::Chunked,
        "/close" => Shape::Close,
        _ => behavior.shape,
    };
    Ok(match path.as_str() {
        p if p.starts_with("/status/") => json(p[8..].parse().unwrap_or(500), r#"{"error":"as asked"}"#),
        p if p == bubble::GRPC_PATH => grpc_sort(&body, behavior.grpc_status, !behavior.unsorted),
        _ => shaped(shape),
    })
}

/// An answer of `shape`.
fn shaped(shape: Shape) -> Response<Frames> {
    match shape {
        Shape::Count1 => json(200, r#"{"count":1}"#),
        Shape::Wrong => json(200, r#"{"count":2}"#),
        Shape::Chunked => {
            let frames =
                ["{\"co", "unt\":", "1}"].iter().map(|s| Frame::data(Bytes::from_static(s.as_bytes())));
            let mut r = Response::new(Frames(frames.collect()));
            r.headers_mut().insert("content-type", "application/json".parse().unwrap());
            r
        }
        Shape::Close => {
            let mut r = json(200, r#"{"count":1}"#);
            r.headers_mut().insert("connection", "close".parse().unwrap());
            r
        }
    }
}

/// The bubble-sort gRPC method: sorts the list (plain `sort`: the test checks the engine, not the
/// server), unless `sort` is false.
fn grpc_sort(body: &[u8], status: Option<u16>, sort: bool) -> Response<Frames> {
    let mut trailers = http::HeaderMap::new();
    let mut frames = VecDeque::new();
    if let Some(code) = status {
        trailers.insert("grpc-status", code.into());
        trailers.insert("grpc-message", "as asked".parse().unwrap());
        frames.push_back(Frame::trailers(trailers));
        let mut r = Response::new(Frames(frames));
        r.headers_mut().insert("content-type", "application/grpc".parse().unwrap());
        return r;
    }
    let msg = body.get(5..).unwrap_or_default();
    let mut list = Vec::new();
    let decoded = bubble::for_each_in_list(msg, |v| {
        list.push(v);
        true
    });
    if decoded.is_err() || list.len() > bubble::MAX_LEN {
        trailers.insert("grpc-status", "3".parse().unwrap());
        trailers.insert("grpc-message", "invalid list".parse().unwrap());
    } else {
        if sort {
            list.sort_unstable();
        }
        let mut out = Vec::new();
        bubble::encode_list(&list, &mut out);
        let mut framed = vec![0];
        framed.extend_from_slice(&(out.len() as u32).to_be_bytes());
        framed.extend_from_slice(&out);
        frames.push_back(Frame::data(Bytes::from(framed)));
        trailers.insert("grpc-status", "0".parse().unwrap());
    }
    frames.push_back(Frame::trailers(trailers));
    let mut r = Response::new(Frames(frames));
    r.headers_mut().insert("content-type", "application/grpc".parse().unwrap());
    r
}

/// A TCP server that reads a request and hangs up without answering (for 10 s at most).
pub fn start_hangup() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            match listener.accept() {
                Ok((mut s, _)) => {
                    use std::io::Read as _;
                    let _ = s.set_nonblocking(false);
                    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
                    let mut buf = [0u8; 1024];
                    let _ = s.read(&mut buf);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(2)),
            }
        }
    });
    addr
}
