//! The engine against real TLS servers: the Rust test server (tokio-rustls and hyper,
//! `stackbench_testkit::tls`) and Debian's nginx (OpenSSL 3.0), with certificates made at
//! test time. What each run agreed
//! (version, group, ALPN) and how many handshakes it made, full and resumed, are checked
//! against what the server saw; every bad certificate or hostile server is one clear error
//! before the load, or counted by kind under it, within the run's time.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use stackbench_load::{Dur, LoadError, LoadOptions, NewConnection, Stop, run};
use stackbench_testkit::record::valid;
use stackbench_testkit::tls::{AfterAnswer, Certs, Leaf, Misbehave, Options, Raw, TlsServer};

/// Certificates in a directory of their own, removed when the directory is dropped.
fn certs(name: &str, leaf: Leaf) -> (Certs, tempfile::TempDir) {
    let dir = tempfile::Builder::new().prefix(&format!("sb-tls-{name}-")).tempdir().unwrap();
    (Certs::new(dir.path(), &["localhost", "127.0.0.1"], leaf), dir)
}

fn opts(pem: &Certs) -> LoadOptions {
    LoadOptions {
        connections: Some(4),
        duration: Some(Dur(Duration::from_millis(1500))),
        threads: Some(1),
        cacert: Some(pem.ca.clone()),
        ..LoadOptions::default()
    }
}

fn fails_before_the_load(opt: &LoadOptions, url: &str) -> String {
    let began = Instant::now();
    let msg = run(&opt.to_spec(url).unwrap(), &Stop::new()).expect_err("no load should start");
    assert!(matches!(msg, LoadError::Tls { .. }), "{msg}");
    assert!(began.elapsed() < Duration::from_secs(15), "the check took {:?}", began.elapsed());
    msg.to_string()
}

#[test]
fn http1_and_h2_over_tls_agree_what_the_server_saw() {
    let (pem, _dir) = certs("agree", Leaf::Valid);
    let srv = TlsServer::start(&pem, &Options::default());
    let rec = stackbench_testkit::record::valid(
        run(&opts(&pem).to_spec(&srv.url("localhost", "/")).unwrap(), &Stop::new()).unwrap(),
    );
    assert!(rec.summary.requests > 0 && rec.summary.errors == 0, "{:?}", rec.errors);
    let conn = rec.connections.as_ref().expect("connections kept");
    let tls = conn.tls.as_ref().expect("TLS kept");
    assert_eq!((tls.version.as_str(), tls.alpn.as_deref()), ("TLSv1.3", Some("http/1.1")));
    // rustls on both sides: the hybrid post-quantum group is the first choice.
    assert_eq!(tls.key_exchange_group.as_deref(), Some("X25519MLKEM768"));
    assert_eq!((tls.full, tls.resumed, tls.failed), (4, 0, 0));
    assert_eq!(conn.opened, 4);
    // The server saw the probe's handshake and the four connections'.
    assert_eq!(srv.stats.handshakes.load(Ordering::Relaxed), 5);
    assert!(srv.stats.requests.load(Ordering::Relaxed) >= rec.summary.requests);

    let opt = LoadOptions { http2: true, tls_groups: vec!["X25519".into()], ..opts(&pem) };
    let rec = stackbench_testkit::record::valid(
        run(&opt.to_spec(&srv.url("localhost", "/")).unwrap(), &Stop::new()).unwrap(),
    );
    assert!(rec.summary.requests > 0 && rec.summary.errors == 0, "{:?}", rec.errors);
    let tls = rec.connections.unwrap().tls.unwrap();
    assert_eq!((tls.alpn.as_deref(), tls.key_exchange_group.as_deref()), (Some("h2"), Some("X25519")));
    let agreed = srv.stats.agreed.lock().unwrap().clone();
    assert!(agreed.iter().any(|(g, a)| g == "X25519" && a == "h2"), "{agreed:?}");
}

