//! Paths on documents: singular ones, collections, slices, unions, filters,
//! the bound on one evaluation, and refusals with their place.

use std::fmt::Write as _;

use proptest::prelude::*;
use serde_json::json;

use super::*;

fn eval(path: &str, v: &Value) -> Found<'static> {
    let v: &'static Value = Box::leak(Box::new(v.clone()));
    JsonPath::parse(path).unwrap().eval(v, &mut Budget::new(MIN_BUDGET)).unwrap()
}

fn many(path: &str, v: &Value) -> Vec<Value> {
    match eval(path, v) {
        Found::Many(m) => m.into_iter().cloned().collect(),
        other => panic!("{path}: {other:?}"),
    }
}

#[test]
fn singular_paths() {
    let v = json!({"id": 3, "a": {"b c": [1, 2, {"x": true}]}});
    assert_eq!(eval("$.id", &v), Found::One(&json!(3)));
    assert_eq!(eval("$", &v), Found::One(&v));
    assert_eq!(eval("$.a['b c'][2].x", &v), Found::One(&json!(true)));
    assert_eq!(eval("$.a[\"b c\"][-1].x", &v), Found::One(&json!(true)));
    assert_eq!(eval("$.missing", &v), Found::Nothing);
    assert_eq!(eval("$.a['b c'][5]", &v), Found::Nothing);
    assert_eq!(eval("$.id.x", &v), Found::Nothing);
}

#[test]
fn collections() {
    let v = json!({"items": [{"n": 1}, {"n": 2}, {"m": {"n": 3}}]});
    assert_eq!(many("$.items[*].n", &v), [json!(1), json!(2)]);
    assert_eq!(many("$..n", &v), [json!(1), json!(2), json!(3)]);
    assert_eq!(many("$.items.*", &v).len(), 3);
    assert_eq!(many("$.nope[*]", &v), Vec::<Value>::new());
    let w = json!({"a": [{"b": 1}], "c": 2});
    assert_eq!(many("$..*", &w), [w["a"].clone(), json!(2), json!({"b": 1}), json!(1)]);
}

#[test]
fn slices_unions_and_filters() {
    let store = json!({"book": [
        {"title": "Sayings", "price": 8.95, "category": "reference"},
        {"title": "Sword", "price": 12.99, "category": "fiction"},
        {"title": "Moby Dick", "price": 8.99, "category": "fiction", "isbn": "0-553"},
        {"title": "Rings", "price": 22.99, "category": "fiction", "isbn": "0-395"}
    ]});
    let titles =
        |p: &str| many(p, &store).into_iter().map(|v| v.as_str().unwrap().to_owned()).collect::<Vec<_>>();
    assert_eq!(titles("$.book[1:3].title"), ["Sword", "Moby Dick"]);
    assert_eq!(titles("$.book[-1:].title"), ["Rings"]);
    assert_eq!(titles("$.book[::2].title"), ["Sayings", "Moby Dick"]);
    assert_eq!(titles("$.book[::-1].title"), ["Rings", "Moby Dick", "Sword", "Sayings"]);
    assert_eq!(titles("$.book[0,3].title"), ["Sayings", "Rings"]);
    assert_eq!(many("$.book[0]['title','price']", &store), [json!("Sayings"), json!(8.95)]);
    assert_eq!(titles("$.book[?(@.price < 10)].title"), ["Sayings", "Moby Dick"]);
    assert_eq!(titles("$.book[?@.isbn].title"), ["Moby Dick", "Rings"]);
    assert_eq!(titles("$.book[?@.category == 'fiction' && @.price > 10].title"), ["Sword", "Rings"]);
    assert_eq!(titles("$.book[?!@.isbn].title"), ["Sayings", "Sword"]);
    assert_eq!(titles("$..book[?(@.title == \"Rings\" || @.price == 8.95)].title"), ["Sayings", "Rings"]);
    assert_eq!(titles("$.book[?length(@.title) == 5].title"), ["Sword", "Rings"]);
    assert_eq!(titles("$.book[?match(@.title, 'S.*')].title"), ["Sayings", "Sword"]);
    assert_eq!(titles("$.book[?search(@.title, 'ick')].title"), ["Moby Dick"]);
    assert_eq!(titles("$.book[?@.price == $.book[0].price].title"), ["Sayings"]);
    assert_eq!(many("$..book[2].title", &store), [json!("Moby Dick")]);
}

