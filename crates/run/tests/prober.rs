//! The real prober against real servers: what `verify` says when an answer cannot be read.

use std::time::Duration;

use stackbench_run::client::{HyperProber, Prober as _};
use stackbench_testkit::tls::{Certs, Leaf, Options, TlsServer};

#[test]
fn a_cleartext_url_to_a_tls_server_says_use_https() {
    let dir = std::env::temp_dir().join(format!("sb-prober-tls-{}", std::process::id()));
    let certs = Certs::new(&dir, &["127.0.0.1"], Leaf::Valid);
    let srv = TlsServer::start(&certs, &Options::default());
    let url = srv.url("127.0.0.1", "/a").replacen("https://", "http://", 1);
    let prober = HyperProber::new().unwrap();
    let err = prober.send_http1(&url, "GET", &[], b"", Duration::from_secs(5)).unwrap_err().to_string();
    assert!(
        err.contains(&format!("the server at {} answered with a TLS record", srv.addr))
            && err.contains("use https://"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
