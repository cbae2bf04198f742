//! Warm-ups learned from earlier starts, against the fakes: a `warmup = "auto"`
//! contestant's later starts warm for the time its earlier ones took to be steady,
//! and a start found never steady sends the next back to `auto`.

use super::*;

#[test]
fn later_starts_of_an_auto_warmup_warm_for_the_time_the_earlier_ones_took() {
    let mut h = Harness::new("warmups-learned");
    {
        let mut w = h.world.lock().unwrap();
        // a's four starts: steady from 3, from 2, never, from 4.
        w.steady = [Some(3), Some(2), None, Some(4)].into();
        w.rates = WIDE.into();
    }
    let p = plan(&format!(
        "precision = \"1%\"\nmax_repetitions = 4\n{}{}",
        // A generous wait for readiness: a start that times out on a busy machine would
        // shift the warm-ups asked.
        contestant(
            "a",
            "good",
            "ready_timeout = \"10s\"\nload = { warmup = \"auto\", max-warmup = \"20s\" }"
        ),
        contestant("b", "good", "ready_timeout = \"10s\"")
    ));
    let out = h.run(&p);
    assert_eq!((out.runs, out.failed.len()), (8, 0), "{:#?}", h.lines);
    let asked = h.world.lock().unwrap().warmups_asked.clone();
    // Nothing learned before the first start; then steady from 3 (the latest) plus one
    // window; after a start never steady, `auto` again.
    assert_eq!(asked, ["auto", "8s", "8s", "auto"], "{:#?}", h.lines);
    let set = h.results();
    let a: Vec<bool> = set
        .runs
        .iter()
        .filter(|r| r.label.contestant.as_deref() == Some("a"))
        .map(|r| r.warmup.as_ref().is_some_and(|w| w.auto))
        .collect();
    assert_eq!(a, [true, false, false, true], "the record says which warm-ups were automatic");
}

/// Rates wide whichever order a round takes, so all four rounds run.
const WIDE: [f64; 8] = [20.0, 26.0, 25.0, 19.0, 18.0, 24.0, 27.0, 21.0];