#[test]
fn a_connection_per_request_resumes_unless_told_not_to() {
    let (pem, _dir) = certs("resume", Leaf::Valid);
    let srv = TlsServer::start(&pem, &Options::default());
    let opt = LoadOptions { no_keepalive: true, ..opts(&pem) };
    let rec = stackbench_testkit::record::valid(
        run(&opt.to_spec(&srv.url("127.0.0.1", "/")).unwrap(), &Stop::new()).unwrap(),
    );
    assert!(rec.summary.requests > 10 && rec.summary.errors == 0, "{:?}", rec.errors);
    let conn = rec.connections.unwrap();
    let tls = conn.tls.unwrap();
    assert!(tls.resumed > tls.full, "{} resumed, {} full", tls.resumed, tls.full);
    assert_eq!(tls.handshake.count, tls.full + tls.resumed);
    // Every measured request opened its connection, and its time with the setup is the headline's.
    let first = conn.first_requests.expect("requests that opened their connection");
    assert_eq!(first.requests, rec.summary.requests);
    assert_eq!(first.with_setup.p50_us, rec.summary.latency.p50_us);
    assert!(first.without_setup.p50_us < first.with_setup.p50_us);

    let opt = LoadOptions { no_keepalive: true, no_resume: true, http2: true, ..opts(&pem) };
    let rec = stackbench_testkit::record::valid(
        run(&opt.to_spec(&srv.url("127.0.0.1", "/")).unwrap(), &Stop::new()).unwrap(),
    );
    assert!(rec.summary.requests > 10 && rec.summary.errors == 0, "{:?}", rec.errors);
    let tls = rec.connections.unwrap().tls.unwrap();
    assert_eq!(tls.resumed, 0);
    assert!(!tls.resumption);
}

/// rustls's own session cache keeps 8 tickets per server, and a TLS 1.3 ticket is used once:
/// with 32 connections each opening one per request, handshakes that finished together pushed
/// out each other's tickets, and many of the handshakes after were full ones. A worker keeps a
/// ticket per connection, so only each connection's first handshake is full.
#[test]
fn every_connection_resumes_after_its_first_handshake() {
    let (pem, _dir) = certs("tickets", Leaf::Valid);
    let srv = TlsServer::start(&pem, &Options::default());
    let opt = LoadOptions {
        no_keepalive: true,
        connections: Some(32),
        duration: None,
        requests: Some(960),
        ..opts(&pem)
    };
    let rec = stackbench_testkit::record::valid(
        run(&opt.to_spec(&srv.url("127.0.0.1", "/")).unwrap(), &Stop::new()).unwrap(),
    );
    assert!(rec.summary.requests == 960 && rec.summary.errors == 0, "{:?}", rec.errors);
    let tls = rec.connections.unwrap().tls.unwrap();
    assert_eq!(tls.failed, 0);
    assert!(tls.full + tls.resumed >= 960, "{tls:?}");
    assert!(tls.full <= 32, "{} full handshakes for 32 connections ({} resumed)", tls.full, tls.resumed);
}

/// A keep-alive connection makes one handshake, so the store keeps 8 tickets, not one per
/// connection (about a KiB each); a server that closes every connection after one answer has
/// them opened again and again, and the store grows to a ticket per connection, so that most
/// handshakes still resume.
#[test]
fn connections_a_server_closes_resume_as_those_opened_per_request() {
    let (pem, _dir) = certs("closed", Leaf::Valid);
    let srv = TlsServer::start(
        &pem,
        &Options { after_answer: AfterAnswer::Close, http1_only: true, ..Options::default() },
    );
    let opt = LoadOptions { connections: Some(32), duration: None, requests: Some(960), ..opts(&pem) };
    let rec = valid(run(&opt.to_spec(&srv.url("127.0.0.1", "/")).unwrap(), &Stop::new()).unwrap());
    assert!(rec.summary.requests == 960 && rec.summary.errors == 0, "{:?}", rec.errors);
    let tls = rec.connections.unwrap().tls.unwrap();
    assert_eq!(tls.failed, 0);
    assert!(tls.full + tls.resumed >= 960, "{tls:?}");
    // The first 32 are full, and some while the store grows.
    assert!(tls.full <= 96, "{} full handshakes for 32 connections ({} resumed)", tls.full, tls.resumed);
}

/// A flow of three requests, to the test server's one answer.
fn three_requests(dir: &std::path::Path) -> std::path::PathBuf {
    let file = dir.join("three.hurl");
    let one = "GET {{base_url}}/a\nHTTP 200\n[Asserts]\njsonpath \"$.count\" == 1\n\n";
    std::fs::write(&file, one.repeat(3)).unwrap();
    file
}

