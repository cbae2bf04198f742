//! Calibration of the report's decisions on simulated runs whose truth is
//! known, through the code the report and the orchestrator use
//! (`estimate_with`, `ratio_at`, `sequential::judge`, the per-look level of
//! `sequential::look_confidence`):
//!
//! - A/A: two copies of one server under precision-driven rounds must be
//!   called different ("faster") at most about 5% of the time, under several
//!   noise shapes (normal, skewed, heavy-tailed, occasional slow runs, drift
//!   between and within rounds), looking after every round or only after the
//!   first and the last (`looks = 2`, `sequential::looks_after`);
//! - the same with a fixed count of runs and the report's plain 95% rule;
//! - a 1.2× difference is found, in the right direction, within 16 rounds;
//! - the final interval covers the true ratio at least about 95% of the time.
//!
//! Each trial's bootstrap uses 500 resamples instead of the report's 10,000,
//! to keep the test under a minute in a debug build: at the per-look levels
//! both take the `t·sd` path, which needs only the replicates' spread. The
//! figures are printed (`--nocapture`) and quoted in docs/benchmarks.md.

use stackbench_report::stats::bootstrap::estimate_with;
use stackbench_report::stats::rng::SplitMix64;
use stackbench_report::stats::sequential::{
    PairVerdict, first_look, judge, look_confidence, looks_after, planned_looks,
};
use stackbench_report::stats::{Estimate, ratio, ratio_at};

const RESAMPLES: usize = 500;

/// How a run's throughput strays from the server's true rate.
#[derive(Debug, Clone, Copy)]
enum Noise {
    /// Normal, 5% of the rate.
    Normal,
    /// Log-normal, σ = 0.10: skewed.
    LogNormal,
    /// Student's t with 3 degrees of freedom, 4% scale: heavy tails.
    HeavyTails,
    /// Normal 3%, and one run in ten loses 40% (a neighbour's build).
    SlowRuns,
    /// Normal 3% on a machine whose speed wanders by 2% per run (a random
    /// walk across runs, within and between rounds).
    Drift,
}

const SHAPES: [Noise; 5] =
    [Noise::Normal, Noise::LogNormal, Noise::HeavyTails, Noise::SlowRuns, Noise::Drift];

