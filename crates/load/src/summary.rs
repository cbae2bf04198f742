//! What a person reads after a run: the terminal summary in the original experiments' terms
//! (total requests, req/s and req/min, latency avg/stdev/min/p50/p90/p95/
//! p99/p99.9/max, errors by kind, bytes/s), the notes that keep it honest
//! (closed-model latency is not corrected for coordinated omission; a
//! saturated generator measures itself), the warm-up's own figures and when it
//! became steady, the thresholds, and the timeline as CSV for spreadsheets.

use std::fmt::Write as _;

use stackbench_record::fmt::{self, Paint};
use stackbench_record::{Connections, Latency, Model, RunRecord, Warmup};

fn fmt_bytes_per_s(b: f64) -> String {
    format!("{}/s", fmt::bytes(b))
}

fn latency_lines(out: &mut String, title: &str, l: &Latency) {
    let _ = writeln!(
        out,
        "  {title:<13} avg {}  stdev {}  min {}",
        fmt::micros(l.mean_us),
        fmt::micros(l.stdev_us),
        fmt::micros(l.min_us as f64)
    );
    let _ = writeln!(
        out,
        "  {:<13} p50 {}  p90 {}  p95 {}  p99 {}  p99.9 {}  max {}",
        "",
        fmt::micros(l.p50_us as f64),
        fmt::micros(l.p90_us as f64),
        fmt::micros(l.p95_us as f64),
        fmt::micros(l.p99_us as f64),
        fmt::micros(l.p999_us as f64),
        fmt::micros(l.max_us as f64)
    );
}

/// The warm-up in one line: how it ended, and its own figures.
pub fn warmup_line(w: &Warmup, p: &Paint) -> String {
    let lasted = format!("{:.0} s", w.summary.duration_s);
    let ended = match (w.auto, w.steady_from_s, w.never_steady) {
        (true, Some(s), _) => format!("auto, steady from {s} s, measured from {lasted}"),
        (true, None, true) => p.yellow(&format!(
            "auto: never steady within {:.0} s, measured from then",
            w.max_s.unwrap_or(w.summary.duration_s)
        )),
        (true, None, false) => format!("auto, stopped after {lasted}"),
        (false, Some(s), _) => format!("{lasted}, steady from {s} s"),
        (false, None, true) => p.yellow(&format!("{lasted}, never steady: a longer warm-up would help")),
        (false, None, false) => lasted,
    };
    let l = &w.summary.latency;
    format!(
        "{ended}; {} requests, {:.1} req/s, p50 {}, p99 {}, {} errors",
        w.summary.requests,
        w.summary.rps,
        fmt::micros(l.p50_us as f64),
        fmt::micros(l.p99_us as f64),
        w.summary.errors
    )
}

/// What the connections cost: TLS as agreed, the handshakes (full and resumed), the
/// connects, and the requests that opened their connection with and without that setup.
fn connection_lines(out: &mut String, c: &Connections, p: &Paint) {
    let pct =
        |l: &Latency| format!("p50 {}, p99 {}", fmt::micros(l.p50_us as f64), fmt::micros(l.p99_us as f64));
    if let Some(t) = &c.tls {
        let alpn = t.alpn.as_deref().map(|a| format!(", ALPN {a}")).unwrap_or_default();
        let checked = if t.verified_by.contains("--insecure") {
            p.yellow("certificate not checked (--insecure)")
        } else {
            format!("certificate checked against {}", t.verified_by)
        };
        let _ = writeln!(out, "  {:<13} {}{alpn}; {checked}", "tls", t.parameters());
        for other in &t.others {
            let _ = writeln!(
                out,
                "  {:<13} {}",
                "",
                p.yellow(&format!("also agreed by some connections: {other}"))
            );
        }
        let failed = if t.failed > 0 {
            format!(", {}", p.red(&format!("{} failed", t.failed)))
        } else {
            String::new()
        };
        let resumption = if t.resumption { "" } else { " (--no-resume)" };
        let _ = writeln!(
            out,
            "  {:<13} {} full, {} resumed{resumption}{failed}; {}",
            "handshakes",
            t.full,
            t.resumed,
            pct(&t.handshake)
        );
    }
    let _ = writeln!(out, "  {:<13} {} opened; connect {}", "connections", c.opened, pct(&c.connect));
    if let Some(f) = &c.first_requests {
        let setup = if c.tls.is_some() { "connect and handshake" } else { "connect" };
        let _ = writeln!(
            out,
            "  {:<13} {} requests opened their connection: {} with the {setup} (as counted above), {} without",
            "new conn.",
            f.requests,
            pct(&f.with_setup),
            pct(&f.without_setup)
        );
    }
}

