//! TLS for `https://` targets, on rustls with the aws-lc-rs provider (docs/design.md, "TLS in
//! the load engine" says why both): [`TlsSpec`] is the checked client configuration of a run
//! (whose certificates are trusted, which key-exchange groups and versions are offered, ALPN,
//! a client certificate for mutual TLS, session resumption), and [`Connector`] one worker's
//! handshakes with it, each timed and told full or resumed ([`Shake`]).
//!
//! SNI is the URL's host (an address sends none, as RFC 6066 asks), whatever address the
//! connection goes to (`--resolve`, `--connect-to`), and the certificate is checked for that
//! name. Each worker has its own session store ([`tickets`]), with room for a ticket per
//! connection it holds, so resuming never crosses threads.

mod failure;
mod insecure;
mod tickets;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rustls::client::Resumption;
use rustls::crypto::{CryptoProvider, SupportedKxGroup, aws_lc_rs};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, HandshakeKind, NamedGroup, ProtocolVersion, RootCertStore};
use tokio::net::TcpStream;

pub use self::failure::Failed;
use crate::spec_error::{SpecError, invalid};

/// A connection after its handshake.
pub type TlsStream = tokio_rustls::client::TlsStream<TcpStream>;

/// The TLS flags of a load (`LoadOptions`'s, gathered; `stackbench verify`'s), before they
/// are checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFlags {
    pub cacert: Option<PathBuf>,
    pub insecure: bool,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    pub no_resume: bool,
    pub groups: Vec<String>,
    pub version: Option<String>,
}

impl TlsFlags {
    /// These flags as a Hurl file's `[Options]` change them (`insecure`, `cacert`, `cert`,
    /// `key`; the file's paths win, as an entry's options win over Hurl's command line).
    #[must_use]
    pub fn with_reach(&self, r: &stackbench_hurl::Reach) -> TlsFlags {
        let path = |given: &Option<String>, mine: &Option<PathBuf>| {
            given.as_ref().map(PathBuf::from).or_else(|| mine.clone())
        };
        TlsFlags {
            insecure: self.insecure || r.insecure,
            cacert: path(&r.cacert, &self.cacert),
            cert: path(&r.cert, &self.cert),
            key: path(&r.key, &self.key),
            ..self.clone()
        }
    }
}

/// Protocols offered by ALPN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alpn {
    /// `http/1.1` alone (HTTP/1.1 requests).
    Http1,
    /// `h2` alone (`--http2`, gRPC).
    H2,
    /// `h2` then `http/1.1`, as curl offers: a Hurl file, which speaks what the server picks.
    Either,
}

impl Alpn {
    fn protocols(self) -> Vec<Vec<u8>> {
        match self {
            Alpn::Http1 => vec![b"http/1.1".to_vec()],
            Alpn::H2 => vec![b"h2".to_vec()],
            Alpn::Either => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
        }
    }
}

/// The checked TLS configuration of a run.
#[derive(Debug, Clone)]
pub struct TlsSpec {
    config: Arc<ClientConfig>,
    /// The name sent as SNI and checked in the certificate: the URL's host.
    pub name: ServerName<'static>,
    /// How the server's certificate is checked, for the record: `system roots`,
    /// `--cacert FILE`, `nothing (--insecure)`.
    pub verified_by: String,
    pub resume: bool,
    pub alpn: Alpn,
}