fn std_normal(rng: &mut SplitMix64) -> f64 {
    let u1 = 1.0 - rng.next_f64();
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A simulated machine: one run's factor at a time.
struct Machine {
    rng: SplitMix64,
    noise: Noise,
    speed: f64,
}

impl Machine {
    fn run(&mut self) -> f64 {
        let r = &mut self.rng;
        let f = match self.noise {
            Noise::Normal => 1.0 + 0.05 * std_normal(r),
            Noise::LogNormal => (0.10 * std_normal(r)).exp(),
            Noise::HeavyTails => {
                let chi2: f64 = (0..3).map(|_| std_normal(r).powi(2)).sum();
                1.0 + 0.04 * std_normal(r) / (chi2 / 3.0).sqrt()
            }
            Noise::SlowRuns => (1.0 + 0.03 * std_normal(r)) * if r.next_f64() < 0.1 { 0.6 } else { 1.0 },
            Noise::Drift => {
                self.speed *= 1.0 + 0.02 * std_normal(r);
                1.0 + 0.03 * std_normal(r)
            }
        };
        // A rate is never below zero; the floor is reached by neither server more than the other.
        (self.speed * f).max(1e-3)
    }
}

/// The end of one simulated plan: `a`'s true rate is `truth` times `b`'s.
struct Outcome {
    /// The final interval excludes 1.
    different: bool,
    /// ... and the point estimate is on the side of the truth.
    right_way: bool,
    covered: bool,
    rounds: u32,
}

/// Precision-driven rounds as the orchestrator runs them: a and b once per
/// round in a random order, a look after each round from the first with an
/// interval (or, with `looks`, at most that many: the first rounds', the last),
/// stop when the pair meets `precision` or after `max` rounds.
fn sequential(noise: Noise, truth: f64, precision: f64, max: u32, looks: Option<u32>, seed: u64) -> Outcome {
    let mut m = Machine { rng: SplitMix64::new(seed), noise, speed: 1.0 };
    let first = first_look(3);
    let every_round = planned_looks(first, max);
    let looks = looks.map_or(every_round, |n| n.min(every_round));
    let confidence = look_confidence(looks);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut rounds = 0;
    let mut last = None;
    for round in 1..=max {
        if m.rng.next_f64() < 0.5 {
            a.push(1000.0 * truth * m.run());
            b.push(1000.0 * m.run());
        } else {
            b.push(1000.0 * m.run());
            a.push(1000.0 * truth * m.run());
        }
        rounds = round;
        if !looks_after(round, first, looks, round == max) {
            continue;
        }
        let ea = estimate_with(&a, seed ^ 0xa, RESAMPLES);
        let eb = estimate_with(&b, seed ^ 0xb, RESAMPLES);
        let met = judge(("a", &ea), ("b", &eb), precision, confidence, false).verdict == PairVerdict::Met;
        last = Some((ea, eb));
        if met {
            break;
        }
    }
    let (ea, eb) = last.expect("at least one look");
    outcome(&ea, &eb, truth, confidence, rounds)
}

fn outcome(ea: &Estimate, eb: &Estimate, truth: f64, confidence: f64, rounds: u32) -> Outcome {
    let r = ratio_at(ea, eb, confidence).unwrap();
    let ci = r.ci.unwrap();
    Outcome {
        different: !ci.contains(1.0),
        right_way: (r.value > 1.0) == (truth > 1.0),
        covered: ci.contains(truth),
        rounds,
    }
}

/// `runs` runs each, the report's plain 95% rule.
fn fixed(noise: Noise, truth: f64, runs: usize, seed: u64) -> Outcome {
    let mut machine = Machine { rng: SplitMix64::new(seed), noise, speed: 1.0 };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        a.push(1000.0 * truth * machine.run());
        b.push(1000.0 * machine.run());
    }
    let (ea, eb) = (estimate_with(&a, seed ^ 0xa, RESAMPLES), estimate_with(&b, seed ^ 0xb, RESAMPLES));
    let found = ratio(&ea, &eb).unwrap();
    let ci = found.ci.unwrap();
    Outcome {
        different: !ci.contains(1.0),
        right_way: (found.value > 1.0) == (truth > 1.0),
        covered: ci.contains(truth),
        rounds: runs as u32,
    }
}

/// Looking after every round at 95% each time and stopping at the first
/// difference: what the spending rule prevents.
fn naive(noise: Noise, max: u32, seed: u64) -> bool {
    let mut m = Machine { rng: SplitMix64::new(seed), noise, speed: 1.0 };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 1..=max {
        a.push(1000.0 * m.run());
        b.push(1000.0 * m.run());
        if round >= 3 {
            let (ea, eb) =
                (estimate_with(&a, seed ^ 0xa, RESAMPLES), estimate_with(&b, seed ^ 0xb, RESAMPLES));
            if ratio(&ea, &eb).unwrap().significant() == Some(true) {
                return true;
            }
        }
    }
    false
}

fn rate(outcomes: &[Outcome], f: impl Fn(&Outcome) -> bool) -> f64 {
    outcomes.iter().filter(|o| f(o)).count() as f64 / outcomes.len() as f64
}

const TRIALS: u64 = 300;
/// Three standard errors of a 5% rate over [`TRIALS`].
const SLACK: f64 = 0.038;

