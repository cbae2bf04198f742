//! The one-pass filter against the reference: [`JsonPath::eval`] on the document
//! `serde_json` builds, on given and generated documents and filters.

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::jsonpath::stream::Leaf;
use crate::jsonpath::tests::arb_json;
use crate::jsonpath::{Budget, Found, JsonPath, MIN_BUDGET};

/// What the pass finds for `path` in `body`, as values; `None` when it cannot tell.
fn passed(path: &JsonPath, body: &[u8]) -> Option<Vec<Value>> {
    let f = path.filtered()?;
    let mut found = Vec::new();
    f.find(body, &mut found)?;
    Some(
        found
            .into_iter()
            .map(|l| match l {
                Leaf::Str(s) => Value::String(s.to_owned()),
                Leaf::Int(n) => Value::from(n),
                Leaf::Value(v) => v,
                Leaf::Nothing => panic!("a target found nothing"),
            })
            .collect(),
    )
}

/// What the reference finds, or `None` when the body is not JSON.
fn reference(path: &JsonPath, body: &[u8]) -> Option<Vec<Value>> {
    let doc: Value = serde_json::from_slice(body).ok()?;
    match path.eval(&doc, &mut Budget::new(MIN_BUDGET)).unwrap() {
        Found::Many(m) => Some(m.into_iter().cloned().collect()),
        other => panic!("{other:?}"),
    }
}

/// The pass's answer for `path` on `body`, checked against the reference when it has one.
fn both(path: &str, body: &str) -> Option<Vec<Value>> {
    let p = JsonPath::parse(path).unwrap();
    let got = passed(&p, body.as_bytes());
    if got.is_some() {
        assert_eq!(got, reference(&p, body.as_bytes()), "{path} on {body}");
    }
    got
}

