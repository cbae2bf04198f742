//! Tick choice and label placement: labels never overlap, for data from
//! thousandths to billions and axes from a phone's width up.
#![allow(clippy::float_cmp, reason = "ticks are exact multiples, compared exactly")]

use proptest::prelude::*;

use super::*;

fn values(t: &Ticks) -> Vec<f64> {
    t.iter().map(|(v, _)| *v).collect()
}

fn labels(t: &Ticks) -> Vec<&str> {
    t.iter().map(|(_, l)| l.as_str()).collect()
}

#[test]
fn labels_are_compact_from_ten_thousand() {
    let t = labelled(&[0.0, 5_000.0, 10_000.0, 15_000.0], 5_000.0);
    assert_eq!(labels(&t), ["0", "5k", "10k", "15k"]);
    let t = labelled(&[0.0, 500_000.0, 1_000_000.0, 1_500_000.0], 500_000.0);
    assert_eq!(labels(&t), ["0", "500k", "1M", "1.5M"]);
    let t = labelled(&[0.0, 500.0, 1_000.0, 1_500.0], 500.0);
    assert_eq!(labels(&t), ["0", "500", "1,000", "1,500"]);
    let t = labelled(&[0.0, 0.05, 0.1, 0.15], 0.05);
    assert_eq!(labels(&t), ["0", "0.05", "0.1", "0.15"]);
    assert_eq!(label(2e9, 1e9, true), "2G");
    assert_eq!(label(12_000.0, 2_000.0, true), "12k");
}

#[test]
fn steps_are_one_two_five() {
    assert_eq!(next_step(1.0), 2.0);
    assert_eq!(next_step(2.0), 5.0);
    assert_eq!(next_step(5.0), 10.0);
    assert!((next_step(0.05) - 0.1).abs() < 1e-12);
    assert_eq!(nice_step(1_000.0, 5), 200.0);
    assert_eq!(nice_step(7.3, 5), 1.0);
}

/// Regression: the throughput axis of a real report (about 48k req/s on a
/// 230 px plot) wrote `0 10,000 20,000 30,000 40,000 50,000`, overlapping.
#[test]
fn wide_numbers_on_a_narrow_axis_take_a_coarser_step() {
    let (scale, ticks) = Axis::ZeroTo(48_123.0).horizontal(120.0, 230.0, (0.0, 420.0));
    let Scale::Linear { max, .. } = scale else { panic!() };
    assert!(max >= 48_123.0);
    assert!(ticks.len() >= 3, "{ticks:?}");
    assert!(labels(&ticks).iter().all(|l| l.ends_with('k') || *l == "0"), "{ticks:?}");
    let px: Vec<(f64, String)> =
        ticks.iter().map(|(v, l)| (120.0 + scale.unit(*v) * 230.0, l.clone())).collect();
    assert!(one_row(&px, (0.0, 420.0)));
}

#[test]
fn labels_turn_compact_before_the_step_grows() {
    let (_, ticks) = Axis::ZeroTo(4_034.0).horizontal(0.0, 100.0, (0.0, 130.0));
    assert_eq!(labels(&ticks), ["0", "2k", "4k", "6k"]);
    let (_, ticks) = Axis::ZeroTo(4_034.0).horizontal(0.0, 300.0, (0.0, 330.0));
    assert_eq!(labels(&ticks), ["0", "1,000", "2,000", "3,000", "4,000", "5,000"]);
    let (_, ticks) = Axis::ZeroTo(4_034.0).horizontal(0.0, 40.0, (0.0, 60.0));
    assert_eq!(labels(&ticks), ["0", "5k"]);
}

