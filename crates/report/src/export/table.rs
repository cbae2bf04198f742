//! The summary table every human-readable format prints per scenario (the
//! terminal, Markdown and HTML), so they never disagree about a column; and the
//! fixed-width layout of a text table (column widths, padding) that the
//! terminal's tables and a comparison's share.

use std::fmt::Write as _;

use crate::analysis::{ContestantReport, ScenarioReport};
pub use crate::cell::throughput;
use crate::fmt;

/// What an interval in a table or sentence means, said under each table.
pub const INTERVAL_CAPTION: &str = "95% interval: ± where both ends are as far away, else (lo..hi)";

/// How many columns the table has.
pub const COLUMNS: usize = 14;

/// Column headers.
pub const HEADERS: [&str; COLUMNS] = [
    "#",
    "contestant",
    "req/s",
    "req/min",
    "p50",
    "p95",
    "p99",
    "errors",
    "CPU p95",
    "CPU/1k req",
    "RSS peak",
    "cold start",
    "artifact",
    "code",
];

/// Columns holding numbers (right-aligned).
pub const NUMERIC: [bool; COLUMNS] =
    [true, false, true, true, true, true, true, true, true, true, true, true, true, true];

/// Columns of the by-request table (scenario files: each request name, then `iteration`).
pub const REQUEST_HEADERS: [&str; 7] = ["contestant", "request", "requests", "req/s", "p50", "p99", "errors"];

/// Columns of the by-request table holding numbers.
pub const REQUEST_NUMERIC: [bool; 7] = [false, false, true, true, true, true, true];

/// The by-request table's rows: per contestant, each request name and its iterations;
/// none for a contestant whose rows would restate its totals (one request per iteration,
/// one name: a built-in scenario's).
pub fn request_rows(s: &ScenarioReport) -> Vec<[String; 7]> {
    let mut rows = Vec::new();
    for c in &s.contestants {
        if !stackbench_record::Named::adds_to_totals(&c.per_request, c.iterations.as_ref()) {
            continue;
        }
        for n in c.per_request.iter().chain(&c.iterations) {
            let l = &n.latency;
            let lat = |us: u64| if l.count == 0 { "–".to_owned() } else { fmt::micros(us as f64) };
            let errors = if n.requests == 0 {
                "–".to_owned()
            } else {
                format!("{:.2}%", 100.0 * n.error_count() as f64 / n.requests as f64)
            };
            rows.push([
                c.name.clone(),
                n.name.clone(),
                n.requests.to_string(),
                fmt::rate(n.rps),
                lat(l.p50_us),
                lat(l.p99_us),
                errors,
            ]);
        }
    }
    rows
}

/// What the TLS table says, under or above it.
pub const TLS_CAPTION: &str = "TLS: what each contestant's connections agreed, and its handshakes; \
     TLS/cleartext is NAME-tls's mean throughput over NAME's, with its 95% interval";

/// Columns of the TLS table.
pub const TLS_HEADERS: [&str; 9] = [
    "contestant",
    "TLS/cleartext",
    "version",
    "cipher suite",
    "group",
    "ALPN",
    "handshakes",
    "handshake p50",
    "handshake p99",
];

/// Columns of the TLS table holding numbers.
pub const TLS_NUMERIC: [bool; 9] = [false, true, false, false, false, false, true, true, true];

