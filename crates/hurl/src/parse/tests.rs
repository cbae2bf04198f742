//! The parser on the issue's todo example, on each construct it accepts, and
//! on each refusal (with its position).

use proptest::prelude::*;

use super::parse;
use crate::error::{ErrorKind, Pos};
use crate::model::{BodyKind, Expected, Filter, FilterKind, PredicateFunc, Query};
use crate::template::{Escape, Part};

/// The example of issue 31, exactly as written there (shipped as the example scenario).
pub(crate) const TODO: &str = include_str!("../../../../scenarios/examples/todo.hurl");

#[test]
fn todo_example() {
    let f = parse("todo.hurl", TODO).unwrap();
    assert_eq!(f.entries.len(), 3);
    let names: Vec<String> = f.entries.iter().map(crate::model::Entry::name).collect();
    assert_eq!(names, ["POST /todos", "GET /todos/{{todo_id}}", "POST /todos"]);
    let e = &f.entries[0];
    assert_eq!(e.pos, Pos { line: 2, col: 1 });
    assert_eq!(e.headers[0].name.source(), "Content-Type");
    assert_eq!(e.headers[0].value.source(), "application/json");
    let body = e.body.as_ref().unwrap();
    assert_eq!(body.kind, BodyKind::Json);
    assert_eq!(
        body.template.parts[1],
        Part::Var { name: "newUuid".into(), escape: Escape::JsonString, pos: Pos { line: 4, col: 21 } }
    );
    let r = e.response.as_ref().unwrap();
    assert_eq!((r.pos, r.status), (Pos { line: 5, col: 1 }, Some(201)));
    assert_eq!(r.captures.len(), 2);
    assert_eq!(&*r.captures[1].name, "todo_title");
    assert_eq!(r.asserts.len(), 2);
    assert_eq!(r.asserts[1].pos, Pos { line: 11, col: 1 });
    assert_eq!(&*r.asserts[1].source, r#"jsonpath "$.done" == false"#);
    assert!(matches!(r.asserts[0].predicate.func, PredicateFunc::IsInteger));
    assert!(matches!(r.asserts[1].predicate.func, PredicateFunc::Equal(Expected::Bool(false))));
    let r2 = f.entries[1].response.as_ref().unwrap();
    assert!(
        matches!(&r2.asserts[0].predicate.func, PredicateFunc::Equal(Expected::Str(t)) if t.source() == "{{todo_title}}")
    );
    assert_eq!(f.entries[2].response.as_ref().unwrap().status, Some(400));
    assert!(f.entries[2].body.as_ref().unwrap().template.as_literal().is_some());
}

#[test]
fn every_supported_assert_and_capture() {
    let text = r#"GET http://h/x?a=1 # a comment
Accept: */*
X-Key\:odd: v\#1 {{k}}   # trailing comment
HTTP *
Content-Type: application/json
[Captures]
st: status
loc: header "Location"
tok: regex "token=(\\w+)"
n: jsonpath "$.items" count
[Asserts]
status == 200
status >= 200
status < 300
header "X" != "y"
jsonpath "$.a" > 1.5
jsonpath "$.a" <= -2
jsonpath "$.s" exists
jsonpath "$.s" not exists
jsonpath "$.s" isString
jsonpath "$.b" isBoolean
jsonpath "$.s" contains "x"
jsonpath "$.s" matches /^a\/b$/
jsonpath "$.s" matches "^[a-z]+$"
jsonpath "$.items" count == 3
jsonpath "$.items[*].id" includes 2
jsonpath "$.n" == null
jsonpath "$.n" == {{k}}
body contains "ok"
body startsWith "{"
body endsWith "}"
jsonpath "$.f" isFloat
jsonpath "$.c" isCollection
jsonpath "$.c" isEmpty
"#;
    let f = parse("all.hurl", text).unwrap();
    let e = &f.entries[0];
    assert_eq!(e.url.source(), "http://h/x?a=1");
    assert_eq!(e.headers[1].name.source(), "X-Key:odd");
    assert_eq!(e.headers[1].value.source(), "v#1 {{k}}");
    let r = e.response.as_ref().unwrap();
    assert_eq!(r.status, None);
    assert_eq!(r.captures.len(), 4);
    assert!(matches!(r.captures[1].query, Query::Header(ref h) if h.source() == "Location"));
    assert!(matches!(r.captures[3].filters[..], [Filter { kind: FilterKind::Count, .. }]));
    // The response header is an assert too.
    assert_eq!(r.asserts.len(), 24);
    assert!(matches!(r.asserts[0].query, Query::Header(_)));
    assert!(r.asserts[8].predicate.not);
    assert!(
        matches!(r.asserts[12].predicate.func, PredicateFunc::Matches(Expected::Regex(ref re)) if re.is_match("a/b"))
    );
    assert!(matches!(r.asserts[6].predicate.func, PredicateFunc::LessOrEqual(Expected::Int(-2))));
}

#[test]
fn bodies() {
    let f = parse(
        "b.hurl",
        "POST http://h/a\n{\n  \"n\": {{n}},\n  \"s\": \"{{s}}\",\n  \"l\": [1, {\"x\": \"}\"}]\n}\nHTTP 200\nPUT http://h/b\n```\nline {{x}}\n```\nPATCH http://h/c\n`one\\`line`\nPOST http://h/d\n```json\n{\"a\": {{x}}}\n```\n",
    )
    .unwrap();
    let b = f.entries[0].body.as_ref().unwrap();
    assert!(
        b.template
            .parts
            .iter()
            .any(|p| matches!(p, Part::Var { name, escape: Escape::JsonValue, .. } if &**name == "n"))
    );
    assert!(
        b.template
            .parts
            .iter()
            .any(|p| matches!(p, Part::Var { name, escape: Escape::JsonString, .. } if &**name == "s"))
    );
    assert_eq!(f.entries[0].response.as_ref().unwrap().status, Some(200));
    assert_eq!(f.entries[1].body.as_ref().unwrap().template.source(), "line {{x}}\n");
    assert_eq!(f.entries[2].body.as_ref().unwrap().template.source(), "one`line");
    assert_eq!(f.entries[3].body.as_ref().unwrap().kind, BodyKind::Json);
    assert_eq!(f.entries[3].body.as_ref().unwrap().template.source(), "{\"a\": {{x}}}\n");
}

fn refusal(text: &str) -> (Pos, ErrorKind) {
    let e = parse("bad.hurl", text).unwrap_err();
    assert_eq!(e.file, "bad.hurl");
    (e.pos, e.kind)
}

fn unsupported(text: &str, line: u32, col: u32, what: &str) {
    let (pos, kind) = refusal(text);
    assert_eq!(pos, Pos { line, col }, "{text}: {kind}");
    match kind {
        ErrorKind::Unsupported(w) => assert!(w.contains(what), "{w:?} lacks {what:?}"),
        k => panic!("{text}: expected unsupported {what}, got {k}"),
    }
}

#[test]
fn unsupported_features_are_named_where_they_are() {
    unsupported("POST http://h\nfile,data.bin;\n", 2, 6, "`file,` outside a scenario file");
    unsupported("GET http://h/{{getEnv \"{{x}}\"}}\n", 1, 30, "template in `getEnv`");
}

#[test]
fn xpath_queries_and_filters_are_read() {
    let f = parse(
        "x.hurl",
        "GET http://h\nHTTP 200\n[Asserts]\nxpath \"//a\" count == 2\nbody xpath \"string(//b)\" == \"x\"\n",
    )
    .unwrap();
    let asserts = &f.entries[0].response.as_ref().unwrap().asserts;
    assert!(matches!(&asserts[0].query, Query::XPath(t) if t.as_literal() == Some("//a")));
    assert!(
        matches!(&asserts[1].filters[0].kind, FilterKind::XPath(t) if t.as_literal() == Some("string(//b)"))
    );
}

#[test]
fn syntax_errors_have_positions() {
    let cases: [(&str, u32, u32, &str); 10] = [
        ("get http://h\n", 1, 1, "request line"),
        ("\n\n   HTTP 200\n", 3, 4, "without a request"),
        ("GET\n", 1, 1, "request line"),
        ("GET http://h\nHTTP 2000\n", 2, 6, "status"),
        ("GET http://h\nHTTP 200\n[Asserts]\njsonpath \"$.a\" === 1\n", 4, 16, "unknown predicate"),
        ("GET http://h\nHTTP 200\n[Asserts]\njsonpath \"$.a\" == \"x\n", 4, 19, "closing"),
        ("GET http://h\nHTTP 200\n[Asserts]\njsonpath \"$.a\" == 1 2\n", 4, 21, "unexpected"),
        ("POST http://h\n{\"a\": 1,\n \"b\" 2}\n", 3, 6, "invalid JSON"),
        ("POST http://h\n{\"a\": [1, 2}\n", 2, 1, "closing bracket"),
        ("GET http://h\nHTTP 200\n[Asserts]\nstatus == 1\n[Asserts]\n", 5, 1, "second"),
    ];
    for (text, line, col, what) in cases {
        let (pos, kind) = refusal(text);
        assert!(matches!(kind, ErrorKind::Syntax(ref m) if m.contains(what)), "{text:?}: {kind}");
        assert_eq!(pos, Pos { line, col }, "{text:?}: {kind}");
    }
}

#[test]
fn bad_jsonpath_and_regex_point_into_the_string() {
    // A jsonpath that does not compile fails where it is evaluated, as in Hurl; the load
    // engine refuses it (`invalid_jsonpath`), at the assert.
    let f = parse("bad.hurl", "GET http://h\nHTTP 200\n[Asserts]\njsonpath \"$.a[?(@.b]\" exists\n").unwrap();
    let e = crate::invalid_jsonpath(&f).unwrap_err();
    assert_eq!(e.pos, Pos { line: 4, col: 1 });
    assert!(matches!(e.kind, ErrorKind::JsonPath(_)));
    let (pos, kind) = refusal("GET http://h\nHTTP 200\n[Captures]\nx: regex \"(\"\n");
    assert_eq!(pos, Pos { line: 4, col: 10 });
    assert!(matches!(kind, ErrorKind::Regex(_)));
}

#[test]
fn crlf_and_comments() {
    let f = parse("w.hurl", "# c\r\nGET http://h/a # c\r\n# c\r\nHTTP 204 # c\r\n").unwrap();
    assert_eq!(f.entries[0].url.source(), "http://h/a");
    assert_eq!(f.entries[0].response.as_ref().unwrap().status, Some(204));
}

proptest! {
    /// No text makes the parser panic.
    #[test]
    fn never_panics(text in "(GET http://h/\\{\\{x\\}\\}\n|HTTP 200\n|\\[Asserts\\]\n|\\[Captures\\]\n|jsonpath \"\\$.a\" == 1\n|x: header \"y\"\n|\\{\"a\": \\{\\{b\\}\\}\\}\n|```\n|[ -~]{0,12}\n){0,8}") {
        let _ = parse("p.hurl", &text);
    }

    /// A header value written with escapes reads back as the original text.
    #[test]
    fn header_values_roundtrip(v in "[ -~]{1,20}") {
        let v = v.trim().to_owned();
        prop_assume!(!v.is_empty() && !v.contains("{{"));
        let escaped = v.replace('\\', "\\\\").replace('#', "\\#");
        let f = parse("h.hurl", &format!("GET http://h\nX-A: {escaped}\n")).unwrap();
        prop_assert_eq!(f.entries[0].headers[0].value.source(), v);
    }
}

/// Found by the `hurl_file` fuzz target: a JSON string body whose last byte is a backslash
/// (the escape skipped past the end of the file) sliced one byte beyond the text.
#[test]
fn a_json_string_body_ending_in_a_backslash_is_refused_not_a_panic() {
    for text in ["GET http://x\n\"abc\\", "GET http://x\n\"\\", "Z\t,\n\"  ex,e\\\\\u{16}\0 ex,Z\t\\"] {
        let err = parse("f.hurl", text).expect_err(text);
        assert!(err.to_string().contains("JSON"), "{text:?}: {err}");
    }
}

/// A capture's name written with a template is read when the file loads, from the
/// `variable` options written out before it (the last one wins); one whose value is known
/// only once sent (a capture's, an option's with a template) is refused at the name.
#[test]
fn a_capture_name_with_a_template_is_read_from_the_options_before_it() {
    let text = "GET http://h/a\n[Options]\nvariable: key=first\nHTTP 200\n[Captures]\n{{key}}: body\n\n\
                GET http://h/b\n[Options]\nvariable: key=second\nvariable: end=_two\nHTTP 200\n\
                [Captures]\n{{key}}{{end}}: status\nplain_{{key}}: status\n";
    let f = parse("t.hurl", text).unwrap();
    let names: Vec<&str> = f.captures().map(|c| &*c.name).collect();
    assert_eq!(names, ["first", "second_two", "plain_second"]);
    let refused = [
        (
            "GET http://h/a\nHTTP 200\n[Captures]\nkey: body\n\nGET http://h/b\nHTTP 200\n[Captures]\n{{key}}: body\n",
            9,
        ),
        ("GET http://h/a\n[Options]\nvariable: key={{x}}\nHTTP 200\n[Captures]\n{{key}}: body\n", 6),
        ("GET http://h/a\nHTTP 200\n[Captures]\n{{unset}}: body\n", 4),
        (
            "GET http://h/a\nHTTP 200\n[Captures]\n{{key}}: body\n\nGET http://h/b\n[Options]\nvariable: key=k\nHTTP 200\n",
            4,
        ),
    ];
    for (text, line) in refused {
        let e = parse("t.hurl", text).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Unsupported(_)), "{text}: {e}");
        assert_eq!(e.pos, Pos { line, col: 1 }, "{text}: {e}");
    }
    // What the template gives must still be a variable's name.
    let e =
        parse("t.hurl", "GET http://h/a\n[Options]\nvariable: key=1x\nHTTP 200\n[Captures]\n{{key}}: body\n")
            .unwrap_err();
    assert!(e.to_string().contains("a capture's name is a variable name"), "{e}");
}

/// Found by the `hurl_file` fuzz target: an unterminated JSON string body ending in a
/// character of two bytes; its error's place was sliced inside that character.
#[test]
fn an_unterminated_json_string_ending_in_a_wide_character_is_refused_not_a_panic() {
    for text in ["KH l;\n\n\n\"HH \u{5b7}", "GET http://x\n\"\u{e9}", "GET http://x\n\"ab\u{1f600}"] {
        let err = parse("f.hurl", text).expect_err(text);
        assert!(err.to_string().contains("JSON"), "{text:?}: {err}");
    }
    // The place is counted in characters, after wide characters on the line as well.
    let err = parse("f.hurl", "GET http://x\n{\"\u{e9}\u{e9}\": 1 x}").unwrap_err();
    assert_eq!(err.pos, Pos { line: 2, col: 10 }, "{err}");
}
