//! What the analysis says about synthetic result stores whose truth is known:
//! ranks and ties, outliers, failures with their reasons, too few runs,
//! `--reference`, interrupted runs, a contestant that answered nothing, and
//! unreadable input.

use stackbench_record::{Incident, Status};
use stackbench_report::synthetic::{RunSpec, contestant, result_set, three_kings};
use stackbench_report::{Analysis, AnalysisOptions, ScenarioReport, Verdict};

fn analyse(set: &stackbench_record::ResultSet) -> Analysis {
    Analysis::from_results(set, &AnalysisOptions::default())
}

fn scenario<'a>(a: &'a Analysis, name: &str) -> &'a ScenarioReport {
    a.scenarios.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no scenario {name}"))
}

/// A contestant's range of places, best and worst.
fn rank_of(s: &ScenarioReport, name: &str) -> (usize, usize) {
    let c = s.contestants.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no contestant {name}"));
    (c.rank, c.rank_worst)
}

#[test]
fn ranks_the_seeds_dummy_scenario_like_the_seed() {
    let a = analyse(&three_kings("r"));
    let s = scenario(&a, "dummy");
    let names: Vec<&str> = s.contestants.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["plug", "japronto", "gin", "flask"],
        "Elixir, Japronto, Go, Flask as in the three-kings post"
    );
    assert_eq!(s.baseline.as_deref(), Some("plug"));
    assert!(s.contestants.iter().all(|c| !c.tied));
    let st = s.statements.iter().find(|st| st.slower == "flask").unwrap();
    assert_eq!(st.verdict, Verdict::Faster);
    assert!(st.text.starts_with("'plug' ran 4.5"), "{}", st.text);
    // The interval as the one formatter says it: `± x` only when symmetric as printed, else its ends.
    let r = st.ratio.unwrap();
    let ci = r.ci.unwrap();
    let said = stackbench_report::fmt::ratio_interval(r.value, ci.lo, ci.hi);
    assert_eq!(st.text, format!("'plug' ran {said} times more requests than 'flask'"));
    // req/min in the original experiment's terms: ~113k for Elixir.
    let plug = &s.contestants[0];
    assert!((plug.throughput.per_minute - 112_900.0).abs() < 500.0, "{}", plug.throughput.per_minute);
    assert_eq!(plug.generator_saturated_runs, 1);
    assert!(plug.warnings.iter().any(|w| w.contains("saturated")), "{:?}", plug.warnings);
}

#[test]
fn a_3_8_percent_difference_within_the_noise_is_a_tie() {
    // The three-kings post: "With only a 3.8% of performance improvement Japronto was not a game changer".
    let a = analyse(&three_kings("r"));
    let s = scenario(&a, "event-log");
    let n = s.contestants.len();
    assert_eq!(rank_of(s, "japronto-influx"), (n - 1, n));
    assert_eq!(rank_of(s, "flask-influx"), (n - 1, n));
    let tie = s
        .statements
        .iter()
        .find(|st| st.faster == "japronto-influx" && st.slower == "flask-influx")
        .expect("a sentence for the tie");
    assert_eq!(tie.verdict, Verdict::Tied);
    assert!(tie.text.contains("statistically tied"), "{}", tie.text);
    assert!(tie.ratio.unwrap().ci.unwrap().contains(1.0));
}

#[test]
fn an_odd_run_is_flagged_not_removed() {
    let a = analyse(&three_kings("r"));
    let flask = scenario(&a, "event-log").contestants.iter().find(|c| c.name == "flask-influx").unwrap();
    assert_eq!(flask.runs, 5);
    let outliers: Vec<Option<u32>> =
        flask.throughput.runs.iter().filter(|r| r.outlier).map(|r| r.repetition).collect();
    assert_eq!(outliers, [Some(5)]);
    assert!(flask.warnings.iter().any(|w| w.starts_with("run 5 is an outlier")), "{:?}", flask.warnings);
    // Still in the mean: (83.5 + 84 + 83 + 82.5 + 62) / 5.
    assert!((flask.throughput.mean - 79.0).abs() < 0.05, "{}", flask.throughput.mean);
}

