//! The compiled checks held to the general evaluator where they read what it reads in
//! another way: `url` and `redirects` on generated hops, jsonpaths of one filter on bodies
//! of every kind, a string marked as a big integer, and bodies that are not their own text.

use std::fmt::Write as _;

use super::{Compiled, Fake, quick};
use crate::eval::Redirect;
use crate::parse::parse;
use crate::run::wire::Followed;
use crate::template::Vars;

/// The last answer of a request that followed redirects, as `verify` judges it.
type Hopped = Followed<Fake>;

/// The answer after `redirects`, at `url`, with `body`.
fn hopped(url: &str, redirects: Vec<Redirect>, body: &str) -> Hopped {
    let last =
        Fake { status: 200, headers: vec![("Content-Type", "application/json")], body: body.to_owned() };
    Followed { last, redirects, url: url.to_owned() }
}

/// Where a hop pointed, and the last hop's URL: the asserts' literals, a prefix of them,
/// non-ASCII text and nothing.
const LOCATIONS: &[&str] =
    &["http://h/orders", "http://h/a", "http://h/orders/\u{e9}", "/orders", "", "http://h/ord"];

/// Bodies for the filtered path: one target, none, two, a target that is not text, one
/// with escapes, an integer past 64 bits, the big-integer mark written raw, not JSON.
const BODIES: &[&str] = &[
    r#"{"orders": [{"id": "o-1", "status": "paid"}, {"status": "pending", "id": "o-2"}]}"#,
    r#"{"orders": [{"id": "o-1", "status": "paid"}]}"#,
    r#"{"orders": [{"id": "o-2", "status": "pending"}, {"status": "pending", "id": "o-3"}]}"#,
    r#"{"orders": [{"id": 2, "status": "pending"}]}"#,
    r#"{"orders": [{"id": "o-\u0032", "status": "pending"}]}"#,
    r#"{"orders": [{"id": 123456789012345678901234, "status": "pending"}]}"#,
    "{\"orders\": [{\"id\": \"\u{FDD0}bigint:2\", \"status\": \"pending\"}]}",
    r#"{"orders": [{"id": "o-2", "status": "pending"}], "orders": []}"#,
    r#"{"orders": {"id": "o-2", "status": "pending"}}"#,
    r#"{"orders": [{"id": "o-2", "status": "pending"}"#,
];

/// Asserts compiled (or whose predicate is left to the general `judge`); none sends the
/// entry to the general evaluator.
const ASSERTS: &[&str] = &[
    "url endsWith \"/orders\"",
    "url == \"http://h/orders\"",
    "url startsWith \"http://h/\"",
    "url contains \"ord\"",
    "url not endsWith \"/a\"",
    "url matches /orders$/",
    "url isString",
    "url not exists",
    "redirects count == 1",
    "redirects count >= 2",
    "redirects count == 0",
    "redirects count isInteger",
    "redirects nth 0 location endsWith \"/orders\"",
    "redirects nth -1 location == \"http://h/a\"",
    "redirects nth 1 location startsWith \"http://h/\"",
    "redirects first location contains \"\u{e9}\"",
    "redirects last location not exists",
    "redirects nth 2 location exists",
    "redirects nth -3 location isString",
    "redirects nth 0 exists",
    "redirects last isString",
    "redirects first location not startsWith \"/\"",
    "jsonpath \"$.orders[?(@.status == 'pending')].id\" == \"o-2\"",
    "jsonpath \"$.orders[?(@.status == 'pending')].id\" isString",
    "jsonpath \"$.orders[?(@.status == 'pending')].id\" startsWith \"o-\"",
    "jsonpath \"$.orders[?(@.status == 'pending')].id\" not endsWith \"3\"",
    "jsonpath \"$.orders[?(@.status == 'pending')].id\" not exists",
    "jsonpath \"$.orders[?(@.status == 'pending')].id\" == 2",
    "jsonpath \"$.orders[?(@.status == 'pending')].id\" isInteger",
];

