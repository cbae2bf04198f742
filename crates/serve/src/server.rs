//! Running a contestant: binding its socket (with a message that says what to
//! do when the port is taken), one accept loop for every hyper-based server
//! (HTTP/1.1 and h2c on one port, or HTTPS with both by ALPN, `TCP_NODELAY` on
//! every connection), and graceful shutdown on SIGTERM or Ctrl-C (in-flight
//! requests finish, then the process exits 0).

use std::error::Error as StdError;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::body::{Body, Incoming};
use hyper::service::Service;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::drain::Drain;

/// In-flight requests get this long to finish after SIGTERM.
const DRAIN: Duration = Duration::from_secs(10);

/// A client gets this long to finish its TLS handshake; then its connection is closed.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// What [`serve_http`] accepts: connections on a listener, in the clear or, with a
/// rustls configuration, over TLS.
pub struct Accept {
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
}

impl Accept {
    /// Connections on `listener`, each over TLS when `tls` is given.
    pub fn new(listener: TcpListener, tls: Option<Arc<rustls::ServerConfig>>) -> Accept {
        Accept { listener, tls: tls.map(TlsAcceptor::from) }
    }
}

impl From<TcpListener> for Accept {
    fn from(listener: TcpListener) -> Accept {
        Accept { listener, tls: None }
    }
}

/// Why a server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {source}{hint}", hint = bind_hint(source))]
    Bind { addr: SocketAddr, source: io::Error },
    #[error("the server stopped with an error: {0}")]
    Serve(#[source] io::Error),
}

fn bind_hint(e: &io::Error) -> &'static str {
    match e.kind() {
        io::ErrorKind::AddrInUse => {
            " (another process has this port; choose another --port, or 0 for a free one)"
        }
        io::ErrorKind::AddrNotAvailable => {
            " (this machine has no such address; use --bind 127.0.0.1 or 0.0.0.0)"
        }
        io::ErrorKind::PermissionDenied => " (ports below 1024 need privileges; use a port above 1024)",
        _ => "",
    }
}

/// Binds `bind:port` (port 0 picks a free port; read it from `local_addr`).
/// It also starts listening for SIGTERM and SIGINT ([`shutdown_signal`]), so
/// a server that has bound, and then says it listens, drains on the first
/// SIGTERM however soon it comes. Must run inside a tokio runtime.
pub async fn bind(bind: IpAddr, port: u16) -> Result<TcpListener, ServeError> {
    arm_shutdown();
    let addr = SocketAddr::new(bind, port);
    TcpListener::bind(addr).await.map_err(|source| ServeError::Bind { addr, source })
}

/// SIGTERM and SIGINT listeners made by [`bind`], for the first
/// [`shutdown_signal`]. tokio installs a signal's handler when the first
/// listener for it is made: made lazily, on the first poll of the server's
/// shutdown future, a SIGTERM sent before that poll (right after the server
/// announced itself, or after its first answer while the accept loop had not
/// come round again) found the default action and killed the process.
static ARMED: std::sync::Mutex<Option<Signals>> = std::sync::Mutex::new(None);