#[test]
fn contestants_that_failed_are_listed_with_the_reason() {
    let a = analyse(&three_kings("r"));
    let dummy = scenario(&a, "dummy");
    assert_eq!(dummy.failed.len(), 1);
    let f = &dummy.failed[0];
    assert_eq!(f.name, "fastify");
    assert!(f.reason.contains("a valid event gets 200 {\"count\": 1} (got 500"), "{}", f.reason);
    assert!(f.reason.contains("1 more rule"), "{}", f.reason);
    let crashy = scenario(&a, "event-log").contestants.iter().find(|c| c.name == "crashy-influx").unwrap();
    assert!(
        crashy.warnings.iter().any(|w| w == "crashed in run 2: exited with signal 11 (SIGSEGV) after 3.2 s")
    );
}

#[test]
fn too_few_runs_give_no_interval_and_say_so() {
    let a = analyse(&three_kings("r"));
    let s = scenario(&a, "bubble-sort");
    assert!(s.contestants.iter().all(|c| c.throughput.mean_ci.is_none()));
    assert!(s.statements.iter().all(|st| st.verdict == Verdict::NoInterval));
    let st = &s.statements[0];
    assert!(
        st.text.contains("no interval: 'tonic' has 2 runs and 'go-grpc' has 2 runs, 3 needed"),
        "{}",
        st.text
    );
    assert!(s.notes.iter().any(|n| n.contains("no 95% interval is available")));
}

#[test]
fn a_reference_turns_the_sentences_around_it() {
    let set = three_kings("r");
    let a = Analysis::from_results(&set, &AnalysisOptions { reference: Some("gin".into()), seed: 0 });
    let s = scenario(&a, "dummy");
    assert_eq!(s.baseline.as_deref(), Some("gin"));
    let texts: Vec<&str> = s.statements.iter().map(|st| st.text.as_str()).collect();
    assert!(texts.iter().any(|t| t.starts_with("'plug' ran 1.41") && t.ends_with("than 'gin'")), "{texts:?}");
    assert!(texts.iter().any(|t| t.starts_with("'gin' ran 3.2") && t.ends_with("than 'flask'")), "{texts:?}");
    let gin = s.contestants.iter().find(|c| c.name == "gin").unwrap();
    assert!((gin.ratio_to_baseline.unwrap().value - 1.0).abs() < 1e-12);
    // Elsewhere the best stays the baseline; an unknown reference is noted.
    assert_eq!(scenario(&a, "event-log").baseline.as_deref(), Some("gin-influx"));
    let b = Analysis::from_results(&set, &AnalysisOptions { reference: Some("nope".into()), seed: 0 });
    assert!(b.notes.iter().any(|n| n.contains("'nope' has no measured run")), "{:?}", b.notes);
}

#[test]
fn ratios_are_reciprocal_whichever_side_is_the_baseline() {
    let set = three_kings("r");
    let best = Analysis::from_results(&set, &AnalysisOptions::default());
    let by_gin = Analysis::from_results(&set, &AnalysisOptions { reference: Some("gin".into()), seed: 0 });
    let plug_over_gin = scenario(&by_gin, "dummy").contestants.iter().find(|c| c.name == "plug").unwrap();
    let gin_over_plug = scenario(&best, "dummy").contestants.iter().find(|c| c.name == "gin").unwrap();
    let (x, y) =
        (plug_over_gin.ratio_to_baseline.unwrap(), gin_over_plug.ratio_to_baseline.unwrap().inverse());
    assert!((x.value - y.value).abs() < 1e-12);
    let (cx, cy) = (x.ci.unwrap(), y.ci.unwrap());
    assert!((cx.lo - cy.lo).abs() < 1e-9 && (cx.hi - cy.hi).abs() < 1e-9, "{cx:?} vs {cy:?}");
}

#[test]
fn interrupted_runs_are_left_out_and_an_interrupted_plan_is_noted() {
    let mut runs: Vec<RunSpec> =
        (1..=4).map(|k| RunSpec::new("axum", "dummy", k, 1_000.0 + f64::from(k))).collect();
    runs[3].interrupted = true;
    runs[3].ok_rps = 10.0;
    let mut set = result_set("r", vec![contestant("axum", "dummy", Some(5.0), None)], &runs);
    set.manifest.status = Status::Interrupted;
    let a = analyse(&set);
    let axum = &a.scenarios[0].contestants[0];
    assert_eq!(axum.runs, 3);
    assert!((axum.throughput.mean - 1_002.0).abs() < 1e-9);
    assert!(
        axum.warnings.iter().any(|w| w == "run 4 was interrupted and is left out"),
        "{:?}",
        axum.warnings
    );
    assert!(a.notes.iter().any(|n| n.contains("interrupted")), "{:?}", a.notes);
}