/// The terminal summary of a run (`color`: ANSI colours for a terminal).
pub fn summary_text(r: &RunRecord, color: bool) -> String {
    let p = Paint(color);
    let s = &r.summary;
    let mut out = String::new();
    header_lines(&mut out, r, &p);
    count_lines(&mut out, r, &p);
    if s.latency.count > 0 {
        latency_lines(&mut out, "latency", &s.latency);
    } else {
        let _ = writeln!(out, "  {:<13} no answers", "latency");
    }
    if let Some(sl) = s.service_latency.as_ref().filter(|l| l.count > 0) {
        latency_lines(&mut out, "service time", sl);
    }
    if let Some(c) = &r.connections {
        connection_lines(&mut out, c, &p);
    }
    // Requests still under way when the run ended (cut off at its end, at --timeout, or by a
    // stop) are in no count above; say how many rather than let them vanish.
    if let Some(left) = r.timeline.last().map(|row| row.in_flight).filter(|&n| n > 0) {
        let _ = writeln!(
            out,
            "  {:<13} {left} still in flight at the end, in no count above (neither ok nor an error)",
            "unfinished",
        );
    }
    if s.late > 0 {
        let _ = writeln!(
            out,
            "  {:<13} {} due but not sent on time (--max-in-flight reached); counted as errors",
            "late",
            p.red(&s.late.to_string())
        );
    }
    let _ = writeln!(
        out,
        "  {:<13} {} received, {} sent",
        "transfer",
        fmt_bytes_per_s(s.bytes_received as f64 / s.duration_s),
        fmt_bytes_per_s(s.bytes_sent as f64 / s.duration_s)
    );
    if s.checks.performed > 0 || r.params.check_every > 0 {
        let every = match r.params.check_every {
            1 => "every answer".to_owned(),
            k => format!("every {k}th answer"),
        };
        let failed = if s.checks.failed == 0 { p.green("0") } else { p.red(&s.checks.failed.to_string()) };
        let _ =
            writeln!(out, "  {:<13} {} performed ({every}), {failed} failed", "checks", s.checks.performed);
    }
    per_request_lines(&mut out, r, &p);
    generator_lines(&mut out, r, &p);
    outcome_lines(&mut out, r, &p);
    out
}

/// What was asked of the load: the model (with its stages, or a shard's share of it).
fn model_phrase(r: &RunRecord) -> String {
    let model = match &r.params.model {
        Model::Closed { connections, think_ms, .. } => {
            let think = if *think_ms > 0 { format!(", think {think_ms}ms") } else { String::new() };
            format!("closed model, {connections} users{think}")
        }
        Model::Open { rate, max_in_flight } if r.params.stages.is_empty() => {
            format!("open model, {rate} req/s, max {max_in_flight} in flight")
        }
        Model::Open { rate, max_in_flight } => {
            format!("open model from {rate} req/s, max {max_in_flight} in flight")
        }
    };
    let model = if r.params.stages.is_empty() {
        model
    } else {
        let list: Vec<String> = r
            .params
            .stages
            .iter()
            .map(|st| {
                format!(
                    "{}:{}",
                    crate::values::Dur(std::time::Duration::from_millis(st.duration_ms)),
                    st.target
                )
            })
            .collect();
        let unit = if matches!(r.params.model, Model::Open { .. }) { "req/s" } else { "users" };
        format!("{model}, stages {} ({unit})", list.join(","))
    };
    // A shard's users are its own share; its rate is the whole load's schedule, of which it
    // sends every N-th request.
    match r.params.extra.get("shard").and_then(|v| v.as_str()) {
        Some(shard) if matches!(r.params.model, Model::Open { .. }) => {
            let n = shard.split('/').nth(1).unwrap_or("N");
            format!("shard {shard} (every {n}th request) of: {model}")
        }
        Some(shard) => format!("shard {shard}, its share: {model}"),
        None => model,
    }
}

/// The transport as a person says it (`HTTP/2 over TLS`).
fn transport_phrase(r: &RunRecord) -> &str {
    let tls = r.params.url.trim_start().to_ascii_lowercase().starts_with("https://");
    match (r.params.transport.as_str(), tls) {
        ("http1", false) => "HTTP/1.1",
        ("http1", true) => "HTTP/1.1 over TLS",
        ("h2c", false) => "h2c",
        ("h2c", true) => "HTTP/2 over TLS",
        ("grpc", false) => "gRPC (h2c)",
        ("grpc", true) => "gRPC (HTTP/2 over TLS)",
        (other, _) => other,
    }
}

