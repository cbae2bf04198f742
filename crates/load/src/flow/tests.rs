//! The flow of a scenario file on real bytes: loading, routing, rendering requests and
//! judging answers, iteration by iteration.

use super::*;

fn source(text: &str) -> Result<FileSource, String> {
    source_at(text, "http://127.0.0.1:9")
}

/// `text` as a `.hurl` file aimed at `target`.
pub(super) fn source_at(text: &str, target: &str) -> Result<FileSource, String> {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let path = dir.join("t.hurl");
    std::fs::write(&path, text).unwrap();
    let aim = Aim { target: Some(target), ..Aim::default() };
    FileSource::load(&path, &["token=abc".into()], 1, &FileLimits::default(), aim)
}

pub(super) fn target(url: &str) -> Target {
    crate::parse_target(url).unwrap()
}

pub(super) fn answer(status: u16, head: &'static [u8], body: &'static [u8]) -> Answer<'static> {
    // As the reader gives a connection's first answers: the marks noted, no header placed.
    let (headers, marks) = crate::wire::tests::headers_of(head, false).unwrap();
    Answer {
        status,
        content_type: None,
        body,
        received: 0,
        grpc_status: None,
        head,
        headers: Box::leak(headers.into_boxed_slice()),
        marks: Box::leak(Box::new(marks)),
        reparsed: None,
    }
}

#[test]
fn writes_the_request_under_the_targets_path() {
    let file = "POST {{base_url}}/todos\nAuthorization: Bearer {{token}}\n{\"t\": \"{{token}}\"}\nHTTP 201\n\nGET {{base_url}}\nHTTP 200\n";
    let src = source_at(file, "http://127.0.0.1:9/api/").unwrap();
    assert_eq!(src.names, ["POST /todos", "GET "]);
    let t = target("http://127.0.0.1:9/api/");
    let mut st = IterState::new(&src, &t, true, Io::Epoll, 0);
    let f = st.begin(&src, 0);
    let flow = &src.scenario.flows[f].hurl;
    let wire = st.wire(&src, (f, 0), &flow.entries[0]).unwrap();
    let text = std::str::from_utf8(wire).unwrap();
    assert!(text.starts_with("POST /api/todos HTTP/1.1\r\nHost: 127.0.0.1:9\r\n"), "{text}");
    assert!(text.contains("\r\nAuthorization: Bearer abc\r\n"), "{text}");
    assert!(text.contains(
        "\r\nContent-Type: application/json\r\nAccept: */*\r\nContent-Length: 12\r\n\r\n{\"t\": \"abc\"}"
    ));
    let mut st = IterState::new(&src, &t, false, Io::Epoll, 0);
    st.begin(&src, 0);
    let wire = st.wire(&src, (f, 1), &flow.entries[1]).unwrap();
    assert!(wire.starts_with(b"GET /api HTTP/1.1\r\n"), "{wire:?}");
    assert!(wire.ends_with(b"Connection: close\r\n\r\n"));
    let src = source(file).unwrap();
    let flow = &src.scenario.flows[f].hurl;
    let t = target("http://127.0.0.1:9");
    let mut st = IterState::new(&src, &t, true, Io::Epoll, 0);
    st.begin(&src, 0);
    let wire = st.wire(&src, (f, 1), &flow.entries[1]).unwrap();
    assert!(wire.starts_with(b"GET / HTTP/1.1\r\n"), "{wire:?}");
    assert!(st.programs[f].iter().all(Option::is_some), "both compiled");
}

#[test]
fn a_connection_per_iteration_closes_on_each_flows_last_request() {
    let src =
        source("GET {{base_url}}/a\n\nPOST {{base_url}}/b\n{\"t\": \"{{token}}\"}\n\nGET {{base_url}}/c\n")
            .unwrap();
    let t = target("http://127.0.0.1:9");
    let mut st = IterState::new(&src, &t, Closing::Last, Io::Epoll, 0);
    let f = st.begin(&src, 0);
    assert!(st.programs[f].iter().all(Option::is_some), "all compiled");
    for (i, entry) in src.scenario.flows[f].hurl.entries.iter().enumerate() {
        // The compiled request, then the one written by rendering (a copy of the entry
        // is not the flow's, so its program is not used).
        for entry in [entry, &entry.clone()] {
            let wire = st.wire(&src, (f, i), entry).unwrap();
            let closes = wire.windows(19).any(|w| w == b"Connection: close\r\n");
            assert_eq!(closes, i == 2, "request {i}: {}", String::from_utf8_lossy(wire));
        }
    }
}

