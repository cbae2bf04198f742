//! A small JSONPath (RFC 9535 subset, the part Hurl files use) compiled once
//! and evaluated over `serde_json` values.
//!
//! Supported: the root `$`, child names (`.name`, `['name']`, `["name"]`),
//! indexes (`[0]`, `[-1]` from the end), wildcards (`.*`, `[*]`) and
//! descendants (`..name`, `..*`). A path of names and indexes only is
//! *singular*: it yields at most one value (Hurl then compares that value);
//! any other yields a collection (possibly empty), as Hurl does. Filter
//! expressions (`[?(...)]`), slices and unions are refused when the file is
//! loaded.
//!
//! One evaluation is bounded ([`Budget`]): each value it visits or keeps costs
//! one unit, and it may spend two per byte of the answer, or [`MIN_BUDGET`] when
//! that is more. A path visits each value of a document once per step at most,
//! unless its descendant steps overlap (`$..a..a..a` on `{"a":{"a":...}}` 120
//! deep visits the same values again and again, billions of times): such an
//! evaluation stops at the bound with [`TooMuch`] instead of taking the machine's
//! memory.

use serde_json::Value;

pub mod stream;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Name(Box<str>),
    Index(i64),
    Wildcard,
    Descendant(Box<str>),
    /// `..*`: every value below.
    DescendantAll,
}

/// A compiled path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    steps: Vec<Step>,
    singular: bool,
}

/// The least units an evaluation may spend, however small the answer.
pub const MIN_BUDGET: usize = 1_000_000;

/// Units an evaluation may spend per byte of the answer.
pub const BUDGET_PER_BYTE: usize = 2;

/// What one evaluation may still spend: a unit per value visited or kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    left: usize,
    limit: usize,
}

impl Budget {
    /// The budget of an evaluation over an answer of `len` bytes.
    pub fn for_answer(len: usize) -> Budget {
        Budget::new(len.saturating_mul(BUDGET_PER_BYTE).max(MIN_BUDGET))
    }

    /// A budget of `limit` units.
    pub fn new(limit: usize) -> Budget {
        Budget { left: limit, limit }
    }

    /// Spends `n` units; `Err` past the limit.
    #[inline]
    pub fn spend(&mut self, n: usize) -> Result<(), TooMuch> {
        match self.left.checked_sub(n) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(TooMuch { limit: self.limit }),
        }
    }
}

/// An evaluation went past its [`Budget`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the jsonpath visited or kept more than {limit} values and was stopped (one evaluation may visit \
     or keep {BUDGET_PER_BYTE} values per byte of the answer, at least {MIN_BUDGET}): its `..` steps \
     overlap on this answer"
)]
pub struct TooMuch {
    pub limit: usize,
}