#[test]
fn a_connection_per_iteration_is_shared_by_its_requests() {
    let (pem, dir) = certs("iteration", Leaf::Valid);
    let file = three_requests(dir.path());
    // A Hurl file speaks what the server picks by ALPN: HTTP/1.1 where it offers only that,
    // else h2, whose lanes then open a connection each instead of sharing one.
    for http2 in [false, true] {
        let srv = TlsServer::start(&pem, &Options { http1_only: !http2, ..Options::default() });
        let opt = LoadOptions {
            scenario_file: Some(file.clone()),
            new_connection: Some(NewConnection::Iteration),
            connections: Some(2),
            duration: None,
            requests: Some(12),
            ..opts(&pem)
        };
        let rec = stackbench_testkit::record::valid(
            run(&opt.to_spec(&srv.url("127.0.0.1", "/")).unwrap(), &Stop::new()).unwrap(),
        );
        assert!(rec.summary.errors == 0, "{:?}", rec.errors);
        let conn = rec.connections.as_ref().expect("connections kept");
        let tls = conn.tls.as_ref().expect("TLS kept");
        assert_eq!(tls.alpn.as_deref(), Some(if http2 { "h2" } else { "http/1.1" }));
        // One connection per iteration, each a handshake: a full one for each user's first
        // (no ticket yet), resumed after.
        assert_eq!(conn.opened, 12, "http2 {http2}");
        assert_eq!((tls.full + tls.resumed, tls.failed), (12, 0), "{tls:?}");
        assert!(tls.full <= 2 && tls.resumed >= 10, "{tls:?}");
        // The server saw them, and the check before the run's one; three requests on each.
        assert_eq!(srv.stats.connections.load(Ordering::Relaxed), 13);
        assert_eq!(srv.stats.handshakes.load(Ordering::Relaxed), 13);
        assert_eq!(srv.stats.resumed.load(Ordering::Relaxed), tls.resumed);
        assert_eq!(srv.stats.requests.load(Ordering::Relaxed), 36);
        // Only each iteration's first request opened a connection.
        assert_eq!(conn.first_requests.as_ref().expect("first requests").requests, 12);
        assert_eq!(rec.params.extra.get("new_connection"), Some(&serde_json::json!("iteration")));

        // A connection per request for the same file: one for each of its 36 requests.
        let srv = TlsServer::start(&pem, &Options { http1_only: !http2, ..Options::default() });
        let opt = LoadOptions { new_connection: Some(NewConnection::Request), ..opt };
        let rec = stackbench_testkit::record::valid(
            run(&opt.to_spec(&srv.url("127.0.0.1", "/")).unwrap(), &Stop::new()).unwrap(),
        );
        assert!(rec.summary.errors == 0, "{:?}", rec.errors);
        let conn = rec.connections.as_ref().expect("connections kept");
        assert_eq!(conn.opened, 36, "http2 {http2}");
        assert_eq!(srv.stats.connections.load(Ordering::Relaxed), 37);
    }
}

#[test]
fn tls12_mutual_tls_and_resolve() {
    let (pem, dir) = certs("mtls", Leaf::Valid);
    let srv = TlsServer::start(&pem, &Options { tls12_only: true, client_auth: true, ..Options::default() });
    let url = srv.url("localhost", "/");
    let msg = fails_before_the_load(&opts(&pem), &url);
    assert!(msg.contains("client certificate") || msg.contains("closed the connection"), "{msg}");
    let opt =
        LoadOptions { cert: Some(pem.client_cert.clone()), key: Some(pem.client_key.clone()), ..opts(&pem) };
    let rec = valid(run(&opt.to_spec(&url).unwrap(), &Stop::new()).unwrap());
    assert!(rec.summary.requests > 0 && rec.summary.errors == 0, "{:?}", rec.errors);
    assert_eq!(rec.connections.unwrap().tls.unwrap().version, "TLSv1.2");

    // The certificate names localhost; --resolve sends another name's connections to it.
    let dir2 = dir.path().join("named");
    let named = Certs::new(&dir2, &["api.example.test"], Leaf::Valid);
    let srv = TlsServer::start(&named, &Options::default());
    let url = srv.url("api.example.test", "/");
    let opt = LoadOptions {
        resolve: vec![format!("api.example.test:{}:127.0.0.1", srv.addr.port())],
        cacert: Some(named.ca.clone()),
        ..opts(&named)
    };
    let rec = valid(run(&opt.to_spec(&url).unwrap(), &Stop::new()).unwrap());
    assert!(rec.summary.requests > 0 && rec.summary.errors == 0, "{:?}", rec.errors);
}

