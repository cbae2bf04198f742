//! Running a contestant: binding its socket (with a message that says what to
//! do when the port is taken), `TCP_NODELAY` on every connection, and graceful
//! shutdown on SIGTERM or Ctrl-C (in-flight requests finish, then the process
//! exits 0).

use std::io;
use std::net::{IpAddr, SocketAddr};

use axum::Router;
use axum::serve::ListenerExt as _;
use tokio::net::TcpListener;

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
pub async fn bind(bind: IpAddr, port: u16) -> Result<TcpListener, ServeError> {
    let addr = SocketAddr::new(bind, port);
    TcpListener::bind(addr).await.map_err(|source| ServeError::Bind { addr, source })
}

/// Resolves when the process receives SIGTERM or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}

/// Serves `router` on `listener` until [`shutdown_signal`], then drains.
pub async fn serve_axum(listener: TcpListener, router: Router) -> Result<(), ServeError> {
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router).with_graceful_shutdown(shutdown_signal()).await.map_err(ServeError::Serve)
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