impl TlsSpec {
    /// The configuration for `host` with `flags`, offering `alpn`.
    pub fn new(host: &str, flags: &TlsFlags, alpn: Alpn) -> Result<TlsSpec, SpecError> {
        let name = ServerName::try_from(host.to_owned())
            .map_err(|_| invalid("URL", format!("{host:?} is not a host name TLS can check")))?;
        let provider = Arc::new(provider(&flags.groups)?);
        let versions = versions(flags.version.as_deref())?;
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(versions)
            .map_err(|e| invalid("--tls-version", e.to_string()))?;
        let (builder, verified_by) = if flags.insecure {
            if flags.cacert.is_some() {
                return Err(crate::spec_error::conflict(
                    "--insecure",
                    "--cacert",
                    "--insecure checks no certificate, so none needs trusting",
                ));
            }
            let verifier = Arc::new(insecure::AnyCertificate::new(&provider));
            (
                builder.dangerous().with_custom_certificate_verifier(verifier),
                "nothing (--insecure)".to_owned(),
            )
        } else {
            let (roots, by) = match flags.cacert.as_deref() {
                Some(path) => (roots_from(path)?, format!("--cacert {}", path.display())),
                None => (system_roots()?, "system roots".to_owned()),
            };
            (builder.with_root_certificates(roots), by)
        };
        let mut config = match (flags.cert.as_deref(), flags.key.as_deref()) {
            (Some(cert), Some(key)) => builder
                .with_client_auth_cert(certificates(cert, "--cert")?, private_key(key)?)
                .map_err(|e| {
                    invalid("--cert", format!("{} and its --key do not go together: {e}", cert.display()))
                })?,
            (None, None) => builder.with_no_client_auth(),
            (Some(_), None) => {
                return Err(invalid("--cert", "needs --key FILE, the certificate's private key"));
            }
            (None, Some(_)) => {
                return Err(invalid("--key", "needs --cert FILE, the certificate it belongs to"));
            }
        };
        config.alpn_protocols = alpn.protocols();
        // Each connector has a session store of its own ([`TlsSpec::connector`]).
        config.resumption = Resumption::disabled();
        Ok(TlsSpec { config: Arc::new(config), name, verified_by, resume: !flags.no_resume, alpn })
    }

    /// The same configuration offering `alpn` instead.
    #[must_use]
    pub fn with_alpn(&self, alpn: Alpn) -> TlsSpec {
        let mut config = (*self.config).clone();
        config.alpn_protocols = alpn.protocols();
        TlsSpec { config: Arc::new(config), alpn, ..self.clone() }
    }

    /// A connector with a session store of its own (one per worker thread), with room for a
    /// ticket per connection of the `connections` it holds at once when they are opened again
    /// and again (`kept_alive` false, or a server that closes them).
    pub fn connector(&self, connections: usize, kept_alive: bool) -> Connector {
        let mut config = (*self.config).clone();
        if self.resume {
            config.resumption = Resumption::store(Arc::new(tickets::Tickets::new(connections, kept_alive)));
        }
        Connector { tls: tokio_rustls::TlsConnector::from(Arc::new(config)), name: self.name.clone() }
    }
}

/// One worker's handshakes.
#[derive(Clone)]
pub struct Connector {
    tls: tokio_rustls::TlsConnector,
    name: ServerName<'static>,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector").field("name", &self.name).finish_non_exhaustive()
    }
}

/// What a handshake agreed, as rustls names it (compared per handshake, written out once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    pub version: Option<ProtocolVersion>,
    pub suite: Option<rustls::CipherSuite>,
    pub group: Option<NamedGroup>,
    /// `true`: `h2`; `false`: `http/1.1` or none.
    pub h2: bool,
    pub alpn: Option<&'static str>,
}

impl Negotiated {
    /// The version as the record writes it (`TLSv1.3`).
    pub fn version_name(&self) -> String {
        match self.version {
            Some(ProtocolVersion::TLSv1_3) => "TLSv1.3".to_owned(),
            Some(ProtocolVersion::TLSv1_2) => "TLSv1.2".to_owned(),
            Some(v) => format!("{v:?}"),
            None => "unknown".to_owned(),
        }
    }

    pub fn suite_name(&self) -> String {
        self.suite.map_or_else(
            || "unknown".to_owned(),
            |s| s.as_str().map_or_else(|| format!("{s:?}"), str::to_owned),
        )
    }

    pub fn group_name(&self) -> Option<String> {
        self.group.map(group_name)
    }
}

/// One handshake, done.
#[derive(Debug, Clone, Copy)]
pub struct Shake {
    pub took: Duration,
    pub resumed: bool,
    pub negotiated: Negotiated,
}

impl Connector {
    /// Makes the handshake on `tcp`. A failure says its kind (`tls_certificate`, or
    /// `tls_handshake`) and why, naming the host.
    pub async fn handshake(&self, tcp: TcpStream) -> Result<(TlsStream, Shake), Failed> {
        let began = Instant::now();
        let stream =
            self.tls.connect(self.name.clone(), tcp).await.map_err(|e| failure::classify(&e, &self.name))?;
        let took = began.elapsed();
        let conn = stream.get_ref().1;
        let alpn = match conn.alpn_protocol() {
            Some(b"h2") => Some("h2"),
            Some(b"http/1.1") => Some("http/1.1"),
            Some(_) => Some("other"),
            None => None,
        };
        let negotiated = Negotiated {
            version: conn.protocol_version(),
            suite: conn.negotiated_cipher_suite().map(|s| s.suite()),
            group: conn.negotiated_key_exchange_group().map(SupportedKxGroup::name),
            h2: alpn == Some("h2"),
            alpn,
        };
        let resumed = conn.handshake_kind() == Some(HandshakeKind::Resumed);
        Ok((stream, Shake { took, resumed, negotiated }))
    }
}