/// The TLS table's rows: each contestant whose runs went over TLS, with the ratio to its
/// cleartext namesake where the scenario has one (`–` otherwise); none in the clear.
pub fn tls_rows(s: &ScenarioReport) -> Vec<[String; 9]> {
    s.contestants
        .iter()
        .filter_map(|c| c.tls.as_ref().map(|t| (c, t)))
        .map(|(c, t)| {
            let pair = s.tls_pairs.iter().find(|p| p.tls == c.name);
            let mut shakes = format!("{} full", fmt::thousands(t.full as i64));
            if t.resumed > 0 {
                let _ = write!(shakes, ", {} resumed", fmt::thousands(t.resumed as i64));
            }
            if t.failed > 0 {
                let _ = write!(shakes, ", {} failed", fmt::thousands(t.failed as i64));
            }
            let lat =
                |us: u64| if t.handshake.count == 0 { "–".to_owned() } else { fmt::micros(us as f64) };
            let mut group = t.key_exchange_group.clone().unwrap_or_else(|| "–".to_owned());
            if !t.others.is_empty() {
                let _ = write!(group, " (others: {})", t.others.join("; "));
            }
            [
                c.name.clone(),
                pair.map_or("–".to_owned(), crate::analysis::tls::ratio_cell),
                t.version.clone(),
                t.cipher_suite.clone(),
                group,
                t.alpn.clone().unwrap_or_else(|| "–".to_owned()),
                shakes,
                lat(t.handshake.p50_us),
                lat(t.handshake.p99_us),
            ]
        })
        .collect()
}

/// `1`, or `2–4` when the data allow places 2 to 4.
pub fn rank(c: &ContestantReport) -> String {
    if c.rank == c.rank_worst { c.rank.to_string() } else { format!("{}–{}", c.rank, c.rank_worst) }
}

/// CPU time per 1,000 correct answers, `25.1 ms` (its interval is in the JSON and CSV reports).
pub fn cost(c: &ContestantReport) -> String {
    c.cost.as_ref().map_or("–".to_owned(), |k| fmt::millis(k.cpu_ms_per_1k))
}

/// `gin (Go 1.19, Gin 1.8)`: the name, with the stack the plan names.
pub fn contestant(c: &ContestantReport) -> String {
    match (&c.language, &c.framework) {
        (None, None) => c.name.clone(),
        (Some(l), None) | (None, Some(l)) => format!("{} ({l})", c.name),
        (Some(l), Some(f)) => format!("{} ({l}, {f})", c.name),
    }
}

/// The cells of one contestant's row.
pub fn row(c: &ContestantReport) -> [String; COLUMNS] {
    let l = &c.latency.merged;
    let has_latency = l.count > 0;
    let lat = |v: u64| if has_latency { fmt::micros(v as f64) } else { "–".to_owned() };
    [
        rank(c),
        contestant(c),
        throughput(c),
        fmt::compact(c.throughput.per_minute),
        lat(l.p50_us),
        lat(l.p95_us),
        lat(l.p99_us),
        if c.errors.errors == 0 { "0".to_owned() } else { fmt::percent(100.0 * c.errors.rate) },
        c.resources.as_ref().map_or("–".to_owned(), |r| fmt::percent(r.cpu_percent.p95)),
        cost(c),
        c.resources.as_ref().map_or("–".to_owned(), |r| fmt::bytes(r.rss_bytes.max)),
        match (&c.cold_start_ms, c.external) {
            (_, true) => "external".to_owned(),
            (Some(q), _) => fmt::millis(q.p50),
            (None, _) => "–".to_owned(),
        },
        c.artifact_bytes.map_or("–".to_owned(), |b| fmt::bytes(b as f64)),
        code(c),
    ]
}

/// The lines of code its authors wrote, `412 lines`, or `–` when not counted.
pub fn code(c: &ContestantReport) -> String {
    c.code.as_ref().map_or("–".to_owned(), |k| format!("{} lines", fmt::thousands(k.lines as i64)))
}

/// `3 runs each`, or `2–3 runs` when contestants differ.
pub fn runs_caption(s: &ScenarioReport) -> String {
    let min = s.contestants.iter().map(|c| c.runs).min().unwrap_or(0);
    let max = s.contestants.iter().map(|c| c.runs).max().unwrap_or(0);
    match (min, max) {
        (0, 0) => "nothing measured".to_owned(),
        (1, 1) => "1 run each".to_owned(),
        (a, b) if a == b => format!("{a} runs each"),
        (a, b) => format!("{a}–{b} runs"),
    }
}

