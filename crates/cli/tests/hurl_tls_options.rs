//! A Hurl file's `insecure`, `cacert`, `cert`, `key`, `resolve` and `connect-to` options
//! against the tests' TLS server (`stackbench_testkit::tls`): `verify` applies them to
//! their request alone, as Hurl does; a load applies them to the whole run when every
//! request gives them alike, and refuses a file whose requests differ, at `file:line:col`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use stackbench_testkit::tls::{Certs, Leaf, Options, TlsServer};

fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("sb-hurl-tls-{name}-")).tempdir().unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn stackbench(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stackbench")).args(args).arg(file).output().expect("stackbench runs")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn verify_applies_each_requests_own_tls_and_routes() {
    let tmp = scratch("verify");
    let dir = tmp.path();
    let certs = Certs::new(dir, &["localhost", "example.test"], Leaf::Valid);
    let srv = TlsServer::start(&certs, &Options::default());
    let (port, ca) = (srv.addr.port(), certs.ca.display());
    let trusted = format!(
        "GET https://localhost:{port}/a\n[Options]\ncacert: {ca}\nHTTP 200\n\n\
         GET https://example.test:{port}/b\n[Options]\ncacert: {ca}\nresolve: example.test:{port}:127.0.0.1\nHTTP 200\n\n\
         GET https://example.test/c\n[Options]\ninsecure: true\nconnect-to: example.test:443:127.0.0.1:{port}\nHTTP 200\n"
    );
    let file = write(dir, "trusted.hurl", &trusted);
    let out = stackbench(&["verify"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(srv.stats.requests.load(std::sync::atomic::Ordering::Relaxed), 3, "{}", text(&out));

    // The options were the first requests' alone: a fourth without them is not trusted.
    let file =
        write(dir, "untrusted.hurl", &format!("{trusted}\nGET https://localhost:{port}/d\nHTTP 200\n"));
    let out = stackbench(&["verify"], &file);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    // Said at the request's place, with both fixes: the flag and the file's own option.
    let line = trusted.lines().count() + 2;
    let said = text(&out);
    assert!(
        said.contains(&format!(
            "untrusted.hurl:{line}:1: the certificate of localhost is not signed by a trusted"
        )) && said.contains("--cacert FILE (in a Hurl file, the request's `cacert: FILE` [Options] entry)"),
        "{said}"
    );
}

#[test]
fn verify_sends_the_client_certificate_a_request_names() {
    let tmp = scratch("mutual");
    let dir = tmp.path();
    let certs = Certs::new(dir, &["localhost"], Leaf::Valid);
    let srv = TlsServer::start(&certs, &Options { client_auth: true, ..Options::default() });
    let (port, ca) = (srv.addr.port(), certs.ca.display());
    let (cert, key) = (certs.client_cert.display(), certs.client_key.display());
    let with = format!(
        "GET https://localhost:{port}/\n[Options]\ncacert: {ca}\ncert: {cert}\nkey: {key}\nHTTP 200\n"
    );
    let out = stackbench(&["verify"], &write(dir, "with.hurl", &with));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let without = format!("GET https://localhost:{port}/\n[Options]\ncacert: {ca}\nHTTP 200\n");
    let out = stackbench(&["verify"], &write(dir, "without.hurl", &without));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
}

#[test]
fn a_load_applies_options_given_alike_to_the_whole_run() {
    let tmp = scratch("load");
    let dir = tmp.path();
    let certs = Certs::new(dir, &["example.test"], Leaf::Valid);
    let srv = TlsServer::start(&certs, &Options::default());
    let (port, ca) = (srv.addr.port(), certs.ca.display());
    let entry = |path: &str| {
        format!(
            "GET https://example.test:{port}/{path}\n[Options]\ncacert: {ca}\nresolve: example.test:{port}:127.0.0.1\n\
             HTTP 200\n[Asserts]\njsonpath \"$.count\" == 1\n\n"
        )
    };
    let file = write(dir, "alike.hurl", &format!("{}{}", entry("a"), entry("b")));
    let out = stackbench(
        &["load", "-c", "1", "-n", "5", "--threads", "1", "--json", "-", "--scenario-file"],
        &file,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let record = stackbench_testkit::record::record_json(&out.stdout);
    assert_eq!(record["summary"]["requests"], 10, "{}", text(&out));
    assert_eq!(record["summary"]["ok"], 10, "{}", text(&out));

    // The second request without them: a run cannot trust the CA for one request alone.
    let before = srv.stats.connections.load(std::sync::atomic::Ordering::Relaxed);
    let file =
        write(dir, "unalike.hurl", &format!("{}GET https://example.test:{port}/b\nHTTP 200\n", entry("a")));
    let out = stackbench(&["load", "-c", "1", "-n", "5", "--scenario-file"], &file);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = text(&out);
    assert!(err.contains("unalike.hurl:9:1") && err.contains("alike on every request"), "{err}");
    let after = srv.stats.connections.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(after, before, "refused before it starts");
}