/// Listeners for the signals that stop a server (SIGTERM, SIGINT), made by
/// [`bind`] before they are awaited so the handlers are in place from then on.
#[derive(Debug)]
struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    /// `None` when the runtime cannot listen for signals (then the default
    /// actions stay). Must run inside a tokio runtime (or its `enter` guard).
    fn listen() -> Option<Signals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Some(Signals {
                term: signal(SignalKind::terminate()).ok()?,
                int: signal(SignalKind::interrupt()).ok()?,
            })
        }
        #[cfg(not(unix))]
        Some(Signals {})
    }

    /// The next SIGTERM or SIGINT.
    async fn recv(&mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

fn armed() -> std::sync::MutexGuard<'static, Option<Signals>> {
    ARMED.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn arm_shutdown() {
    let mut armed = armed();
    if armed.is_none() {
        *armed = Signals::listen();
    }
}

/// Resolves when the process receives SIGTERM or SIGINT (Ctrl-C): the first
/// call takes the listeners [`bind`] made, later ones make their own.
pub async fn shutdown_signal() {
    let signals = armed().take().or_else(Signals::listen);
    match signals {
        Some(mut s) => s.recv().await,
        None => std::future::pending().await,
    }
}

/// Serves `router` on `listener` until [`shutdown_signal`], then drains.
pub async fn serve_axum(listener: impl Into<Accept>, router: Router) -> Result<(), ServeError> {
    serve_http(listener, move || TowerToHyperService::new(router.clone())).await
}

/// Serves HTTP/1.1 and h2c (told apart by the HTTP/2 preface) on `listener`,
/// one `service()` per connection, until [`shutdown_signal`]; then lets
/// in-flight requests finish (at most [`DRAIN`]).
///
/// Over TLS, each connection's handshake runs in its own task (at most
/// [`HANDSHAKE`]), so a slow client never holds up the accept loop; then the
/// connection is served as in the clear, HTTP/1.1 or HTTP/2 as ALPN agreed
/// (hyper tells them apart by the preface all the same).
///
/// HTTP/1.1 answers go out in one `write` of one buffer (hyper's `writev(false)`):
/// the body of these services is a few bytes, which hyper then copies after
/// the head instead of sending two buffers in a `writev`. Measured: 1.06–1.12×
/// the requests/s of `sb-dummy --stack hyper` (`bench/event-log/ab.py`, README).
///
/// A client that shuts down its sending side after its request still gets the
/// answer (hyper's `half_close(true)`). hyper's default treats that FIN as the
/// client going away and drops the request; worse for speed, to notice it, it
/// tries a read after every request body, which made it set aside its 8 KiB
/// read buffer (still shared with the request) and allocate a new one for most
/// requests. Measured: 4.9 → 3 allocations and −4.8% instructions per request
/// (callgrind, `sb-dummy --stack hyper` under `wrk -c64`; README).
///
/// The drain is [`Drain`], not hyper-util's `GracefulShutdown`: the same
/// behaviour for one atomic load per poll instead of a `watch` channel (its
/// module says what that saves).
pub async fn serve_http<S, B>(listener: impl Into<Accept>, service: impl Fn() -> S) -> Result<(), ServeError>
where
    S: Service<http::Request<Incoming>, Response = http::Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn StdError + Send + Sync>>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let Accept { listener, tls } = listener.into();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().writev(false).half_close(true);
    let builder = Arc::new(builder);
    let drain = Drain::new();
    let mut shutdown = pin!(shutdown_signal());
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) if is_per_connection(&e) => continue,
                // EMFILE and friends: wait for connections to close, as hyper's examples do.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = tcp.set_nodelay(true);
        let Some(tls) = &tls else {
            let conn = drain.watch(builder.serve_connection(TokioIo::new(tcp), service()).into_owned());
            tokio::spawn(async move {
                let _ = conn.await;
            });
            continue;
        };
        let (handshake, service) = (tls.accept(tcp), service());
        let (builder, drain) = (Arc::clone(&builder), drain.clone());
        tokio::spawn(async move {
            // A failed or stalled handshake ends the connection; the client sees why.
            let Ok(Ok(stream)) = tokio::time::timeout(HANDSHAKE, handshake).await else { return };
            let _ = drain.watch(builder.serve_connection(TokioIo::new(stream), service).into_owned()).await;
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(DRAIN, drain.drain()).await;
    Ok(())
}

/// An accept error that concerns only the connection being accepted.
fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::Interrupted
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_taken_port_says_what_to_do() {
        let first = bind(IpAddr::from([127, 0, 0, 1]), 0).await.unwrap();
        let port = first.local_addr().unwrap().port();
        let err = bind(IpAddr::from([127, 0, 0, 1]), port).await.unwrap_err().to_string();
        assert!(err.contains(&format!("127.0.0.1:{port}")) && err.contains("--port"), "{err}");
    }
}
