//! The kinds a failed request is counted by, and the keys records and reports spell them
//! with ([`crate::RunRecord::errors`]).

/// Error kinds, as the keys of [`RunRecord::errors`] spell them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    /// Connection refused or could not be made, or not accepted within the timeout.
    Connect,
    /// Connection reset or closed mid-request.
    Reset,
    /// No whole answer within `--timeout` on an open connection.
    Timeout,
    /// An HTTP status other than the expected one (`http_503`).
    Http(u16),
    /// A gRPC status other than OK (`grpc_3`).
    Grpc(u16),
    /// Answered, but the answer was wrong for the request.
    Check,
    /// Open model: due but not sent on time.
    Late,
    /// Anything else the transport reported (malformed response, protocol error).
    Protocol,
    /// The TLS handshake failed: the server answered with an alert or with something that is
    /// not TLS (a cleartext server), or stalled in the middle of it past `--timeout`.
    TlsHandshake,
    /// The server's certificate did not verify (expired, for another name, an unknown issuer).
    TlsCertificate,
    /// A cleartext request (an `http://` URL) was answered with a TLS record: the server
    /// speaks TLS, and the URL should be `https://`.
    TlsAnswer,
}

impl ErrorKind {
    /// The key used in records and reports.
    pub fn key(self) -> String {
        match self {
            ErrorKind::Connect => "connect".into(),
            ErrorKind::Reset => "reset".into(),
            ErrorKind::Timeout => "timeout".into(),
            ErrorKind::Http(code) => format!("http_{code}"),
            ErrorKind::Grpc(code) => format!("grpc_{code}"),
            ErrorKind::Check => "check".into(),
            ErrorKind::Late => "late".into(),
            ErrorKind::Protocol => "protocol".into(),
            ErrorKind::TlsHandshake => "tls_handshake".into(),
            ErrorKind::TlsCertificate => "tls_certificate".into(),
            ErrorKind::TlsAnswer => "tls_answer".into(),
        }
    }

    /// Parses a key written by [`ErrorKind::key`].
    pub fn from_key(key: &str) -> Option<ErrorKind> {
        Some(match key {
            "connect" => ErrorKind::Connect,
            "reset" => ErrorKind::Reset,
            "timeout" => ErrorKind::Timeout,
            "check" => ErrorKind::Check,
            "late" => ErrorKind::Late,
            "protocol" => ErrorKind::Protocol,
            "tls_handshake" => ErrorKind::TlsHandshake,
            "tls_certificate" => ErrorKind::TlsCertificate,
            "tls_answer" => ErrorKind::TlsAnswer,
            _ => {
                if let Some(code) = key.strip_prefix("http_") {
                    ErrorKind::Http(code.parse().ok()?)
                } else {
                    ErrorKind::Grpc(key.strip_prefix("grpc_")?.parse().ok()?)
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_keys_round_trip() {
        for k in [
            ErrorKind::Connect,
            ErrorKind::Reset,
            ErrorKind::Timeout,
            ErrorKind::Http(503),
            ErrorKind::Grpc(3),
            ErrorKind::Check,
            ErrorKind::Late,
            ErrorKind::Protocol,
            ErrorKind::TlsHandshake,
            ErrorKind::TlsCertificate,
            ErrorKind::TlsAnswer,
        ] {
            assert_eq!(ErrorKind::from_key(&k.key()), Some(k));
        }
        assert_eq!(ErrorKind::from_key("http_x"), None);
        assert_eq!(ErrorKind::from_key("nope"), None);
    }
}
