//! The TLS half of the check before a run: one handshake with the target, so that a
//! certificate that does not verify, a cleartext server behind an `https://` URL or a server
//! that stalls is one clear error naming the host and the reason, before any load
//! ([`handshake`]); and what that handshake agreed by ALPN settles what the run speaks
//! ([`settle`]): HTTP/2 where it was asked for and agreed, a Hurl file's requests over
//! HTTP/2 when the server picked `h2`, over HTTP/1.1 otherwise.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::load_error::LoadError;
use crate::spec::{LoadSpec, RequestSource, Transport};
use crate::tls::{Alpn, Negotiated, TlsSpec};

/// One handshake on `tcp` within `timeout`: what it agreed, or why it failed.
pub fn handshake(tls: &TlsSpec, tcp: std::net::TcpStream, timeout: Duration) -> Result<Negotiated, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the handshake's runtime: {e}"))?;
    runtime.block_on(async {
        tcp.set_nonblocking(true).map_err(|e| e.to_string())?;
        let tcp = tokio::net::TcpStream::from_std(tcp).map_err(|e| e.to_string())?;
        let name = tls.name.to_str().into_owned();
        match tokio::time::timeout(timeout, tls.connector(1, true).handshake(tcp)).await {
            Ok(Ok((_, shake))) => Ok(shake.negotiated),
            Ok(Err(failed)) => Err(failed.why),
            Err(_) => Err(format!(
                "{name} did not finish the TLS handshake within {} (it stalled: a server that is not TLS, \
                 or one overloaded)",
                humantime::format_duration(timeout)
            )),
        }
    })
}

/// The spec the run uses once the handshake before it agreed `agreed` by ALPN.
pub fn settle(spec: &LoadSpec, agreed: Option<Negotiated>, addr: SocketAddr) -> Result<LoadSpec, LoadError> {
    let mut spec = spec.clone();
    let (Some(tls), Some(agreed)) = (spec.tls.clone(), agreed) else { return Ok(spec) };
    let refuse = |why: String| LoadError::Tls { url: spec.target.url.clone(), addr, why };
    let host = tls.name.to_str().into_owned();
    match tls.alpn {
        Alpn::H2 if !agreed.h2 => {
            let what = if spec.transport == Transport::Grpc {
                "gRPC runs on HTTP/2"
            } else {
                "--http2 asked for it"
            };
            return Err(refuse(format!(
                "{host} did not agree to HTTP/2 by ALPN (it chose {}), and {what}: is HTTP/2 on in its TLS \
                 configuration?",
                agreed.alpn.unwrap_or("none")
            )));
        }
        Alpn::Either if agreed.h2 => {
            // A Hurl file speaks what the server picked, as curl does; one that follows
            // redirects stays on HTTP/1.1, where the load follows them.
            let RequestSource::File(f) = &spec.requests else { return Ok(spec) };
            if f.follows_redirects() {
                spec.tls = Some(Arc::new(tls.with_alpn(Alpn::Http1)));
                return Ok(spec);
            }
            spec.requests = RequestSource::File(Arc::new(f.over_h2()));
            spec.transport = Transport::H2c;
            spec.tls = Some(Arc::new(tls.with_alpn(Alpn::H2)));
        }
        // Every connection offers what this one agreed.
        Alpn::Either => spec.tls = Some(Arc::new(tls.with_alpn(Alpn::Http1))),
        Alpn::H2 | Alpn::Http1 => {}
    }
    Ok(spec)
}
