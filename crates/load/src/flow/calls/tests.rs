//! A gRPC scenario over the shipped sort.proto: its call as its one flow, messages
//! encoded and replies decoded as proto3 JSON, and each call that does not fit the
//! `.proto` refused with its place.

use std::path::Path;

use stackbench_hurl::Scenario;

use super::*;

/// A gRPC scenario over the shipped sort.proto, with `rest` after its `[grpc]` table, in the
/// directory returned with it (the proto is read from there until the calls are compiled).
fn scenario(test: &str, message: &str, rest: &str) -> Result<(tempfile::TempDir, Scenario), String> {
    let proto = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../proto/sort/v1/sort.proto");
    let text = format!(
        "protocol = \"grpc\"\n[grpc]\nproto = \"sort.proto\"\nmethod = \"sort.v1.SortService/BubbleSort\"\nmessage = '{message}'\n{rest}"
    );
    let dir = tempfile::Builder::new().prefix(&format!("sb-calls-{test}-")).tempdir().unwrap();
    // A scenario's files are under its directory.
    std::fs::copy(proto, dir.path().join("sort.proto")).unwrap();
    let s = Scenario::parse("g.toml", &text, dir.path(), "g", &[]).map_err(|e| e.to_string())?;
    Ok((dir, s))
}

fn calls(test: &str, message: &str, rest: &str) -> Result<Calls, String> {
    let (_dir, s) = scenario(test, message, rest)?;
    Calls::new(&s, &[])
}