#[test]
fn filters_read_in_one_pass() {
    let orders = r#"{"orders": [{"id": "o-1", "status": "paid"}, {"status": "pending", "id": "o-2"},
        {"id": "o-3", "status": "pending", "total": 3}, {"id": 4}, 5, null]}"#;
    let pending = "$.orders[?(@.status == 'pending')].id";
    assert_eq!(both(pending, orders), Some(vec![json!("o-2"), json!("o-3")]));
    assert_eq!(both("$.orders[?(@.status != 'pending')].id", orders), Some(vec![json!("o-1"), json!(4)]));
    assert_eq!(both("$.orders[?(@.total >= 3)].id", orders), Some(vec![json!("o-3")]));
    assert_eq!(both("$.orders[?(3 > @.total)].id", orders), Some(vec![]));
    assert_eq!(both("$.orders[?(@.total)].status", orders), Some(vec![json!("pending")]));
    assert_eq!(both("$.orders[?(!@.status)].id", orders), Some(vec![json!(4)]));
    assert_eq!(
        both("$.v[?(@ == 5 || @ == null)]", r#"{"v": [5, null, 1]}"#),
        Some(vec![json!(5), Value::Null])
    );
    assert_eq!(both("$.v[?(@ > 0)][0]", r#"{"v": [[1], [2, 3], 4]}"#), None);
    assert_eq!(
        both("$.orders[?(@.status == 'pending' && @.id != 'o-2')].id", orders),
        Some(vec![json!("o-3")])
    );
    assert_eq!(both("$.nums[?(@ > 1)]", r#"{"nums": [1, 2, 3]}"#), Some(vec![json!(2), json!(3)]));
    assert_eq!(both("$[1][?(@.a < 'b')].a", r#"[0, [{"a": "a"}, {"a": "c"}]]"#), Some(vec![json!("a")]));
    // Nowhere to filter, or nothing in it.
    assert_eq!(both(pending, r#"{"orders": 5}"#), Some(vec![]));
    assert_eq!(both(pending, r#"{"other": []}"#), Some(vec![]));
    assert_eq!(both(pending, r#"{"orders": []}"#), Some(vec![]));
    // A repeated name keeps its last value, as `serde_json`'s map does.
    assert_eq!(both(pending, r#"{"orders": [{"status": "pending", "id": 1}], "orders": 1}"#), Some(vec![]));
    assert_eq!(both("$.a[?(@.k == 1)].k", r#"{"a": [{"k": 2, "k": 1}]}"#), Some(vec![json!(1)]));
}

#[test]
fn what_the_pass_leaves_to_the_parsed_document() {
    let body = r#"{"o": {"x": {"k": 1}, "y": {"k": 2}}, "a": [{"k": {"z": 1}, "s": "\u00e9"}]}"#;
    for (path, body) in [
        // An object's members are filtered in the order of their names.
        ("$.o[?(@.k > 0)].k", body),
        // An operand or a target that is an object.
        ("$.a[?(@.k == 1)].s", body),
        ("$.a[?(@.s)].k", r#"{"a": [{"k": {}, "s": 1}]}"#),
        // A document that is not plain.
        ("$.a[?(@.s)].s", body),
        // An integer past `i64` compared.
        ("$.a[?(@.k > 1)].s", r#"{"a": [{"k": 18446744073709551615, "s": 1}]}"#),
        ("$.a[?(@.k == 1)].s", r#"{"a": [{"k": 1, "s": 1}] x"#),
    ] {
        let p = JsonPath::parse(path).unwrap();
        assert!(p.filtered().is_some(), "{path}");
        assert_eq!(passed(&p, body.as_bytes()), None, "{path} on {body}");
    }
    // Filters the pass does not take.
    for path in [
        "$.a[?(@.k == $.b)].s",
        "$.a[?(length(@.s) == 1)].s",
        "$.a[?(@.k == 1)][*]",
        "$.a[?(@.k == 1)][-1]",
        "$.a[?(@..k == 1)].s",
        "$.a[?(@.k == 1), 0].s",
        "$..a[?(@.k == 1)].s",
        "$.a[?(@.k == 1)].b[?(@.k == 1)]",
        "$.a[*][?(@.k == 1)]",
        "$.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q[?(@.k)]",
    ] {
        assert!(JsonPath::parse(path).unwrap().filtered().is_none(), "{path}");
    }
}

#[test]
fn an_evaluation_the_budget_would_stop_is_left_to_the_document() {
    let same = vec!["@.a == 1"; 30].join(" && ");
    let p = JsonPath::parse(&format!("$[?({same})].a")).unwrap();
    let long = format!("[{}{{\"a\":1}}]", "{\"a\":1},".repeat(99_999));
    let doc: Value = serde_json::from_str(&long).unwrap();
    assert!(p.eval(&doc, &mut Budget::for_answer(long.len())).is_err());
    assert_eq!(passed(&p, long.as_bytes()), None);
    // Within the budget, the pass answers.
    let short = format!("[{}{{\"a\":1}}]", "{\"a\":1},".repeat(999));
    assert_eq!(passed(&p, short.as_bytes()).map(|v| v.len()), Some(1000));
}

fn arb_rel() -> impl Strategy<Value = String> {
    let step = prop_oneof!["[a-c]".prop_map(|n| format!(".{n}")), (0..2).prop_map(|i| format!("[{i}]"))];
    prop_oneof![
        3 => "[a-c]".prop_map(|n| format!("@.{n}")),
        1 => proptest::collection::vec(step, 0..3).prop_map(|s| format!("@{}", s.concat())),
    ]
}

fn arb_literal() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["1", "2", "-1", "1.5", "0", "'a'", "'b'", "''", "true", "null"])
}

fn arb_op() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["==", "!=", "<", "<=", ">", ">="])
}

fn arb_cond() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        3 => (arb_rel(), arb_op(), arb_literal()).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
        1 => (arb_literal(), arb_op(), arb_rel()).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
        1 => (arb_rel(), arb_op(), arb_rel()).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
        1 => arb_rel(),
    ];
    let nested = leaf.clone().prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|c| format!("!({c})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} && {b})")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("({a} || {b})")),
        ]
    });
    prop_oneof![2 => leaf, 1 => nested]
}

/// A path of one filter, and the prefix where `arb_doc`'s arrays are (`$`, `$.a`, `$[1]`, `$.a[1]`).
fn arb_filter_path() -> impl Strategy<Value = (String, usize)> {
    let step = prop_oneof!["[a-c]".prop_map(|n| format!("['{n}']")), (0..2).prop_map(|i| format!("[{i}]"))];
    let steps = proptest::collection::vec(step, 0..3).prop_map(|s| s.concat());
    let suffix = prop_oneof![3 => "[a-c]".prop_map(|n| format!(".{n}")), 1 => steps.clone()];
    let prefix = prop_oneof![
        3 => (0..PREFIXES.len()).prop_map(|k| (PREFIXES[k].to_owned(), k)),
        1 => steps.prop_map(|s| (s, 0)),
    ];
    (prefix, arb_cond(), suffix).prop_map(|((pre, k), c, post)| (format!("${pre}[?({c})]{post}"), k))
}

/// Where `arb_doc` puts the array to filter.
const PREFIXES: [&str; 4] = ["", "['a']", "[1]", "['a'][1]"];

/// Small scalars that compare with the literals of `arb_literal`, sometimes a container.
fn arb_member() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::from),
        3 => (-1i64..3).prop_map(Value::from),
        3 => prop::sample::select(vec!["a", "b", ""]).prop_map(Value::from),
    ];
    prop_oneof![
        8 => scalar.clone(),
        1 => proptest::collection::vec(scalar.clone(), 0..3).prop_map(Value::Array),
        1 => proptest::collection::btree_map("[a-c]", scalar, 0..3)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
    ]
}

/// A document with an array of elements that are mostly objects of small scalars at the
/// `k`th of [`PREFIXES`], or any document.
fn arb_doc(k: usize) -> impl Strategy<Value = Value> {
    let member = || prop::option::weighted(0.8, arb_member());
    let object = (member(), member(), member()).prop_map(|(a, b, c)| {
        let m = [("a", a), ("b", b), ("c", c)].into_iter().filter_map(|(k, v)| Some((k.to_owned(), v?)));
        Value::Object(m.collect())
    });
    let element = prop_oneof![1 => arb_member(), 4 => object];
    let array = proptest::collection::vec(element, 0..5).prop_map(Value::Array);
    let placed = array.prop_map(move |a| match k {
        0 => a,
        1 => json!({"a": a, "b": 1}),
        2 => json!([0, a]),
        _ => json!({"a": [{}, a]}),
    });
    prop_oneof![4 => placed, 1 => arb_json()]
}

/// A path of one filter and a document to read it on.
fn arb_case() -> impl Strategy<Value = (String, Value)> {
    arb_filter_path().prop_flat_map(|(path, k)| (Just(path), arb_doc(k)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// Whenever the pass answers, it finds what the reference finds.
    #[test]
    fn equals_the_reference((path, v) in arb_case(), pretty in any::<bool>()) {
        let body = if pretty { serde_json::to_string_pretty(&v) } else { serde_json::to_string(&v) }.unwrap();
        let p = JsonPath::parse(&path).unwrap();
        // The target and the operands are at most `MAX` paths.
        let places = path.matches('@').count() + 1;
        prop_assert!(p.filtered().is_some() || places > crate::jsonpath::stream::MAX, "{}", path);
        if let Some(got) = passed(&p, body.as_bytes()) {
            prop_assert_eq!(Some(got), reference(&p, body.as_bytes()));
        }
    }

    /// On arrays of objects of scalars, a comparison of a member with a literal is answered.
    #[test]
    fn comparisons_of_scalar_members_are_answered(
        a in proptest::collection::vec(proptest::collection::btree_map("[a-c]", prop_oneof![
            Just(Value::Null), any::<bool>().prop_map(Value::from), any::<i64>().prop_map(Value::from),
            "[ -~&&[^\"\\\\]]{0,4}".prop_map(Value::from)], 0..4), 0..5),
        m in "[a-c]", t in "[a-c]", op in arb_op(), lit in arb_literal()) {
        let v = json!({"x": a});
        let body = serde_json::to_string(&v).unwrap();
        let p = JsonPath::parse(&format!("$.x[?(@.{m} {op} {lit})].{t}")).unwrap();
        let got = passed(&p, body.as_bytes());
        prop_assert!(got.is_some(), "{}", body);
        prop_assert_eq!(got, reference(&p, body.as_bytes()));
    }

    /// A body broken anywhere is refused by the pass, or found alike by both.
    #[test]
    fn broken_bodies_agree((path, v) in arb_case(), at in any::<prop::sample::Index>(),
                           byte in prop_oneof![Just(b'"'), Just(b'{'), Just(b']'), Just(b','), any::<u8>()],
                           cut in any::<bool>()) {
        let mut body = serde_json::to_vec(&v).unwrap();
        let i = at.index(body.len() + 1);
        if cut { body.truncate(i) } else { body.insert(i, byte) }
        let p = JsonPath::parse(&path).unwrap();
        if let Some(got) = passed(&p, &body) {
            prop_assert_eq!(Some(got), reference(&p, &body));
        }
    }
}