#[test]
fn a_log_axis_thins_to_decades() {
    let (_, dense) = Axis::Log { min: 1.0, max: 100.0 }.vertical(400.0);
    assert_eq!(values(&dense), [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
    let (_, thin) = Axis::Log { min: 1.0, max: 1e6 }.vertical(130.0);
    assert_eq!(values(&thin), [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]);
    assert_eq!(labels(&thin), ["1", "10", "100", "1k", "10k", "100k", "1M"]);
    let (_, sparse) = Axis::Log { min: 0.01, max: 1e8 }.vertical(100.0);
    assert!(sparse.len() < 11 && sparse.len() >= 2, "{sparse:?}");
}

/// Regression: the percentile axis wrote 99.99% and 99.999% over each other.
#[test]
fn colliding_fixed_labels_are_staggered_then_dropped() {
    let names = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"];
    let at = |w: f64| -> Vec<(f64, String)> {
        names.iter().enumerate().map(|(i, n)| (50.0 + w * i as f64 / 5.0, (*n).to_owned())).collect()
    };
    let roomy = place_x(&at(400.0), (0.0, 500.0));
    assert_eq!(roomy.len(), 6);
    assert_eq!(rows(&roomy), 1);
    let tight = place_x(&at(260.0), (0.0, 340.0));
    assert_eq!(tight.len(), 6, "{tight:?}");
    assert_eq!(rows(&tight), 2);
    let cramped = place_x(&at(100.0), (0.0, 180.0));
    assert!(cramped.len() < 6 && cramped[0].text == "0%", "{cramped:?}");
}

fn no_overlap(placed: &[Placed], bounds: (f64, f64)) -> Result<(), TestCaseError> {
    for row in 0..2 {
        let mut spans: Vec<(f64, f64)> = placed
            .iter()
            .filter(|p| p.row == row)
            .map(|p| {
                let w = text_width(&p.text);
                (p.x - w / 2.0, p.x + w / 2.0)
            })
            .collect();
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in spans.windows(2) {
            prop_assert!(w[0].1 + GAP <= w[1].0 + 1e-9, "{w:?} in {placed:?}");
        }
        for (lo, hi) in spans {
            prop_assert!(lo >= bounds.0 - 1e-9 && hi <= bounds.1 + 1e-9, "{lo}..{hi} outside {bounds:?}");
        }
    }
    Ok(())
}

proptest! {
    /// Any magnitude, any plot width from a phone's up: nice ticks from 0
    /// past the data, at least three when the axis is 100 px or more, and
    /// labels that neither overlap nor leave the chart.
    #[test]
    fn horizontal_ticks_never_overlap(exp in -3i32..10, mantissa in 1.0f64..10.0, length in 60.0f64..420.0) {
        let max = mantissa * 10f64.powi(exp);
        let (start, bounds) = (60.0, (0.0, 60.0 + length + 40.0));
        let (scale, ticks) = Axis::ZeroTo(max).horizontal(start, length, bounds);
        let Scale::Linear { min, max: top } = scale else { panic!() };
        prop_assert_eq!(min, 0.0);
        prop_assert!(top >= max * (1.0 - 1e-9));
        prop_assert_eq!(ticks[0].0, 0.0);
        prop_assert!(ticks.len() >= 2 && ticks.len() <= 13);
        if length >= 100.0 {
            prop_assert!(ticks.len() >= 3, "{:?} on {} px", ticks, length);
        }
        let step = ticks[1].0;
        let m = step / 10f64.powf(step.log10().floor());
        prop_assert!([1.0, 2.0, 2.5, 5.0, 10.0].iter().any(|n| (m - n).abs() < 1e-6), "step {}", step);
        let px: Vec<(f64, String)> = ticks.iter().map(|(v, l)| (start + scale.unit(*v) * length, l.clone())).collect();
        let placed = place_x(&px, bounds);
        prop_assert_eq!(placed.len(), ticks.len());
        prop_assert_eq!(rows(&placed), 1);
        no_overlap(&placed, bounds)?;
    }

    #[test]
    fn vertical_ticks_are_a_line_apart(exp in -3i32..10, mantissa in 1.0f64..10.0, length in 60.0f64..300.0) {
        let (scale, ticks) = Axis::ZeroTo(mantissa * 10f64.powi(exp)).vertical(length);
        prop_assert!(ticks.len() >= 2);
        for w in ticks.windows(2) {
            prop_assert!((scale.unit(w[1].0) - scale.unit(w[0].0)) * length >= LINE - 1e-9);
        }
    }

    #[test]
    fn log_ticks_are_a_line_apart(lo in -3i32..3, decades in 1i32..9, length in 60.0f64..300.0) {
        let (min, max) = (10f64.powi(lo), 10f64.powi(lo + decades));
        let (scale, ticks) = Axis::Log { min, max }.vertical(length);
        prop_assert!(ticks.len() >= 2);
        for w in ticks.windows(2) {
            prop_assert!((scale.unit(w[1].0) - scale.unit(w[0].0)) * length >= LINE - 1e-9 || ticks.len() == 2);
        }
    }

    /// The percentile axis at any width: whatever is placed does not overlap.
    #[test]
    fn placed_labels_never_overlap(top in 2usize..10, length in 80.0f64..420.0) {
        let ticks: Vec<(f64, String)> = (0..=top)
            .map(|k| (50.0 + length * k as f64 / top as f64, format!("99.{}%", "9".repeat(k))))
            .collect();
        let bounds = (0.0, 50.0 + length + 30.0);
        let placed = place_x(&ticks, bounds);
        prop_assert!(!placed.is_empty() && rows(&placed) <= 2);
        no_overlap(&placed, bounds)?;
    }
}
#[test]
fn a_quarter_step_keeps_three_ticks_where_halves_do_not_fit() {
    // Regression (proptest): 0..464M on 125 px had only `0` and `500M`.
    let (_, ticks) = Axis::ZeroTo(4.638_713e8).horizontal(60.0, 124.6, (0.0, 224.6));
    let labels: Vec<&str> = ticks.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(labels, ["0", "250M", "500M"]);
    assert_eq!(label(0.75, 0.25, false), "0.75");
    assert_eq!(label(7.5, 2.5, false), "7.5");
    assert_eq!(label(2_500_000.0, 250_000.0, true), "2.5M");
}
