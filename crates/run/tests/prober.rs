//! The real prober against real servers: what `verify` says when an answer cannot be read.

use std::time::Duration;

use stackbench_run::{HyperProber, Probe, Prober as _};
use stackbench_testkit::tls::{Certs, Leaf, Options, TlsServer};

#[test]
fn a_cleartext_url_to_a_tls_server_says_use_https() {
    let dir = tempfile::Builder::new().prefix("sb-prober-tls-").tempdir().unwrap();
    let certs = Certs::new(dir.path(), &["127.0.0.1"], Leaf::Valid);
    let srv = TlsServer::start(&certs, &Options::default());
    let url = srv.url("127.0.0.1", "/a").replacen("https://", "http://", 1);
    let prober = HyperProber::new().unwrap();
    let err = prober.send_http1(&Probe::get(&url, Duration::from_secs(5))).unwrap_err().to_string();
    assert!(
        err.contains(&format!("the server at {} answered with a TLS record", srv.addr))
            && err.contains("use https://"),
        "{err}"
    );
}

#[test]
fn the_h2c_preface_to_a_tls_server_says_use_https_too() {
    let dir = tempfile::Builder::new().prefix("sb-prober-tls-h2-").tempdir().unwrap();
    let certs = Certs::new(dir.path(), &["127.0.0.1"], Leaf::Valid);
    let srv = TlsServer::start(&certs, &Options::default());
    let url = srv.url("127.0.0.1", "/a").replacen("https://", "http://", 1);
    let prober = HyperProber::new().unwrap();
    for grpc in [false, true] {
        let probe = Probe { method: "POST", ..Probe::get(&url, Duration::from_secs(5)) };
        let err = prober.send_h2(&probe, grpc).unwrap_err().to_string();
        assert!(
            err.contains(&format!("the server at {} answered with a TLS record", srv.addr))
                && err.contains("use https://"),
            "grpc {grpc}: {err}"
        );
    }
}

/// A server that closes a cleartext connection without a byte (as OpenSSL and Go TLS
/// servers do with a request that is not TLS) is a closed connection, said with the hint.
#[test]
fn a_server_that_closes_at_once_is_a_close_with_the_https_hint() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let closer = std::thread::spawn(move || {
        for _ in 0..2 {
            let (mut s, _) = listener.accept().unwrap();
            // Read what the client sent first, so the close is a FIN rather than a reset.
            let _ = std::io::Read::read(&mut s, &mut [0u8; 256]);
        }
    });
    let prober = HyperProber::new().unwrap();
    let url = format!("http://{addr}/a");
    let h1 = prober.send_http1(&Probe::get(&url, Duration::from_secs(10))).unwrap_err().to_string();
    let h2 = prober.send_h2(&Probe::get(&url, Duration::from_secs(10)), false).unwrap_err().to_string();
    closer.join().unwrap();
    for err in [h1, h2] {
        assert!(err.contains("if it speaks TLS, use https://"), "{err}");
        assert!(!err.contains("answered with a TLS record"), "{err}");
    }
}