/// The URL, what was asked, and whether the numbers are a whole result.
fn header_lines(out: &mut String, r: &RunRecord, p: &Paint) {
    let s = &r.summary;
    let (model, transport) = (model_phrase(r), transport_phrase(r));
    let scenario = r.params.scenario.as_deref().map(|s| format!(", scenario {s}")).unwrap_or_default();
    let _ = writeln!(out, "{}", p.bold(&format!("stackbench load {}", r.params.url)));
    let mut io =
        r.params.extra.get("io").and_then(|v| v.as_str()).map(|io| format!(", {io}")).unwrap_or_default();
    if let Some(us) = r.params.extra.get("timer_slack_us").and_then(serde_json::Value::as_u64) {
        let _ = write!(io, ", timer slack {us} µs");
    }
    let _ = writeln!(
        out,
        "  {model}, {transport}{scenario}, {:.1}s measured, {} thread{}{io}",
        s.duration_s,
        r.params.threads,
        if r.params.threads == 1 { "" } else { "s" }
    );
    if let Some(w) = &r.warmup {
        let _ = writeln!(out, "  {:<13} {}", "warm-up", warmup_line(w, p));
    }
    if let Some(invalid) = &r.invalid {
        let _ = writeln!(
            out,
            "  {}",
            p.red(&format!("FAILED ({}): {}; these numbers are not a result", invalid.kind, invalid.reason))
        );
    }
    if r.interrupted && s.requests == 0 && s.duration_s < 1e-3 {
        let _ = writeln!(out, "  {}", p.yellow("interrupted before the load started: nothing was sent"));
    } else if r.interrupted {
        let _ = writeln!(out, "  {}", p.yellow("interrupted: these numbers cover the part that ran"));
    }
}

/// Requests, how many were ok, and the errors by kind.
fn count_lines(out: &mut String, r: &RunRecord, p: &Paint) {
    let s = &r.summary;
    let _ = writeln!(
        out,
        "  {:<13} {} total, {} req/s, {:.0} req/min",
        "requests",
        p.bold(&s.requests.to_string()),
        p.bold(&format!("{:.1}", s.rps)),
        s.rps * 60.0
    );
    let ok_pct = if s.requests == 0 { 0.0 } else { 100.0 * s.ok as f64 / s.requests as f64 };
    let _ = writeln!(out, "  {:<13} {} ({ok_pct:.2}%), {:.1} req/s", "ok", s.ok, s.ok_rps);
    if s.errors == 0 {
        let _ = writeln!(out, "  {:<13} {}", "errors", p.green("0"));
    } else {
        let mut kinds: Vec<_> = r.errors.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let list: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(out, "  {:<13} {} ({})", "errors", p.red(&s.errors.to_string()), list.join(", "));
    }
    if r.errors.contains_key(&stackbench_record::ErrorKind::TlsAnswer.key()) {
        let server = r.params.url.split("://").nth(1).and_then(|rest| rest.split('/').next()).unwrap_or("");
        let _ = writeln!(
            out,
            "  {:<13} the server at {server} answered with a TLS record (tls_answer): it speaks TLS; use https://",
            "",
        );
    }
    // A scenario file's requests that could not be written (counted `check` above): why.
    for n in &r.per_request {
        for e in &n.not_sent {
            let count = p.red(&e.requests.to_string());
            let _ = writeln!(out, "  {:<13} {count} × {}: {}", "not sent", n.name, e.reason);
        }
    }
}

/// The generator's own cost, what the latency means in this model, and a saturated generator.
fn generator_lines(out: &mut String, r: &RunRecord, p: &Paint) {
    let g = &r.generator;
    let _ = writeln!(
        out,
        "  {:<13} {:.2} CPU-s ({:.2} user, {:.2} system) on {} core{}, {:.0}% busy",
        "generator",
        g.cpu_user_s + g.cpu_system_s,
        g.cpu_user_s,
        g.cpu_system_s,
        g.cores,
        if g.cores == 1 { "" } else { "s" },
        g.utilization * 100.0
    );
    if r.summary.corrected_for_coordinated_omission {
        let _ = writeln!(
            out,
            "  note: open model: latency counts from each request's intended send time (corrected for \
             coordinated omission); service time counts from the actual send."
        );
    } else {
        let _ = writeln!(
            out,
            "  note: closed model: latency counts from the actual send and is NOT corrected for coordinated \
             omission (a stalled server delays the requests that would have seen the stall); use --rate for \
             an open model."
        );
    }
    if g.saturated {
        let _ = writeln!(
            out,
            "  {}",
            p.yellow(&format!(
                "WARNING: the generator kept its {} core{} {:.0}% busy: these numbers may measure the \
                 generator, not the server. Give it more cores (--cpus) or less work.",
                g.cores,
                if g.cores == 1 { "" } else { "s" },
                g.utilization * 100.0
            ))
        );
    }
}