/// Regression: a run that completed nothing (0 requests over 5 s, 3 of its 5
/// timeline seconds) was averaged in as an outlier. A run marked invalid by
/// the engine or the orchestrator is never in the statistics.
#[test]
fn invalid_runs_are_never_in_the_statistics() {
    let runs: Vec<RunSpec> =
        (1..=4).map(|k| RunSpec::new("axum", "dummy", k, 1_000.0 + f64::from(k))).collect();
    let mut set = result_set("r", vec![contestant("axum", "dummy", Some(5.0), None)], &runs);
    let last = set.runs.iter_mut().find(|r| r.label.repetition == Some(4)).unwrap();
    last.summary.ok_rps = 0.0;
    last.invalid = Some(stackbench_record::Invalid::new(
        stackbench_record::Invalid::NO_PROGRESS,
        "no request completed in the 5 s measured",
    ));
    let a = analyse(&set);
    let axum = &a.scenarios[0].contestants[0];
    assert_eq!(axum.runs, 3);
    assert!((axum.throughput.mean - 1_002.0).abs() < 1e-9);
    assert!(
        axum.warnings.iter().any(|w| w.starts_with("run 4 is not a result and is left out (no_progress:")),
        "{:?}",
        axum.warnings
    );
}

#[test]
fn a_contestant_that_answered_nothing_correctly_is_last_and_said_so() {
    let mut runs: Vec<RunSpec> = (1..=3).map(|k| RunSpec::new("good", "dummy", k, 500.0)).collect();
    for k in 1..=3 {
        let mut bad = RunSpec::new("broken", "dummy", k, 0.0);
        bad.errors = vec![("http_500".into(), 4_000)];
        runs.push(bad);
    }
    let a = analyse(&result_set("r", vec![], &runs));
    let s = &a.scenarios[0];
    assert_eq!(rank_of(s, "good"), (1, 1));
    assert_eq!(rank_of(s, "broken"), (2, 2));
    let st = &s.statements[0];
    assert_eq!(st.verdict, Verdict::NothingAnswered);
    assert!(st.text.contains("'broken' answered no request correctly"), "{}", st.text);
    let broken = s.contestants.iter().find(|c| c.name == "broken").unwrap();
    assert!((broken.errors.rate - 1.0).abs() < 1e-12);
    assert_eq!(broken.errors.by_kind.get("http_500"), Some(&12_000));
}

#[test]
fn an_unreadable_histogram_is_left_out_with_a_warning() {
    let runs: Vec<RunSpec> = (1..=3).map(|k| RunSpec::new("axum", "dummy", k, 900.0)).collect();
    let mut set = result_set("r", vec![], &runs);
    set.runs[1].histogram = "not base64!".into();
    let a = analyse(&set);
    let c = &a.scenarios[0].contestants[0];
    assert!(
        c.warnings.iter().any(|w| w.contains("run 2: its latency histogram cannot be read")),
        "{:?}",
        c.warnings
    );
    assert_eq!(c.latency.merged.count, set.runs[0].summary.latency.count + set.runs[2].summary.latency.count);
}

#[test]
fn an_empty_store_and_a_store_of_failures_still_report() {
    let empty = analyse(&result_set("r", vec![], &[]));
    assert!(empty.scenarios.is_empty());
    let mut never = contestant("slowpoke", "dummy", None, None);
    never.incidents.push(Incident {
        phase: "start".into(),
        kind: "never_ready".into(),
        message: "no answer on port 40000 within 10 s".into(),
        repetition: None,
    });
    let a = analyse(&result_set("r", vec![never], &[]));
    assert_eq!(
        a.scenarios[0].failed[0].reason,
        "never ready during start: no answer on port 40000 within 10 s"
    );
    for format in ["terminal", "md", "csv", "json", "html"] {
        let text = stackbench_report::render(
            &a,
            format.parse().unwrap(),
            &stackbench_report::RenderOptions::default(),
        );
        assert!(text.contains("slowpoke"), "{format} does not name the failed contestant");
    }
}

