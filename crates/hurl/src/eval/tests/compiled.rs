//! The compiled checks held to the general evaluator where they read what it reads in
//! another way: `url` and `redirects` on generated hops, jsonpaths of one filter on bodies
//! of every kind, a string marked as a big integer, and a body that is not its own text.

use super::{Compiled, quick};
use crate::parse::parse;
use crate::template::Vars;

/// A plain JSON string that begins with the mark the general evaluator gives an integer past
/// 64 bits ([`crate::value::BIG`]), written raw, is read there as that integer: the compiled
/// checks leave it to it, and take neither a string's verdict nor its capture.
#[test]
fn a_string_marked_as_a_big_integer_is_judged_by_the_evaluator() {
    let body = "{\"a\": \"\u{FDD0}bigint:7\", \"n\": 1}";
    let answer = super::Fake {
        status: 200,
        headers: vec![("Content-Type", "application/json")],
        body: body.to_owned(),
    };
    for (assert, holds) in [
        ("jsonpath \"$.a\" isString", false),
        ("jsonpath \"$.a\" == \"\u{FDD0}bigint:7\"", false),
        ("jsonpath \"$.a\" startsWith \"\u{FDD0}\"", false),
        ("jsonpath \"$.a\" isInteger", true),
    ] {
        let f = parse(
            "b.hurl",
            &format!("GET http://h\nHTTP 200\n[Captures]\nc0: jsonpath \"$.n\"\n[Asserts]\n{assert}\n"),
        )
        .unwrap();
        let (mut vars, mut failures) = (Vars::new(1), Vec::new());
        f.entries[0].check(&answer, &mut vars, &mut Vec::new(), &mut failures);
        assert_eq!(failures.is_empty(), holds, "{assert}: {failures:?}");
        assert_eq!(quick(&f, &answer, 0).map(|q| q.0), Some(false), "{assert}");
        let (mut vars, mut compiled_failures) = (Vars::new(1), Vec::new());
        f.entries[0].check_some(
            &Compiled::default(),
            &answer,
            &mut vars,
            &mut Vec::new(),
            &mut compiled_failures,
            true,
        );
        assert_eq!(compiled_failures, failures, "{assert}");
    }
    let f = parse("b.hurl", "GET http://h\nHTTP 200\n[Captures]\nc0: jsonpath \"$.a\"\n").unwrap();
    let mut vars = Vars::new(1);
    f.entries[0].check_some(&Compiled::default(), &answer, &mut vars, &mut Vec::new(), &mut Vec::new(), true);
    let mut general = Vars::new(1);
    f.entries[0].check(&answer, &mut general, &mut Vec::new(), &mut Vec::new());
    assert_eq!(vars.get("c0"), general.get("c0"));
    assert_eq!(general.get("c0").map(|v| v.kind), Some(crate::template::Kind::Integer));
}