/// The `--threshold` outcomes and a capacity search's steps and sentence.
fn outcome_lines(out: &mut String, r: &RunRecord, p: &Paint) {
    for t in &r.thresholds {
        let mark = if t.passed { p.green("pass") } else { p.red("FAIL") };
        let _ = writeln!(out, "  threshold {mark} {} (measured {})", t.expression, trim_float(t.actual));
    }
    if let Some(search) = &r.find_max {
        let _ = writeln!(out, "{}", p.bold("capacity search (the numbers above are its confirming step)"));
        for st in &search.steps {
            let _ = writeln!(out, "  {}", step_line(st));
        }
        let line = crate::findmax::sentence(search, r);
        let _ =
            writeln!(out, "  {}", if search.sustained_rps.is_some() { p.bold(&line) } else { p.red(&line) });
    }
}

/// A scenario file's requests by name and its iterations: one row each (none when they
/// would restate the totals).
fn per_request_lines(out: &mut String, r: &RunRecord, p: &Paint) {
    if !stackbench_record::Named::adds_to_totals(&r.per_request, r.iterations.as_ref()) {
        return;
    }
    let width = r.per_request.iter().map(|n| n.name.chars().count()).max().unwrap_or(0).max(9);
    let _ = writeln!(
        out,
        "  {:<width$}  {:>9} {:>9} {:>9} {:>9} {:>9}  errors",
        "by request", "requests", "req/s", "p50", "p99", "max"
    );
    for n in r.per_request.iter().chain(&r.iterations) {
        let errors = if n.error_count() == 0 {
            p.green("0")
        } else {
            let list: Vec<String> = n.errors.iter().map(|(k, v)| format!("{k} {v}")).collect();
            p.red(&format!("{} ({})", n.error_count(), list.join(", ")))
        };
        let l = &n.latency;
        let lat = |us: u64| if l.count == 0 { "-".to_owned() } else { fmt::micros(us as f64) };
        let _ = writeln!(
            out,
            "  {:<width$}  {:>9} {:>9.1} {:>9} {:>9} {:>9}  {errors}",
            n.name,
            n.requests,
            n.rps,
            lat(l.p50_us),
            lat(l.p99_us),
            lat(l.max_us)
        );
    }
}