/// Runs of `name` with these throughputs (and the synthetic CPU samples).
fn runs_of(name: &str, rps: &[f64]) -> Vec<RunSpec> {
    rps.iter().enumerate().map(|(k, &r)| RunSpec::new(name, "dummy", k as u32 + 1, r)).collect()
}

/// Regression: on the db-drivers plan ranks read `9=` rows followed by a
/// `10` row with a higher rate, then a jump from 10 to 16 ("1 + those
/// significantly better" alone). A rank is now the range of places the data
/// allow, rows follow the mean, and a tie says so without naming ranks.
#[test]
fn ranks_are_the_places_the_data_allow_in_the_order_of_the_means() {
    let mut runs = runs_of("wide", &[700.0, 1_000.0, 1_300.0]);
    runs.extend(runs_of("steady", &[955.0, 950.0, 945.0]));
    runs.extend(runs_of("slow", &[905.0, 900.0, 895.0]));
    let names = ["wide", "steady", "slow"];
    let set = result_set("r", names.iter().map(|n| contestant(n, "dummy", Some(5.0), None)).collect(), &runs);
    let a = analyse(&set);
    let s = scenario(&a, "dummy");
    let order: Vec<&str> = s.contestants.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(order, ["wide", "steady", "slow"], "ordered by the mean");
    // 'wide' cannot be told from either; 'steady' is significantly better than 'slow'.
    assert_eq!(rank_of(s, "wide"), (1, 3));
    assert_eq!(rank_of(s, "steady"), (1, 2));
    assert_eq!(rank_of(s, "slow"), (2, 3));
    assert!(s.contestants.iter().all(|c| c.tied));
    let tie = s.statements.iter().find(|st| st.slower == "slow" && st.faster == "wide").unwrap();
    assert_eq!(tie.verdict, Verdict::Tied, "{}", tie.text);
    assert!(s.statements.iter().all(|st| !st.text.contains(" ranks ")), "{:?}", s.statements);
}

/// Ranks stay inside the table's order whatever the data: a contestant at
/// row k (by the mean) has best ≤ k ≤ worst, and rows never show a higher
/// rate below a lower one.
#[test]
fn every_range_holds_its_row() {
    let rates: [&[f64]; 5] = [
        &[1_000.0, 1_010.0, 990.0],
        &[995.0, 1_200.0, 800.0],
        &[700.0, 705.0, 695.0],
        &[702.0, 690.0, 710.0],
        &[100.0, 101.0, 99.0],
    ];
    let names = ["a", "b", "c", "d", "e"];
    let mut runs = Vec::new();
    for (n, r) in names.iter().zip(rates) {
        runs.extend(runs_of(n, r));
    }
    let set = result_set("r", names.iter().map(|n| contestant(n, "dummy", Some(5.0), None)).collect(), &runs);
    let a = analyse(&set);
    let s = scenario(&a, "dummy");
    for (row, c) in (1..).zip(&s.contestants) {
        assert!(
            c.rank <= row && row <= c.rank_worst,
            "{} at row {}: {}–{}",
            c.name,
            row,
            c.rank,
            c.rank_worst
        );
    }
    for w in s.contestants.windows(2) {
        assert!(w[0].throughput.mean >= w[1].throughput.mean, "{} above {}", w[0].name, w[1].name);
    }
    assert_eq!(rank_of(s, "e"), (5, 5), "decidedly last");
}

/// With three runs the outlier test is not applied (its score swings with
/// one value: 1,572 against 1,227 and 1,259 was flagged, 256 against 3,847
/// and 2,914 was not); a wide spread is said as it is instead.
#[test]
fn three_runs_are_too_few_to_call_one_an_outlier() {
    let mut runs = runs_of("a", &[1_572.0, 1_227.0, 1_259.0]);
    runs.extend(runs_of("b", &[256.0, 3_847.0, 2_914.0]));
    let set = result_set(
        "r",
        vec![contestant("a", "dummy", None, None), contestant("b", "dummy", None, None)],
        &runs,
    );
    let a = analyse(&set);
    for c in &scenario(&a, "dummy").contestants {
        assert!(c.throughput.runs.iter().all(|p| !p.outlier), "{}: {:?}", c.name, c.throughput.runs);
        assert!(
            c.warnings.iter().any(|w| w.contains("with fewer than 5 runs no run can be called an outlier")),
            "{}: {:?}",
            c.name,
            c.warnings
        );
    }
    // Five runs: the odd one is named.
    let runs = runs_of("c", &[1_000.0, 1_010.0, 990.0, 1_005.0, 400.0]);
    let set = result_set("r", vec![contestant("c", "dummy", None, None)], &runs);
    let a = analyse(&set);
    let c = &scenario(&a, "dummy").contestants[0];
    assert!(
        c.throughput.runs.iter().any(|p| p.outlier && p.repetition == Some(5)),
        "{:?}",
        c.throughput.runs
    );
}