/// `errors: 'flask' timeout 36 · 'x' http_503 4, check 1` lines, one per contestant with errors.
pub fn error_lines(s: &ScenarioReport) -> Vec<String> {
    s.contestants
        .iter()
        .filter(|c| c.errors.errors > 0)
        .map(|c| {
            let kinds: Vec<String> =
                c.errors.by_kind.iter().map(|(k, v)| format!("{k} {}", fmt::thousands(*v as i64))).collect();
            format!(
                "'{}': {} of {} requests failed ({})",
                c.name,
                fmt::thousands(c.errors.errors as i64),
                fmt::thousands(c.errors.requests as i64),
                if kinds.is_empty() { "kind not recorded".to_owned() } else { kinds.join(", ") }
            )
        })
        .collect()
}

/// `Synthetic CPU @ 2.90GHz · 2 cores · linux 6.1.0 · governor performance · stackbench 0.1.0`.
pub fn machine_line(a: &crate::Analysis) -> String {
    let e = &a.source.environment;
    let mut parts = Vec::new();
    if !e.cpu_model.is_empty() {
        parts.push(e.cpu_model.clone());
    }
    parts.push(format!("{} core{}", e.cores, if e.cores == 1 { "" } else { "s" }));
    parts.push(format!("{} {}", e.os, e.kernel).trim().to_owned());
    if let Some(g) = &e.governor {
        parts.push(format!("governor {g}"));
    }
    if let Some(b) = &e.boost {
        parts.push(format!("boost {b}"));
    }
    if let Some(c) = &e.cgroup {
        parts.push(format!("cgroup {c}"));
    }
    parts.push(format!("stackbench {}", a.source.tool_version));
    parts.join(" · ")
}

/// `results/x · measured 2025-11-30 00:00 UTC · complete · plan plans/a.toml · commit 0123456`.
pub fn source_line(a: &crate::Analysis) -> String {
    let s = &a.source;
    let mut parts = vec![s.dir.clone(), format!("measured {}", fmt::utc(s.created_at_ms)), s.status.clone()];
    if let Some(p) = &s.plan_path {
        parts.push(format!("plan {p}"));
    }
    if let Some(c) = &s.git_commit {
        parts.push(format!("commit {}", &c[..c.len().min(10)]));
    }
    parts.join(" · ")
}

/// What each contestant was built with, one line per contestant that says
/// (`flask-influx: python3 Python 3.11.2 · requirements.txt sha256:9f86d081884c`):
/// the toolchains it requires as they report their versions, and the first
/// 12 hex digits of each lockfile's SHA-256 (the record holds all 64).
pub fn provenance(a: &crate::Analysis) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut lines = Vec::new();
    for c in a.scenarios.iter().flat_map(|s| &s.contestants) {
        if (c.toolchains.is_empty() && c.lockfiles.is_empty()) || !seen.insert(c.name.clone()) {
            continue;
        }
        let parts: Vec<String> = c
            .toolchains
            .iter()
            .map(|(program, version)| format!("{program}: {version}"))
            .chain(
                c.lockfiles
                    .iter()
                    .map(|l| format!("{} sha256:{}", l.path, &l.sha256[..l.sha256.len().min(12)])),
            )
            .collect();
        lines.push(format!("{}: {}", c.name, parts.join(" · ")));
    }
    lines
}

/// Each column's width: its widest cell or header, in characters.
pub(super) fn column_widths<const N: usize>(headers: &[&str; N], rows: &[[String; N]]) -> [usize; N] {
    std::array::from_fn(|i| {
        rows.iter().map(|r| r[i].chars().count()).chain([headers[i].chars().count()]).max().unwrap_or(0)
    })
}

/// `s` filled with spaces to `width`, on the left when `right` (numbers).
pub(super) fn pad(s: &str, width: usize, right: bool) -> String {
    let fill = " ".repeat(width.saturating_sub(s.chars().count()));
    if right { format!("{fill}{s}") } else { format!("{s}{fill}") }
}