#[test]
fn refusals_say_where() {
    assert_eq!(JsonPath::parse("id").unwrap_err().0, 0);
    assert_eq!(JsonPath::parse("$.a[0").unwrap_err().0, 3);
    assert_eq!(JsonPath::parse("$.").unwrap_err().0, 2);
    assert_eq!(JsonPath::parse("$x").unwrap_err().0, 1);
    assert!(JsonPath::parse("$.profile-id").unwrap_err().1.contains("['name-with-dash']"));
    assert!(JsonPath::parse("$.a[?foo(@)]").unwrap_err().1.contains("unknown function"));
}

/// `{"a": {"a": ... 1 ...}}`, `depth` objects deep.
pub(crate) fn nested(depth: usize) -> String {
    format!("{}1{}", "{\"a\": ".repeat(depth), "}".repeat(depth))
}

#[test]
fn overlapping_descendants_stop_at_the_bound() {
    // Six `..a` steps on a 120-deep chain would keep C(120, 6), about 3.6e9, values (15 GB);
    // the evaluation stops once it has spent its budget.
    let text = nested(120);
    let doc: Value = serde_json::from_str(&text).unwrap();
    let path = JsonPath::parse("$..a..a..a..a..a..a").unwrap();
    let mut budget = Budget::for_answer(text.len());
    assert_eq!(path.eval(&doc, &mut budget), Err(TooMuch { limit: MIN_BUDGET }));
    // Two steps stay within it: C(120, 2) = 7140 values kept.
    let path = JsonPath::parse("$..a..a").unwrap();
    let Ok(Found::Many(found)) = path.eval(&doc, &mut Budget::for_answer(text.len())) else { panic!() };
    assert_eq!(found.len(), 120 * 119 / 2);
    assert_eq!(Budget::for_answer(10 << 20), Budget::new(20 << 20));
}

pub(crate) fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        "[a-z]{0,4}".prop_map(Value::from)
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-c]{1,2}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A path that reaches a value of `v`, one step of `picks` at a time (an index of an array, a
/// name of an object, each `picks` entry choosing which), and the value it reaches.
pub(crate) fn path_to<'v>(v: &'v Value, picks: &[prop::sample::Index]) -> (String, &'v Value) {
    let mut path = String::from("$");
    let mut at = v;
    for p in picks {
        match at {
            Value::Array(a) if !a.is_empty() => {
                let i = p.index(a.len());
                write!(path, "[{i}]").unwrap();
                at = &a[i];
            }
            Value::Object(o) if !o.is_empty() => {
                let (k, c) = o.iter().nth(p.index(o.len())).unwrap();
                write!(path, "['{k}']").unwrap();
                at = c;
            }
            _ => break,
        }
    }
    (path, at)
}

proptest! {
    /// A path built from the steps that reach a value finds that value.
    #[test]
    fn path_to_every_value_finds_it(v in arb_json(), picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..5)) {
        let (path, at) = path_to(&v, &picks);
        let jp = JsonPath::parse(&path).unwrap();
        prop_assert!(jp.is_singular());
        prop_assert_eq!(jp.eval(&v, &mut Budget::new(0)), Ok(Found::One(at)));
    }

    /// `[*]` and a full slice agree with a direct walk.
    #[test]
    fn wildcard_matches_children(v in arb_json()) {
        let expected: Vec<&Value> = match &v {
            Value::Array(a) => a.iter().collect(),
            Value::Object(o) => o.values().collect(),
            _ => vec![],
        };
        prop_assert_eq!(JsonPath::parse("$[*]").unwrap().eval(&v, &mut Budget::new(MIN_BUDGET)), Ok(Found::Many(expected.clone())));
        if v.is_array() {
            prop_assert_eq!(JsonPath::parse("$[:]").unwrap().eval(&v, &mut Budget::new(MIN_BUDGET)), Ok(Found::Many(expected)));
        }
    }

    /// No input makes the parser, or an evaluation, panic.
    #[test]
    fn parse_never_panics(s in "\\$[\\[\\]\\.\\*'\"a-z0-9?:,@=<>!&|() -]{0,16}", v in arb_json()) {
        if let Ok(p) = JsonPath::parse(&s) {
            let _ = p.eval(&v, &mut Budget::new(MIN_BUDGET));
        }
    }
}
