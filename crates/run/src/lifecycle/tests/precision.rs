//! Precision-driven rounds against the fakes: a verdict said at the first look
//! that decides it, the budget's end with what stays undecided, and a run whose
//! caller prints the report right after it (which says how the rounds ended, so the
//! run leaves that to it rather than print the same lines twice).

use super::*;

/// Runs 'a' (of `kind`) and 'b' ("good") at `rates` in rounds until ±1%, at most 4: 8 runs.
fn four_rounds(h: &mut Harness, kind: &str, rates: [f64; 8]) {
    h.world.lock().unwrap().rates = rates.into();
    let p = plan(&format!(
        "precision = \"1%\"\nmax_repetitions = 4\n{}{}",
        contestant("a", kind, ""),
        contestant("b", "good", "")
    ));
    let out = h.run(&p);
    assert_eq!(out.runs, 8, "{:#?}", h.lines);
}

/// Rates wide whichever order a round takes (rounds alternate a/b and b/a).
const WIDE: [f64; 8] = [20.0, 26.0, 25.0, 19.0, 18.0, 24.0, 27.0, 21.0];

#[test]
fn a_verdict_is_said_at_the_first_look_that_decides_it_and_only_then() {
    let mut h = Harness::new("precision-decided");
    // 'a' answers twice the rate of 'b', whichever order a round takes; too
    // noisy for ±1%, plain enough for "faster".
    four_rounds(&mut h, "twice", [100.0, 110.0, 90.0, 105.0, 95.0, 108.0, 92.0, 100.0]);
    let decided: Vec<_> = h.lines.iter().filter(|l| l.starts_with("decided after round")).collect();
    assert_eq!(decided.len(), 1, "said once, at the first look: {:#?}", h.lines);
    assert!(decided[0].starts_with("decided after round 3, "), "{}", decided[0]);
    assert!(
        decided[0].contains(": 'a' ran 1.") && decided[0].ends_with(" times more requests than 'b'"),
        "{}",
        decided[0]
    );
    assert!(
        h.lines.iter().any(|l| l == "round 3: 1 of 1 pairs decided, 0 still open at ±1%"),
        "{:#?}",
        h.lines
    );
}

#[test]
fn rounds_end_with_the_budget_and_say_what_stays_undecided() {
    let mut h = Harness::new("precision-budget");
    four_rounds(&mut h, "good", WIDE);
    let s = h.results().stopping.unwrap();
    assert_eq!((s.reason.as_str(), s.rounds), ("max_repetitions", 4));
    assert!(
        h.lines
            .iter()
            .any(|l| l.starts_with("precision: ±1% not met after 4 rounds: the budget of 4 rounds is spent")),
        "{:#?}",
        h.lines
    );
    assert!(h.lines.iter().any(|l| l.contains("at this budget")), "{:#?}", h.lines);
    assert!(
        h.lines.iter().any(|l| l == "round 3: 0 of 1 pairs decided, 1 still open at ±1%"),
        "{:#?}",
        h.lines
    );
    assert!(!h.lines.iter().any(|l| l.starts_with("decided after")), "{:#?}", h.lines);
}

#[test]
fn how_the_rounds_ended_is_left_to_the_report_that_follows() {
    let mut h = Harness::new("precision-quiet");
    h.report_follows = true;
    four_rounds(&mut h, "good", WIDE);
    assert!(h.lines.iter().any(|l| l.starts_with("round 4: ")), "{:#?}", h.lines);
    assert!(!h.lines.iter().any(|l| l.starts_with("precision: ")), "{:#?}", h.lines);
    assert!(!h.lines.iter().any(|l| l.contains("at this budget")), "{:#?}", h.lines);
    // The record still says how the rounds ended, for the report.
    let s = h.results().stopping.unwrap();
    assert_eq!((s.reason.as_str(), s.rounds), ("max_repetitions", 4));
}

#[test]
fn later_rounds_measure_only_the_contestants_of_open_pairs() {
    let mut h = Harness::new("precision-focus");
    let out = a_apart(&mut h, "");
    assert_eq!(out.runs, 3 * 3 + 2 * 2, "{:#?}", h.lines);
    let s = h.results().stopping.unwrap();
    assert_eq!((s.reason.as_str(), s.rounds), ("max_repetitions", 5));
    let sorted = |o: &Vec<String>| {
        let mut o = o.clone();
        o.sort();
        o
    };
    assert!(s.orders[..3].iter().all(|o| sorted(o) == ["a", "b", "c"]), "{:?}", s.orders);
    assert!(s.orders[3..].iter().all(|o| sorted(o) == ["b", "c"]), "{:?}", s.orders);
    assert!(
        h.lines.iter().any(|l| l == "round 3: 2 of 3 pairs decided, 1 still open at ±1%"),
        "{:#?}",
        h.lines
    );
    assert!(h.lines.iter().any(|l| l == "round 4 measures b, c"), "{:#?}", h.lines);
    // 'a' keeps its plan's repetitions; its verdicts stand on them.
    let runs = h.results().runs;
    let of = |n: &str| runs.iter().filter(|r| r.label.contestant.as_deref() == Some(n)).count();
    assert_eq!((of("a"), of("b"), of("c")), (3, 5, 5));
}