/// Capacity searches whose rates are lower bounds (the generator saturated)
/// rank by CPU per correct answer, and say so; the rates show as minimums.
#[test]
fn lower_bound_rates_rank_by_cost_per_request() {
    let mut runs = runs_of("lean", &[40_000.0, 40_500.0, 39_800.0]);
    runs.extend(runs_of("heavy", &[39_000.0, 39_400.0, 38_900.0]));
    let mut set = result_set(
        "r",
        vec![contestant("lean", "dummy", None, None), contestant("heavy", "dummy", None, None)],
        &runs,
    );
    for r in &mut set.runs {
        let lean = r.label.contestant.as_deref() == Some("lean");
        r.find_max = Some(stackbench_record::Search {
            slo: vec!["p99<10ms".into()],
            precision: 0.05,
            step_s: 5.0,
            steps: Vec::new(),
            sustained_rps: Some(r.summary.ok_rps),
            lower_bound: lean,
            broke_at_rps: None,
            broke: None,
            bracket: None,
            ended: if lean { "saturated" } else { "converged" }.into(),
        });
        // heavy burns three times the CPU for about the same rate.
        if !lean {
            for p in &mut r.samples.as_mut().unwrap().points {
                p.cpu_percent *= 3.0;
            }
        }
    }
    let a = analyse(&set);
    let s = scenario(&a, "dummy");
    assert_eq!(s.ranked_by, stackbench_report::RankedBy::CostPerRequest);
    assert_eq!(s.contestants[0].name, "lean", "cheaper per answer ranks first");
    let st = &s.statements[0];
    assert!(
        st.text.starts_with("'heavy' used 3")
            && st.text.contains("times the CPU per correct answer of 'lean'"),
        "{}",
        st.text
    );
    assert!(s.notes.iter().any(|n| n.starts_with("Ranked by CPU per correct answer")), "{:?}", s.notes);
    assert!(stackbench_report::throughput_cell(&s.contestants[0]).starts_with("≥ "));
}

/// A search in which not even the lowest rate tried met the objectives counts
/// that rate, an upper bound: the table marks it `≤`, the contestant says in
/// how many runs, and a note says what `≤` means.
#[test]
fn searches_that_met_nothing_are_upper_bounds_and_say_so() {
    let mut runs = runs_of("jit", &[900.0, 30_000.0, 31_000.0]);
    runs.extend(runs_of("steady", &[20_000.0, 20_400.0, 19_900.0]));
    let mut set = result_set(
        "r",
        vec![contestant("jit", "dummy", None, None), contestant("steady", "dummy", None, None)],
        &runs,
    );
    for r in &mut set.runs {
        let unmet = r.label.contestant.as_deref() == Some("jit") && r.summary.ok_rps < 1000.0;
        r.find_max = Some(stackbench_record::Search {
            slo: vec!["p99<10ms".into()],
            precision: 0.05,
            step_s: 1.0,
            steps: Vec::new(),
            sustained_rps: (!unmet).then_some(r.summary.ok_rps),
            lower_bound: false,
            broke_at_rps: unmet.then_some(900.0),
            broke: unmet.then(|| "p99 14.2 ms, not < 10 ms".to_owned()),
            bracket: None,
            ended: if unmet { "nothing_met" } else { "converged" }.into(),
        });
    }
    let a = analyse(&set);
    let s = scenario(&a, "dummy");
    let jit = s.contestants.iter().find(|c| c.name == "jit").unwrap();
    let steady = s.contestants.iter().find(|c| c.name == "steady").unwrap();
    assert!(stackbench_report::throughput_cell(jit).starts_with("≤ "));
    assert!(!stackbench_report::throughput_cell(steady).starts_with('≤'));
    assert!(
        jit.warnings
            .iter()
            .any(|w| w.starts_with("in 1 of 3 runs not even the lowest rate tried met p99<10ms")),
        "{:?}",
        jit.warnings
    );
    assert!(s.notes.iter().any(|n| n.starts_with("≤ marks an upper bound")), "{:?}", s.notes);
}