#[test]
fn a_file_written_for_another_server_goes_to_the_target() {
    let text = "GET http://localhost:8000/todos?x=1\nHTTP 200\n[Captures]\nid: jsonpath \"$.id\"\nGET http://localhost:8000/todos/{{id}}\nHTTP 200\n";
    let src = source_at(text, "http://127.0.0.1:9/api").unwrap();
    assert!(
        src.notes.iter().any(|n| n.contains("http://localhost:8000 go to http://127.0.0.1:9/api")),
        "{:?}",
        src.notes
    );
    let t = target("http://127.0.0.1:9/api");
    let mut st = IterState::new(&src, &t, true, Io::Epoll, 0);
    st.begin(&src, 0);
    st.vars.set("id", "7", Kind::Integer);
    let flow = &src.scenario.flows[0].hurl;
    let wire = st.wire(&src, (0, 0), &flow.entries[0]).unwrap().to_vec();
    assert!(
        wire.starts_with(b"GET /api/todos?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n"),
        "{}",
        String::from_utf8_lossy(&wire)
    );
    let wire = st.wire(&src, (0, 1), &flow.entries[1]).unwrap();
    assert!(wire.starts_with(b"GET /api/todos/7 HTTP/1.1\r\n"), "{}", String::from_utf8_lossy(wire));
    // Another origin must be mapped, and mapped to the same server.
    let two = format!("{text}GET http://auth:9000/token\nHTTP 200\n");
    let e = source_at(&two, "http://127.0.0.1:9").unwrap_err();
    assert!(e.contains("http://auth:9000") && e.contains("--origin"), "{e}");
}

#[test]
fn a_user_sends_back_the_cookies_it_was_given() {
    let text = "POST {{base_url}}/login\nHTTP 200\nGET {{base_url}}/me\nHTTP 200\n";
    let src = source(text).unwrap();
    let t = target("http://127.0.0.1:9");
    let mut st = IterState::new(&src, &t, true, Io::Epoll, 0);
    st.begin(&src, 0);
    let flow = &src.scenario.flows[0].hurl;
    let head = b"HTTP/1.1 200 OK\r\nset-cookie: sid=abc; Path=/; HttpOnly\r\n\r\n";
    st.wire(&src, (0, 0), &flow.entries[0]).unwrap();
    assert_eq!(st.verdict(&src, (0, 0), &flow.entries[0], &answer(200, head, b""), true).result, Ok(()));
    let wire = String::from_utf8(st.wire(&src, (0, 1), &flow.entries[1]).unwrap().to_vec()).unwrap();
    assert!(wire.contains("\r\nCookie: sid=abc\r\n"), "{wire}");
    assert!(wire.starts_with("GET /me HTTP/1.1\r\n"), "{wire}");
    // A new iteration starts with an empty jar, unless the file keeps it.
    st.begin(&src, 1);
    let wire = String::from_utf8(st.wire(&src, (0, 1), &flow.entries[1]).unwrap().to_vec()).unwrap();
    assert!(!wire.contains("Cookie:"), "{wire}");
    let mut kept = source(text).unwrap();
    kept.scenario.keep_cookies = true;
    let mut st = IterState::new(&kept, &t, true, Io::Epoll, 0);
    st.begin(&kept, 0);
    st.wire(&kept, (0, 0), &flow.entries[0]).unwrap();
    st.verdict(&kept, (0, 0), &kept.scenario.flows[0].hurl.entries[0], &answer(200, head, b""), true);
    st.begin(&kept, 1);
    let entry = &kept.scenario.flows[0].hurl.entries[1];
    let wire = String::from_utf8(st.wire(&kept, (0, 1), entry).unwrap().to_vec()).unwrap();
    assert!(wire.contains("\r\nCookie: sid=abc\r\n"), "{wire}");
}

/// The `Cookie` line kept between requests follows the jar: a changed value, a second
/// cookie, a deleted one; the `cookie` assert reads every `Set-Cookie`, not only the first.
#[test]
fn a_kept_cookie_line_follows_the_jar() {
    let text = "GET {{base_url}}/a\nHTTP 200\n[Asserts]\ncookie \"sid\" exists\n";
    let src = source(text).unwrap();
    let t = target("http://127.0.0.1:9");
    let mut st = IterState::new(&src, &t, true, Io::Epoll, 0);
    st.begin(&src, 0);
    let entry = &src.scenario.flows[0].hurl.entries[0];
    let send = |st: &mut IterState, head: &'static [u8]| {
        let wire = String::from_utf8(st.wire(&src, (0, 0), entry).unwrap().to_vec()).unwrap();
        let verdict = st.verdict(&src, (0, 0), entry, &answer(200, head, b""), true).result;
        (wire.split("\r\n").find_map(|l| l.strip_prefix("Cookie: ")).map(str::to_owned), verdict)
    };
    let two = b"HTTP/1.1 200 OK\r\nset-cookie: a=1\r\nSet-Cookie: sid=abc\r\n\r\n";
    assert_eq!(send(&mut st, two), (None, Ok(())));
    assert_eq!(
        send(&mut st, b"HTTP/1.1 200 OK\r\nset-cookie: sid=xyz\r\n\r\n").0.as_deref(),
        Some("a=1; sid=abc")
    );
    let gone = b"HTTP/1.1 200 OK\r\nset-cookie: a=; Max-Age=0\r\n\r\n";
    assert_eq!(send(&mut st, gone), (Some("a=1; sid=xyz".into()), Err(ErrorKind::Check)));
    assert_eq!(send(&mut st, gone).0.as_deref(), Some("sid=xyz"));
}

