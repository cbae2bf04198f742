//! Why a handshake failed, by kind and in words: a certificate that does not verify is
//! `tls_certificate`, anything else (an alert, an answer that is not TLS, a connection closed
//! or stalled in the middle) `tls_handshake`. The words name the host and say what to do,
//! for the check before a run and for `stackbench verify`.

use std::io;

use rustls::pki_types::ServerName;
use rustls::{AlertDescription, CertificateError, Error};
use stackbench_record::ErrorKind;

/// A handshake that failed: its kind under load, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    pub kind: ErrorKind,
    pub why: String,
}

/// The failure of a handshake with `name` that ended with `e`.
pub fn classify(e: &io::Error, name: &ServerName<'_>) -> Failed {
    let host = name.to_str();
    let handshake = |why: String| Failed { kind: ErrorKind::TlsHandshake, why };
    let Some(tls) = e.get_ref().and_then(|inner| inner.downcast_ref::<Error>()) else {
        return handshake(match e.kind() {
            io::ErrorKind::UnexpectedEof => format!(
                "{host} closed the connection in the middle of the TLS handshake (is it a TLS server on this port?)"
            ),
            io::ErrorKind::ConnectionReset => {
                format!("{host} reset the connection in the middle of the TLS handshake")
            }
            _ => format!("the TLS handshake with {host} failed: {e}"),
        });
    };
    match tls {
        Error::InvalidCertificate(c) => {
            Failed { kind: ErrorKind::TlsCertificate, why: certificate(c, &host) }
        }
        Error::AlertReceived(alert) => handshake(alert_text(*alert, &host)),
        Error::InvalidMessage(_)
        | Error::InappropriateMessage { .. }
        | Error::InappropriateHandshakeMessage { .. } => handshake(format!(
            "{host} did not answer the TLS handshake in TLS (a cleartext server? then use http://): {tls}"
        )),
        Error::NoApplicationProtocol => {
            handshake(format!("{host} agreed on none of the protocols offered by ALPN (h2, http/1.1): {tls}"))
        }
        Error::PeerIncompatible(p) => handshake(format!(
            "{host} and stackbench have no TLS version, cipher suite or group in common: {p:?}"
        )),
        other => handshake(format!("the TLS handshake with {host} failed: {other}")),
    }
}

/// Why `host`'s certificate did not verify, and what to do.
fn certificate(c: &CertificateError, host: &str) -> String {
    // A Hurl file's request can carry the fix itself, as Hurl reads it: say both.
    let fix = "trust its issuer with --cacert FILE (in a Hurl file, the request's `cacert: FILE` [Options] \
               entry), or skip the check with --insecure (`insecure: true`)";
    match c {
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            format!("the certificate of {host} has expired ({c:?}); renew it, or {fix}")
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            format!("the certificate of {host} is not valid yet ({c:?}); check the clocks, or {fix}")
        }
        CertificateError::NotValidForName => {
            format!("the certificate is not valid for the name {host}; {fix}")
        }
        CertificateError::NotValidForNameContext { presented, .. } => format!(
            "the certificate is not valid for the name {host} (it names {}); use the URL of a name it holds \
             (--resolve HOST:PORT:ADDR sends it to another address), or {fix}",
            presented.join(", ")
        ),
        CertificateError::UnknownIssuer => format!(
            "the certificate of {host} is not signed by a trusted authority (self-signed, or by a CA not among \
             the roots); {fix}"
        ),
        other => format!("the certificate of {host} did not verify ({other}); {fix}"),
    }
}

fn alert_text(alert: AlertDescription, host: &str) -> String {
    match alert {
        AlertDescription::HandshakeFailure | AlertDescription::InsufficientSecurity => format!(
            "{host} refused the handshake ({alert:?}): no version, cipher suite or key-exchange group in common \
             (--tls-version and --tls-groups choose what is offered)"
        ),
        AlertDescription::CertificateRequired | AlertDescription::BadCertificate => format!(
            "{host} refused the handshake ({alert:?}): it wants a client certificate it trusts (--cert FILE --key FILE)"
        ),
        AlertDescription::UnrecognisedName => {
            format!("{host} refused the handshake: it serves no site by the name {host} (SNI)")
        }
        AlertDescription::NoApplicationProtocol => format!(
            "{host} refused the handshake: it speaks none of the protocols offered by ALPN (h2 with --http2 or \
             gRPC, http/1.1 otherwise)"
        ),
        other => format!("{host} refused the handshake with the alert {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(e: Error) -> Failed {
        let name = ServerName::try_from("example.test").unwrap();
        classify(&io::Error::new(io::ErrorKind::InvalidData, e), &name)
    }

    #[test]
    fn kinds_and_words() {
        let f = failed(Error::InvalidCertificate(CertificateError::UnknownIssuer));
        assert_eq!(f.kind, ErrorKind::TlsCertificate);
        assert!(f.why.contains("example.test") && f.why.contains("--cacert"), "{}", f.why);
        assert!(
            f.why.contains("`cacert: FILE` [Options]") && f.why.contains("`insecure: true`"),
            "{}",
            f.why
        );
        let f = failed(Error::InvalidCertificate(CertificateError::Expired));
        assert!(f.why.contains("expired"), "{}", f.why);
        let f = failed(Error::AlertReceived(AlertDescription::HandshakeFailure));
        assert_eq!(f.kind, ErrorKind::TlsHandshake);
        assert!(f.why.contains("in common"), "{}", f.why);
        let f = failed(Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType));
        assert!(f.why.contains("cleartext"), "{}", f.why);
        let name = ServerName::try_from("example.test").unwrap();
        let eof = classify(&io::Error::from(io::ErrorKind::UnexpectedEof), &name);
        assert_eq!(eof.kind, ErrorKind::TlsHandshake);
        assert!(eof.why.contains("closed the connection"), "{}", eof.why);
    }
}