/// Runs 'a', 'b' and 'c' in rounds until ±1%, at most 5, with `extra` plan keys.
/// 'a' answers 40/s, twice what 'b' and 'c' do: decided against both at the first
/// look; 'b' and 'c' are alike within a few percent, too close to tell at ±1%.
/// With seed 3, 'a' runs third in each of the first rounds; whichever of 'b' and 'c'
/// runs first, each has three different rates.
fn a_apart(h: &mut Harness, extra: &str) -> Outcome {
    h.world.lock().unwrap().rates =
        [20.0, 22.0, 1.0, 21.0, 21.0, 2.0, 22.0, 20.0, 1.0, 21.0, 20.0, 22.0, 21.0].into();
    let p = plan(&format!(
        "precision = \"1%\"\nmax_repetitions = 5\n{extra}{}{}{}",
        contestant("a", "forty", ""),
        contestant("b", "good", ""),
        contestant("c", "good", "")
    ));
    h.run(&p)
}

#[test]
fn two_looks_judge_after_the_first_rounds_and_at_the_end_only() {
    let mut h = Harness::new("precision-two-looks");
    let out = a_apart(&mut h, "looks = 2\n");
    assert_eq!(out.runs, 3 * 3 + 2 * 2, "{:#?}", h.lines);
    let s = h.results().stopping.unwrap();
    assert_eq!((s.reason.as_str(), s.rounds, s.first_look, s.planned_looks), ("max_repetitions", 5, 3, 2));
    assert!((s.look_confidence - 0.975).abs() < 1e-12);
    // Round 4 is not looked at: the pairs open after round 3 are measured again.
    let looked: Vec<&String> =
        h.lines.iter().filter(|l| l.starts_with("round ") && l.contains("pairs decided")).collect();
    assert_eq!(looked.len(), 2, "{looked:#?}");
    assert!(looked[0].starts_with("round 3: ") && looked[1].starts_with("round 5: "), "{looked:#?}");
    assert!(
        h.lines
            .iter()
            .any(|l| l.contains("5% spent over 2 looks (after round 3, and when the budget is spent)"))
    );
}

#[test]
fn a_time_budget_spent_by_the_first_rounds_stops_after_their_look() {
    let mut h = Harness::new("precision-time");
    // Two pauses of 400 ms a round: the three rounds that always run take 2.4 s, past the budget.
    let out = a_apart(&mut h, "max_time = \"2s\"\ncooldown = \"400ms\"\nlooks = 2\n");
    assert_eq!(out.runs, 9, "{:#?}", h.lines);
    let s = h.results().stopping.unwrap();
    assert_eq!((s.reason.as_str(), s.rounds), ("max_time", 3));
    assert!(
        h.lines.iter().any(|l| l == "round 3: 2 of 3 pairs decided, 1 still open at ±1%"),
        "{:#?}",
        h.lines
    );
    assert!(!h.lines.iter().any(|l| l.starts_with("round 4 measures")), "{:#?}", h.lines);
}

/// A round is priced at each contestant's longest run so far, not its last: runs of 1 s in
/// the first round and of 60 ms after it leave about a second of a 5-s budget after round 3,
/// enough for the open pair's last runs (0.12 s) but not for their first (2 s).
#[test]
fn a_round_is_priced_at_its_contestants_longest_runs() {
    let mut h = Harness::new("precision-longest");
    h.world.lock().unwrap().took = [Duration::from_secs(1); 3].into();
    let out = a_apart(&mut h, "max_time = \"5s\"\n");
    assert_eq!(out.runs, 9, "{:#?}", h.lines);
    let s = h.results().stopping.unwrap();
    assert_eq!((s.reason.as_str(), s.rounds), ("max_time", 3), "{:#?}", h.lines);
}

#[test]
fn the_seconds_left_go_to_the_open_pairs_that_fit_cheapest_first() {
    use super::super::rounds::cheapest_that_fit;
    // Three stacks of 4 s a run, open with one another, and a JIT of 22 s open with the first.
    let cost = |k: usize| Duration::from_secs(if k == 3 { 22 } else { 4 });
    let pairs = || vec![vec![0, 1], vec![1, 2], vec![0, 2], vec![3, 0]];
    let set = |v: &[usize]| v.iter().copied().collect::<std::collections::BTreeSet<usize>>();
    assert_eq!(cheapest_that_fit(pairs(), cost, None), set(&[0, 1, 2, 3]));
    assert_eq!(cheapest_that_fit(pairs(), cost, Some(Duration::from_secs(40))), set(&[0, 1, 2, 3]));
    // 25 s: the three stacks (12 s) fit; the JIT (22 s more) does not.
    assert_eq!(cheapest_that_fit(pairs(), cost, Some(Duration::from_secs(25))), set(&[0, 1, 2]));
    assert_eq!(cheapest_that_fit(pairs(), cost, Some(Duration::from_secs(9))), set(&[0, 1]));
    assert!(cheapest_that_fit(pairs(), cost, Some(Duration::from_secs(7))).is_empty());
}
