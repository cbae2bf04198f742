//! The shipped todo scenario, the draws, and each refusal with its position.

use std::path::{Path, PathBuf};

use super::*;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples")
}

/// A scratch directory with `files`, removed when dropped.
fn dir_with(test: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix(&format!("sb-hurl-{test}-")).tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn refused(test: &str, toml: &str, files: &[(&str, &str)]) -> ParseError {
    let dir = dir_with(test, files);
    Scenario::parse("s.toml", toml, dir.path(), "s", &[]).unwrap_err()
}

#[test]
fn todo_example() {
    let s = Scenario::load(&examples().join("todo.toml"), &[]).unwrap();
    assert_eq!((s.name.as_str(), s.protocol), ("todo", Protocol::Http1));
    assert_eq!(s.flows.len(), 2);
    assert_eq!((s.flows[0].name.as_str(), s.flows[0].weight), ("create-read", 1));
    assert_eq!(s.flows[0].request_names, ["create", "read back", "empty title"]);
    assert_eq!(s.flows[0].hurl.entries.len(), 3);
    assert_eq!(s.flows[1].request_names, ["GET /todos?owner={{owner}}&limit={{limit}}"]);
    assert_eq!(
        s.variables.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
        ["limit", "long_title", "owner"]
    );
    assert_eq!(s.verify.len(), 2);
    assert_eq!((s.verify[0].level, s.verify[0].clean_store), (Level::Core, true));
    assert_eq!(s.verify[1].level, Level::Hardening);
    assert!(matches!(&s.reset, Some(Reset::Hurl(h)) if h.entries[0].method.as_ref() == "DELETE"));
    // Inline Hurl keeps the TOML's lines: the list flow starts on line 26 of todo.toml.
    let list = &s.flows[1].hurl;
    assert!(list.file.ends_with("todo.toml"));
    assert_eq!(list.entries[0].pos, Pos { line: 26, col: 1 });
    assert_eq!(list.entries[0].response.as_ref().unwrap().asserts[0].pos, Pos { line: 29, col: 1 });
    let single = Scenario::parse(
        "s.toml",
        "[[flow]]\nhurl = \"GET {{base_url}}/{{x}}\"\n",
        Path::new("."),
        "s",
        &["x"],
    )
    .unwrap();
    assert_eq!(single.flows[0].hurl.entries[0].pos, Pos { line: 2, col: 9 });
}

#[test]
fn a_hurl_file_alone_is_a_scenario() {
    let s = Scenario::load(&examples().join("todo.hurl"), &[]).unwrap();
    assert_eq!(s.name, "todo");
    assert_eq!(s.flows[0].request_names, ["POST /todos", "GET /todos/{{todo_id}}", "POST /todos"]);
}

#[test]
fn draws_are_seeded_and_in_range() {
    let s = Scenario::load(&examples().join("todo.toml"), &[]).unwrap();
    let (mut a, mut b) = (Vars::new(9), Vars::new(9));
    let mut owners = std::collections::BTreeSet::new();
    for n in 0..200 {
        s.draw(n, &mut a);
        s.draw(n, &mut b);
        assert_eq!(a.get("limit"), b.get("limit"));
        let limit: i64 = a.get("limit").unwrap().text.parse().unwrap();
        assert!((1..=50).contains(&limit));
        let t = a.get("long_title").unwrap();
        assert_eq!((t.text.len(), t.kind), (300, Kind::String));
        assert!(t.text.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
        owners.insert(a.get("owner").unwrap().text.clone());
    }
    assert_eq!(owners.len(), 3);
}

/// Drawing into slots found once is drawing by name: the same values, kinds and random
/// source, with variables, data rows and expressions (one of which can fail).
#[test]
fn draws_into_slots_as_by_name() {
    let dir = dir_with("slots", &[("u.csv", "user,pass\nann,a1\nbob,b2\n")]);
    let toml = "[variables]\na = { int = [-3, 3] }\nw = { choice = [\"x\", 2] }\nn = { sequence = 7 }\nq = { expr = \"10 / a\" }\nd = { expr = \"q + a\" }\n[[rows]]\nfile = \"u.csv\"\norder = \"random\"\n[[flow]]\nhurl = \"GET {{base_url}}/{{user}}\"\n";
    let s = Scenario::parse("s.toml", toml, dir.path(), "s", &[]).unwrap();
    let (mut a, mut b) = (Vars::new(5), Vars::new(5));
    b.set("base_url", "http://h", Kind::String);
    a.set("base_url", "http://h", Kind::String);
    let slots = s.slots(&mut b);
    for n in 0..100 {
        s.draw(n, &mut a);
        s.draw_at(n, &mut b, &slots);
        for name in ["a", "w", "n", "q", "d", "user", "pass"] {
            assert_eq!(a.get(name), b.get(name), "{name} at {n}");
        }
        assert_eq!(a.rng.0, b.rng.0);
    }
}

#[test]
fn flows_are_picked_by_weight() {
    let s = Scenario::load(&examples().join("todo.toml"), &[]).unwrap();
    let mut vars = Vars::new(3);
    let lists = (0..10_000).filter(|_| s.pick_flow(&mut vars).name == "list").count();
    assert!((7_700..8_300).contains(&lists), "{lists} of 10000, expected about 8000");
}

#[test]
fn sequences_rows_and_constants() {
    let dir = dir_with(
        "rows",
        &[("u.csv", "user,pass\nann,a1\nbob,b2\n"), ("f.hurl", "GET {{base_url}}/{{user}}/{{n}}/{{env}}\n")],
    );
    let toml = "[variables]\nn = { sequence = 10 }\nenv = \"prod\"\n[[rows]]\nfile = \"u.csv\"\n[[flow]]\nfile = \"f.hurl\"\n";
    let s = Scenario::parse("s.toml", toml, dir.path(), "s", &[]).unwrap();
    assert_eq!(s.flows[0].name, "f");
    let mut vars = Vars::new(1);
    let mut req = crate::eval::Request::default();
    vars.set("base_url", "http://h", Kind::String);
    for (n, want) in [(0, "http://h/ann/10/prod"), (1, "http://h/bob/11/prod"), (2, "http://h/ann/12/prod")] {
        s.draw(n, &mut vars);
        s.flows[0].hurl.entries[0].render(&mut vars, &mut req).unwrap();
        assert_eq!(String::from_utf8_lossy(&req.url), want);
    }
}

#[test]
fn refusals_have_positions() {
    let flow = "[[flow]]\nhurl = \"GET {{base_url}}/\"\n";
    let cases: Vec<(&str, String, u32, u32, &str)> = vec![
        ("unknown-key", format!("nmae = \"x\"\n{flow}"), 1, 1, "unknown field `nmae`"),
        ("protocol", format!("protocol = \"http3\"\n{flow}"), 1, 12, "unknown protocol"),
        ("weight", "[[flow]]\nhurl = \"GET {{base_url}}/\"\nweight = 0\n".into(), 3, 10, "weight"),
        ("no-flow", "name = \"x\"\n".into(), 1, 1, "at least one [[flow]]"),
        (
            "both",
            "[[flow]]\nfile = \"a.hurl\"\nhurl = \"GET {{base_url}}/\"\n".into(),
            1,
            1,
            "one of the two",
        ),
        (
            "names",
            "[[flow]]\nhurl = \"GET {{base_url}}/\"\nnames = [\"a\", \"b\"]\n".into(),
            3,
            9,
            "2 names for 1 requests",
        ),
        ("var-kind", format!("[variables]\nx = {{ int = [5, 1] }}\n{flow}"), 2, 5, "lo <= hi"),
        ("var-name", format!("[variables]\nnewUuid = 1\n{flow}"), 2, 11, "cannot be a variable's name"),
        (
            "verify-flow",
            format!("{flow}[[verify]]\nname = \"c\"\nflow = \"nope\"\n"),
            5,
            8,
            "no flow is named",
        ),
        (
            "level",
            format!("{flow}[[verify]]\nname = \"c\"\nlevel = \"soft\"\nhurl = \"GET {{{{base_url}}}}/\"\n"),
            5,
            9,
            "unknown level",
        ),
        (
            "clean",
            format!("{flow}[[verify]]\nname = \"c\"\nclean_store = true\nhurl = \"GET {{{{base_url}}}}/\"\n"),
            3,
            1,
            "needs a [reset]",
        ),
        ("grpc", format!("protocol = \"grpc\"\n{flow}"), 1, 12, "needs a [grpc] table"),
        ("reset", format!("{flow}[reset]\ncommand = []\n"), 3, 1, "[reset] has a `command`"),
    ];
    for (test, toml, line, col, what) in cases {
        let e = refused(test, &toml, &[]);
        assert!(e.kind.to_string().contains(what), "{test}: {e}");
        assert_eq!((e.file.as_str(), e.pos), ("s.toml", Pos { line, col }), "{test}: {e}");
    }
}

#[test]
fn hurl_errors_point_into_the_hurl() {
    // A file: the .hurl file's own position.
    let e =
        refused("in-file", "[[flow]]\nfile = \"f.hurl\"\n", &[("f.hurl", "\nGET {{base_url}}/{{who}}\n")]);
    assert!(e.file.ends_with("f.hurl"), "{e}");
    assert_eq!((e.pos, e.kind), (Pos { line: 2, col: 18 }, ErrorKind::UnknownVariable("who".into())));
    // Inline: the TOML's position, counting from the line after `'''`.
    let e = refused(
        "inline",
        "[[flow]]\nhurl = '''\nGET {{base_url}}/\nHTTP 200\n[Asserts]\nbody matches /(/\n'''\n",
        &[],
    );
    assert_eq!((e.file.as_str(), e.pos.line), ("s.toml", 6), "{e}");
    assert!(matches!(e.kind, ErrorKind::Regex(_)));
    // A capture used before it is taken.
    let e = refused(
        "order",
        "[[flow]]\nfile = \"f.hurl\"\n",
        &[("f.hurl", "GET {{base_url}}/{{id}}\nHTTP 200\n[Captures]\nid: status\n")],
    );
    assert_eq!(e.kind, ErrorKind::CaptureBeforeTaken("id".into()));
    // A missing file.
    let e = refused("missing", "[[flow]]\nfile = \"nope.hurl\"\n", &[]);
    assert_eq!((e.pos, matches!(e.kind, ErrorKind::Io(_))), (Pos { line: 2, col: 8 }, true));
}

#[test]
fn grpc_form() {
    let toml = "protocol = \"grpc\"\n[variables]\nn = { int = [1, 9] }\n[grpc]\nproto = \"s.proto\"\nmethod = \"sort.Sorter/Sort\"\nmessage = '{\"values\": [{{n}}, 3]}'\n";
    let dir = dir_with("grpc", &[("s.proto", "syntax = \"proto3\";\n")]);
    let s = Scenario::parse("s.toml", toml, dir.path(), "s", &[]).unwrap();
    // The call is the scenario's one flow, at the `method` value, named after it.
    let flow = &s.flows[0];
    assert_eq!((s.flows.len(), flow.name.as_str()), (1, "sort.Sorter/Sort"));
    assert_eq!(flow.request_names, ["sort.Sorter/Sort"]);
    let entry = &flow.hurl.entries[0];
    assert_eq!(entry.url.source(), "{{base_url}}/sort.Sorter/Sort");
    assert_eq!((entry.pos, entry.response.as_ref().unwrap().status), (Pos { line: 6, col: 10 }, Some(200)));
    assert_eq!(
        entry.body.as_ref().map(|b| b.template.source()),
        Some(r#"{"values": [{{n}}, 3]}"#.to_owned())
    );
    // The message's variables are placed in the TOML.
    assert_eq!(entry.body.as_ref().unwrap().template.vars()[0].1, Pos { line: 7, col: 24 });
    let g = s.grpc.unwrap().call.unwrap();
    assert_eq!(g.method, "sort.Sorter/Sort");
    let mut vars = Vars::new(1);
    vars.set("n", "7", Kind::Integer);
    let mut out = Vec::new();
    g.message.render(&mut vars, &mut out).unwrap();
    assert_eq!(out, br#"{"values": [7, 3]}"#);
    let e = refused("grpc-bad", &toml.replace("[{{n}}, 3]", "[{{m}}]"), &[("s.proto", "")]);
    assert_eq!(e.pos.line, 7, "{e}");
}

/// A scenario whose files are embedded (a built-in) carries its `.proto`'s text, found among
/// them by the name it is given, whatever the disk holds; one not among them is refused at
/// the `proto` value.
#[test]
fn an_embedded_grpc_scenario_carries_its_proto() {
    let toml = "protocol = \"grpc\"\n[grpc]\nproto = \"../protos/s.proto\"\nmethod = \"sort.Sorter/Sort\"\nmessage = '{}'\n";
    let text = "syntax = \"proto3\";\npackage sort;\n";
    let s = Scenario::parse_embedded("nowhere/s.toml", toml, &[("../protos/s.proto", text)], &[]).unwrap();
    let g = s.grpc.unwrap();
    assert_eq!(
        (g.proto.as_path(), g.source.as_deref()),
        (Path::new("nowhere/../protos/s.proto"), Some(text))
    );
    let e = Scenario::parse_embedded("nowhere/s.toml", toml, &[("s.proto", text)], &[]).unwrap_err();
    assert_eq!((e.file.as_str(), e.pos), ("nowhere/s.toml", Pos { line: 3, col: 9 }), "{e}");
    assert!(e.to_string().contains("nowhere/../protos/s.proto"), "{e}");
    // From disk, the text is left to be read where the path says.
    let dir = dir_with("grpc-disk", &[("s.proto", text)]);
    let disk = toml.replace("../protos/s.proto", "s.proto");
    assert_eq!(Scenario::parse("s.toml", &disk, dir.path(), "s", &[]).unwrap().grpc.unwrap().source, None);
}

#[test]
fn grpc_flows_of_calls() {
    let proto = [("s.proto", "syntax = \"proto3\";\n")];
    let flow = "[[flow]]\nname = \"sorted\"\nhurl = '''\nPOST {{base_url}}/sort.Sorter/Sort\n{\"values\": [2, 1]}\nHTTP 200\n[Asserts]\njsonpath \"$.values[0]\" == 1\n'''\n";
    // Calls written in Hurl, with their checks, beside the [grpc] table's call or without it.
    let only = format!("protocol = \"grpc\"\n[grpc]\nproto = \"s.proto\"\n{flow}");
    let s = Scenario::parse("s.toml", &only, dir_with("grpc-flows", &proto).path(), "s", &[]).unwrap();
    assert_eq!(s.flows.len(), 1);
    // A call's default name is the call, as the [grpc] table's is.
    assert_eq!(s.flows[0].request_names, ["sort.Sorter/Sort"]);
    assert_eq!(s.flows[0].hurl.entries[0].response.as_ref().unwrap().asserts.len(), 1);
    assert!(s.grpc.unwrap().call.is_none());
    let both = only.replace("[[flow]]", "method = \"sort.Sorter/Sort\"\nmessage = '{}'\n[[flow]]");
    let s = Scenario::parse("s.toml", &both, dir_with("grpc-both", &proto).path(), "s", &[]).unwrap();
    let names: Vec<_> = s.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["sorted", "sort.Sorter/Sort"]);
    // No call at all, half a call, and a flow named as the call's are refused where written.
    let e = refused("grpc-none", "protocol = \"grpc\"\n[grpc]\nproto = \"s.proto\"\n", &proto);
    assert!(e.to_string().contains("a gRPC scenario needs calls"), "{e}");
    let half = "protocol = \"grpc\"\n[grpc]\nproto = \"s.proto\"\nmethod = \"sort.Sorter/Sort\"\n";
    let e = refused("grpc-half", half, &proto);
    assert_eq!(e.pos.line, 4, "{e}");
    assert!(e.to_string().contains("needs the `message`"), "{e}");
    let clash = both.replace("name = \"sorted\"", "name = \"sort.Sorter/Sort\"");
    let e = refused("grpc-clash", &clash, &proto);
    assert!(e.to_string().contains("the name of the [grpc] call's flow"), "{e}");
}

#[test]
fn expressions_follow_their_inputs_and_are_refused_where_wrong() {
    // Declared before their inputs (the table's order is by name): worked out after them.
    let toml = "[variables]\na = { int = [1, 9] }\nb = { int = [1, 9] }\nlo = { expr = \"min(a, b)\" }\nhi = { expr = \"max(a, b)\" }\nd = { expr = \"hi - lo\" }\n[[flow]]\nhurl = \"GET {{base_url}}/{{lo}}/{{hi}}/{{d}}\"\n";
    let s = Scenario::parse("s.toml", toml, Path::new("."), "s", &[]).unwrap();
    let names: Vec<&str> = s.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "hi", "lo", "d"]);
    let mut vars = Vars::new(4);
    for n in 0..50 {
        s.draw(n, &mut vars);
        let get = |k: &str| vars.get(k).unwrap().text.parse::<i64>().unwrap();
        assert_eq!(
            (get("lo"), get("hi"), get("d")),
            (get("a").min(get("b")), get("a").max(get("b")), (get("a") - get("b")).abs())
        );
        assert_eq!(vars.get("d").unwrap().kind, Kind::Integer);
    }
    let flow = "[[flow]]\nhurl = \"GET {{base_url}}/{{x}}\"\n";
    let at = |test: &str, expr: &str| {
        let e = refused(test, &format!("[variables]\na = 1\nx = {{ expr = \"{expr}\" }}\n{flow}"), &[]);
        (e.pos, e.kind.to_string())
    };
    // Columns count from the expression's place in the TOML (`x = { expr = "` is 14 characters).
    assert_eq!(
        at("syntax", "a +"),
        (Pos { line: 3, col: 18 }, "`expr`: the expression ends where a value is expected".into())
    );
    assert_eq!(at("unknown", "a + nope"), (Pos { line: 3, col: 19 }, "unknown variable `nope`".into()));
    assert_eq!(at("function", "sqrt(a)").0, Pos { line: 3, col: 15 });
    assert!(at("itself", "x + 1").1.contains("`x` depends on itself"));
    let e = refused(
        "cycle",
        &format!(
            "[variables]\np = {{ expr = \"q\" }}\nq = {{ expr = \"p\" }}\nx = {{ expr = \"p\" }}\n{flow}"
        ),
        &[],
    );
    assert!(e.kind.to_string().contains("depends on itself"), "{e}");
    let e = refused("kind", &format!("[variables]\nx = {{ expr = 3 }}\n{flow}"), &[]);
    assert!(e.kind.to_string().contains("`expr` is an integer expression in a string"), "{e}");
}

#[test]
fn cases_carry_captures_and_expressions_use_them_after() {
    let case = |name: &str, hurl: &str| format!("[[verify]]\nname = \"{name}\"\nhurl = '''\n{hurl}\n'''\n");
    let read = case("read", "GET {{base_url}}/n\nHTTP 200\n[Captures]\nn: jsonpath \"$.n\"");
    let next = case("next", "POST {{base_url}}/n\nHTTP 200\n[Asserts]\njsonpath \"$.n\" == {{n1}}");
    let head = "[variables]\nn1 = { expr = \"n + 1\" }\n[[flow]]\nhurl = \"GET {{base_url}}/\"\n";
    let s = Scenario::parse("s.toml", &format!("{head}{read}{next}"), Path::new("."), "s", &[]).unwrap();
    assert_eq!(s.verify.len(), 2);
    // Before the case that captures it: refused at the use, saying what it lacks.
    let e = refused("early", &format!("{head}{next}{read}"), &[]);
    assert_eq!(e.pos.line, 11, "{e}");
    assert!(e.kind.to_string().contains("`n1` = `(n + 1)` has no value here: `n` is not a variable"), "{e}");
    // In a flow (load iterations carry nothing).
    let e = refused(
        "flow",
        &format!(
            "[variables]\nn1 = {{ expr = \"n + 1\" }}\n[[flow]]\nhurl = \"GET {{{{base_url}}}}/{{{{n1}}}}\"\n{read}"
        ),
        &[],
    );
    assert_eq!(e.pos, Pos { line: 4, col: 26 }, "{e}");
}

#[test]
fn clean_values_probe_and_the_contestants_reset() {
    let read = "[[verify]]\nname = \"read\"\nclean_store = true\nclean_values = { n = 0 }\nprobe = true\nhurl = '''\nGET {{base_url}}/n\nHTTP 200\n[Captures]\nn: jsonpath \"$.n\"\n'''\n";
    let later = "[[verify]]\nname = \"later\"\nhurl = \"GET {{base_url}}/\"\n";
    let flow = "[[flow]]\nhurl = \"GET {{base_url}}/\"\n";
    let reset = "[reset]\nby = \"contestant\"\n";
    let s =
        Scenario::parse("s.toml", &format!("{flow}{reset}{read}{later}"), Path::new("."), "s", &[]).unwrap();
    assert!(matches!(s.reset, Some(Reset::Contestant)));
    let c = &s.verify[0];
    assert!(c.probe && c.clean_store);
    assert_eq!((c.clean_values[0].name.as_str(), c.clean_values[0].text.as_str()), ("n", "0"));
    assert_eq!(c.clean_values[0].pos, Pos { line: 8, col: 16 });
    let refusal = |test: &str, toml: String| refused(test, &toml, &[]).kind.to_string();
    let late = later.replace("name = \"later\"", "name = \"late\"\nclean_store = true");
    assert!(
        refusal("leading", format!("{flow}{reset}{later}{late}"))
            .contains("the `clean_store = true` cases come first")
    );
    assert!(refusal("by", format!("{flow}[reset]\nby = \"me\"\n")).contains("unknown `by`"));
    assert!(
        refusal("by-and", format!("{flow}[reset]\nby = \"contestant\"\ncommand = [\"x\"]\n"))
            .contains("one of them")
    );
    let not_taken = read.replace("{ n = 0 }", "{ m = 0 }");
    assert!(
        refusal("not-taken", format!("{flow}{reset}{not_taken}"))
            .contains("names `m`, which this case does not capture")
    );
    let unclean = read.replace("clean_store = true\n", "");
    assert!(
        refusal("unclean", format!("{flow}{reset}{unclean}"))
            .contains("`clean_values` are for a case with `clean_store = true`")
    );
    let two = later.replace("name = \"later\"", "name = \"later\"\nprobe = true");
    assert!(
        refusal("two-probes", format!("{flow}{reset}{read}{two}")).contains("only one case is the `probe`")
    );
    let uses = "[[verify]]\nname = \"p\"\nprobe = true\nhurl = \"GET {{base_url}}/{{n}}\"\n";
    let read_only = read.replace("probe = true\n", "");
    assert!(
        refusal("probe-uses", format!("{flow}{reset}{read_only}{uses}"))
            .contains("cannot use what other cases capture")
    );
}

#[test]
fn command_line_variables_take_the_place_of_the_files() {
    let toml = "[variables]\ndriver = \"sqlite\"\n[[flow]]\nhurl = \"GET {{base_url}}/db/{{driver}}\"\n";
    let s = Scenario::parse("s.toml", toml, Path::new("."), "s", &["driver"]).unwrap();
    assert!(s.variables.is_empty());
    let mut vars = Vars::new(1);
    vars.set("base_url", "http://h", Kind::String);
    vars.set("driver", "redis", Kind::String);
    s.draw(0, &mut vars);
    let mut req = crate::eval::Request::default();
    s.flows[0].hurl.entries[0].render(&mut vars, &mut req).unwrap();
    assert_eq!(req.url, b"http://h/db/redis");
}

#[test]
fn file_bodies_are_read_beside_the_file_that_names_them() {
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(70_000));
    let dir = dir_with("file-body", &[("big.json", &big)]);
    std::fs::create_dir_all(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/f.hurl"), "POST {{base_url}}/e\nfile,data.txt;\nHTTP 413\n").unwrap();
    std::fs::write(dir.path().join("sub/data.txt"), "in sub").unwrap();
    let toml = "[[flow]]\nhurl = '''\nPOST {{base_url}}/e\nContent-Type: application/json\nfile,big.json;\nHTTP 413\n'''\n[[verify]]\nname = \"sub\"\nfile = \"sub/f.hurl\"\n";
    let s = Scenario::parse("s.toml", toml, dir.path(), "s", &[]).unwrap();
    let body = |h: &HurlFile| h.entries[0].body.as_ref().unwrap().template.as_literal().unwrap().to_owned();
    assert_eq!(body(&s.flows[0].hurl), big);
    assert_eq!(body(&s.verify[0].hurl), "in sub");
    // A missing file is read again when verify sends the request; a load refuses it at its name.
    let missing = "[[flow]]\nhurl = '''\nPOST {{base_url}}/e\nfile, nope.json ;\n'''\n";
    let mut s = Scenario::parse("s.toml", missing, dir.path(), "s", &[]).unwrap();
    let e = crate::body_file::read_for_load(&mut s.flows[0].hurl, &mut Vars::new(1)).unwrap_err();
    assert!(e.starts_with("s.toml:4:6: cannot read") && e.contains("nope.json:"), "{e}");
    let e = refused("file-semi", "[[flow]]\nhurl = '''\nPOST {{base_url}}/e\nfile,x.json\n'''\n", &[]);
    assert!(e.kind.to_string().contains("ends with `;`"), "{e}");
    let e = refused("file-tpl", "[[flow]]\nhurl = '''\nPOST {{base_url}}/e\nfile,{{x}};\n'''\n", &[]);
    assert!(matches!(e.kind, ErrorKind::UnknownVariable(_)), "{e}");
}

/// Issue 45 #13: a sequence from i64::MAX went on at i64::MIN; it goes on counting.
#[test]
fn a_sequence_past_i64_max_does_not_wrap() {
    let toml =
        "[variables]\nn = { sequence = 9223372036854775807 }\n[[flow]]\nhurl = \"GET {{base_url}}/{{n}}\"\n";
    let s = Scenario::parse("s.toml", toml, Path::new("."), "s", &[]).unwrap();
    let mut vars = Vars::new(1);
    let got: Vec<String> = (0..3)
        .map(|n| {
            s.draw(n, &mut vars);
            vars.get("n").unwrap().text.clone()
        })
        .collect();
    assert_eq!(got, ["9223372036854775807", "9223372036854775808", "9223372036854775809"]);
}

/// Issue 45 #13: a file may not take a built-in's name (a plan refused it, `verify` and
/// `load` did not), unless it is that built-in's own file as shipped.
#[test]
fn a_builtin_name_is_refused_but_for_the_builtins_own_file() {
    let e = refused("builtin-name", "name = \"dummy\"\n[[flow]]\nhurl = \"GET {{base_url}}/\"\n", &[]);
    assert_eq!(e.pos, Pos { line: 1, col: 8 });
    assert!(e.to_string().contains("is a built-in scenario's"), "{e}");
    let dir = dir_with("builtin-stem", &[("event-log.toml", "[[flow]]\nhurl = \"GET {{base_url}}/\"\n")]);
    let e = Scenario::load(&dir.path().join("event-log.toml"), &[]).unwrap_err();
    assert!(e.to_string().contains("its name (the file's, `event-log`)"), "{e}");
    let dir = dir_with("builtin-hurl", &[("dummy.hurl", "GET {{base_url}}/\n")]);
    let e = Scenario::load(&dir.path().join("dummy.hurl"), &[]).unwrap_err();
    assert!(e.to_string().contains("rename the file"), "{e}");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/builtin/dummy.toml");
    assert_eq!(Scenario::load(&shipped, &[]).unwrap().name, "dummy");
}

/// Issue 45 #6 and #7: what a scenario names is read under its directory only (a `file,`
/// body, a flow's file, rows, a `.proto`), each refusal at the name's `file:line:col`; the
/// scenario file itself is read within the size cap, and a link to `/dev/zero` fails at once.
#[test]
fn files_outside_the_scenario_are_refused_where_they_are_named() {
    let outer = dir_with("outside", &[("secret.json", "{}"), ("rows.csv", "a\n1\n")]);
    let inner = outer.path().join("inner");
    std::fs::create_dir_all(&inner).unwrap();
    let cases = [
        ("[[flow]]\nhurl = '''\nPOST {{base_url}}/\nfile,../secret.json;\n'''\n", (4, 6)),
        ("[[flow]]\nhurl = '''\nPOST {{base_url}}/\nfile,/etc/passwd;\n'''\n", (4, 6)),
        ("[[flow]]\nfile = \"../secret.json\"\n", (2, 8)),
        ("[[rows]]\nfile = \"../rows.csv\"\n[[flow]]\nhurl = \"GET {{base_url}}/\"\n", (2, 8)),
        ("protocol = \"grpc\"\n[grpc]\nproto = \"/etc/passwd\"\n", (3, 9)),
    ];
    for (toml, (line, col)) in cases {
        // A `file,` body is read again when verify sends it: a load refuses it where it loads.
        let e = match Scenario::parse("s.toml", toml, &inner, "s", &[]) {
            Ok(mut s) => {
                crate::body_file::read_for_load(&mut s.flows[0].hurl, &mut Vars::new(1)).unwrap_err()
            }
            Err(e) => e.to_string(),
        };
        assert!(e.contains("outside") && e.contains("--file-root"), "{toml}: {e}");
        assert!(e.contains(&format!("s.toml:{line}:{col}: ")), "{toml}: {e}");
    }
    // The scenario file itself: within the cap, and a regular file.
    std::os::unix::fs::symlink("/dev/zero", inner.join("zero.toml")).unwrap();
    let e = Scenario::load(&inner.join("zero.toml"), &[]).unwrap_err();
    assert!(e.to_string().ends_with("cannot read it: it is not a regular file"), "{e}");
    std::fs::write(inner.join("big.toml"), "# ".repeat(1000)).unwrap();
    let small = Limits { max_file_size: 1000, ..Limits::default() };
    let e = Scenario::load_with(&inner.join("big.toml"), &[], &small).unwrap_err();
    assert!(e.to_string().contains("larger than 1000 bytes"), "{e}");
    // A root the user names holds what is under it.
    std::fs::write(inner.join("s.toml"), "[[flow]]\nfile = \"../secret.json\"\n").unwrap();
    let wide = Limits { file_root: Some(outer.path().to_path_buf()), ..Limits::default() };
    let e = Scenario::load_with(&inner.join("s.toml"), &[], &wide).unwrap_err();
    assert!(e.to_string().contains("secret.json:1:1"), "read, then refused as Hurl: {e}");
}

/// Issue 45 #5: a data row may not set the target.
#[test]
fn a_data_row_may_not_set_base_url() {
    let e = refused(
        "rows-base-url",
        "[[rows]]\nfile = \"u.csv\"\n[[flow]]\nhurl = \"GET {{base_url}}/\"\n",
        &[("u.csv", "base_url\nhttp://elsewhere.example\n")],
    );
    assert_eq!((e.pos.line, e.pos.col), (2, 8));
    assert!(e.to_string().contains("a data file cannot set `base_url`"), "{e}");
}

/// As in Hurl, a `.hurl` file's names (`file,` bodies, `output`) start at the root the user
/// names with `--file-root`, else at the `.hurl` file's directory; a TOML file's own names
/// (its flows' files, inline Hurl) start at the TOML file's directory either way.
#[test]
fn a_named_root_is_where_a_hurl_files_names_start() {
    let outer = dir_with("named-root", &[("body.json", "outer"), ("s.toml", "")]);
    let sub = outer.path().join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("body.json"), "sub").unwrap();
    std::fs::write(sub.join("a.hurl"), "POST {{base_url}}/\nfile,body.json;\n").unwrap();
    std::fs::write(sub.join("s.toml"), "[[flow]]\nhurl = '''\nPOST {{base_url}}/\nfile,body.json;\n'''\n")
        .unwrap();
    std::fs::write(outer.path().join("s.toml"), "[[flow]]\nfile = \"sub/a.hurl\"\n").unwrap();
    let named = Limits { file_root: Some(outer.path().to_path_buf()), ..Limits::default() };
    let body = |path: &Path, limits: &Limits| {
        let s = Scenario::load_with(path, &[], limits).unwrap();
        let mut req = crate::Request::default();
        let mut vars = Vars::new(1);
        vars.set("base_url", "http://h", crate::template::Kind::String);
        s.flows[0].hurl.entries[0].render(&mut vars, &mut req).unwrap();
        String::from_utf8(req.body).unwrap()
    };
    let default = Limits::default();
    assert_eq!(body(&sub.join("a.hurl"), &default), "sub");
    assert_eq!(body(&sub.join("a.hurl"), &named), "outer");
    assert_eq!(body(&outer.path().join("s.toml"), &default), "sub");
    assert_eq!(body(&outer.path().join("s.toml"), &named), "outer");
    assert_eq!(body(&sub.join("s.toml"), &named), "sub", "inline Hurl is the TOML file's");
    // Loaded again with the limits it keeps (the load engine does), it reads the same files.
    for (path, limits) in [(sub.join("a.hurl"), &default), (sub.join("a.hurl"), &named)] {
        let s = Scenario::load_with(&path, &[], limits).unwrap();
        assert_eq!(body(&path, &s.limits), body(&path, limits));
        assert_eq!(s.limits.file_root.is_some(), limits.file_root.is_some());
    }
}