/// Whether the compiled checks of the entry `asserts` pass `answer` only when the general
/// evaluator does, and whether the load engine's checks equal the general evaluator's.
fn judged_alike(asserts: &[&str], answer: &Hopped) -> Result<(), proptest::test_runner::TestCaseError> {
    let mut text = String::from("GET http://h\nHTTP 200\n[Asserts]\n");
    for a in asserts {
        writeln!(text, "{a}").unwrap();
    }
    let f = parse("r.hurl", &text).unwrap();
    let compiled = Compiled::default();
    let general = |one_pass: bool| {
        let (mut vars, mut failures) = (Vars::new(1), Vec::new());
        let c = one_pass.then_some(&compiled);
        f.entries[0].check_read(c, answer, &mut vars, &mut Vec::new(), &mut failures, true);
        failures
    };
    let failures = general(false);
    let (passed, _) = quick(&f, answer, 0).expect("compiled");
    if passed {
        proptest::prop_assert_eq!(&failures, &vec![], "{:?}", asserts);
    }
    proptest::prop_assert_eq!(general(true), failures, "{:?}", asserts);
    Ok(())
}

proptest::proptest! {
    /// On generated hops, URLs and bodies, each assert alone and a few together: the compiled
    /// checks pass only answers the general evaluator passes, and the load engine's checks of
    /// hops and filtered paths equal the general evaluator's.
    #[test]
    fn compiled_hop_checks_judge_as_the_evaluator(
        hops in proptest::collection::vec(
            (proptest::sample::select(vec![301u16, 302, 303, 307, 308]), proptest::sample::select(LOCATIONS)),
            0..4,
        ),
        url in proptest::sample::select(LOCATIONS),
        body in proptest::sample::select(BODIES),
        picks in proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 2..5),
    ) {
        let redirects =
            hops.iter().map(|&(status, l)| Redirect { status, location: l.to_owned() }).collect();
        let answer = hopped(url, redirects, body);
        for a in ASSERTS {
            judged_alike(&[a], &answer)?;
        }
        let picked: Vec<&str> = picks.iter().map(|p| ASSERTS[p.index(ASSERTS.len())]).collect();
        judged_alike(&picked, &answer)?;
    }
}

/// bench/load/groups/redirects.hurl's checks, compiled: the answer after the redirect passes
/// them; a wrong hop, URL or body is judged by the general evaluator, with its failure.
#[test]
fn compiled_checks_judge_the_benchmarked_redirect() {
    let f = parse(
        "r.hurl",
        "GET http://h/old-orders\n[Options]\nlocation: true\nHTTP 200\n[Asserts]\nurl endsWith \"/orders\"\n\
         redirects count == 1\nredirects nth 0 location endsWith \"/orders\"\n\
         jsonpath \"$.orders[?(@.status == 'pending')].id\" == \"o-2\"\n",
    )
    .unwrap();
    let answer = |url: &str, location: &str, body: &str| {
        hopped(url, vec![Redirect { status: 302, location: location.to_owned() }], body)
    };
    let (right, other) = (BODIES[0], BODIES[1]);
    assert_eq!(quick(&f, &answer("http://h/orders", "http://h/orders", right), 0).map(|q| q.0), Some(true));
    for (wrong, failed) in [
        (answer("http://h/orders/", "http://h/orders", right), "url endsWith \"/orders\""),
        (answer("http://h/orders", "http://h/a", right), "redirects nth 0 location endsWith \"/orders\""),
        (
            answer("http://h/orders", "http://h/orders", other),
            "jsonpath \"$.orders[?(@.status == 'pending')].id\" == \"o-2\"",
        ),
    ] {
        assert_eq!(quick(&f, &wrong, 0).map(|q| q.0), Some(false));
        let (mut vars, mut failures) = (Vars::new(1), Vec::new());
        f.entries[0].check(&wrong, &mut vars, &mut Vec::new(), &mut failures);
        assert_eq!(failures.iter().map(|f| f.source.as_str()).collect::<Vec<_>>(), [failed]);
    }
}

