//! TLS for the tests: certificates made at test time ([`Certs`]: a CA and a leaf it signs,
//! ECDSA P-256, valid, expired or for another name, and a client certificate for mutual TLS)
//! and a Rust TLS server ([`TlsServer`]: tokio-rustls with hyper serving HTTP/1.1 and
//! HTTP/2 by ALPN, counting handshakes and resumptions), which can also turn hostile after
//! some connections (stall in the handshake, or answer it with bytes that are not TLS).
//! [`Raw`] servers misbehave from the first connection.

use std::io::{Read as _, Write as _};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rcgen::{CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, date_time_ymd};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// What the server's certificate is like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaf {
    Valid,
    /// Expired in 2021.
    Expired,
    /// For `other.invalid`, not for the names asked.
    OtherName,
}

/// A CA and a server certificate it signed, written as PEM files in a directory.
pub struct Certs {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
    /// A client certificate and its key, signed by the same CA.
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    chain: Vec<CertificateDer<'static>>,
    key_der: Vec<u8>,
    ca_der: CertificateDer<'static>,
}

impl Certs {
    /// Certificates for `names` (DNS names or IP addresses) in `dir`.
    pub fn new(dir: &Path, names: &[&str], leaf: Leaf) -> Certs {
        std::fs::create_dir_all(dir).expect("create the certificates' directory");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(DnType::CommonName, "stackbench test CA");
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("CA key")).expect("CA");
        let sans: Vec<String> = match leaf {
            Leaf::OtherName => vec!["other.invalid".to_owned()],
            Leaf::Valid | Leaf::Expired => names.iter().map(|n| (*n).to_owned()).collect(),
        };
        let mut params = CertificateParams::new(sans).expect("leaf params");
        params.distinguished_name.push(DnType::CommonName, names.first().copied().unwrap_or("localhost"));
        if leaf == Leaf::Expired {
            params.not_before = date_time_ymd(2020, 1, 1);
            params.not_after = date_time_ymd(2021, 1, 1);
        }
        let key = KeyPair::generate().expect("leaf key");
        let cert = params.signed_by(&key, &ca).expect("leaf");
        let mut client_params =
            CertificateParams::new(vec!["client.test".to_owned()]).expect("client params");
        client_params.distinguished_name.push(DnType::CommonName, "stackbench test client");
        let client_key = KeyPair::generate().expect("client key");
        let client = client_params.signed_by(&client_key, &ca).expect("client");
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::write(&path, text).expect("write a PEM file");
            path
        };
        Certs {
            ca: write("ca.pem", ca.pem()),
            cert: write("cert.pem", cert.pem()),
            key: write("key.pem", key.serialize_pem()),
            client_cert: write("client.pem", client.pem()),
            client_key: write("client-key.pem", client_key.serialize_pem()),
            chain: vec![cert.der().clone()],
            key_der: key.serialize_der(),
            ca_der: ca.der().clone(),
        }
    }
}

/// How a [`TlsServer`] is set up.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// TLS 1.2 only (else 1.2 and 1.3).
    pub tls12_only: bool,
    /// Ask every client for a certificate signed by the test CA.
    pub client_auth: bool,
    /// Agree `http/1.1` alone by ALPN (else `h2` first).
    pub http1_only: bool,
    /// After this many connections, misbehave on every later one.
    pub hostile_after: Option<(u64, Misbehave)>,
    /// Whether an HTTP/1.1 connection is kept alive after an answer.
    pub after_answer: AfterAnswer,
}

/// What a [`TlsServer`] does with an HTTP/1.1 connection after an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AfterAnswer {
    #[default]
    KeepAlive,
    /// Closes it (`Connection: close`), as a server that keeps none alive.
    Close,
}

/// What a hostile server does with a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Misbehave {
    /// Reads the ClientHello and never answers.
    Stall,
    /// Answers the ClientHello with bytes that are not TLS (a cleartext server's error page).
    Garbage,
}

/// What the server saw.
#[derive(Debug, Default)]
pub struct ServerStats {
    pub connections: AtomicU64,
    pub handshakes: AtomicU64,
    pub resumed: AtomicU64,
    pub requests: AtomicU64,
    /// The key-exchange group and ALPN of each handshake, as rustls names them.
    pub agreed: Mutex<Vec<(String, String)>>,
}

/// A TLS server on 127.0.0.1, on a thread of its own; dropping it stops it.
pub struct TlsServer {
    pub addr: SocketAddr,
    pub stats: Arc<ServerStats>,
    stop: Arc<AtomicBool>,
}