#[test]
fn certificates_that_do_not_verify_are_one_clear_error() {
    let (good, _dir) = certs("bad-certs", Leaf::Valid);
    let srv = TlsServer::start(&good, &Options::default());
    // Self-signed as far as the system's roots know.
    let opt = LoadOptions { cacert: None, ..opts(&good) };
    let msg = fails_before_the_load(&opt, &srv.url("localhost", "/"));
    assert!(msg.contains("localhost") && msg.contains("--cacert") && msg.contains("--insecure"), "{msg}");
    // --insecure takes it.
    let opt = LoadOptions { cacert: None, insecure: true, ..opts(&good) };
    let rec = stackbench_testkit::record::valid(
        run(&opt.to_spec(&srv.url("localhost", "/")).unwrap(), &Stop::new()).unwrap(),
    );
    assert!(rec.summary.ok > 0, "{:?}", rec.errors);

    for (leaf, words) in [(Leaf::Expired, "expired"), (Leaf::OtherName, "not valid for the name localhost")] {
        let (pem, _d) = certs(&format!("{leaf:?}"), leaf);
        let srv = TlsServer::start(&pem, &Options::default());
        let msg = fails_before_the_load(&opts(&pem), &srv.url("localhost", "/"));
        assert!(msg.contains(words), "{leaf:?}: {msg}");
    }
}

#[test]
fn hostile_servers_are_clear_before_the_load_and_counted_under_it() {
    let (pem, _dir) = certs("hostile", Leaf::Valid);
    let opt = LoadOptions { timeout: Some(Dur(Duration::from_secs(1))), ..opts(&pem) };
    let cleartext = Raw::start(Misbehave::Garbage);
    let msg = fails_before_the_load(&opt, &cleartext.url("localhost", "/"));
    assert!(msg.contains("not answer the TLS handshake in TLS") && msg.contains("http://"), "{msg}");
    let stall = Raw::start(Misbehave::Stall);
    let msg = fails_before_the_load(&opt, &stall.url("localhost", "/"));
    assert!(msg.contains("did not finish the TLS handshake"), "{msg}");

    // Good for the check before the run and the first connection, hostile after: every
    // request on a new connection fails by kind, and the run ends on time.
    for how in [Misbehave::Garbage, Misbehave::Stall] {
        let srv = TlsServer::start(&pem, &Options { hostile_after: Some((2, how)), ..Options::default() });
        let opt = LoadOptions {
            connections: Some(2),
            no_keepalive: true,
            timeout: Some(Dur(Duration::from_millis(300))),
            ..opts(&pem)
        };
        let began = Instant::now();
        let rec = stackbench_testkit::record::valid(
            run(&opt.to_spec(&srv.url("localhost", "/")).unwrap(), &Stop::new()).unwrap(),
        );
        assert!(began.elapsed() < Duration::from_secs(6), "{how:?}: took {:?}", began.elapsed());
        assert!(rec.invalid.is_none(), "{how:?}: {:?}", rec.invalid);
        let handshake = rec.errors.get("tls_handshake").copied().unwrap_or(0);
        assert!(handshake > 0 && handshake + 1 >= rec.summary.errors, "{how:?}: {:?}", rec.errors);
        assert!(rec.connections.unwrap().tls.unwrap().failed > 0);
    }
}

#[test]
fn tls_refuses_io_uring_and_auto_picks_epoll() {
    let (pem, _dir) = certs("io", Leaf::Valid);
    let opt = LoadOptions { io: Some(stackbench_load::Io::Uring), ..opts(&pem) };
    match opt.to_spec("https://localhost:1/") {
        Err(msg) => assert!(msg.to_string().contains("--io"), "{msg}"),
        Ok(_) => panic!("io_uring with TLS must be refused"),
    }
    let opt = LoadOptions { io: Some(stackbench_load::Io::Auto), ..opts(&pem) };
    assert_eq!(opt.to_spec("https://localhost:1/").unwrap().io, stackbench_load::Io::Epoll);
}

/// nginx from Debian (OpenSSL 3.0) over TLS 1.3, one process: started for a test, killed by
/// its pid when dropped.
struct Nginx {
    child: std::process::Child,
    port: u16,
}