#[test]
fn a_request_is_lent_on_epoll_and_shared_on_io_uring() {
    let src = source("POST {{base_url}}/x\n{\"id\": \"{{newUuid}}\"}\nHTTP 200\n").unwrap();
    let t = target("http://127.0.0.1:9");
    let (mut lent, mut shared) =
        (IterState::new(&src, &t, true, Io::Epoll, 7), IterState::new(&src, &t, true, Io::Uring, 7));
    let entry = &src.scenario.flows[0].hurl.entries[0];
    for n in 0..3 {
        lent.begin(&src, n);
        shared.begin(&src, n);
        let Ok(Outgoing::Http1 { wire, head_only: false }) = lent.outgoing(&src, (0, 0), entry) else {
            panic!("epoll: a lent request")
        };
        let size = wire.len() as u64;
        let Ok(out @ Outgoing::Http1Shared { .. }) = shared.outgoing(&src, (0, 0), entry) else {
            panic!("io_uring: a shared request")
        };
        let Outgoing::Http1Shared { wire: bytes, .. } = &out else { unreachable!() };
        assert_eq!(&bytes[..], wire, "the same bytes from the same random source");
        assert_eq!(out.size(), size);
    }
}

/// Issue 45 #12: a file's `Host` was sent beside the computed one; it takes its place,
/// and a `Content-Length` that says the body's length is sent once, by the framing.
#[test]
fn a_files_host_and_length_are_sent_once() {
    let src =
        source("POST {{base_url}}/x\nHost: vhost.example\nContent-Length: 2\n`ab`\nHTTP 200\n").unwrap();
    let t = target("http://127.0.0.1:9");
    let mut st = IterState::new(&src, &t, true, Io::Epoll, 0);
    st.begin(&src, 0);
    let entry = &src.scenario.flows[0].hurl.entries[0];
    let text = String::from_utf8(st.wire(&src, (0, 0), entry).unwrap().to_vec()).unwrap();
    assert_eq!(text.matches("Host: ").count(), 1, "{text}");
    assert!(text.contains("\r\nHost: vhost.example\r\n") && !text.contains("127.0.0.1:9"), "{text}");
    assert_eq!(text.to_ascii_lowercase().matches("content-length").count(), 1, "{text}");
}

#[test]
fn a_url_not_at_the_target_is_refused_with_its_place() {
    let e = source("GET {{token}}/x\nHTTP 200\n").unwrap_err();
    assert!(e.contains("t.hurl:1:1:") && e.contains("is not an absolute"), "{e}");
}

#[test]
fn answers_are_judged_by_kind() {
    let src = source(
        "GET {{base_url}}/a\nHTTP 200\n[Captures]\nid: jsonpath \"$.id\"\n[Asserts]\nheader \"X-K\" == \"v\"\njsonpath \"$.n\" == 2\n",
    )
    .unwrap();
    let t = target("http://127.0.0.1:9");
    let mut st = IterState::new(&src, &t, true, Io::Epoll, 0);
    st.begin(&src, 0);
    let entry = &src.scenario.flows[0].hurl.entries[0];
    let head = b"HTTP/1.1 200 OK\r\nx-k: v\r\n\r\n";
    let ok = st.verdict(&src, (0, 0), entry, &answer(200, head, b"{\"id\": 7, \"n\": 2}"), true);
    assert_eq!(ok, Verdict { result: Ok(()), capture_failed: false });
    let wrong = st.verdict(&src, (0, 0), entry, &answer(200, head, b"{\"id\": 7, \"n\": 3}"), true);
    assert_eq!(wrong.result, Err(ErrorKind::Check));
    // Off the check's turn the asserts are skipped, the captures still taken.
    assert_eq!(
        st.verdict(&src, (0, 0), entry, &answer(200, head, b"{\"id\": 7, \"n\": 3}"), false).result,
        Ok(())
    );
    let lost = st.verdict(&src, (0, 0), entry, &answer(200, head, b"{\"n\": 2}"), false);
    assert_eq!(lost, Verdict { result: Err(ErrorKind::Check), capture_failed: true });
    let failed = st.verdict(&src, (0, 0), entry, &answer(503, b"HTTP/1.1 503 x\r\n\r\n", b""), true);
    assert_eq!(failed.result, Err(ErrorKind::Http(503)));
}
