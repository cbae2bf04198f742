//! Sending single requests to a contestant: the verification cases of a
//! scenario file and the readiness probe. Behind [`Prober`] so the lifecycle's
//! tests need no socket; [`HyperProber`] is the real one: HTTP/1.1 through the
//! load engine's own request writer and answer reader (origin-form request
//! line, the engine's answer caps), or hyper over HTTP/2 prior knowledge for h2c
//! and gRPC files (its body capped alike); one fresh connection per request,
//! closed with it, so a probe never rides a connection that an earlier, broken
//! answer left behind.
//! One runtime serves every request: a readiness probe costs a connect, not
//! a runtime, so it can be repeated every 50 µs at the start of a cold start.

use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;

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
    /// The server's address, as connected to.
    pub peer: Option<std::net::SocketAddr>,
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

/// One request for a prober to send, as a scenario file's entry writes it.
#[derive(Debug, Clone, Copy)]
pub struct Probe<'a> {
    pub url: &'a str,
    /// Any method (`GET`, `POST`, `PATCH`, …).
    pub method: &'a str,
    /// HTTP/1.1: names as written, a `Host` header replacing the URL's authority in the one
    /// `Host` line sent. HTTP/2: lower-case names.
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
    /// How long the whole exchange may take, connect to last byte.
    pub timeout: Duration,
}

impl<'a> Probe<'a> {
    /// `GET url`, no header, no body: a readiness probe.
    pub fn get(url: &'a str, timeout: Duration) -> Probe<'a> {
        Probe { url, method: "GET", headers: &[], body: &[], timeout }
    }
}

/// Sends one request to `base` (`http://host:port`).
pub trait Prober: Send + Sync {
    /// Sends one HTTP/1.1 request.
    fn send_http1(&self, probe: &Probe<'_>) -> Result<Reply, ProbeError>;

    /// Sends one request over HTTP/2 cleartext with prior knowledge; with `grpc` the body
    /// is a gRPC message, sent in its 5-byte frame and answered unframed. The answer's
    /// headers include its trailers (`grpc-status`, `grpc-message`). A prober that speaks
    /// HTTP/1.1 only (the lifecycle's tests') answers that it cannot.
    fn send_h2(&self, probe: &Probe<'_>, grpc: bool) -> Result<Reply, ProbeError> {
        let _ = (probe, grpc);
        Err(ProbeError::Other("this prober does not speak HTTP/2".into()))
    }

    /// How the requests to come reach their server: TLS (whose certificates are trusted,
    /// a client certificate) and routes (`--resolve`). A prober that speaks cleartext only
    /// (the lifecycle's tests') ignores it.
    fn reach(&self, reach: Reach) {
        let _ = reach;
    }

    /// How requests reach their server now (what [`Prober::reach`] last set).
    fn reached(&self) -> Reach {
        Reach::default()
    }
}

/// How a probe reaches an `https://` target, and where connections go (`--resolve`,
/// `--connect-to`): the load's own TLS flags and routes.
#[derive(Debug, Clone, Default)]
pub struct Reach {
    pub tls: stackbench_load::TlsFlags,
    pub route: stackbench_load::Route,
}

/// The real prober, on one current-thread runtime. A request's connection
/// is driven inside the request's own future, not spawned, so it is closed
/// the moment the answer is read: a server's graceful shutdown never waits
/// for a probe's idle connection.
#[derive(Debug)]
pub struct HyperProber {
    rt: tokio::runtime::Runtime,
    reach: std::sync::Mutex<Reach>,
}

impl HyperProber {
    pub fn new() -> std::io::Result<HyperProber> {
        HyperProber::with_reach(Reach::default())
    }

    /// A prober that reaches `https://` targets and routes connections as `reach` says.
    pub fn with_reach(reach: Reach) -> std::io::Result<HyperProber> {
        Ok(HyperProber {
            rt: tokio::runtime::Builder::new_current_thread().enable_all().build()?,
            reach: std::sync::Mutex::new(reach),
        })
    }