impl TlsServer {
    pub fn start(certs: &Certs, options: &Options) -> TlsServer {
        let config = Arc::new(server_config(certs, options));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        listener.set_nonblocking(true).expect("nonblocking listener");
        let stats = Arc::new(ServerStats::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (st, flag, options) = (Arc::clone(&stats), Arc::clone(&stop), options.clone());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            rt.block_on(serve(listener, config, st, flag, options));
        });
        TlsServer { addr, stats, stop }
    }

    /// `https://HOST:PORT{path}`.
    pub fn url(&self, host: &str, path: &str) -> String {
        format!("https://{host}:{}{path}", self.addr.port())
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn server_config(certs: &Certs, options: &Options) -> rustls::ServerConfig {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let versions: &[&rustls::SupportedProtocolVersion] =
        if options.tls12_only { &[&rustls::version::TLS12] } else { rustls::DEFAULT_VERSIONS };
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(versions)
        .expect("versions");
    let builder = if options.client_auth {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(certs.ca_der.clone()).expect("the CA");
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .expect("client verifier");
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certs.key_der.clone()));
    let mut config = builder.with_single_cert(certs.chain.clone(), key).expect("certificate and key");
    config.alpn_protocols = if options.http1_only {
        vec![b"http/1.1".to_vec()]
    } else {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    };
    config
}

async fn serve(
    listener: std::net::TcpListener,
    config: Arc<rustls::ServerConfig>,
    stats: Arc<ServerStats>,
    stop: Arc<AtomicBool>,
    options: Options,
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    while !stop.load(Ordering::Relaxed) {
        let Ok(Ok((tcp, _))) = tokio::time::timeout(Duration::from_millis(50), listener.accept()).await
        else {
            continue;
        };
        let n = stats.connections.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some((_, how)) = options.hostile_after.filter(|(after, _)| n > *after) {
            tokio::spawn(misbehave_async(tcp, how, Arc::clone(&stop)));
            continue;
        }
        let (acceptor, stats, after) = (acceptor.clone(), Arc::clone(&stats), options.after_answer);
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else { return };
            let conn = tls.get_ref().1;
            stats.handshakes.fetch_add(1, Ordering::Relaxed);
            if conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed) {
                stats.resumed.fetch_add(1, Ordering::Relaxed);
            }
            let group =
                conn.negotiated_key_exchange_group().map(|g| format!("{:?}", g.name())).unwrap_or_default();
            let alpn =
                conn.alpn_protocol().map(|a| String::from_utf8_lossy(a).into_owned()).unwrap_or_default();
            stats.agreed.lock().expect("no panics holding it").push((group, alpn));
            let counter = Arc::clone(&stats);
            let service = hyper::service::service_fn(move |_req: hyper::Request<hyper::body::Incoming>| {
                counter.requests.fetch_add(1, Ordering::Relaxed);
                async {
                    let body = http_body_util::Full::new(bytes::Bytes::from_static(b"{\"count\":1}"));
                    let mut answer = hyper::Response::new(body);
                    answer.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static("application/json"),
                    );
                    Ok::<_, std::convert::Infallible>(answer)
                }
            });
            let mut builder =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
            builder.http1().keep_alive(after == AfterAnswer::KeepAlive);
            let _ = builder.serve_connection(hyper_util::rt::TokioIo::new(tls), service).await;
        });
    }
}

async fn misbehave_async(tcp: tokio::net::TcpStream, how: Misbehave, stop: Arc<AtomicBool>) {
    let std = tcp.into_std().expect("a std socket");
    let _ = tokio::task::spawn_blocking(move || misbehave(std, how, &stop)).await;
}

/// Reads what the client sends; stalls, or answers with an HTTP error page.
fn misbehave(mut conn: std::net::TcpStream, how: Misbehave, stop: &AtomicBool) {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(Duration::from_millis(100)));
    let mut buf = [0u8; 4096];
    let mut answered = false;
    while !stop.load(Ordering::Relaxed) {
        match conn.read(&mut buf) {
            Ok(0) => return,
            Ok(_) if how == Misbehave::Garbage && !answered => {
                answered = true;
                let _ = conn.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
            }
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

/// A plain TCP server that misbehaves with every connection (a stalled or a cleartext
/// server behind an `https://` URL); dropping it stops it.
pub struct Raw {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Raw {
    pub fn start(how: Misbehave) -> Raw {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        listener.set_nonblocking(true).expect("nonblocking listener");
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let flag = Arc::clone(&flag);
                        std::thread::spawn(move || misbehave(conn, how, &flag));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Raw { addr, stop }
    }

    pub fn url(&self, host: &str, path: &str) -> String {
        format!("https://{host}:{}{path}", self.addr.port())
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