/// A result set from precision-driven rounds is analysed at the per-look level
/// it recorded: every ratio's interval is at least as wide as at 95%, and each
/// pair that is not known to the precision gets a sentence.
#[test]
fn precision_rounds_are_judged_at_their_per_look_level() {
    let mut set = three_kings("precision");
    let plain = analyse(&set);
    set.stopping = Some(stackbench_record::Stopping {
        precision: 0.03,
        max_repetitions: 3,
        max_time_s: None,
        method: "bonferroni".into(),
        planned_looks: 5,
        first_look: 3,
        look_confidence: 0.99,
        rounds: 3,
        reason: "max_repetitions".into(),
        seed: 1,
        orders: vec![],
    });
    let a = analyse(&set);
    for (s, p) in a.scenarios.iter().zip(&plain.scenarios) {
        for (c, d) in s.contestants.iter().zip(&p.contestants) {
            let (Some(wide), Some(narrow)) =
                (c.ratio_to_baseline.and_then(|r| r.ci), d.ratio_to_baseline.and_then(|r| r.ci))
            else {
                continue;
            };
            assert!(
                wide.lo <= narrow.lo + 1e-12 && narrow.hi <= wide.hi + 1e-12,
                "{}: {wide:?} {narrow:?}",
                c.name
            );
        }
        let n = s.contestants.len();
        assert_eq!(s.precision.len(), n * (n - 1) / 2, "{}", s.name);
    }
    let st = a.stopping.clone().unwrap();
    let unmet: usize = a
        .scenarios
        .iter()
        .flat_map(|s| &s.precision)
        .filter(|p| p.verdict != stackbench_report::stats::sequential::PairVerdict::Met)
        .count();
    assert!(unmet > 0);
    assert_eq!(st.undecided.len(), unmet);
    assert!(!st.met);
    assert!(
        st.summary.starts_with("±3% not met after 3 rounds: the budget of 3 rounds is spent"),
        "{}",
        st.summary
    );
    // The count of pairs decided agrees with what the rounds printed as they went.
    let pairs: Vec<_> = a.scenarios.iter().flat_map(|s| &s.precision).collect();
    let decided = pairs.iter().filter(|p| stackbench_report::decided_sentence(p, false).is_some()).count();
    let counts = format!("{decided} of {} pairs decided, {unmet} wider than ±3%", pairs.len());
    assert!(st.summary.contains(&counts), "{} lacks {counts}", st.summary);
    let render = |f| stackbench_report::render(&a, f, &stackbench_report::RenderOptions::default());
    let text = render(stackbench_report::Format::Terminal);
    assert!(text.contains(&format!("precision: {}", st.summary)), "{text}");
    assert!(text.contains(&st.undecided[0]), "{text}");
    let md = render(stackbench_report::Format::Markdown);
    assert!(md.contains("**Precision:** ±3% not met after 3 rounds"), "{md}");
    let html = render(stackbench_report::Format::Html);
    assert!(html.contains("<p class=\"warning\">Precision: ±3% not met after 3 rounds"), "{html}");
    let json = render(stackbench_report::Format::Json);
    assert!(json.contains("\"look_confidence\": 0.99") && json.contains("\"verdict\": \""), "{json}");
}