#[test]
fn a_a_comparisons_are_called_different_at_most_about_five_percent_of_the_time() {
    println!(
        "| noise | precision rounds: false 'faster' | mean rounds | first and last looks: false 'faster' | fixed 5 runs, 95% |"
    );
    println!("|---|---|---|---|---|");
    let mut worst: f64 = 0.0;
    for (k, noise) in SHAPES.into_iter().enumerate() {
        let base = 1_000 * k as u64;
        let seq: Vec<Outcome> =
            (0..TRIALS).map(|t| sequential(noise, 1.0, 0.03, 8, None, base + t)).collect();
        let two: Vec<Outcome> =
            (0..TRIALS).map(|t| sequential(noise, 1.0, 0.03, 8, Some(2), base + t)).collect();
        let fix: Vec<Outcome> = (0..TRIALS).map(|t| fixed(noise, 1.0, 5, base + t)).collect();
        let (s, f) = (rate(&seq, |o| o.different), rate(&fix, |o| o.different));
        let t = rate(&two, |o| o.different);
        let mean_rounds = seq.iter().map(|o| f64::from(o.rounds)).sum::<f64>() / seq.len() as f64;
        println!("| {noise:?} | {s:.3} | {mean_rounds:.1} | {t:.3} | {f:.3} |");
        assert!(s <= 0.05 + SLACK, "{noise:?}: {s} of A/A pairs called different under precision rounds");
        assert!(t <= 0.05 + SLACK, "{noise:?}: {t} of A/A pairs called different with two looks");
        assert!(f <= 0.05 + SLACK, "{noise:?}: {f} of A/A pairs called different with 5 runs at 95%");
        worst = worst.max(s).max(t);
    }
    // The spending rule is what keeps repeated looks honest.
    let looks_naively =
        (0..TRIALS).filter(|&t| naive(Noise::Normal, 8, 77_000 + t)).count() as f64 / TRIALS as f64;
    println!("looking after every round at 95% (normal noise): {looks_naively:.3} called different");
    assert!(looks_naively > worst, "naive {looks_naively} vs spent {worst}");
}

#[test]
fn a_one_point_two_difference_is_found_and_intervals_cover_the_truth() {
    println!(
        "| noise | 1.2x found (right way), 16 rounds | coverage at 1.2 | coverage at 0.8, 8 rounds | two looks: 1.2x found, coverage | fixed 5 runs coverage at 1.2 |"
    );
    println!("|---|---|---|---|---|---|");
    for (k, noise) in SHAPES.into_iter().enumerate() {
        let base = 50_000 + 1_000 * k as u64;
        let trials = TRIALS / 2;
        let up: Vec<Outcome> =
            (0..trials).map(|t| sequential(noise, 1.2, 0.05, 16, None, base + t)).collect();
        let down: Vec<Outcome> =
            (0..trials).map(|t| sequential(noise, 0.8, 0.05, 8, None, base + t)).collect();
        let two: Vec<Outcome> =
            (0..trials).map(|t| sequential(noise, 1.2, 0.05, 16, Some(2), base + t)).collect();
        let found = rate(&up, |o| o.different && o.right_way);
        let found_two = rate(&two, |o| o.different && o.right_way);
        let cover = |o: &[Outcome]| rate(o, |o| o.covered);
        let fix: Vec<Outcome> = (0..trials).map(|t| fixed(noise, 1.2, 5, base + t)).collect();
        println!(
            "| {noise:?} | {found:.3} | {:.3} | {:.3} | {found_two:.3}, {:.3} | {:.3} |",
            cover(&up),
            cover(&down),
            cover(&two),
            cover(&fix)
        );
        // One run in ten at 0.6x makes a mean-based comparison need more rounds
        // (measured 0.725 within 16); every other shape finds it nine times in ten.
        let power = if matches!(noise, Noise::SlowRuns) { 0.6 } else { 0.9 };
        assert!(found >= power, "{noise:?}: a 1.2x difference found in only {found}");
        assert!(found_two >= power, "{noise:?}: with two looks a 1.2x difference found in only {found_two}");
        for (truth, o) in [(1.2, &up), (0.8, &down), (1.2, &two)] {
            assert!(cover(o) >= 0.95 - SLACK, "{noise:?}: coverage {} at {truth}", cover(o));
        }
        assert!(cover(&fix) >= 0.95 - SLACK, "{noise:?}: fixed-count coverage {}", cover(&fix));
    }
}
