//! The one-pass finder against the reference: [`JsonPath::eval`] on the document
//! `serde_json` builds, on random documents, random paths and broken bodies.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::jsonpath::tests::arb_json;

/// What the reference finds for each path of `paths` in `body`; `None` when the body is not JSON.
fn reference(body: &[u8], paths: &[JsonPath]) -> Option<Vec<Option<Value>>> {
    let doc: Value = serde_json::from_slice(body).ok()?;
    Some(
        paths
            .iter()
            .map(|p| match p.eval(&doc, &mut crate::jsonpath::Budget::new(crate::jsonpath::MIN_BUDGET)) {
                Ok(crate::jsonpath::Found::One(v)) => Some(v.clone()),
                _ => None,
            })
            .collect(),
    )
}

/// What one pass finds, in the same shape.
fn streamed(body: &[u8], paths: &[JsonPath]) -> Option<Vec<Option<Value>>> {
    let plan = Plan::new(paths, []).expect("streamable paths");
    let mut out: [Leaf<'_>; MAX] = [const { Leaf::Nothing }; MAX];
    plan.find(body, true, &mut out).ok()?;
    Some(
        (0..paths.len())
            .map(|k| match &out[plan.slot(k).unwrap()] {
                Leaf::Nothing => None,
                Leaf::Str(s) => Some(Value::String((*s).to_owned())),
                Leaf::Int(n) => Some(Value::from(*n)),
                Leaf::Value(v) => Some(v.clone()),
            })
            .collect(),
    )
}

fn paths(srcs: &[&str]) -> Vec<JsonPath> {
    srcs.iter().map(|s| JsonPath::parse(s).unwrap()).collect()
}

fn both(body: &str, srcs: &[&str]) -> Option<Vec<Option<Value>>> {
    let p = paths(srcs);
    let r = reference(body.as_bytes(), &p);
    assert_eq!(streamed(body.as_bytes(), &p), r, "{body} {srcs:?}");
    r
}

#[test]
fn finds_scalars_containers_and_nothing() {
    let body = r#"{"count": 1, "s": "a\"b", "t": "plain", "o": {"x": [1, {"y": null}]}, "f": 1.5, "n": -3}"#;
    let found = both(body, &["$.count", "$.s", "$.t", "$.o", "$.o.x[1].y", "$.o.x[2]", "$.f", "$.n"]);
    assert_eq!(
        found.unwrap(),
        [
            Some(json!(1)),
            Some(json!("a\"b")),
            Some(json!("plain")),
            Some(json!({"x": [1, {"y": null}]})),
            Some(Value::Null),
            None,
            Some(json!(1.5)),
            Some(json!(-3)),
        ]
    );
    assert_eq!(both(body, &["$.t.z", "$.count[0]", "$[0]"]).unwrap(), [None, None, None]);
    // A path that ends on a container and one that goes on into it.
    both(body, &["$.o.x", "$.o.x[1].y", "$.o.x[0]"]);
    both("[[1,2],[3]]", &["$", "$[1][0]", "$[0]"]);
}

#[test]
fn a_repeated_name_keeps_its_last_value() {
    assert_eq!(both(r#"{"a": 1, "a": 2}"#, &["$.a"]).unwrap(), [Some(json!(2))]);
    assert_eq!(both(r#"{"a": {"b": 1}, "a": 5}"#, &["$.a.b", "$.a"]).unwrap(), [None, Some(json!(5))]);
    assert_eq!(both(r#"{"a": {"b": 1}, "a": {"c": 2}}"#, &["$.a.b"]).unwrap(), [None]);
}

#[test]
fn escaped_names_and_broken_bodies() {
    assert_eq!(both(r#"{"a\u0062": "\u00e9"}"#, &["$.ab"]).unwrap(), [Some(json!("é"))]);
    // Every string is checked, also those no path reaches, as the reference does.
    assert_eq!(both(r#"{"a": 1, "z": "\ud800"}"#, &["$.a"]), None);
    assert_eq!(both(r#"{"a": 1} x"#, &["$.a"]), None);
    assert_eq!(both(r#"{"a": 1e999}"#, &["$.b"]), None);
    assert_eq!(both("", &["$.a"]), None);
    let deep = "[".repeat(200) + &"]".repeat(200);
    assert_eq!(both(&deep, &["$[0]"]), None);
    let mut bad = br#"{"a": 1, "z": "xx"}"#.to_vec();
    bad[16] = 0xff;
    let p = paths(&["$.a"]);
    assert_eq!((reference(&bad, &p), streamed(&bad, &p)), (None, None));
}

/// A member name expected at its depth is found where it is written when a plain string
/// holds it as written; a longer name, an escaped one and one no plain string holds are read.
#[test]
fn names_found_in_place_and_read() {
    let body = r#"{"ab": 1, "a\"": 2, "a": 3, "\u0061b": 4, "é": 5, "b": {"a": 6}}"#;
    let found = both(body, &["$.ab", "$['a\"']", "$.a", "$['é']", "$.b.a", "$.b.ab"]);
    assert_eq!(
        found.unwrap(),
        [Some(json!(4)), Some(json!(2)), Some(json!(3)), Some(json!(5)), Some(json!(6)), None]
    );
    let plan = Plan::new(&paths(&["$.ab", "$['a\"']", "$.b.a"]), []).unwrap();
    assert_eq!(plan.key_at(0b111, 0, br#"ab": 1"#), Some((2, 0b001)));
    assert_eq!(plan.key_at(0b110, 0, br#"ab": 1"#), Some((2, 0)));
    assert_eq!(plan.key_at(0b111, 0, br#"abc": 1"#), None);
    assert_eq!(plan.key_at(0b111, 0, br#"a\"": 1"#), None);
    assert_eq!(plan.key_at(0b111, 1, br#"a": 1"#), Some((1, 0b100)));
    assert_eq!(plan.key_at(0b111, 2, br#"a": 1"#), None);
}

#[test]
fn plans_refuse_what_they_cannot_follow() {
    let p = paths(&["$.a[-1]", "$.a[*]", "$..a", "$.a"]);
    assert!(Plan::new(&p[..1], []).is_none());
    assert!(Plan::new(&p[3..], &p[1..2]).is_none());
    assert!(Plan::new(&p[2..3], []).is_none());
    let many: Vec<JsonPath> = (0..=MAX).map(|i| JsonPath::parse(&format!("$.a{i}")).unwrap()).collect();
    assert!(Plan::new(&many[..MAX], []).is_some());
    assert!(Plan::new(&many[..1], &many[1..]).is_none());
    // The same path twice takes one place.
    let twice = paths(&["$.a", "$.a"]);
    let plan = Plan::new(&twice[..1], &twice[1..]).unwrap();
    assert_eq!((plan.slot(0), plan.slot(1), plan.slot(2)), (Some(0), Some(0), None));
}

#[test]
fn without_asserts_only_the_captures_paths_are_followed() {
    let p = paths(&["$.b", "$.a", "$.b"]);
    let plan = Plan::new(&p[..1], &p[1..]).unwrap();
    let mut out = [const { Leaf::Nothing }; MAX];
    plan.find(br#"{"a": 1, "b": 2}"#, false, &mut out).unwrap();
    assert_eq!(out[..2], [Leaf::Int(2), Leaf::Nothing]);
    plan.find(br#"{"a": 1, "b": 2}"#, true, &mut out).unwrap();
    assert_eq!(out[..2], [Leaf::Int(2), Leaf::Int(1)]);
    assert_eq!((plan.slot(0), plan.slot(1), plan.slot(2)), (Some(0), Some(1), Some(0)));
}

fn arb_step() -> impl Strategy<Value = String> {
    prop_oneof!["[a-c]{1,2}".prop_map(|n| format!("['{n}']")), (0i64..3).prop_map(|i| format!("[{i}]"))]
}

pub(crate) fn arb_paths() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(
        proptest::collection::vec(arb_step(), 0..4).prop_map(|s| format!("${}", s.concat())),
        1..MAX,
    )
}

/// [`arb_paths`] with names no plain string holds as written (a quote, non-ASCII) beside
/// plain ones: the plain scan finds the ones in place and reads the others.
fn arb_rich_paths() -> impl Strategy<Value = Vec<String>> {
    let step = prop_oneof![
        "[a-c\"é]{1,2}".prop_map(|n| format!("['{n}']")),
        (0i64..3).prop_map(|i| format!("[{i}]"))
    ];
    proptest::collection::vec(
        proptest::collection::vec(step, 0..4).prop_map(|s| format!("${}", s.concat())),
        1..MAX,
    )
}

/// Leaves with escapes, non-ASCII, floats and negative numbers, beside `arb_json`'s.
fn arb_rich_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        arb_json(),
        any::<f64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        "\\PC{0,6}".prop_map(Value::from),
        "[\"\\\\\n\tä😀]{0,4}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-c\"é]{1,2}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// On any document and any singular paths, one pass finds what the reference finds.
    #[test]
    fn equals_the_reference(v in arb_rich_json(), srcs in arb_rich_paths(), pretty in any::<bool>()) {
        let body = if pretty { serde_json::to_string_pretty(&v) } else { serde_json::to_string(&v) }.unwrap();
        let p: Vec<JsonPath> = srcs.iter().map(|s| JsonPath::parse(s).unwrap()).collect();
        let r = reference(body.as_bytes(), &p);
        prop_assert!(r.is_some());
        prop_assert_eq!(streamed(body.as_bytes(), &p), r);
    }

    /// A body broken anywhere is refused by both or found alike by both.
    #[test]
    fn broken_bodies_agree(v in arb_json(), srcs in arb_paths(), at in any::<prop::sample::Index>(),
                           byte in prop_oneof![Just(b'"'), Just(b'\\'), Just(b'{'), Just(b']'), Just(b','), Just(0xc3u8), any::<u8>()],
                           cut in any::<bool>()) {
        let mut body = serde_json::to_vec(&v).unwrap();
        let i = at.index(body.len() + 1);
        if cut { body.truncate(i) } else { body.insert(i, byte) }
        let p: Vec<JsonPath> = srcs.iter().map(|s| JsonPath::parse(s).unwrap()).collect();
        prop_assert_eq!(streamed(&body, &p), reference(&body, &p));
    }
}

#[test]
fn plain_documents_are_read_without_serde_json() {
    let p = paths(&["$.count", "$.a[1]", "$.s"]);
    let plan = Plan::new(&p, []).unwrap();
    let mut out = [const { Leaf::Nothing }; MAX];
    let body = b" {\"count\": 1, \"a\": [true, -5, {\"x\": null}], \"s\": \"x y\"}\r\n";
    assert!(plain::find(&plan, body, 0b111, &mut out).is_some());
    assert_eq!(out[..3], [Leaf::Int(1), Leaf::Int(-5), Leaf::Str("x y")]);
    // An integer past `i64` stays a number of its own; `i64::MIN` is an `i64`.
    let p = paths(&["$.big", "$.least"]);
    let plan = Plan::new(&p, []).unwrap();
    let body = b"{\"big\": 18446744073709551615, \"least\": -9223372036854775808}";
    assert!(plain::find(&plan, body, 0b11, &mut out).is_some());
    assert_eq!(out[..2], [Leaf::Value(json!(u64::MAX)), Leaf::Int(i64::MIN)]);
    // Anything else is left to serde_json, which decides.
    let others = [
        r#"{"count": 1.0}"#,
        r#"{"count": 1e2}"#,
        r#"{"count": -0}"#,
        r#"{"count": 01}"#,
        r#"{"count": 18446744073709551616}"#,
        r#"{"count": -9223372036854775809}"#,
        r#"{"s": "a\nb"}"#,
        r#"{"s": "é"}"#,
        r#"{"count": 1,}"#,
        r#"{"count": tru}"#,
        "[1] x",
        "",
    ];
    for other in others {
        assert!(plain::find(&plan, other.as_bytes(), 0b111, &mut out).is_none(), "{other}");
        both(other, &["$.count", "$.a[1]", "$.s"]);
    }
    // A path that ends on an object needs it built.
    let plan = Plan::new(&paths(&["$.a"]), []).unwrap();
    assert!(plain::find(&plan, br#"{"a": {}}"#, 1, &mut out).is_none());
    assert!(plain::find(&plan, br#"{"a": 1}"#, 1, &mut out).is_some());
}

/// A plan whose paths are each one member name reads the document's object in one loop;
/// any other path (deeper, an index, the root) keeps the descent.
#[test]
fn one_name_paths_are_read_in_one_loop() {
    let flat = |srcs: &[&str]| Plan::new(&paths(srcs), []).unwrap().flat;
    assert!(flat(&["$.count", "$['a b']", "$[\"é\"]"]));
    for other in [&["$.count", "$.a.b"][..], &["$[0]"], &["$"], &["$.a[0]"]] {
        assert!(!flat(other), "{other:?}");
    }
    // The last of a repeated name, values no path takes passed over (nested ones too), a
    // path that ends on an object or array left to serde_json.
    let body = r#"{"a": 1, "x": {"a": [2, {"b": "y"}]}, "a": "two", "b": null, "c": [], "a": true}"#;
    assert_eq!(both(body, &["$.a", "$.b", "$.z"]).unwrap(), [Some(json!(true)), Some(Value::Null), None]);
    let plan = Plan::new(&paths(&["$.a", "$.b"]), []).unwrap();
    let mut out = [const { Leaf::Nothing }; MAX];
    assert!(plain::find(&plan, body.as_bytes(), 0b11, &mut out).is_some());
    assert_eq!(out[..2], [Leaf::Value(Value::Bool(true)), Leaf::Value(Value::Null)]);
    assert_eq!(both(body, &["$.c"]).unwrap(), [Some(json!([]))]);
    let plan = Plan::new(&paths(&["$.c"]), []).unwrap();
    assert!(plain::find(&plan, body.as_bytes(), 1, &mut out).is_none());
    // A document that is not an object: the descent's reading.
    assert_eq!(both(r#"[{"a": 1}]"#, &["$.a"]).unwrap(), [None]);
    assert_eq!(both(" 5 ", &["$.a"]).unwrap(), [None]);
}

/// An object written member by member, its names drawn from few (so that some repeat), each
/// value any document, most of them plain scalars; with white space or without.
fn arb_members() -> impl Strategy<Value = String> {
    let scalar = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z ]{0,4}".prop_map(Value::from),
    ];
    let member = (arb_name(), prop_oneof![4 => scalar, 1 => arb_json(), 1 => arb_rich_json()]);
    (proptest::collection::vec(member, 0..6), any::<bool>()).prop_map(|(members, spaced)| {
        let sep = if spaced { " \n" } else { "" };
        let members: Vec<String> =
            members.iter().map(|(k, v)| format!("{sep}{}{sep}:{sep}{v}", Value::String(k.clone()))).collect();
        format!("{sep}{{{}{sep}}}{sep}", members.join(","))
    })
}

/// A member name, most of them plain (a plain JSON string holds them as written).
fn arb_name() -> impl Strategy<Value = String> {
    prop_oneof![3 => "[a-c]{1,2}", 1 => "[a-c\"é]{1,2}"]
}

proptest! {
    /// Paths of one member name each, on objects with repeated names: the one loop finds what
    /// the reference finds, and what the descent finds, or gives up where the descent does.
    #[test]
    fn one_name_paths_equal_the_reference_and_the_descent(
        body in arb_members(),
        names in proptest::collection::vec(arb_name(), 1..MAX),
        alive in 1u32..1 << MAX,
        cut in proptest::option::weighted(0.1, any::<prop::sample::Index>()),
    ) {
        let mut body = body.into_bytes();
        if let Some(at) = cut {
            body.truncate(at.index(body.len() + 1));
        }
        let srcs: Vec<String> = names.iter().map(|n| format!("$[{}]", Value::String(n.clone()))).collect();
        let p: Vec<JsonPath> = srcs.iter().map(|s| JsonPath::parse(s).unwrap()).collect();
        prop_assert_eq!(streamed(&body, &p), reference(&body, &p));
        let flat = Plan::new(&p, []).unwrap();
        prop_assert!(flat.flat);
        let descent = Plan { flat: false, ..flat.clone() };
        let alive = alive & ((1 << flat.paths()) - 1);
        let (mut a, mut b) = ([const { Leaf::Nothing }; MAX], [const { Leaf::Nothing }; MAX]);
        let (x, y) = (plain::find(&flat, &body, alive, &mut a), plain::find(&descent, &body, alive, &mut b));
        prop_assert_eq!(x, y);
        if x.is_some() {
            prop_assert_eq!(a, b);
        }
    }
}
