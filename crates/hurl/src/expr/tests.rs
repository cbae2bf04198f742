//! The expression parser and evaluator: db-read's and event-log's own
//! expressions, each refusal with its offset, and property tests against a
//! reference evaluation in 128-bit integers.

use proptest::prelude::*;

use super::*;

fn vars(n: &str) -> Option<&'static str> {
    match n {
        "a" => Some("9"),
        "b" => Some("3"),
        "count0" => Some("41"),
        "s" => Some("abc"),
        "big" => Some("9223372036854775807"),
        _ => None,
    }
}

fn value(src: &str) -> Result<i64, EvalError> {
    Expr::parse(src).unwrap_or_else(|e| panic!("{src}: {e:?}")).eval(&vars)
}

#[test]
fn the_shipped_expressions() {
    assert_eq!(value("min(a, b)"), Ok(3));
    assert_eq!(value("max(a, b)"), Ok(9));
    assert_eq!(value("min(a, b) * 7919 % 10000"), Ok(3 * 7919 % 10000));
    assert_eq!(value("count0 + 1"), Ok(42));
}

#[test]
fn precedence_associativity_and_signs() {
    assert_eq!(value("1 + 2 * 3"), Ok(7));
    assert_eq!(value("(1 + 2) * 3"), Ok(9));
    assert_eq!(value("10 - 3 - 2"), Ok(5));
    assert_eq!(value("100 / 10 / 5"), Ok(2));
    assert_eq!(value("-7 / 2"), Ok(-3));
    assert_eq!(value("-7 % 3"), Ok(-1));
    assert_eq!(value("--a"), Ok(9));
    assert_eq!(value("abs(b - a)"), Ok(6));
    assert_eq!(value("max(1, a, 20, b)"), Ok(20));
    assert_eq!(value(" min( a ,b )\n"), Ok(3));
}

#[test]
fn no_value_rather_than_a_wrong_one() {
    assert_eq!(value("a / (b - 3)"), Err(EvalError::DivisionByZero));
    assert_eq!(value("a % 0"), Err(EvalError::DivisionByZero));
    assert_eq!(value("big + 1"), Err(EvalError::Overflow));
    assert_eq!(value("-big - 2"), Err(EvalError::Overflow));
    assert_eq!(value("nope + 1"), Err(EvalError::Missing("nope".into())));
    assert_eq!(value("s * 2"), Err(EvalError::NotInteger("s".into(), "abc".into())));
}

#[test]
fn refusals_say_where() {
    let at = |src: &str| Expr::parse(src).map(|_| ()).map_err(|e| (e.offset, e.message));
    assert_eq!(at("").unwrap_err().0, 0);
    assert_eq!(at("a +").unwrap_err(), (3, "the expression ends where a value is expected".into()));
    assert_eq!(at("a b").unwrap_err().0, 2);
    assert_eq!(at("(a + 1").unwrap_err(), (6, "expected `)`".into()));
    assert_eq!(
        at("sqrt(a)").unwrap_err(),
        (0, "unknown function `sqrt`; the functions are min, max and abs".into())
    );
    assert_eq!(at("abs(a, b)").unwrap_err().1, "`abs` takes one argument");
    assert_eq!(at("min(a b)").unwrap_err().1, "expected `,` or `)` in the arguments");
    assert_eq!(at("99999999999999999999").unwrap_err().0, 0);
    assert_eq!(at("a $ b").unwrap_err().0, 2);
    assert!(at(&"(".repeat(100)).unwrap_err().1.contains("nested deeper"));
    assert!(at(&vec!["a"; 300].join("+")).unwrap_err().1.contains("more than 256 terms"));
}

#[test]
fn names_in_order_with_offsets() {
    let e = Expr::parse("min(a, b) * lo_x + a").unwrap();
    assert_eq!(e.names(), [("a", 4), ("b", 7), ("lo_x", 12), ("a", 19)]);
}

