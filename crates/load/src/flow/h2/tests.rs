//! h2c requests and gRPC calls as the worker sends them (header blocks decoded
//! back, framed messages), and their answers judged: grpc-status, the reply read
//! as JSON by asserts, and a case that judges grpc-status itself.

use std::path::Path;

use super::*;
use crate::h2c::hpack::Decoder;

/// A scenario file `text` (TOML) loaded as the engine loads it, aimed at `http://127.0.0.1:9`.
fn source(test: &str, text: &str) -> FileSource {
    source_at(test, text, "http://127.0.0.1:9")
}

/// As [`source`], aimed at `target`.
fn source_at(test: &str, text: &str, target: &str) -> FileSource {
    let scratch = tempfile::Builder::new().prefix(&format!("sb-flow-h2-{test}-")).tempdir().unwrap();
    let dir = scratch.path();
    let path = dir.join("t.toml");
    std::fs::write(&path, text).unwrap();
    // A scenario's files are under its directory.
    let proto = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../proto/sort/v1/sort.proto");
    std::fs::copy(proto, dir.join("sort.proto")).unwrap();
    let aim = stackbench_hurl::Aim { target: Some(target), ..Default::default() };
    let src = FileSource::load(&path, &[], 1, &stackbench_hurl::FileLimits::default(), aim);
    src.unwrap()
}

fn grpc_source(test: &str, rest: &str) -> FileSource {
    source(
        test,
        &format!(
            "protocol = \"grpc\"\n[grpc]\nproto = \"sort.proto\"\nmethod = \"sort.v1.SortService/BubbleSort\"\nmessage = '{{\"data\": [2, 1]}}'\n{rest}"
        ),
    )
}

fn fields(block: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    Decoder::new(4096)
        .decode(
            block,
            |_| true,
            |n, v| {
                out.push((String::from_utf8_lossy(n).into_owned(), String::from_utf8_lossy(v).into_owned()));
            },
        )
        .unwrap();
    out
}

fn answer<'a>(status: u16, grpc_status: Option<u16>, head: &'a [u8], body: &'a [u8]) -> Answer<'a> {
    // Indexed as the h2c client indexes the head it keeps (a test's few bytes, leaked).
    let mut fields = Vec::new();
    crate::wire::index_head(head, &mut fields);
    let headers = Box::leak(fields.into_boxed_slice());
    Answer {
        status,
        content_type: None,
        body,
        received: 0,
        grpc_status,
        head,
        headers,
        marks: &crate::wire::Marks::NONE,
        reparsed: None,
    }
}