/// The aws-lc-rs provider, offering `groups` (by name, in order) when given.
fn provider(groups: &[String]) -> Result<CryptoProvider, SpecError> {
    let mut provider = aws_lc_rs::default_provider();
    if groups.is_empty() {
        return Ok(provider);
    }
    let known = aws_lc_rs::ALL_KX_GROUPS;
    let mut chosen: Vec<&'static dyn SupportedKxGroup> = Vec::new();
    for want in groups {
        let found = known.iter().find(|g| group_name(g.name()).eq_ignore_ascii_case(want.trim()));
        match found {
            Some(g) if !chosen.iter().any(|c| c.name() == g.name()) => chosen.push(*g),
            Some(_) => {}
            None => {
                let names: Vec<String> = known.iter().map(|g| group_name(g.name())).collect();
                return Err(invalid(
                    "--tls-groups",
                    format!("{want:?} is not a group this build offers; choose from {}", names.join(", ")),
                ));
            }
        }
    }
    provider.kx_groups = chosen;
    Ok(provider)
}

/// A group's name as IANA's registry and OpenSSL write it.
pub fn group_name(g: NamedGroup) -> String {
    match g {
        NamedGroup::X25519 => "X25519".to_owned(),
        NamedGroup::secp256r1 => "secp256r1".to_owned(),
        NamedGroup::secp384r1 => "secp384r1".to_owned(),
        other => format!("{other:?}"),
    }
}

fn versions(v: Option<&str>) -> Result<&'static [&'static rustls::SupportedProtocolVersion], SpecError> {
    static TLS12: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
    static TLS13: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
    match v.map(str::trim) {
        None => Ok(rustls::DEFAULT_VERSIONS),
        Some("1.2") => Ok(&TLS12),
        Some("1.3") => Ok(&TLS13),
        Some(other) => {
            Err(invalid("--tls-version", format!("{other:?} is not a TLS version; write 1.2 or 1.3")))
        }
    }
}

/// The system's roots (Debian's ca-certificates, or what `SSL_CERT_FILE`/`SSL_CERT_DIR`
/// name), read once per process.
fn system_roots() -> Result<RootCertStore, SpecError> {
    static ROOTS: OnceLock<Result<RootCertStore, String>> = OnceLock::new();
    ROOTS
        .get_or_init(|| {
            let found = rustls_native_certs::load_native_certs();
            let mut roots = RootCertStore::empty();
            let (added, _) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                let why = found.errors.first().map(|e| format!(" ({e})")).unwrap_or_default();
                return Err(format!(
                    "no root certificates found on this system{why}: install them (Debian: apt-get install \
                     ca-certificates), or trust the server's with --cacert FILE"
                ));
            }
            Ok(roots)
        })
        .clone()
        .map_err(|why| invalid("https://", why))
}

/// The certificates of a PEM file as trusted roots.
fn roots_from(path: &Path) -> Result<RootCertStore, SpecError> {
    let mut roots = RootCertStore::empty();
    for cert in certificates(path, "--cacert")? {
        roots.add(cert).map_err(|e| {
            invalid("--cacert", format!("{}: a certificate cannot be trusted: {e}", path.display()))
        })?;
    }
    Ok(roots)
}

/// Every certificate of a PEM file, at least one.
fn certificates(path: &Path, flag: &'static str) -> Result<Vec<CertificateDer<'static>>, SpecError> {
    let text = read(path, flag)?;
    let certs = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(flag, format!("{}: not a PEM certificate file: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(invalid(
            flag,
            format!("{}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)", path.display()),
        ));
    }
    Ok(certs)
}

/// The private key of a PEM file (PKCS#8, PKCS#1 or SEC1).
fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, SpecError> {
    let text = read(path, "--key")?;
    PrivateKeyDer::from_pem_slice(&text).map_err(|e| {
        invalid(
            "--key",
            format!("{}: no PEM private key (PKCS#8, PKCS#1 or SEC1) in it: {e}", path.display()),
        )
    })
}

fn read(path: &Path, flag: &'static str) -> Result<Vec<u8>, SpecError> {
    std::fs::read(path).map_err(|e| invalid(flag, format!("cannot read {}: {e}", path.display())))
}
