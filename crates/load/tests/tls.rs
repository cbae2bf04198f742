//! The engine against real TLS servers: the Rust test server (tokio-rustls and hyper,
//! `stackbench_testkit::tls`) with certificates made at test time. What each run agreed
//! (version, group, ALPN) and how many handshakes it made, full and resumed, are checked
//! against what the server saw; every bad certificate or hostile server is one clear error
//! before the load, or counted by kind under it, within the run's time.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use stackbench_load::{Dur, LoadError, LoadOptions, Stop, run};
use stackbench_testkit::tls::{Certs, Leaf, Misbehave, Options, Raw, TlsServer};

fn certs(name: &str, leaf: Leaf) -> (Certs, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("sb-tls-{}-{name}", std::process::id()));
    (Certs::new(&dir, &["localhost", "127.0.0.1"], leaf), dir)
}

fn opts(c: &Certs) -> LoadOptions {
    LoadOptions {
        connections: Some(4),
        duration: Some(Dur(Duration::from_millis(1500))),
        threads: Some(1),
        cacert: Some(c.ca.clone()),
        ..LoadOptions::default()
    }
}

fn fails_before_the_load(o: &LoadOptions, url: &str) -> String {
    let began = Instant::now();
    let e = run(&o.to_spec(url).unwrap(), &Stop::new()).expect_err("no load should start");
    assert!(matches!(e, LoadError::Tls { .. }), "{e}");
    assert!(began.elapsed() < Duration::from_secs(15), "the check took {:?}", began.elapsed());
    e.to_string()
}