/// A generated expression: its text and its value by the reference evaluation.
#[derive(Debug, Clone)]
enum T {
    Int(i64),
    Var(usize),
    Neg(Box<T>),
    Bin(char, Box<T>, Box<T>),
    Call(&'static str, Vec<T>),
}

const NAMES: [&str; 3] = ["x", "y", "z"];

fn tree() -> impl Strategy<Value = T> {
    let leaf = prop_oneof![
        (0i64..1000).prop_map(T::Int),
        (0usize..3).prop_map(T::Var),
        any::<u32>().prop_map(|v| T::Int(i64::from(v) << 20))
    ];
    leaf.prop_recursive(5, 40, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| T::Neg(Box::new(t))),
            (prop::sample::select(vec!['+', '-', '*', '/', '%']), inner.clone(), inner.clone())
                .prop_map(|(op, a, b)| T::Bin(op, Box::new(a), Box::new(b))),
            (prop::sample::select(vec!["min", "max"]), prop::collection::vec(inner.clone(), 1..4))
                .prop_map(|(f, args)| T::Call(f, args)),
            inner.prop_map(|t| T::Call("abs", vec![t])),
        ]
    })
}

impl T {
    /// The text, with as few parentheses as `paren` allows (random spacing).
    fn text(&self, out: &mut String, spaced: bool) {
        let sp = if spaced { " " } else { "" };
        match self {
            T::Int(v) => out.push_str(&v.to_string()),
            T::Var(i) => out.push_str(NAMES[*i]),
            T::Neg(a) => {
                out.push_str("-(");
                a.text(out, spaced);
                out.push(')');
            }
            T::Bin(op, a, b) => {
                out.push('(');
                a.text(out, spaced);
                out.push_str(sp);
                out.push(*op);
                out.push_str(sp);
                b.text(out, !spaced);
                out.push(')');
            }
            T::Call(f, args) => {
                out.push_str(f);
                out.push('(');
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                        out.push_str(sp);
                    }
                    a.text(out, spaced);
                }
                out.push(')');
            }
        }
    }

    /// The value in 128-bit arithmetic; `None` where an i64 evaluation has none.
    fn value(&self, vals: &[i64; 3]) -> Option<i128> {
        let fits = |v: i128| (i128::from(i64::MIN)..=i128::from(i64::MAX)).contains(&v).then_some(v);
        match self {
            T::Int(v) => Some(i128::from(*v)),
            T::Var(i) => Some(i128::from(vals[*i])),
            T::Neg(a) => fits(-a.value(vals)?),
            T::Bin(op, a, b) => {
                let (a, b) = (a.value(vals)?, b.value(vals)?);
                match op {
                    '+' => fits(a + b),
                    '-' => fits(a - b),
                    '*' => fits(a.checked_mul(b)?),
                    '/' | '%' if b == 0 => None,
                    '/' => fits(a / b),
                    // i64::MIN % -1 overflows in i64 (Rust's checked_rem says so).
                    '%' => fits(a / b).map(|_| a % b),
                    _ => unreachable!(),
                }
            }
            T::Call(f, args) => {
                let vs: Option<Vec<i128>> = args.iter().map(|a| a.value(vals)).collect();
                let vs = vs?;
                match *f {
                    "min" => vs.into_iter().min(),
                    "max" => vs.into_iter().max(),
                    _ => fits(vs[0].abs()),
                }
            }
        }
    }
}

proptest! {
    /// Whatever expression is written, the evaluator gives the exact value when there is one
    /// in 64 bits, and no value otherwise.
    #[test]
    fn evaluates_as_exact_arithmetic(t in tree(), vals in any::<[i64; 3]>(), spaced in any::<bool>()) {
        let mut src = String::new();
        t.text(&mut src, spaced);
        let e = Expr::parse(&src).unwrap();
        let texts = vals.map(|v| v.to_string());
        let got = e.eval(&|n| NAMES.iter().position(|k| *k == n).map(|i| texts[i].as_str()));
        let want = t.value(&vals);
        match want {
            Some(v) => prop_assert_eq!(got.map(i128::from), Ok(v), "{}", src),
            None => prop_assert!(got.is_err(), "{} gave {:?}", src, got),
        }
        // Shown fully parenthesised, it reads back as the same expression.
        let again = Expr::parse(&e.to_string()).unwrap();
        prop_assert_eq!(again.to_string(), e.to_string());
    }

    /// Arbitrary text never panics the parser or the evaluator (what the fuzz target runs).
    #[test]
    fn arbitrary_text_never_panics(s in "[-+*/%() ,0-9a-z_]{0,40}") {
        fuzz_expr(s.as_bytes());
    }
}
