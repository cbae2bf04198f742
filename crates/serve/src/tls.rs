//! HTTPS for the reference contestants (`--tls-cert FILE --tls-key FILE`): the
//! certificate chain and private key read from PEM files into a rustls
//! `ServerConfig`, on the aws-lc-rs provider with its default key-exchange groups
//! (X25519MLKEM768 first), protocol versions (TLS 1.3 and 1.2) and session
//! resumption (rustls's in-memory session cache): what a Rust team gets from
//! `rustls::ServerConfig::builder()`. The load engine speaks TLS through the same
//! rustls build.
//!
//! The hyper-based stacks (axum, hyper) take the handshake in each connection's
//! task ([`crate::server::serve_http`]); actix-web takes this config as it is
//! (`HttpServer::listen_rustls_0_23`), adding `http/1.1` to its ALPN itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// ALPN protocols offered by a server that speaks HTTP/1.1 and HTTP/2 on one port.
pub const H2_AND_HTTP11: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// Why a certificate and key cannot serve HTTPS.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {flag} {}: {source}", path.display())]
    Read { flag: &'static str, path: PathBuf, source: std::io::Error },
    #[error(
        "--tls-cert {}: holds no PEM certificate (-----BEGIN CERTIFICATE-----){why}",
        path.display()
    )]
    NoCertificate { path: PathBuf, why: String },
    #[error("--tls-key {}: holds no PEM private key (PKCS#8, PKCS#1 or SEC1): {why}", path.display())]
    NoKey { path: PathBuf, why: String },
    #[error("--tls-cert and --tls-key cannot serve together: {0} (is the key the certificate's?)")]
    Config(#[source] rustls::Error),
}

/// A rustls server configuration for the chain in `cert` and the key in `key`, offering `alpn`.
pub fn server_config(cert: &Path, key: &Path, alpn: &[&[u8]]) -> Result<Arc<ServerConfig>, TlsError> {
    let chain = certificates(cert)?;
    let key = private_key(key)?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Config)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(TlsError::Config)?;
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

fn read(flag: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read { flag, path: path.to_owned(), source })
}

/// Every certificate of the PEM file, the server's own first; at least one.
fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let text = read("--tls-cert", path)?;
    let none = |why: String| TlsError::NoCertificate { path: path.to_owned(), why };
    let chain = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| none(format!(": {e}")))?;
    if chain.is_empty() {
        return Err(none(String::new()));
    }
    Ok(chain)
}

fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let text = read("--tls-key", path)?;
    PrivateKeyDer::from_pem_slice(&text)
        .map_err(|e| TlsError::NoKey { path: path.to_owned(), why: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new().prefix(&format!("sb-serve-tls-{name}-")).tempdir().unwrap()
    }

    #[test]
    fn a_certificate_and_its_key_make_a_config_offering_the_alpn_given() {
        let dir = scratch("ok");
        let certs = stackbench_testkit::tls::Certs::new(
            dir.path(),
            &["localhost"],
            stackbench_testkit::tls::Leaf::Valid,
        );
        let config = server_config(&certs.cert, &certs.key, &H2_AND_HTTP11).unwrap();
        assert_eq!(config.alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
    }

    #[test]
    fn each_bad_file_says_which_flag_and_what_is_wrong() {
        let dir = scratch("bad");
        let certs = stackbench_testkit::tls::Certs::new(
            dir.path(),
            &["localhost"],
            stackbench_testkit::tls::Leaf::Valid,
        );
        let err = |cert: &Path, key: &Path| server_config(cert, key, &[]).unwrap_err().to_string();
        let missing = dir.path().join("missing.pem");
        let e = err(&missing, &certs.key);
        assert!(e.starts_with("cannot read --tls-cert") && e.contains("missing.pem"), "{e}");
        let e = err(&certs.cert, &missing);
        assert!(e.starts_with("cannot read --tls-key"), "{e}");
        // The key given as the certificate, and the certificate as the key.
        let e = err(&certs.key, &certs.key);
        assert!(e.contains("--tls-cert") && e.contains("no PEM certificate"), "{e}");
        let e = err(&certs.cert, &certs.cert);
        assert!(e.contains("--tls-key") && e.contains("no PEM private key"), "{e}");
        // Another certificate's key.
        let e = err(&certs.cert, &certs.client_key);
        assert!(e.contains("cannot serve together") && e.contains("the certificate's"), "{e}");
    }
}