#[test]
fn the_call_is_the_scenarios_one_flow() {
    let (_dir, s) = scenario("flow", r#"{"data": [3, 1, 2]}"#, "").unwrap();
    assert_eq!(s.flows.len(), 1);
    let flow = &s.flows[0];
    assert_eq!(
        (flow.name.as_str(), flow.request_names.as_slice()),
        ("sort.v1.SortService/BubbleSort", &["sort.v1.SortService/BubbleSort".to_owned()][..])
    );
    let entry = &flow.hurl.entries[0];
    assert_eq!(
        (&*entry.method, entry.url.source().as_str()),
        ("POST", "{{base_url}}/sort.v1.SortService/BubbleSort")
    );
    // Placed at the `method` value, line 4.
    assert_eq!(entry.pos.to_string(), "4:10");
    let c = Calls::new(&s, &[]).unwrap();
    assert_eq!(c.flows, [[0]]);
    assert_eq!(c.method_of(entry), Some(0));
}

#[test]
fn messages_are_encoded_and_replies_decoded_as_proto3_json() {
    let c = calls("codec", "{}", "").unwrap();
    // Field 1, packed (wire type 2), 3 bytes: 3, 1, 2.
    assert_eq!(c.encode(0, br#"{"data": [3, 1, 2]}"#).unwrap(), [0x0a, 3, 3, 1, 2]);
    assert_eq!(c.encode(0, b"").unwrap(), Vec::<u8>::new(), "no body is the empty message");
    let e = c.encode(0, br#"{"data": "x"}"#).unwrap_err();
    assert!(e.starts_with("not a valid sort.v1.List in the proto3 JSON mapping"), "{e}");
    let mut json = Vec::new();
    c.decode_json(0, &[0x0a, 3, 1, 2, 3], &mut json).unwrap();
    assert_eq!(std::str::from_utf8(&json).unwrap(), r#"{"data":[1,2,3]}"#);
    // Fields at their defaults are written, so `count == 0` finds an empty list.
    c.decode_json(0, &[], &mut json).unwrap();
    assert_eq!(std::str::from_utf8(&json).unwrap(), r#"{"data":[]}"#);
    let e = c.decode_json(0, &[0x0a, 9, 1], &mut json).unwrap_err();
    assert!(e.starts_with("the reply is not a valid sort.v1.List"), "{e}");
}

#[test]
fn calls_that_do_not_fit_the_proto_are_refused_with_their_place() {
    let e = calls("message", r#"{"data": [true]}"#, "").unwrap_err();
    assert!(e.starts_with("g.toml:4:10: [grpc] `message`: not a valid sort.v1.List"), "{e}");
    let case = |hurl: &str| format!("[[verify]]\nname = \"c\"\nhurl = '''\n{hurl}\n'''\n");
    let e =
        calls("svc", "{}", &case("POST {{base_url}}/sort.v1.Sorter/BubbleSort\n{}\nHTTP 200")).unwrap_err();
    assert!(
        e.starts_with("g.toml:9:1: ")
            && e.contains("no service \"sort.v1.Sorter\"; it declares: sort.v1.SortService"),
        "{e}"
    );
    let e =
        calls("get", "{}", &case("GET {{base_url}}/sort.v1.SortService/BubbleSort\nHTTP 200")).unwrap_err();
    assert!(e.ends_with("g.toml:9:1: a gRPC call is a POST, not GET"), "{e}");
    let e = calls("var", "{}", &case("POST {{base_url}}/{{newUuid}}\n{}\nHTTP 200")).unwrap_err();
    assert!(
        e.contains("g.toml:9:1: a gRPC call is written `POST {{base_url}}/package.Service/Method`"),
        "{e}"
    );
    // Text taken as written (a `file,` body) is checked as the message at load.
    let e = calls("raw", "{}", &case("POST {{base_url}}/sort.v1.SortService/BubbleSort\n```x```\nHTTP 200"))
        .unwrap_err();
    assert!(e.contains("g.toml:9:1: the message is not a valid sort.v1.List"), "{e}");
    calls(
        "raw-ok",
        "{}",
        &case("POST {{base_url}}/sort.v1.SortService/BubbleSort\n`{\"data\": [2, 1]}`\nHTTP 200"),
    )
    .unwrap();
    let e = calls(
        "raw-var",
        "{}",
        &case("POST {{base_url}}/sort.v1.SortService/BubbleSort\n`{{newUuid}}`\nHTTP 200"),
    )
    .unwrap_err();
    assert!(e.contains("its message as JSON"), "{e}");
}

#[test]
fn what_a_calls_checks_read() {
    let (_dir, s) = scenario(
        "reads",
        "{}",
        "[[verify]]\nname = \"a\"\nhurl = '''\nPOST {{base_url}}/sort.v1.SortService/BubbleSort\n{}\nHTTP 200\n[Asserts]\nheader \"grpc-status\" == \"3\"\n'''\n\
         [[verify]]\nname = \"b\"\nhurl = '''\nPOST {{base_url}}/sort.v1.SortService/BubbleSort\n{}\nHTTP 200\n[Asserts]\njsonpath \"$.data\" count == 0\n'''\n",
    )
    .unwrap();
    let (flow, a, b) = (&s_entry(&s.flows[0].hurl), &s_entry(&s.verify[0].hurl), &s_entry(&s.verify[1].hurl));
    assert_eq!((Calls::reads_body(flow), Calls::checks_grpc_status(flow)), (false, false));
    assert_eq!((Calls::reads_body(a), Calls::checks_grpc_status(a)), (false, true));
    assert_eq!((Calls::reads_body(b), Calls::checks_grpc_status(b)), (true, false));
}

fn s_entry(h: &stackbench_hurl::HurlFile) -> Entry {
    h.entries[0].clone()
}

/// Issue 45 #13: a mistake in a scenario's `.proto` is placed in the `.proto` and at the
/// TOML key that names it, not said of `--proto`, which the user did not give.
#[test]
fn a_broken_proto_is_placed_at_its_key() {
    let dir = tempfile::Builder::new().prefix("sb-calls-broken-").tempdir().unwrap();
    std::fs::write(dir.path().join("bad.proto"), "syntax = \"proto3\";\nmessage L { int32 a = 1 }\n")
        .unwrap();
    let text = "protocol = \"grpc\"\n[grpc]\nproto = \"bad.proto\"\nmethod = \"p.S/M\"\nmessage = '{}'\n";
    let s = Scenario::parse("g.toml", text, dir.path(), "g", &[]);
    let e = Calls::new(&s.unwrap(), &[]).unwrap_err();
    assert!(e.starts_with("g.toml:3:9: [grpc] proto ") && e.contains("bad.proto:2:25: expected ';'"), "{e}");
    assert!(!e.contains("--proto"), "{e}");
}