#[test]
fn an_h2c_request_goes_under_the_targets_path_without_connection_fields() {
    let src = source_at(
        "h2c",
        "protocol = \"h2c\"\n[[flow]]\nhurl = '''\nPUT {{base_url}}/items\nHost: other\nConnection: close\nX-Trace: 7\n{\"a\": 1}\n'''\n",
        "http://127.0.0.1:9/api",
    );
    assert_eq!(src.scenario.protocol, Protocol::H2c);
    let t = crate::parse_target("http://127.0.0.1:9/api").unwrap();
    let mut st = IterState::new(&src, &t, true, crate::spec::Io::Epoll, 0);
    let flow = st.begin(&src, 0);
    let entry = &src.scenario.flows[flow].hurl.entries[0];
    let Ok(Outgoing::H2 { head, body, grpc: false, .. }) = st.outgoing(&src, (flow, 0), entry) else {
        panic!("an h2c request")
    };
    assert_eq!(&body[..], br#"{"a": 1}"#);
    let f = fields(head);
    let get = |n: &str| f.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
    // The file's `Host` is the request's `:authority` (issue 45 #12: the file's replaces the
    // computed one, over HTTP/2 as over HTTP/1.1).
    assert_eq!(
        (get(":method"), get(":path"), get(":authority")),
        (Some("PUT"), Some("/api/items"), Some("other"))
    );
    assert_eq!((get("x-trace"), get("content-type")), (Some("7"), Some("application/json")));
    assert!(get("user-agent").is_some_and(|a| a.starts_with("stackbench/")));
    assert_eq!((get("host"), get("connection")), (None, None), "{f:?}");
}

#[test]
fn a_grpc_call_is_its_message_encoded_and_framed() {
    let src = grpc_source("grpc", "");
    assert_eq!(src.scenario.protocol, Protocol::Grpc);
    assert_eq!(src.names, ["sort.v1.SortService/BubbleSort"]);
    let t = crate::parse_target("http://127.0.0.1:9").unwrap();
    let mut st = IterState::new(&src, &t, true, crate::spec::Io::Epoll, 0);
    st.begin(&src, 0);
    let entry = &src.scenario.flows[0].hurl.entries[0];
    let Ok(Outgoing::H2 { head, body, grpc: true, .. }) = st.outgoing(&src, (0, 0), entry) else {
        panic!("a gRPC call")
    };
    assert_eq!(&body[..], [0, 0, 0, 0, 4, 0x0a, 2, 2, 1]);
    let f = fields(head);
    let values = |n: &str| f.iter().filter(|(k, _)| k == n).map(|(_, v)| v.as_str()).collect::<Vec<_>>();
    assert_eq!(values(":path"), ["/sort.v1.SortService/BubbleSort"]);
    // The JSON body's default content type is not sent: the call's own is.
    assert_eq!(values("content-type"), ["application/grpc"]);
    assert_eq!(values("te"), ["trailers"]);
}

#[test]
fn grpc_answers_are_judged_by_their_status_then_their_checks() {
    let src = grpc_source("judge", "");
    let t = crate::parse_target("http://127.0.0.1:9").unwrap();
    let mut st = IterState::new(&src, &t, true, crate::spec::Io::Epoll, 0);
    st.begin(&src, 0);
    let entry = &src.scenario.flows[0].hurl.entries[0];
    let head = b"HTTP/2 200\r\ncontent-type:application/grpc\r\ngrpc-status:0\r\n";
    let ok = st.verdict(&src, (0, 0), entry, &answer(200, Some(0), head, &[0x0a, 2, 1, 2]), true);
    assert_eq!(ok.result, Ok(()));
    let refused = st.verdict(&src, (0, 0), entry, &answer(200, Some(3), head, &[]), true);
    assert_eq!(refused.result, Err(ErrorKind::Grpc(3)));
    let http = st.verdict(&src, (0, 0), entry, &answer(503, None, b"HTTP/2 503\r\n", &[]), true);
    assert_eq!(http.result, Err(ErrorKind::Http(503)));
}

#[test]
fn a_calls_asserts_read_its_reply_as_json_and_its_status_as_a_header() {
    // The case's requests as a flow would send them: a sorted reply passes, an unsorted one
    // fails its assert, and a case that expects a refusal judges the status itself.
    let src = grpc_source(
        "asserts",
        "[[verify]]\nname = \"a\"\nhurl = '''\nPOST {{base_url}}/sort.v1.SortService/BubbleSort\n{\"data\": [2, 1]}\nHTTP 200\n[Asserts]\njsonpath \"$.data[0]\" == 1\njsonpath \"$.data\" count == 2\n'''\n\
         [[verify]]\nname = \"b\"\nhurl = '''\nPOST {{base_url}}/sort.v1.SortService/BubbleSort\n{}\nHTTP 200\n[Asserts]\nheader \"grpc-status\" == \"3\"\n'''\n",
    );
    let mut src = src;
    let (sorted_case, refused_case) =
        (src.scenario.verify[0].hurl.clone(), src.scenario.verify[1].hurl.clone());
    let c = src.calls.as_mut().unwrap();
    c.flows = vec![vec![0], vec![0]];
    // The cases stand for the requests of two flows: each has its compiled checks.
    src.compiled = vec![vec![stackbench_hurl::CompiledChecks::default()]; 2];
    let t = crate::parse_target("http://127.0.0.1:9").unwrap();
    let mut st = IterState::new(&src, &t, true, crate::spec::Io::Epoll, 0);
    st.begin(&src, 0);
    let head = b"HTTP/2 200\r\ngrpc-status:0\r\n";
    let sorted = st.verdict(
        &src,
        (0, 0),
        &sorted_case.entries[0],
        &answer(200, Some(0), head, &[0x0a, 2, 1, 2]),
        true,
    );
    assert_eq!(sorted.result, Ok(()));
    let unsorted = st.verdict(
        &src,
        (0, 0),
        &sorted_case.entries[0],
        &answer(200, Some(0), head, &[0x0a, 2, 2, 1]),
        true,
    );
    assert_eq!(unsorted.result, Err(ErrorKind::Check));
    let garbage =
        st.verdict(&src, (0, 0), &sorted_case.entries[0], &answer(200, Some(0), head, &[0x0a, 9]), true);
    assert_eq!(garbage.result, Err(ErrorKind::Protocol));
    let three = b"HTTP/2 200\r\ngrpc-status:3\r\ngrpc-message:too long\r\n";
    let refused = st.verdict(&src, (1, 0), &refused_case.entries[0], &answer(200, Some(3), three, &[]), true);
    assert_eq!(refused.result, Ok(()));
    let accepted = st.verdict(&src, (1, 0), &refused_case.entries[0], &answer(200, Some(0), head, &[]), true);
    assert_eq!(accepted.result, Err(ErrorKind::Check));
}

#[test]
fn only_the_fields_http2_allows_are_sent() {
    let mut seen = Vec::new();
    let lines = b"Host: h\r\nX-A: 1\r\nConnection: close\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\nTE: trailers\r\n";
    for_each_field(lines, false, |n, v| seen.push((n.to_owned(), v.to_vec())));
    let names: Vec<&str> = seen.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["X-A", "Content-Type", "TE"]);
    seen.clear();
    for_each_field(lines, true, |n, v| seen.push((n.to_owned(), v.to_vec())));
    assert_eq!(seen, [("X-A".to_owned(), b"1".to_vec())]);
}
