//! Sending single requests to a contestant: the verification cases and the
//! readiness probe. Behind [`Prober`] so the lifecycle's tests need no socket;
//! [`HyperProber`] is the real one (hyper over HTTP/1.1, or HTTP/2 prior
//! knowledge for gRPC, one fresh connection per request, closed with it, so a
//! probe never rides a connection that an earlier, broken answer left behind).
//! One runtime serves every request: a readiness probe costs a connect, not
//! a runtime, so it can be repeated every 50 µs at the start of a cold start.

use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;
use stackbench_scenarios::verify::{Request, Transport};

/// An answer as the verifier needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub content_type: Option<Vec<u8>>,
    /// Header names lower-cased.
    pub headers: Vec<(String, Vec<u8>)>,
    /// `grpc-status` (trailer, or header of a trailers-only answer).
    pub grpc_status: Option<u32>,
    /// The body; for gRPC the unframed message.
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_slice())
    }
}

/// Why a request got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    #[error("connection refused")]
    Refused,
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("{0}")]
    Other(String),
}

/// Sends one request to `base` (`http://host:port`).
pub trait Prober: Send + Sync {
    fn send(&self, base: &str, req: &Request, timeout: Duration) -> Result<Reply, ProbeError>;
}

/// The real prober, on one current-thread runtime. A request's connection
/// is driven inside the request's own future, not spawned, so it is closed
/// the moment the answer is read: a server's graceful shutdown never waits
/// for a probe's idle connection.
#[derive(Debug)]
pub struct HyperProber {
    rt: tokio::runtime::Runtime,
}

impl HyperProber {
    pub fn new() -> std::io::Result<HyperProber> {
        Ok(HyperProber { rt: tokio::runtime::Builder::new_current_thread().enable_all().build()? })
    }
}

impl Prober for HyperProber {
    fn send(&self, base: &str, req: &Request, timeout: Duration) -> Result<Reply, ProbeError> {
        self.rt.block_on(async {
            let scope = Scope::default();
            let reply = match tokio::time::timeout(timeout, send(base, req, &scope)).await {
                Ok(r) => r,
                Err(_) => Err(ProbeError::Timeout(timeout)),
            };
            scope.end().await;
            reply
        })
    }
}

/// The executor of one request's HTTP/2 connection. hyper runs an HTTP/2
/// client connection (which owns the socket) as a task of its own; on a
/// runtime that outlives the request that task would keep the socket open,
/// and a server's graceful stop would wait for it. Every task of the scope is
/// ended with the request, so its connection closes with it.
#[derive(Clone, Default)]
struct Scope(std::sync::Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>);

impl<F> hyper::rt::Executor<F> for Scope
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        let handle = tokio::spawn(async move {
            fut.await;
        });
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(handle);
    }
}

impl Scope {
    /// Aborts every task and waits until each is gone (and its socket closed).
    async fn end(&self) {
        let handles = std::mem::take(&mut *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        for h in &handles {
            h.abort();
        }
        for h in handles {
            let _ = h.await;
        }
    }
}

/// Runs `exchange` while driving its connection `conn`; once the connection
/// ends (a server that closes after its answer), the exchange still gets what
/// was read, or the error of a connection closed too early.
async fn drive<T>(
    exchange: impl Future<Output = Result<T, ProbeError>>,
    conn: impl Future,
) -> Result<T, ProbeError> {
    tokio::pin!(exchange);
    tokio::select! {
        biased;
        r = &mut exchange => r,
        _ = conn => exchange.await,
    }
}

fn other(e: impl std::fmt::Display) -> ProbeError {
    ProbeError::Other(e.to_string())
}

async fn send(base: &str, req: &Request, scope: &Scope) -> Result<Reply, ProbeError> {
    let uri: http::Uri = format!("{}{}", base.trim_end_matches('/'), req.path).parse().map_err(other)?;
    let authority = uri.authority().ok_or_else(|| other("the URL has no host"))?.clone();
    let port = authority.port_u16().unwrap_or(80);
    let host = authority.host().trim_start_matches('[').trim_end_matches(']');
    let stream = tokio::net::TcpStream::connect((host, port)).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::ConnectionRefused { ProbeError::Refused } else { other(e) }
    })?;
    let _ = stream.set_nodelay(true);
    let io = TokioIo::new(stream);
    let grpc = req.transport == Transport::Grpc;
    // The load engine's gRPC framing: one implementation of the 5-byte frame.
    let body = if grpc { stackbench_load::h2c::grpc_frame(&req.body) } else { req.body.clone() };
    let mut builder = http::Request::builder().method(req.method).uri(uri.clone());
    if grpc {
        builder = builder.header("te", "trailers");
    } else {
        builder = builder.header(http::header::HOST, authority.as_str());
    }
    if let Some(ct) = req.content_type {
        builder = builder.header(http::header::CONTENT_TYPE, ct);
    }
    let request = builder.body(Full::new(body)).map_err(other)?;
    // The connection is driven beside the exchange and dropped (closed) with it.
    let (parts, collected) = if grpc {
        let (mut sender, conn) =
            hyper::client::conn::http2::handshake(scope.clone(), io).await.map_err(other)?;
        let exchange = async {
            let (parts, body) = sender.send_request(request).await.map_err(other)?.into_parts();
            Ok::<_, ProbeError>((parts, body.collect().await.map_err(other)?))
        };
        drive(exchange, conn).await?
    } else {
        let (mut sender, conn) = hyper::client::conn::http1::handshake(io).await.map_err(other)?;
        let exchange = async {
            let (parts, body) = sender.send_request(request).await.map_err(other)?.into_parts();
            Ok::<_, ProbeError>((parts, body.collect().await.map_err(other)?))
        };
        drive(exchange, conn).await?
    };
    let trailers = collected.trailers().cloned();
    let bytes = collected.to_bytes();
    let headers: Vec<(String, Vec<u8>)> =
        parts.headers.iter().map(|(k, v)| (k.as_str().to_owned(), v.as_bytes().to_vec())).collect();
    let grpc_status = trailers
        .as_ref()
        .and_then(|t| t.get("grpc-status"))
        .or_else(|| parts.headers.get("grpc-status"))
        .and_then(|v| v.to_str().ok()?.trim().parse().ok());
    let body = if grpc && !bytes.is_empty() {
        stackbench_load::h2c::grpc_message(&bytes)
            .map_err(|_| other("a truncated or compressed gRPC message"))?
            .to_vec()
    } else {
        bytes.to_vec()
    };
    Ok(Reply {
        status: parts.status.as_u16(),
        content_type: parts.headers.get(http::header::CONTENT_TYPE).map(|v| v.as_bytes().to_vec()),
        headers,
        grpc_status,
        body,
    })
}