/// One step of a capacity search, as the live line and the summary print it.
pub fn step_line(st: &stackbench_record::SearchStep) -> String {
    let what = if st.phase == "probe" {
        format!("{:<7} {:>9} users", st.phase, st.rate)
    } else {
        format!("{:<7} {:>9} req/s", st.phase, format!("{:.0}", st.rate))
    };
    let verdict = if st.passed { "ok".to_owned() } else { format!("broke: {}", st.broke.join("; ")) };
    format!(
        "{what} -> {:.0} req/s, p50 {}, p99 {}, {} errors, generator {:.0}% busy: {verdict}",
        st.achieved_rps,
        fmt::micros(st.p50_us as f64),
        fmt::micros(st.p99_us as f64),
        st.errors,
        st.generator_utilization * 100.0
    )
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The timeline as CSV: one row per second.
pub fn timeline_csv(r: &RunRecord) -> String {
    let mut kinds: Vec<&String> = r.errors.keys().collect();
    kinds.sort();
    let mut out = String::from("t_s,completed,errors,p50_us,p90_us,p99_us,max_us,in_flight,bytes_received");
    for k in &kinds {
        let _ = write!(out, ",errors_{k}");
    }
    out.push('\n');
    for s in &r.timeline {
        let errors: u64 = s.errors.values().sum();
        let _ = write!(
            out,
            "{},{},{errors},{},{},{},{},{},{}",
            s.t, s.completed, s.p50_us, s.p90_us, s.p99_us, s.max_us, s.in_flight, s.bytes_received
        );
        for k in &kinds {
            let _ = write!(out, ",{}", s.errors.get(*k).copied().unwrap_or(0));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::BTreeMap;

    use stackbench_record::{
        Checks, Environment, GeneratorUsage, Label, Latency, LoadParams, Second, Summary, ThresholdOutcome,
    };

    use super::*;

    fn latency(scale: u64) -> Latency {
        Latency {
            count: 1000,
            min_us: 40 * scale,
            mean_us: 250.5 * scale as f64,
            stdev_us: 80.25 * scale as f64,
            p50_us: 230 * scale,
            p90_us: 400 * scale,
            p95_us: 510 * scale,
            p99_us: 900 * scale,
            p999_us: 4_100 * scale,
            max_us: 9_400 * scale,
        }
    }

    pub(crate) fn record(model: Model) -> RunRecord {
        let open = matches!(model, Model::Open { .. });
        RunRecord {
            schema: 1,
            tool_version: "0.1.0".into(),
            started_at_ms: 0,
            label: Label::default(),
            params: LoadParams {
                url: "http://127.0.0.1:8080/events".into(),
                transport: "http1".into(),
                model,
                stages: Vec::new(),
                duration_ms: Some(10_000),
                requests: None,
                warmup_ms: 0,
                timeout_ms: 10_000,
                threads: 1,
                scenario: Some("dummy".into()),
                seed: 1,
                check_every: 1,
                extra: BTreeMap::new(),
            },
            environment: Environment::default(),
            summary: Summary {
                duration_s: 10.0,
                requests: 1010,
                ok: 1000,
                errors: 10,
                rps: 101.0,
                ok_rps: 100.0,
                bytes_sent: 300_000,
                bytes_received: 150_000,
                latency: latency(1),
                service_latency: open.then(|| latency(1)),
                late: if open { 4 } else { 0 },
                checks: Checks { performed: 1000, failed: 0 },
                corrected_for_coordinated_omission: open,
            },
            histogram: String::new(),
            service_histogram: None,
            errors: if open {
                BTreeMap::from([("late".into(), 4), ("http_503".into(), 6)])
            } else {
                BTreeMap::from([("reset".into(), 4), ("http_503".into(), 6)])
            },
            timeline: vec![Second {
                t: 0,
                completed: 101,
                errors: BTreeMap::from([("http_503".into(), 6)]),
                p50_us: 230,
                p90_us: 400,
                p99_us: 900,
                max_us: 9_400,
                in_flight: 3,
                bytes_received: 15_000,
                at_ms: None,
                histogram: None,
            }],
            generator: GeneratorUsage {
                cpu_user_s: 9.1,
                cpu_system_s: 0.5,
                cores: 1,
                utilization: 0.96,
                saturated: true,
            },
            samples: None,
            thresholds: vec![
                ThresholdOutcome { expression: "p99<1ms".into(), actual: 0.9, passed: true },
                ThresholdOutcome { expression: "errors<0.5%".into(), actual: 0.990_099, passed: false },
            ],
            interrupted: false,
            invalid: None,
            find_max: None,
            per_request: Vec::new(),
            iterations: None,
            warmup: None,
            connections: None,
            companion: None,
        }
    }

    #[test]
    fn closed_model_summary() {
        let r = record(Model::Closed { connections: 50, think_ms: 100, ramp_up_ms: 0 });
        insta::assert_snapshot!(summary_text(&r, false));
    }

    #[test]
    fn open_model_summary() {
        let r = record(Model::Open { rate: 101.0, max_in_flight: 1000 });
        insta::assert_snapshot!(summary_text(&r, false));
    }

    #[test]
    fn the_warmup_says_how_it_ended() {
        let mut r = record(Model::Closed { connections: 50, think_ms: 0, ramp_up_ms: 0 });
        let summary = Summary { duration_s: 9.0, requests: 900, rps: 100.0, ..r.summary.clone() };
        let w = Warmup {
            auto: true,
            max_s: Some(30.0),
            steady_from_s: Some(3),
            never_steady: false,
            summary,
            errors: BTreeMap::new(),
            timeline: Vec::new(),
        };
        r.warmup = Some(w.clone());
        let text = summary_text(&r, false);
        assert!(
            text.contains(
                "  warm-up       auto, steady from 3 s, measured from 9 s; 900 requests, 100.0 req/s, p50 "
            ),
            "{text}"
        );
        let never = Warmup { steady_from_s: None, never_steady: true, ..w.clone() };
        assert!(
            warmup_line(&never, &Paint(false))
                .starts_with("auto: never steady within 30 s, measured from then")
        );
        let fixed = Warmup { auto: false, max_s: None, ..w };
        assert!(warmup_line(&fixed, &Paint(false)).starts_with("9 s, steady from 3 s; 900 requests"));
    }

    #[test]
    fn colour_only_when_asked() {
        let r = record(Model::Open { rate: 101.0, max_in_flight: 1000 });
        assert!(!summary_text(&r, false).contains('\x1b'));
        assert!(summary_text(&r, true).contains("\x1b[31m"));
    }

    #[test]
    fn timeline_as_csv() {
        let r = record(Model::Closed { connections: 50, think_ms: 0, ramp_up_ms: 0 });
        insta::assert_snapshot!(timeline_csv(&r));
    }
}
