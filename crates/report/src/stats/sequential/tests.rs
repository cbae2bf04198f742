use proptest::prelude::*;

use super::*;
use crate::stats::bootstrap::estimate_with;

proptest! {
    /// A percentage reads back as its fraction; anything else is refused with the text.
    #[test]
    fn precision_reads_percentages(tenths in 1u32..=500) {
        let text = format!("{}.{}%", tenths / 10, tenths % 10);
        prop_assert!((parse_precision(&text).unwrap() - f64::from(tenths) / 1000.0).abs() < 1e-12);
        let bare = tenths.to_string();
        prop_assert!(parse_precision(&bare).is_err());
    }

    /// The looks' error rates add up to at most 5%, whatever the budget.
    #[test]
    fn spending_never_exceeds_five_percent(first in 1u32..20, extra in 0u32..200) {
        let looks = planned_looks(first_look(first), first_look(first) + extra);
        prop_assert_eq!(looks, extra + 1);
        let spent = f64::from(looks) * (1.0 - look_confidence(looks));
        prop_assert!(spent <= 0.05 + 1e-12);
    }

    /// However the budget ends, the rounds looked at are at most the planned
    /// looks, the last round is always one of them (its interval is the one
    /// printed), and none comes before the first round with an interval.
    #[test]
    fn looks_never_exceed_the_plan(first in 3u32..10, looks in 1u32..12, end in 0u32..40) {
        let last_round = first + end;
        let taken: Vec<u32> =
            (1..=last_round).filter(|&r| looks_after(r, first, looks, r == last_round)).collect();
        prop_assert!(taken.len() as u32 <= looks, "{taken:?} over {looks} looks");
        prop_assert_eq!(taken.last(), Some(&last_round));
        prop_assert!(taken.iter().all(|&r| r >= first));
        // The looks before the last are the earliest rounds: with a budget of
        // `max_repetitions` rounds and one look per round it is the old rule.
        let every_round = looks > end;
        prop_assert_eq!(every_round, taken.len() as u32 == end + 1);
    }

    /// A pair is judged the same whichever side is named first, and Met exactly
    /// when the half-width is within the precision.
    #[test]
    fn judging_is_symmetric(
        a in proptest::collection::vec(900.0f64..1100.0, 3..8),
        b in proptest::collection::vec(900.0f64..1100.0, 3..8),
        p in 0.005f64..0.2,
        looks in 1u32..10,
    ) {
        let (ea, eb) = (estimate_with(&a, 1, 500), estimate_with(&b, 2, 500));
        let c = look_confidence(looks);
        let x = judge(("a", &ea), ("b", &eb), p, c, false);
        let y = judge(("b", &eb), ("a", &ea), p, c, false);
        prop_assert_eq!(&x, &y);
        let half = x.half_width.unwrap();
        prop_assert_eq!(x.verdict == PairVerdict::Met, half <= p);
        prop_assert!(x.ratio.unwrap().value >= 1.0);
    }
}

#[test]
fn refusals_say_what_to_write() {
    for bad in ["3", "x%", "0%", "-2%", "60%", ""] {
        let e = parse_precision(bad).unwrap_err();
        assert!(e.contains("percentage"), "{bad}: {e}");
    }
}

#[test]
fn verdicts() {
    let est = |v: &[f64], s| estimate_with(v, s, 2000);
    let tight = est(&[1000.0, 1001.0, 999.0, 1000.5, 999.5], 1);
    let same = est(&[1000.2, 1000.8, 999.2, 1000.0, 999.9], 2);
    let met = judge(("a", &tight), ("b", &same), 0.03, look_confidence(4), false);
    assert_eq!(met.verdict, PairVerdict::Met);
    let wide_a = est(&[900.0, 1100.0, 1000.0], 3);
    let wide_b = est(&[1150.0, 950.0, 1050.0], 4);
    let undecided = judge(("a", &wide_a), ("b", &wide_b), 0.03, look_confidence(4), false);
    assert_eq!(undecided.verdict, PairVerdict::Undecided);
    // ±2.9% around 1: within twice ±2% but not within ±2%.
    let x = est(&[1000.0, 1010.0, 990.0, 1005.0, 995.0], 5);
    let y = est(&[1000.0, 1030.0, 970.0, 1015.0, 985.0], 7);
    let tied = judge(("x", &x), ("y", &y), 0.02, look_confidence(1), false);
    assert_eq!(tied.verdict, PairVerdict::Tied, "{tied:?}");
    // The same pair is undecided at a finer precision.
    assert_eq!(judge(("x", &x), ("y", &y), 0.01, look_confidence(1), false).verdict, PairVerdict::Undecided);
    let slow = est(&[500.0, 550.0, 450.0], 6);
    let faster = judge(("a", &wide_a), ("s", &slow), 0.03, look_confidence(4), false);
    assert_eq!(faster.verdict, PairVerdict::Faster);
    assert_eq!((faster.better.as_str(), faster.worse.as_str()), ("a", "s"));
    // Costs: lower is better, the ratio still at least 1.
    let cost = judge(("a", &wide_a), ("s", &slow), 0.03, look_confidence(4), true);
    assert_eq!(cost.better, "s");
    assert!(cost.ratio.unwrap().value > 1.9);
}
