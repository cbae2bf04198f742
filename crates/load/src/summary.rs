//! What a person reads after a run: the terminal summary in the seeds' terms
//! (total requests, req/s and req/min, latency avg/stdev/min/p50/p90/p95/
//! p99/p99.9/max, errors by kind, bytes/s), the notes that keep it honest
//! (closed-model latency is not corrected for coordinated omission; a
//! saturated generator measures itself), the thresholds, and the timeline as
//! CSV for spreadsheets.

use std::fmt::Write as _;

use stackbench_record::{Latency, Model, RunRecord};

struct Paint {
    on: bool,
}

impl Paint {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.on { format!("\x1b[{code}m{s}\x1b[0m") } else { s.to_owned() }
    }
    fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
    fn red(&self, s: &str) -> String {
        self.wrap("31", s)
    }
    fn green(&self, s: &str) -> String {
        self.wrap("32", s)
    }
    fn yellow(&self, s: &str) -> String {
        self.wrap("33", s)
    }
}

/// A latency in µs as a person reads it: `812µs`, `8.10ms`, `1.23s`.
pub fn fmt_us(us: f64) -> String {
    if us < 1_000.0 {
        format!("{us:.0}µs")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1_000.0)
    } else {
        format!("{:.2}s", us / 1_000_000.0)
    }
}

fn fmt_bytes_per_s(b: f64) -> String {
    if b < 1024.0 {
        format!("{b:.0} B/s")
    } else if b < 1024.0 * 1024.0 {
        format!("{:.1} KiB/s", b / 1024.0)
    } else {
        format!("{:.2} MiB/s", b / (1024.0 * 1024.0))
    }
}

fn latency_lines(out: &mut String, title: &str, l: &Latency) {
    let _ = writeln!(
        out,
        "  {title:<13} avg {}  stdev {}  min {}",
        fmt_us(l.mean_us),
        fmt_us(l.stdev_us),
        fmt_us(l.min_us as f64)
    );
    let _ = writeln!(
        out,
        "  {:<13} p50 {}  p90 {}  p95 {}  p99 {}  p99.9 {}  max {}",
        "",
        fmt_us(l.p50_us as f64),
        fmt_us(l.p90_us as f64),
        fmt_us(l.p95_us as f64),
        fmt_us(l.p99_us as f64),
        fmt_us(l.p999_us as f64),
        fmt_us(l.max_us as f64)
    );
}

/// The terminal summary of a run (`color`: ANSI colours for a terminal).
#[allow(clippy::too_many_lines)] // one line of output after another
pub fn summary_text(r: &RunRecord, color: bool) -> String {
    let p = Paint { on: color };
    let s = &r.summary;
    let mut out = String::new();
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
                    crate::parse::Dur(std::time::Duration::from_millis(st.duration_ms)),
                    st.target
                )
            })
            .collect();
        let unit = if matches!(r.params.model, Model::Open { .. }) { "req/s" } else { "users" };
        format!("{model}, stages {} ({unit})", list.join(","))
    };
    let transport = match r.params.transport.as_str() {
        "http1" => "HTTP/1.1",
        "h2c" => "h2c",
        "grpc" => "gRPC (h2c)",
        other => other,
    };
    let scenario = r.params.scenario.as_deref().map(|s| format!(", scenario {s}")).unwrap_or_default();
    let _ = writeln!(out, "{}", p.bold(&format!("stackbench load {}", r.params.url)));
    let _ = writeln!(
        out,
        "  {model}, {transport}{scenario}, {:.1}s measured, {} thread{}",
        s.duration_s,
        r.params.threads,
        if r.params.threads == 1 { "" } else { "s" }
    );
    if r.interrupted {
        let _ = writeln!(out, "  {}", p.yellow("interrupted: these numbers cover the part that ran"));
    }
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
    if s.latency.count > 0 {
        latency_lines(&mut out, "latency", &s.latency);
    } else {
        let _ = writeln!(out, "  {:<13} no answers", "latency");
    }
    if let Some(sl) = s.service_latency.as_ref().filter(|l| l.count > 0) {
        latency_lines(&mut out, "service time", sl);
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
    if s.corrected_for_coordinated_omission {
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
    for t in &r.thresholds {
        let mark = if t.passed { p.green("pass") } else { p.red("FAIL") };
        let _ = writeln!(out, "  threshold {mark} {} (measured {})", t.expression, trim_float(t.actual));
    }
    out
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