/// What a path found.
#[derive(Debug, Clone, PartialEq)]
pub enum Found<'a> {
    /// A singular path that led nowhere.
    Nothing,
    One(&'a Value),
    Many(Vec<&'a Value>),
}

impl JsonPath {
    /// Compiles `src`; the error says what is wrong, at which character (0-based).
    pub fn parse(src: &str) -> Result<JsonPath, (usize, String)> {
        let b = src.as_bytes();
        if b.first() != Some(&b'$') {
            return Err((0, "must start with `$`".into()));
        }
        let mut i = 1;
        let mut steps = Vec::new();
        while i < b.len() {
            match b[i] {
                b'.' if b.get(i + 1) == Some(&b'.') && b.get(i + 2) == Some(&b'*') => {
                    steps.push(Step::DescendantAll);
                    i += 3;
                }
                b'.' if b.get(i + 1) == Some(&b'.') => {
                    let (name, next) = name_at(src, i + 2)?;
                    steps.push(Step::Descendant(name.into()));
                    i = next;
                }
                b'.' if b.get(i + 1) == Some(&b'*') => {
                    steps.push(Step::Wildcard);
                    i += 2;
                }
                b'.' => {
                    let (name, next) = name_at(src, i + 1)?;
                    steps.push(Step::Name(name.into()));
                    i = next;
                }
                b'[' => {
                    let close = src[i..].find(']').ok_or((i, "`[` without `]`".to_owned()))? + i;
                    let inner = src[i + 1..close].trim();
                    let step = if inner == "*" {
                        Step::Wildcard
                    } else if let Some(q) = quoted(inner) {
                        Step::Name(q.into())
                    } else if let Ok(n) = inner.parse::<i64>() {
                        Step::Index(n)
                    } else if inner.starts_with('?') {
                        return Err((i, "filter expressions `[?(...)]` are not supported".into()));
                    } else if inner.contains(':') || inner.contains(',') {
                        return Err((i, "slices and unions are not supported".into()));
                    } else {
                        return Err((i + 1, format!("`[{inner}]` is not an index, `*` or a quoted name")));
                    };
                    steps.push(step);
                    i = close + 1;
                }
                c => return Err((i, format!("unexpected `{}`", c as char))),
            }
        }
        let singular = steps.iter().all(|s| matches!(s, Step::Name(_) | Step::Index(_)));
        Ok(JsonPath { steps, singular })
    }

    /// Whether it yields at most one value.
    pub fn is_singular(&self) -> bool {
        self.singular
    }

    /// Evaluates the path on `root`, spending from `budget` for each value visited or kept
    /// (see the module's notes); a singular path does not allocate and spends nothing.
    pub fn eval<'a>(&self, root: &'a Value, budget: &mut Budget) -> Result<Found<'a>, TooMuch> {
        if self.singular {
            return Ok(self.walk(root, 0).map_or(Found::Nothing, Found::One));
        }
        let mut cur = vec![root];
        let mut next = Vec::new();
        for s in &self.steps {
            for v in cur.drain(..) {
                let before = next.len();
                match s {
                    Step::Name(_) | Step::Index(_) => next.extend(child(v, s)),
                    Step::Wildcard => match v {
                        Value::Array(a) => next.extend(a.iter()),
                        Value::Object(o) => next.extend(o.values()),
                        _ => {}
                    },
                    Step::Descendant(name) => descend(v, Some(name), &mut next, budget)?,
                    Step::DescendantAll => descend(v, None, &mut next, budget)?,
                }
                budget.spend(next.len() - before)?;
            }
            std::mem::swap(&mut cur, &mut next);
        }
        Ok(Found::Many(cur))
    }
}

impl JsonPath {
    /// A singular path's steps from `from` on, taken from `v`.
    fn walk<'a>(&self, v: &'a Value, from: usize) -> Option<&'a Value> {
        self.steps[from..].iter().try_fold(v, child)
    }
}

fn child<'a>(v: &'a Value, s: &Step) -> Option<&'a Value> {
    match (s, v) {
        (Step::Name(n), Value::Object(o)) => o.get(&**n),
        (Step::Index(i), Value::Array(a)) => {
            let i = if *i < 0 { a.len() as i64 + i } else { *i };
            usize::try_from(i).ok().and_then(|i| a.get(i))
        }
        _ => None,
    }
}

