//! `sb-dummy` on each stack as a process: the contract over a real socket
//! (validation, 404/405/413) and a clean stop on SIGTERM.

use crate::event_log_support::{count_of, error_of, start};
use stackbench_testkit::http;

const BIN: &str = env!("CARGO_BIN_EXE_sb-dummy");

#[test]
fn dummy_on_every_stack() {
    for stack in ["axum", "actix", "hyper"] {
        let server = start(BIN, &["--stack", stack]);
        assert!(server.banner[0].starts_with(&format!("sb-dummy dummy ({stack}): listening on http://")));
        for _ in 0..3 {
            let r = server.post(r#"{"type":"page_view","source":"web","value":1.5}"#);
            assert_eq!((r.status, count_of(&r)), (200, 1), "{stack}");
            assert_eq!(r.header("content-type"), Some("application/json"), "{stack}");
        }
        assert_eq!(server.count(), 1, "{stack}");
        // The answer is built in the request's header map on hyper and axum: none of the
        // request's headers may come back with it.
        let event = br#"{"type":"a"}"#;
        let headers = [("Content-Type", "application/json"), ("X-Request-Only", "yes"), ("Accept", "*/*")];
        let r = http::request(server.addr, "POST", "/events", &headers, event).unwrap();
        assert_eq!((r.status, r.header("x-request-only"), r.header("accept")), (200, None, None), "{stack}");
        let r = server.post(r#"{"type":"a","timestamp":"now"}"#);
        assert!(r.status == 400 && error_of(&r).contains("`timestamp`"), "{stack}: {}", r.text());
        let r = http::get(server.addr, "/missing").unwrap();
        assert!(r.status == 404 && error_of(&r).contains("POST /events"), "{stack}: {}", r.text());
        let r = http::request(server.addr, "PATCH", "/events/count", &[], b"").unwrap();
        assert_eq!((r.status, r.header("allow")), (405, Some("GET, HEAD")), "{stack}");
        let big = vec![b'{'; 65 * 1024];
        let r = http::request(server.addr, "POST", "/events", &[("Content-Type", "application/json")], &big)
            .unwrap();
        assert!(r.status == 413 && error_of(&r).contains("64 KiB"), "{stack}: {}", r.text());
        assert!(server.terminate(), "{stack}: SIGTERM is a clean stop");
    }
}

/// A client may shut down its sending side once its request is out (`nc -N`,
/// scripts that send one request and wait for EOF): the answer still comes.
/// On hyper and axum this is hyper's `half_close(true)` (`server::serve_http`).
#[test]
fn a_half_closed_connection_still_gets_its_answer() {
    use std::io::{Read as _, Write as _};
    let request = raw_post(r#"{"type":"page_view"}"#);
    for stack in ["axum", "actix", "hyper"] {
        let server = start(BIN, &["--stack", stack]);
        for _ in 0..20 {
            let mut tcp = std::net::TcpStream::connect(server.addr).unwrap();
            tcp.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
            tcp.write_all(request.as_bytes()).unwrap();
            tcp.shutdown(std::net::Shutdown::Write).unwrap();
            let mut answer = String::new();
            let _ = tcp.read_to_string(&mut answer);
            assert!(answer.starts_with("HTTP/1.1 200"), "{stack}: {answer:?}");
            assert!(answer.ends_with(r#"{"count":1}"#), "{stack}: {answer:?}");
        }
        assert!(server.terminate(), "{stack}");
    }
}

/// A body declared over 64 KiB is refused from its `Content-Length` alone: the
/// 413 comes while the client has sent the head and nothing of the body.
#[test]
fn a_declared_length_over_the_limit_is_refused_before_the_body_arrives() {
    use std::io::{Read as _, Write as _};
    let head = "POST /events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n";
    for stack in ["axum", "actix", "hyper"] {
        let server = start(BIN, &["--stack", stack]);
        let mut tcp = std::net::TcpStream::connect(server.addr).unwrap();
        tcp.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
        tcp.write_all(head.as_bytes()).unwrap();
        let mut answer = vec![0; 4096];
        let n = tcp.read(&mut answer).unwrap_or(0);
        let answer = String::from_utf8_lossy(&answer[..n]);
        assert!(answer.starts_with("HTTP/1.1 413"), "{stack}: {answer:?}");
        assert!(answer.contains("64 KiB"), "{stack}: {answer:?}");
        assert!(server.terminate(), "{stack}");
    }
}

/// SIGTERM is a graceful stop: a request whose body is still arriving gets its
/// answer, an idle keep-alive connection does not hold the server up, and the
/// process exits 0 well within its 10 s drain.
#[test]
fn sigterm_lets_the_request_in_flight_finish() {
    use std::io::Write as _;
    use std::net::TcpStream;
    use std::time::{Duration, Instant};
    let request = raw_post(r#"{"type":"page_view"}"#);
    let (first, rest) = request.split_at(request.len() - 8);
    for stack in ["axum", "actix", "hyper"] {
        let mut server = start(BIN, &["--stack", stack]);
        let mut idle = TcpStream::connect(server.addr).unwrap();
        idle.write_all(request.as_bytes()).unwrap();
        assert!(answer(&mut idle).starts_with("HTTP/1.1 200"), "{stack}");
        let mut busy = TcpStream::connect(server.addr).unwrap();
        busy.write_all(first.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let stopping = Instant::now();
        server.signal("-TERM");
        std::thread::sleep(Duration::from_millis(300));
        busy.write_all(rest.as_bytes()).unwrap();
        let got = answer(&mut busy);
        assert!(got.starts_with("HTTP/1.1 200") && got.ends_with(r#"{"count":1}"#), "{stack}: {got:?}");
        let status = server.process.wait_exit(Duration::from_secs(10));
        assert!(status.success(), "{stack}: {status}");
        assert!(
            stopping.elapsed() < Duration::from_secs(5),
            "{stack}: stopped after {:?}",
            stopping.elapsed()
        );
        drop(idle);
    }
}

/// SIGTERM the moment the server has said it listens, or right after its first answer,
/// still drains and exits 0: the signal's handler is in place before the announcement
/// (it used to be installed on the accept loop's first poll, and a SIGTERM that came
/// sooner killed the process with the signal's default action).
#[test]
fn sigterm_at_once_after_the_announcement_or_the_first_answer_exits_0() {
    use std::io::Write as _;
    use std::net::TcpStream;
    use std::time::Duration;
    let request = raw_post(r#"{"type":"page_view"}"#);
    for stack in ["axum", "actix", "hyper"] {
        for round in 0..10 {
            let mut server = start(BIN, &["--stack", stack]);
            if round % 2 == 1 {
                let mut tcp = TcpStream::connect(server.addr).unwrap();
                tcp.write_all(request.as_bytes()).unwrap();
                assert!(answer(&mut tcp).starts_with("HTTP/1.1 200"), "{stack}");
            }
            server.signal("-TERM");
            let status = server.process.wait_exit(Duration::from_secs(10));
            assert!(status.success(), "{stack}, round {round}: {status}");
        }
    }
}

/// `POST /events` of `body` as raw HTTP/1.1, for the tests that drive the socket themselves.
fn raw_post(body: &str) -> String {
    format!(
        "POST /events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Reads until the answer's body (`{"count":1}`) is in, or EOF, or 10 s.
fn answer(tcp: &mut std::net::TcpStream) -> String {
    use std::io::Read as _;
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    let (mut got, mut buf) = (Vec::new(), [0; 1024]);
    while !String::from_utf8_lossy(&got).contains(r#"{"count":1}"#) {
        match tcp.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// `--tls-cert` and `--tls-key` (an ECDSA P-256 certificate, as stackbench makes for a
/// plan's `tls = true`): each stack serves HTTPS on rustls, announces `https://`, answers
/// the contract over TLS 1.3 with X25519MLKEM768 (rustls's first group) and http/1.1 by
/// ALPN, refuses a cleartext request on the same port, and stops cleanly on SIGTERM.
#[test]
fn dummy_over_tls_on_every_stack() {
    use stackbench_testkit::tls::{Certs, Leaf};
    let dir = tempfile::Builder::new().prefix("sb-dummy-tls-").tempdir().unwrap();
    let certs = Certs::new(dir.path(), &["localhost", "127.0.0.1"], Leaf::Valid);
    let (cert, key) = (certs.cert.to_str().unwrap(), certs.key.to_str().unwrap());
    let post = |addr, body: &str| {
        let headers = [("Content-Type", "application/json")];
        http::request_tls(addr, &certs.ca, "POST", "/events", &headers, body.as_bytes()).unwrap()
    };
    for stack in ["axum", "actix", "hyper"] {
        let server = start(BIN, &["--stack", stack, "--tls-cert", cert, "--tls-key", key]);
        assert!(
            server.banner[0]
                .starts_with(&format!("sb-dummy dummy ({stack}): listening on https://127.0.0.1:")),
            "{:?}",
            server.banner
        );
        for _ in 0..3 {
            let (r, agreed) = post(server.addr, r#"{"type":"page_view","source":"web"}"#);
            assert_eq!((r.status, count_of(&r)), (200, 1), "{stack}");
            assert_eq!(
                (agreed.version.as_str(), agreed.group.as_str(), agreed.alpn.as_deref()),
                ("TLSv1_3", "X25519MLKEM768", Some("http/1.1")),
                "{stack}"
            );
        }
        let (r, _) = post(server.addr, r#"{"type":"a","timestamp":"now"}"#);
        assert!(r.status == 400 && error_of(&r).contains("`timestamp`"), "{stack}: {}", r.text());
        let cleartext = http::get(server.addr, "/events/count");
        assert!(
            cleartext.is_err() || cleartext.as_ref().is_ok_and(|r| r.status == 400),
            "{stack}: {cleartext:?}"
        );
        assert!(server.terminate(), "{stack}: SIGTERM is a clean stop");
    }
    // A key that is not the certificate's stops the server before it listens, saying so.
    let err =
        event_log_support_try_start(&["--tls-cert", cert, "--tls-key", certs.client_key.to_str().unwrap()]);
    assert!(err.contains("cannot serve together"), "{err}");
    let err = event_log_support_try_start(&["--tls-cert", cert]);
    assert!(err.contains("--tls-key"), "{err}");
}

fn event_log_support_try_start(args: &[&str]) -> String {
    match crate::event_log_support::try_start(BIN, args) {
        Ok(_) => panic!("sb-dummy {args:?} started"),
        Err(e) => e,
    }
}