#[test]
fn http1_and_h2_over_tls_agree_what_the_server_saw() {
    let (c, dir) = certs("agree", Leaf::Valid);
    let s = TlsServer::start(&c, &Options::default());
    let r = run(&opts(&c).to_spec(&s.url("localhost", "/")).unwrap(), &Stop::new()).unwrap();
    assert!(r.summary.requests > 0 && r.summary.errors == 0, "{:?}", r.errors);
    let conn = r.connections.as_ref().expect("connections kept");
    let t = conn.tls.as_ref().expect("TLS kept");
    assert_eq!((t.version.as_str(), t.alpn.as_deref()), ("TLSv1.3", Some("http/1.1")));
    // rustls on both sides: the hybrid post-quantum group is the first choice.
    assert_eq!(t.key_exchange_group.as_deref(), Some("X25519MLKEM768"));
    assert_eq!((t.full, t.resumed, t.failed), (4, 0, 0));
    assert_eq!(conn.opened, 4);
    // The server saw the probe's handshake and the four connections'.
    assert_eq!(s.stats.handshakes.load(Ordering::Relaxed), 5);
    assert!(s.stats.requests.load(Ordering::Relaxed) >= r.summary.requests);

    let o = LoadOptions { http2: true, tls_groups: vec!["X25519".into()], ..opts(&c) };
    let r = run(&o.to_spec(&s.url("localhost", "/")).unwrap(), &Stop::new()).unwrap();
    assert!(r.summary.requests > 0 && r.summary.errors == 0, "{:?}", r.errors);
    let t = r.connections.unwrap().tls.unwrap();
    assert_eq!((t.alpn.as_deref(), t.key_exchange_group.as_deref()), (Some("h2"), Some("X25519")));
    let agreed = s.stats.agreed.lock().unwrap().clone();
    assert!(agreed.iter().any(|(g, a)| g == "X25519" && a == "h2"), "{agreed:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_connection_per_request_resumes_unless_told_not_to() {
    let (c, dir) = certs("resume", Leaf::Valid);
    let s = TlsServer::start(&c, &Options::default());
    let o = LoadOptions { no_keepalive: true, ..opts(&c) };
    let r = run(&o.to_spec(&s.url("127.0.0.1", "/")).unwrap(), &Stop::new()).unwrap();
    assert!(r.summary.requests > 10 && r.summary.errors == 0, "{:?}", r.errors);
    let conn = r.connections.unwrap();
    let t = conn.tls.unwrap();
    assert!(t.resumed > t.full, "{} resumed, {} full", t.resumed, t.full);
    assert_eq!(t.handshake.count, t.full + t.resumed);
    // Every measured request opened its connection, and its time with the setup is the headline's.
    let first = conn.first_requests.expect("requests that opened their connection");
    assert_eq!(first.requests, r.summary.requests);
    assert_eq!(first.with_setup.p50_us, r.summary.latency.p50_us);
    assert!(first.without_setup.p50_us < first.with_setup.p50_us);

    let o = LoadOptions { no_keepalive: true, no_resume: true, http2: true, ..opts(&c) };
    let r = run(&o.to_spec(&s.url("127.0.0.1", "/")).unwrap(), &Stop::new()).unwrap();
    assert!(r.summary.requests > 10 && r.summary.errors == 0, "{:?}", r.errors);
    let t = r.connections.unwrap().tls.unwrap();
    assert_eq!(t.resumed, 0);
    assert!(!t.resumption);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn tls12_mutual_tls_and_resolve() {
    let (c, dir) = certs("mtls", Leaf::Valid);
    let s = TlsServer::start(&c, &Options { tls12_only: true, client_auth: true, ..Options::default() });
    let url = s.url("localhost", "/");
    let e = fails_before_the_load(&opts(&c), &url);
    assert!(e.contains("client certificate") || e.contains("closed the connection"), "{e}");
    let o = LoadOptions { cert: Some(c.client_cert.clone()), key: Some(c.client_key.clone()), ..opts(&c) };
    let r = run(&o.to_spec(&url).unwrap(), &Stop::new()).unwrap();
    assert!(r.summary.requests > 0 && r.summary.errors == 0, "{:?}", r.errors);
    assert_eq!(r.connections.unwrap().tls.unwrap().version, "TLSv1.2");

    // The certificate names localhost; --resolve sends another name's connections to it.
    let dir2 = dir.join("named");
    let named = Certs::new(&dir2, &["api.example.test"], Leaf::Valid);
    let s = TlsServer::start(&named, &Options::default());
    let url = s.url("api.example.test", "/");
    let o = LoadOptions {
        resolve: vec![format!("api.example.test:{}:127.0.0.1", s.addr.port())],
        cacert: Some(named.ca.clone()),
        ..opts(&named)
    };
    let r = run(&o.to_spec(&url).unwrap(), &Stop::new()).unwrap();
    assert!(r.summary.requests > 0 && r.summary.errors == 0, "{:?}", r.errors);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn certificates_that_do_not_verify_are_one_clear_error() {
    let (good, dir) = certs("bad-certs", Leaf::Valid);
    let s = TlsServer::start(&good, &Options::default());
    // Self-signed as far as the system's roots know.
    let o = LoadOptions { cacert: None, ..opts(&good) };
    let e = fails_before_the_load(&o, &s.url("localhost", "/"));
    assert!(e.contains("localhost") && e.contains("--cacert") && e.contains("--insecure"), "{e}");
    // --insecure takes it.
    let o = LoadOptions { cacert: None, insecure: true, ..opts(&good) };
    let r = run(&o.to_spec(&s.url("localhost", "/")).unwrap(), &Stop::new()).unwrap();
    assert!(r.summary.ok > 0, "{:?}", r.errors);

    for (leaf, words) in [(Leaf::Expired, "expired"), (Leaf::OtherName, "not valid for the name localhost")] {
        let (c, d) = certs(&format!("{leaf:?}"), leaf);
        let s = TlsServer::start(&c, &Options::default());
        let e = fails_before_the_load(&opts(&c), &s.url("localhost", "/"));
        assert!(e.contains(words), "{leaf:?}: {e}");
        std::fs::remove_dir_all(d).unwrap();
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn hostile_servers_are_clear_before_the_load_and_counted_under_it() {
    let (c, dir) = certs("hostile", Leaf::Valid);
    let o = LoadOptions { timeout: Some(Dur(Duration::from_secs(1))), ..opts(&c) };
    let cleartext = Raw::start(Misbehave::Garbage);
    let e = fails_before_the_load(&o, &cleartext.url("localhost", "/"));
    assert!(e.contains("not answer the TLS handshake in TLS") && e.contains("http://"), "{e}");
    let stall = Raw::start(Misbehave::Stall);
    let e = fails_before_the_load(&o, &stall.url("localhost", "/"));
    assert!(e.contains("did not finish the TLS handshake"), "{e}");

    // Good for the check before the run and the first connection, hostile after: every
    // request on a new connection fails by kind, and the run ends on time.
    for how in [Misbehave::Garbage, Misbehave::Stall] {
        let s = TlsServer::start(&c, &Options { hostile_after: Some((2, how)), ..Options::default() });
        let o = LoadOptions {
            connections: Some(2),
            no_keepalive: true,
            timeout: Some(Dur(Duration::from_millis(300))),
            ..opts(&c)
        };
        let began = Instant::now();
        let r = run(&o.to_spec(&s.url("localhost", "/")).unwrap(), &Stop::new()).unwrap();
        assert!(began.elapsed() < Duration::from_secs(6), "{how:?}: took {:?}", began.elapsed());
        assert!(r.invalid.is_none(), "{how:?}: {:?}", r.invalid);
        let handshake = r.errors.get("tls_handshake").copied().unwrap_or(0);
        assert!(handshake > 0 && handshake + 1 >= r.summary.errors, "{how:?}: {:?}", r.errors);
        assert!(r.connections.unwrap().tls.unwrap().failed > 0);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn tls_refuses_io_uring_and_auto_picks_epoll() {
    let (c, dir) = certs("io", Leaf::Valid);
    let o = LoadOptions { io: Some(stackbench_load::Io::Uring), ..opts(&c) };
    match o.to_spec("https://localhost:1/") {
        Err(e) => assert!(e.to_string().contains("--io"), "{e}"),
        Ok(_) => panic!("io_uring with TLS must be refused"),
    }
    let o = LoadOptions { io: Some(stackbench_load::Io::Auto), ..opts(&c) };
    assert_eq!(o.to_spec("https://localhost:1/").unwrap().io, stackbench_load::Io::Epoll);
    std::fs::remove_dir_all(dir).unwrap();
}
