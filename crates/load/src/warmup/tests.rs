//! The `--warmup auto` controller on made-up seconds and a made-up clock.

use std::collections::BTreeMap;
use std::time::Duration;

use stackbench_record::{Second, Steady};

use super::{MARGIN, Settle};

fn second(t: u32, completed: u64, p50_us: u64) -> Second {
    Second {
        t,
        completed,
        errors: BTreeMap::new(),
        p50_us,
        p90_us: p50_us,
        p99_us: p50_us,
        max_us: p50_us,
        in_flight: 0,
        bytes_received: 0,
        at_ms: None,
        histogram: None,
    }
}

/// Feeds `series` (rate, p50) to a controller with maximum `max_s`, second `t` final at
/// `t + 1.1` s; returns when it said the measured window begins, and at which second it said so.
fn feed(max_s: u64, series: &[(u64, u64)]) -> (Settle, Option<(Duration, u32)>) {
    let mut settle = Settle::new(Duration::from_secs(max_s));
    let mut said = None;
    for (t, &(rate, p50)) in series.iter().enumerate() {
        let t = t as u32;
        let final_at = Duration::from_millis(1_100 + 1_000 * u64::from(t));
        if let Some(at) = settle.second(&second(t, rate, p50), final_at) {
            assert!(said.is_none(), "it decides once");
            said = Some((at, t));
        }
    }
    (settle, said)
}

#[test]
fn a_flat_series_ends_the_warmup_after_two_windows() {
    let flat: Vec<(u64, u64)> = (0..30).map(|t| (10_000 + (t % 3) * 20, 900 + (t % 2) * 5)).collect();
    let (settle, said) = feed(30, &flat);
    // Steady from second 0, known once its window and the 5 seconds confirming it are final
    // (second 9, at 10.1 s): the measured window begins at the next whole second at least
    // MARGIN later.
    let (at, decided_on) = said.expect("steady");
    assert_eq!(decided_on, 9);
    assert_eq!(at, Duration::from_secs(11));
    assert!(at >= Duration::from_millis(10_100) + MARGIN);
    assert_eq!(settle.outcome(), Steady::From(0));
}

#[test]
fn a_climbing_series_waits_for_the_plateau() {
    // A JIT: the rate climbs 1,000 a second for 10 s while the median latency falls, then both
    // hold still.
    let series: Vec<(u64, u64)> = (0..30u64)
        .map(|t| if t < 10 { (2_000 + 1_000 * t, 5_000 - 400 * t) } else { (12_000 + (t % 2) * 30, 1_000) })
        .collect();
    let (settle, said) = feed(30, &series);
    let (at, decided_on) = said.expect("steady once flat");
    let Steady::From(from) = settle.outcome() else { panic!("{:?}", settle.outcome()) };
    assert!((8..=10).contains(&from), "steady from second {from}");
    assert!(decided_on as usize >= from + 9, "decided on second {decided_on}, before a window confirmed it");
    assert!(at > Duration::from_secs(18) && at < Duration::from_secs(30), "{at:?}");
}

#[test]
fn a_series_that_never_settles_gives_up_at_the_maximum() {
    let climb: Vec<(u64, u64)> = (0..40u64).map(|t| (1_000 + 200 * t, 800)).collect();
    let (settle, said) = feed(20, &climb);
    assert_eq!(said, None);
    assert_eq!(settle.outcome(), Steady::Never);
    // Seconds after the maximum are not the warm-up's: a plateau there changes nothing.
    let mut late = climb[..20].to_vec();
    late.extend(std::iter::repeat_n((9_000, 800), 20));
    let (settle, said) = feed(20, &late);
    assert_eq!((said, settle.outcome()), (None, Steady::Never));
}

#[test]
fn steady_too_close_to_the_maximum_keeps_the_maximum() {
    // Flat and confirmed, but the maximum (11 s) comes before the next whole second after the
    // margin; or flat and not yet confirmed at the maximum (8 s): the record still says when it
    // was steady.
    for max_s in [11, 8] {
        let (settle, said) = feed(max_s, &[(100, 10); 12]);
        assert_eq!(said, None, "{max_s}");
        assert_eq!(settle.outcome(), Steady::From(0), "{max_s}");
    }
}

#[test]
fn a_flat_window_whose_level_does_not_hold_is_not_steady_yet() {
    // Noisy, and still falling: a window can pass the slope test, but the seconds after it do
    // not keep its level, so the warm-up goes on until they do.
    let falling: Vec<(u64, u64)> =
        [900, 700, 800, 620, 640, 600, 560, 520, 500, 480, 470, 460, 455, 450, 450, 452, 449, 451, 450, 450]
            .iter()
            .map(|&p50| (4_000_000 / p50, p50))
            .collect();
    let (settle, said) = feed(30, &falling);
    let Steady::From(from) = settle.outcome() else { panic!("{:?}", settle.outcome()) };
    assert!(from >= 8, "steady from {from}, while still falling");
    assert!(said.is_some());
}

#[test]
fn fewer_seconds_than_a_window_cannot_tell() {
    let (settle, said) = feed(30, &[(100, 10); 3]);
    assert_eq!((said, settle.outcome()), (None, Steady::TooShort));
}