impl Nginx {
    /// `None` (with a line on the terminal) where nginx is not installed; under CI a missing
    /// nginx fails the test instead (.ci/run installs nginx-light).
    fn start(pem: &Certs, dir: &std::path::Path) -> Option<Nginx> {
        if std::process::Command::new("nginx").arg("-v").output().is_err() {
            assert!(!stackbench_testkit::in_ci(), "nginx is missing: apt-get install nginx-light");
            eprintln!("skipped: no nginx on PATH (apt-get install nginx-light)");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let conf = dir.join("nginx.conf");
        std::fs::write(
            &conf,
            format!(
                "daemon off;\nmaster_process off;\npid {dir}/nginx.pid;\nerror_log {dir}/error.log;\n\
                 events {{ worker_connections 256; }}\nhttp {{\n  access_log off;\n  client_body_temp_path {dir};\n  \
                 server {{\n    listen 127.0.0.1:{port} ssl http2;\n    ssl_certificate {cert};\n    \
                 ssl_certificate_key {key};\n    ssl_protocols TLSv1.3;\n    \
                 location / {{ default_type application/json; return 200 '{{\"count\":1}}'; }}\n  }}\n}}\n",
                dir = dir.display(),
                cert = pem.cert.display(),
                key = pem.key.display(),
            ),
        )
        .unwrap();
        let child = std::process::Command::new("nginx")
            .args(["-c", conf.to_str().unwrap(), "-e", dir.join("error.log").to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let began = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(began.elapsed() < Duration::from_secs(10), "nginx did not listen on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Nginx { child, port })
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn nginx_on_openssl_agrees_x25519_and_resumes() {
    let (pem, dir) = certs("nginx", Leaf::Valid);
    let Some(nginx) = Nginx::start(&pem, dir.path()) else { return };
    let url = format!("https://localhost:{}/", nginx.port);
    let rec = valid(run(&opts(&pem).to_spec(&url).unwrap(), &Stop::new()).unwrap());
    assert!(rec.summary.ok > 0 && rec.summary.errors == 0, "{:?}", rec.errors);
    let tls = rec.connections.unwrap().tls.unwrap();
    // OpenSSL 3.0 has no ML-KEM: the hybrid offered first is passed over for X25519.
    assert_eq!((tls.version.as_str(), tls.key_exchange_group.as_deref()), ("TLSv1.3", Some("X25519")));
    assert_eq!(tls.alpn.as_deref(), Some("http/1.1"));

    let opt = LoadOptions { http2: true, no_keepalive: true, ..opts(&pem) };
    let rec = valid(run(&opt.to_spec(&url).unwrap(), &Stop::new()).unwrap());
    assert!(rec.summary.ok > 0 && rec.summary.errors == 0, "{:?}", rec.errors);
    let tls = rec.connections.unwrap().tls.unwrap();
    assert_eq!(tls.alpn.as_deref(), Some("h2"));
    assert!(tls.resumed > 0, "nginx's session tickets resume: {tls:?}");
    drop(nginx);
}

#[test]
fn a_cleartext_url_to_a_tls_server_is_counted_and_said() {
    let (pem, _dir) = certs("cleartext", Leaf::Valid);
    let srv = TlsServer::start(&pem, &Options::default());
    // rustls answers a cleartext request (or the h2c preface) with an alert record.
    let url = srv.url("127.0.0.1", "/").replacen("https://", "http://", 1);
    for http2 in [false, true] {
        let opt = LoadOptions {
            connections: Some(2),
            duration: Some(Dur(Duration::from_millis(500))),
            threads: Some(1),
            http2,
            ..LoadOptions::default()
        };
        let began = Instant::now();
        let rec = valid(run(&opt.to_spec(&url).unwrap(), &Stop::new()).unwrap());
        assert!(began.elapsed() < Duration::from_secs(5), "took {:?}", began.elapsed());
        let answered = rec.errors.get("tls_answer").copied().unwrap_or(0);
        assert!(answered > 0 && answered == rec.summary.errors, "http2 {http2}: {:?}", rec.errors);
        let text = stackbench_load::summary_text(&rec, false);
        let server = srv.addr.to_string();
        assert!(text.contains(&format!("the server at {server} answered with a TLS record")), "{text}");
        assert!(text.contains("use https://"), "{text}");
    }
}
