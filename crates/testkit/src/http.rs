//! A minimal blocking HTTP/1.1 client for tests: one request per call on a
//! fresh connection (`Connection: close`), `Content-Length` or chunked bodies;
//! in the clear, or over TLS ([`request_tls`]: rustls, trusting one PEM certificate,
//! saying what the handshake agreed).

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// A response as the test sees it.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    /// Header names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// First header of that (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends one request and reads the whole response (10 s timeout).
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<Response> {
    exchange(connect(addr)?, addr, method, path, headers, body)
}

/// What a TLS handshake agreed, as rustls names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agreed {
    /// `TLSv1_3` or `TLSv1_2`.
    pub version: String,
    /// `X25519MLKEM768`, `X25519`, `secp256r1`, …
    pub group: String,
    /// The ALPN protocol, when the server chose one.
    pub alpn: Option<String>,
}

/// [`request`] over TLS to `localhost` at `addr`, trusting only the certificate(s) in
/// `ca` (PEM), offering `http/1.1` by ALPN; the answer and what the handshake agreed.
pub fn request_tls(
    addr: SocketAddr,
    ca: &Path,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<(Response, Agreed)> {
    use rustls::pki_types::pem::PemObject as _;
    let invalid =
        |e: &dyn std::fmt::Display| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string());
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(ca).map_err(|e| invalid(&e))? {
        roots.add(cert.map_err(|e| invalid(&e))?).map_err(|e| invalid(&e))?;
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid(&e))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("a DNS name");
    let conn = rustls::ClientConnection::new(Arc::new(config), name).map_err(|e| invalid(&e))?;
    let mut tls = rustls::StreamOwned::new(conn, connect(addr)?);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock)?;
    }
    let agreed = Agreed {
        version: tls.conn.protocol_version().map(|v| format!("{v:?}")).unwrap_or_default(),
        group: tls
            .conn
            .negotiated_key_exchange_group()
            .map(|g| format!("{:?}", g.name()))
            .unwrap_or_default(),
        alpn: tls.conn.alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned()),
    };
    Ok((exchange(tls, addr, method, path, headers, body)?, agreed))
}

fn connect(addr: SocketAddr) -> std::io::Result<TcpStream> {
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    Ok(stream)
}

fn exchange(
    mut stream: impl Read + Write,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<Response> {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        let _ = write!(head, "{k}: {v}\r\n");
    }
    if !body.is_empty() || method == "POST" || method == "PUT" {
        let _ = write!(head, "Content-Length: {}\r\n", body.len());
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    read_response(&mut BufReader::new(stream))
}

/// `POST path` with a JSON body.
pub fn post_json(addr: SocketAddr, path: &str, body: &str) -> std::io::Result<Response> {
    request(addr, "POST", path, &[("Content-Type", "application/json")], body.as_bytes())
}

/// `GET path`.
pub fn get(addr: SocketAddr, path: &str) -> std::io::Result<Response> {
    request(addr, "GET", path, &[], b"")
}

fn bad(msg: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, msg.to_owned())
}

fn read_response(r: &mut impl BufRead) -> std::io::Result<Response> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad(&format!("bad status line {line:?}")))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line)?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':').ok_or_else(|| bad(&format!("bad header {l:?}")))?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
    }
    let find = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            line.clear();
            r.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| bad("bad chunk size"))?;
            let mut chunk = vec![0; size + 2];
            r.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(len) = find("content-length") {
        body.resize(len.parse().map_err(|_| bad("bad content-length"))?, 0);
        r.read_exact(&mut body)?;
    } else {
        r.read_to_end(&mut body)?;
    }
    Ok(Response { status, headers, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_body_framings() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        let r = read_response(&mut &raw[..]).unwrap();
        assert_eq!(
            (r.status, r.header("content-type"), r.text().as_str()),
            (200, Some("application/json"), "{}")
        );
        let raw =
            b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let r = read_response(&mut &raw[..]).unwrap();
        assert_eq!((r.status, r.text().as_str()), (404, "abcde"));
    }
}