#[test]
fn a_scenario_files_requests_by_name_reach_every_format() {
    use stackbench_record::{Named, new_histogram};
    use stackbench_report::{Format, RenderOptions, render};
    let runs: Vec<RunSpec> = (1..=3).map(|k| RunSpec::new("gin", "todo", k, 1000.0)).collect();
    let mut set = result_set("r", vec![contestant("gin", "todo", None, None)], &runs);
    for (k, r) in set.runs.iter_mut().enumerate() {
        let named = |name: &str, requests: u64, failed: u64, us: u64| {
            let mut h = new_histogram();
            h.record_n(us * (k as u64 + 1), requests).unwrap();
            let errors = [("check".to_owned(), failed)].into_iter().filter(|e| e.1 > 0).collect();
            Named::from_parts(name, &h, requests, requests - failed, errors, r.summary.duration_s)
        };
        r.per_request =
            vec![named("POST /todos", 2000, 0, 400), named("GET /todos/{{todo_id}}", 1000, 10, 300)];
        r.iterations = Some(named("iteration", 1000, 10, 900));
    }
    let a = analyse(&set);
    let gin = &scenario(&a, "todo").contestants[0];
    let get = &gin.per_request[1];
    assert_eq!((get.name.as_str(), get.requests, get.error_count()), ("GET /todos/{{todo_id}}", 3000, 30));
    // Merged over the runs: the rate is the mean rate, the percentiles those of every request.
    assert!((get.rps - 100.0).abs() < 1e-6, "{get:?}");
    assert_eq!(get.latency.max_us, 900);
    assert_eq!(gin.iterations.as_ref().unwrap().requests, 3000);
    let options = RenderOptions::default();
    for format in [Format::Terminal, Format::Markdown, Format::Html, Format::Csv, Format::Json] {
        let text = render(&a, format, &options);
        for name in ["POST /todos", "GET /todos/{{todo_id}}", "iteration"] {
            // Markdown escapes what would start emphasis.
            let name = if format == Format::Markdown { name.replace('_', "\\_") } else { name.to_owned() };
            assert!(text.contains(&name), "{format:?} lacks {name:?}:\n{text}");
        }
    }
    let csv = render(&a, Format::Csv, &options);
    let row = csv.lines().find(|l| l.ends_with(",GET /todos/{{todo_id}}")).unwrap();
    assert!(row.starts_with("todo,gin,") && row.contains(",request,,,,,3,99,"), "{row}");
    let md = render(&a, Format::Markdown, &options);
    assert!(md.contains("| gin | GET /todos/{{todo\\_id}} | 3000 | 100 |"), "{md}");
    assert!(md.contains("| 1.00% |"), "{md}");
}

#[test]
fn time_to_steady_state_in_the_warmup_is_shown_in_every_format() {
    use stackbench_report::{Format, RenderOptions, render};
    let mut set = three_kings("r");
    for r in set.runs.iter_mut().filter(|r| r.label.scenario.as_deref() == Some("dummy")) {
        let gin = r.label.contestant.as_deref() == Some("gin");
        let mut summary = r.summary.clone();
        summary.duration_s = if gin { 30.0 } else { 9.0 };
        summary.ok_rps *= if gin { 0.5 } else { 0.9 };
        r.warmup = Some(stackbench_record::Warmup {
            auto: true,
            max_s: Some(30.0),
            steady_from_s: (!gin).then_some(3),
            never_steady: gin,
            summary,
            errors: std::collections::BTreeMap::new(),
            timeline: Vec::new(),
        });
    }
    let a = analyse(&set);
    let s = scenario(&a, "dummy");
    let gin = s.contestants.iter().find(|c| c.name == "gin").unwrap();
    let w = gin.warmup.as_ref().expect("gin's warm-ups");
    assert_eq!((w.never, w.median_steady_s), (w.runs, None));
    assert!(gin.warnings.iter().any(|x| x.starts_with("warm-up never steady in")), "{:?}", gin.warnings);
    let plug = s.contestants.iter().find(|c| c.name == "plug").unwrap();
    assert_eq!(plug.warmup.as_ref().unwrap().median_steady_s, Some(3.0));
    let options = RenderOptions { color: false };
    for format in [Format::Terminal, Format::Markdown, Format::Html] {
        let text = render(&a, format, &options);
        assert!(text.contains("plug steady after 3 s, warm-up at 90% of the measured rate"), "{format:?}");
        assert!(text.contains("gin never steady within 30 s, warm-up at 50%"), "{format:?}");
    }
    let json: serde_json::Value = serde_json::from_str(&render(&a, Format::Json, &options)).unwrap();
    let dummy = json["scenarios"].as_array().unwrap().iter().find(|s| s["name"] == "dummy").unwrap();
    let gin = dummy["contestants"].as_array().unwrap().iter().find(|c| c["name"] == "gin").unwrap();
    assert_eq!(gin["warmup"]["never"], gin["warmup"]["runs"]);
    assert_eq!(gin["warmup"]["median_steady_s"], serde_json::Value::Null);
}