/// The members named `name` at any depth below `v` (every value below it without a name),
/// spending a unit from `budget` per value visited. The depth is the document's, which
/// `serde_json` bounds (128).
fn descend<'a>(
    v: &'a Value,
    name: Option<&str>,
    out: &mut Vec<&'a Value>,
    budget: &mut Budget,
) -> Result<(), TooMuch> {
    budget.spend(1)?;
    match v {
        Value::Object(o) => {
            match name {
                Some(name) => out.extend(o.get(name)),
                None => out.extend(o.values()),
            }
            for c in o.values() {
                descend(c, name, out, budget)?;
            }
        }
        Value::Array(a) => {
            if name.is_none() {
                out.extend(a.iter());
            }
            for c in a {
                descend(c, name, out, budget)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A member name after `.` or `..`: letters, digits, `_`, `-` and non-ASCII.
fn name_at(src: &str, start: usize) -> Result<(&str, usize), (usize, String)> {
    let len = src[start..]
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || !c.is_ascii()))
        .unwrap_or(src.len() - start);
    if len == 0 {
        return Err((start, "a name must follow `.`".into()));
    }
    Ok((&src[start..start + len], start + len))
}

fn quoted(s: &str) -> Option<&str> {
    let q = s.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    (s.len() >= 2 && s.ends_with(q)).then(|| &s[1..s.len() - 1])
}

#[cfg(test)]
pub(crate) mod tests {
    use std::fmt::Write as _;

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn eval(path: &str, v: &Value) -> Found<'static> {
        let v: &'static Value = Box::leak(Box::new(v.clone()));
        JsonPath::parse(path).unwrap().eval(v, &mut Budget::new(MIN_BUDGET)).unwrap()
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
        assert_eq!(eval("$.items[*].n", &v), Found::Many(vec![&json!(1), &json!(2)]));
        assert_eq!(eval("$..n", &v), Found::Many(vec![&json!(1), &json!(2), &json!(3)]));
        assert_eq!(eval("$.items.*", &v), Found::Many(v["items"].as_array().unwrap().iter().collect()));
        assert_eq!(eval("$.nope[*]", &v), Found::Many(vec![]));
        let w = json!({"a": [{"b": 1}], "c": 2});
        assert_eq!(eval("$..*", &w), Found::Many(vec![&w["a"], &json!(2), &json!({"b": 1}), &json!(1)]));
    }

    #[test]
    fn refusals_say_where() {
        assert_eq!(JsonPath::parse("id").unwrap_err().0, 0);
        assert!(JsonPath::parse("$.items[?(@.n > 1)]").unwrap_err().1.contains("filter"));
        assert!(JsonPath::parse("$.a[0:2]").unwrap_err().1.contains("slices"));
        assert_eq!(JsonPath::parse("$.a[0").unwrap_err().0, 3);
        assert_eq!(JsonPath::parse("$.").unwrap_err().0, 2);
        assert_eq!(JsonPath::parse("$x").unwrap_err().0, 1);
    }

    /// `{"a": {"a": ... 1 ...}}`, `depth` objects deep.
    pub(crate) fn nested(depth: usize) -> String {
        format!("{}1{}", "{\"a\": ".repeat(depth), "}".repeat(depth))
    }

    #[test]
    fn overlapping_descendants_stop_at_the_bound() {
        // Issue 45 #8: six `..a` steps on a 120-deep chain would keep C(120, 6), about 3.6e9,
        // values (15 GB); the evaluation stops once it has spent its budget.
        let text = nested(120);
        let doc: Value = serde_json::from_str(&text).unwrap();
        let path = JsonPath::parse("$..a..a..a..a..a..a").unwrap();
        let mut budget = Budget::for_answer(text.len());
        assert_eq!(path.eval(&doc, &mut budget), Err(TooMuch { limit: MIN_BUDGET }));
        // Two steps stay within it: C(120, 2) = 7140 values kept.
        let path = JsonPath::parse("$..a..a").unwrap();
        let Ok(Found::Many(found)) = path.eval(&doc, &mut Budget::for_answer(text.len())) else { panic!() };
        assert_eq!(found.len(), 120 * 119 / 2);
        // A large answer has a larger budget: two units per byte.
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

    proptest! {
        /// A path built from the steps that reach a value finds that value.
        #[test]
        fn path_to_every_value_finds_it(v in arb_json(), picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..5)) {
            let mut path = String::from("$");
            let mut at = &v;
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
            let jp = JsonPath::parse(&path).unwrap();
            prop_assert!(jp.is_singular());
            prop_assert_eq!(jp.eval(&v, &mut Budget::new(0)), Ok(Found::One(at)));
        }

        /// `[*]` and `..name` agree with a direct walk.
        #[test]
        fn wildcard_matches_children(v in arb_json()) {
            let expected: Vec<&Value> = match &v {
                Value::Array(a) => a.iter().collect(),
                Value::Object(o) => o.values().collect(),
                _ => vec![],
            };
            prop_assert_eq!(JsonPath::parse("$[*]").unwrap().eval(&v, &mut Budget::new(MIN_BUDGET)), Ok(Found::Many(expected)));
        }

        /// No input makes the parser panic.
        #[test]
        fn parse_never_panics(s in "\\$[\\[\\]\\.\\*'\"a-z0-9?:,-]{0,12}") {
            let _ = JsonPath::parse(&s);
        }
    }
}