    fn current(&self) -> Reach {
        self.reach.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

impl Prober for HyperProber {
    fn reach(&self, reach: Reach) {
        *self.reach.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = reach;
    }

    fn reached(&self) -> Reach {
        self.current()
    }

    /// Through the load engine's request writer and answer reader.
    fn send_http1(&self, probe: &Probe<'_>) -> Result<Reply, ProbeError> {
        let Probe { url, method, headers, body, timeout } = *probe;
        let scope = Scope::default();
        self.block_on(timeout, &scope, async {
            let target = stackbench_load::parse_target(url).map_err(other)?;
            let method = http::Method::from_bytes(method.as_bytes()).map_err(other)?;
            let mut authority = target.authority.clone();
            let mut extra = Vec::with_capacity(headers.len());
            for (k, v) in headers {
                if k.eq_ignore_ascii_case("host") {
                    (*v).clone_into(&mut authority);
                    continue;
                }
                let name = http::HeaderName::from_bytes(k.as_bytes()).map_err(other)?;
                extra.push((name, http::HeaderValue::from_bytes(v.as_bytes()).map_err(other)?));
            }
            // Without `Connection: close`, as curl (so Hurl) sends a request; the connection
            // is closed here once the answer is read.
            let wire =
                stackbench_load::http1_request(&method, &authority, &target.path, None, &extra, body, true);
            let (socket, addr) = connect(&target, &self.current(), stackbench_load::Alpn::Http1).await?;
            read_http1(socket, addr, wire, method == http::Method::HEAD).await
        })
    }

    /// hyper over HTTP/2 prior knowledge (h2c and gRPC scenario files).
    fn send_h2(&self, probe: &Probe<'_>, grpc: bool) -> Result<Reply, ProbeError> {
        let Probe { url, method, headers, body, timeout } = *probe;
        let scope = Scope::default();
        self.block_on(timeout, &scope, async {
            let target = stackbench_load::parse_target(url).map_err(other)?;
            let method = http::Method::from_bytes(method.as_bytes()).map_err(other)?;
            let mut fields = http::HeaderMap::new();
            for (k, v) in headers {
                let name = http::HeaderName::from_bytes(k.as_bytes()).map_err(other)?;
                fields.append(name, http::HeaderValue::from_bytes(v.as_bytes()).map_err(other)?);
            }
            let body =
                if grpc { stackbench_load::grpc_frame(body) } else { bytes::Bytes::copy_from_slice(body) };
            let (socket, peer) = connect(&target, &self.current(), stackbench_load::Alpn::H2).await?;
            match socket {
                stackbench_load::Socket::Tcp(tcp) => {
                    // A TLS server answers the h2c preface with an alert record, or closes.
                    let seen = FirstBytes::default();
                    let tcp = seen.watch(tcp);
                    let reply = send_h2(&target, method, fields, body, grpc, &scope, tcp, peer).await;
                    reply.map_err(|e| seen.explain(e, peer))
                }
                stackbench_load::Socket::Tls(tls) => {
                    send_h2(&target, method, fields, body, grpc, &scope, *tls, peer).await
                }
            }
        })
    }
}

impl HyperProber {
    /// Runs one exchange on the runtime, within `timeout`, then ends the
    /// tasks of its `scope` (its connection).
    fn block_on(
        &self,
        timeout: Duration,
        scope: &Scope,
        exchange: impl Future<Output = Result<Reply, ProbeError>>,
    ) -> Result<Reply, ProbeError> {
        self.rt.block_on(async {
            let reply = match tokio::time::timeout(timeout, exchange).await {
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

/// A fresh connection to the target (where `reach` routes it; its TLS handshake made for
/// `https://`, offering `alpn`), refused told apart from other failures.
async fn connect(
    target: &stackbench_load::Target,
    reach: &Reach,
    alpn: stackbench_load::Alpn,
) -> Result<(stackbench_load::Socket, std::net::SocketAddr), ProbeError> {
    stackbench_load::open_once(target, &reach.route, &reach.tls, alpn).await.map_err(|e| match e {
        stackbench_load::OpenError::Refused => ProbeError::Refused,
        stackbench_load::OpenError::Other(why) => ProbeError::Other(why),
    })
}

/// HTTP/1.1 through the load engine's own answer reader: the request `wire`
/// (written by the engine's request writer, origin form) on `socket`, and the
/// engine's caps on what an answer may hold (64 MiB, its head 64 KiB).
async fn read_http1(
    socket: stackbench_load::Socket,
    addr: std::net::SocketAddr,
    wire: Vec<u8>,
    head: bool,
) -> Result<Reply, ProbeError> {
    let cleartext = matches!(socket, stackbench_load::Socket::Tcp(_));
    let mut conn = stackbench_load::Http1Conn::with_socket(addr, socket);
    let answer = conn
        .send(stackbench_load::Wire::Lent(&wire), head, false)
        .await
        .map_err(|kind| ProbeError::Other(answer_error(kind, addr, cleartext)))?;
    let (status, content_type, body) =
        (answer.status, answer.content_type.map(<[u8]>::to_vec), answer.body.to_vec());
    Ok(Reply { status, content_type, headers: conn.headers(), grpc_status: None, body, peer: Some(addr) })
}

/// What an answer the engine's reader refused from `addr` was, in words; on a `cleartext`
/// connection a close before any answer may be a TLS server's way of refusing it.
fn answer_error(kind: stackbench_record::ErrorKind, addr: std::net::SocketAddr, cleartext: bool) -> String {
    use stackbench_record::ErrorKind as K;
    match kind {
        K::Protocol => "a malformed answer, or one past the answer cap (64 MiB; 64 KiB of head)".to_owned(),
        K::Reset if cleartext => format!("the connection closed before a whole answer{MAYBE_TLS}"),
        K::Reset => "the connection closed before a whole answer".to_owned(),
        K::Connect => "cannot connect".to_owned(),
        K::TlsAnswer => {
            format!("the server at {addr} answered with a TLS record: it speaks TLS; use https://")
        }
        other => format!("no answer ({})", other.key()),
    }
}

/// Said of a cleartext connection that a server closed: OpenSSL and Go servers close on a
/// request that is not TLS, which looks the same as a cleartext server that closed.
const MAYBE_TLS: &str =
    " (a TLS server that closes on a cleartext request looks the same: if it speaks TLS, use https://)";

/// The first bytes a server sent on a cleartext HTTP/2 connection, kept while hyper owns
/// the socket: hyper's error for an answer that is not HTTP/2 does not say what it was,
/// and a TLS record there means the server speaks TLS.
#[derive(Clone, Default)]
struct FirstBytes(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

/// How many first bytes tell a TLS record ([`stackbench_load::is_tls_record`]).
const RECORD_HEAD: usize = 5;

impl FirstBytes {
    /// `stream`, its first bytes read kept here.
    fn watch<S>(&self, stream: S) -> Watched<S> {
        Watched { inner: stream, seen: self.clone() }
    }

    /// The error of an exchange on a watched connection, said as what its first bytes were.
    fn explain(&self, e: ProbeError, addr: std::net::SocketAddr) -> ProbeError {
        let seen = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match e {
            ProbeError::Other(_) if stackbench_load::is_tls_record(&seen) => {
                ProbeError::Other(answer_error(stackbench_record::ErrorKind::TlsAnswer, addr, true))
            }
            ProbeError::Other(why) if seen.is_empty() => ProbeError::Other(format!("{why}{MAYBE_TLS}")),
            e => e,
        }
    }
}

/// A stream whose first bytes read are kept in a [`FirstBytes`].
struct Watched<S> {
    inner: S,
    seen: FirstBytes,
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Watched<S> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        let mut seen = self.seen.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.len() < RECORD_HEAD {
            let new = &buf.filled()[before..];
            let take = new.len().min(RECORD_HEAD - seen.len());
            seen.extend_from_slice(&new[..take]);
        }
        polled
    }
}

impl tokio::io::AsyncWrite for Watched<tokio::net::TcpStream> {
    /// A write the server refused (it closed on the request) fails before hyper reads what
    /// the server sent first; that is read here, so the error can say what it was.
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let polled = std::pin::Pin::new(&mut self.inner).poll_write(cx, buf);
        let mut seen = self.seen.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.is_empty() && matches!(polled, std::task::Poll::Ready(Err(_))) {
            // The socket is non-blocking: a read that would wait gives up at once. The
            // connection is broken, so what is read here is nobody else's.
            let mut head = [0u8; RECORD_HEAD];
            let sock = socket2::SockRef::from(&self.inner);
            if let Ok(n) = std::io::Read::read(&mut &*sock, &mut head) {
                seen.extend_from_slice(&head[..n]);
            }
        }
        drop(seen);
        polled
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The most an HTTP/2 answer's body may hold: the HTTP/1.1 reader's answer cap.
const MAX_H2_ANSWER: usize = 64 * 1024 * 1024;

/// HTTP/2 prior knowledge through hyper, the answer capped like an HTTP/1.1 one; its
/// trailers follow its headers. With `grpc` the answer's body is the message, unframed.
#[expect(clippy::too_many_arguments, reason = "the request's parts, its connection and its peer")]
async fn send_h2<S>(
    target: &stackbench_load::Target,
    method: http::Method,
    headers: http::HeaderMap,
    body: bytes::Bytes,
    grpc: bool,
    scope: &Scope,
    stream: S,
    peer: std::net::SocketAddr,
) -> Result<Reply, ProbeError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let scheme = if target.tls { "https" } else { "http" };
    let uri: http::Uri = format!("{scheme}://{}{}", target.authority, target.path).parse().map_err(other)?;
    let io = TokioIo::new(stream);
    let mut request =
        http::Request::builder().method(method).uri(uri).body(Full::new(body)).map_err(other)?;
    *request.headers_mut() = headers;
    // The connection is driven beside the exchange and dropped (closed) with it.
    let (parts, collected) = {
        let (mut sender, conn) =
            hyper::client::conn::http2::handshake(scope.clone(), io).await.map_err(other)?;
        let exchange = async {
            let (parts, body) = sender.send_request(request).await.map_err(other)?.into_parts();
            let body = http_body_util::Limited::new(body, MAX_H2_ANSWER);
            Ok::<_, ProbeError>((parts, body.collect().await.map_err(other)?))
        };
        drive(exchange, conn).await?
    };
    let trailers = collected.trailers().cloned();
    let bytes = collected.to_bytes();
    let mut headers: Vec<(String, Vec<u8>)> =
        parts.headers.iter().map(|(k, v)| (k.as_str().to_owned(), v.as_bytes().to_vec())).collect();
    headers.extend(trailers.iter().flatten().map(|(k, v)| (k.as_str().to_owned(), v.as_bytes().to_vec())));
    let grpc_status = trailers
        .as_ref()
        .and_then(|t| t.get("grpc-status"))
        .or_else(|| parts.headers.get("grpc-status"))
        .and_then(|v| v.to_str().ok()?.trim().parse().ok());
    let body = if bytes.is_empty() || !grpc {
        bytes.to_vec()
    } else {
        stackbench_load::grpc_message(&bytes)
            .map_err(|_| other("a truncated or compressed gRPC message"))?
            .to_vec()
    };
    Ok(Reply {
        status: parts.status.as_u16(),
        content_type: parts.headers.get(http::header::CONTENT_TYPE).map(|v| v.as_bytes().to_vec()),
        headers,
        grpc_status: grpc_status.filter(|_| grpc),
        body,
        peer: Some(peer),
    })
}