/// A plain JSON string that begins with the mark the general evaluator gives an integer past
/// 64 bits ([`crate::value::BIG`]), written raw, is read there as that integer: the compiled
/// checks leave it to it, and take neither a string's verdict nor its capture.
#[test]
fn a_string_marked_as_a_big_integer_is_judged_by_the_evaluator() {
    let body = "{\"a\": \"\u{FDD0}bigint:7\", \"n\": 1}";
    let answer =
        Fake { status: 200, headers: vec![("Content-Type", "application/json")], body: body.to_owned() };
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
        let (failures, compiled_failures) = both_ways(&f, &answer);
        assert_eq!(failures.is_empty(), holds, "{assert}: {failures:?}");
        assert_eq!(quick(&f, &answer, 0).map(|q| q.0), Some(false), "{assert}");
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

/// A body that is not its own text (a `Content-Encoding`, a charset other than UTF-8's) is
/// decoded by the general evaluator before it is read: the compiled checks leave it to it, so
/// bytes that would pass as written (UTF-8 `é` under a latin-1 label, plain JSON labelled
/// gzip) are judged as the general evaluator judges them.
#[test]
fn a_body_not_its_own_text_is_judged_by_the_evaluator() {
    let body = "{\"name\": \"\u{e9}\", \"orders\": [{\"id\": \"\u{e9}\", \"status\": \"pending\"}]}";
    for (headers, own, holds) in [
        (vec![("Content-Type", "application/json")], true, true),
        (vec![("Content-Type", "application/json; charset=utf-8")], true, true),
        (vec![("Content-Type", "application/json; charset=\"UTF-8\"")], true, true),
        (vec![("Content-Type", "application/json; charset=latin1")], false, false),
        (vec![("Content-Type", "application/json; charset=ISO-8859-1")], false, false),
        (vec![("Content-Type", "application/json"), ("Content-Encoding", "gzip")], false, false),
        // Decoded as itself: the same verdict, from the general evaluator.
        (vec![("Content-Encoding", "identity")], false, true),
    ] {
        let answer = Fake { status: 200, headers: headers.clone(), body: body.to_owned() };
        assert_eq!(crate::eval::Answer::body_is_own_text(&answer), own, "{headers:?}");
        for assert in [
            "jsonpath \"$.name\" == \"\u{e9}\"",
            "jsonpath \"$.orders[?(@.status == 'pending')].id\" == \"\u{e9}\"",
        ] {
            let f = parse("e.hurl", &format!("GET http://h\nHTTP 200\n[Asserts]\n{assert}\n")).unwrap();
            let (failures, compiled_failures) = both_ways(&f, &answer);
            assert_eq!(failures.is_empty(), holds, "{headers:?} {assert}: {failures:?}");
            if !own {
                assert_eq!(quick(&f, &answer, 0).map(|q| q.0), Some(false), "{headers:?} {assert}");
            }
            assert_eq!(compiled_failures, failures, "{headers:?} {assert}");
        }
    }
}

/// The failures of `f`'s first entry on `answer` by the general evaluator, then with the
/// compiled checks first (captures and asserts).
fn both_ways(f: &crate::HurlFile, answer: &Fake) -> (Vec<crate::eval::Failure>, Vec<crate::eval::Failure>) {
    let (mut vars, mut failures) = (Vars::new(1), Vec::new());
    f.entries[0].check(answer, &mut vars, &mut Vec::new(), &mut failures);
    let (mut vars, mut compiled_failures) = (Vars::new(1), Vec::new());
    f.entries[0].check_some(
        &Compiled::default(),
        answer,
        &mut vars,
        &mut Vec::new(),
        &mut compiled_failures,
        true,
    );
    (failures, compiled_failures)
}
