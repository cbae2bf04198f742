//! The HTML report: one self-contained file, readable offline and on a
//! phone. No script, no font, no stylesheet or image from anywhere: inline
//! CSS, inline SVG charts ([`crate::chart`]), and a Content-Security-Policy
//! that forbids fetching anything, so a mistake would show as a blocked
//! request rather than a silent dependency on the network. Layout: charts
//! in a grid of columns at least 26rem wide (one on a phone), filled so that
//! a lone chart keeps a column's width, each chart scaled to its column and
//! at most 32rem wide; a wide table scrolls inside its own box.

use std::fmt::Write as _;

use super::table::{self, HEADERS, NUMERIC};
use super::{Exporter, RenderOptions};
use crate::analysis::{Analysis, ScenarioReport, Verdict};
use crate::chart::{self, svg::esc};
use crate::compare::Comparison;

pub struct Html;

const STYLE: &str = "
:root{color-scheme:light;--fg:#1d1d1f;--muted:#5f6368;--line:#e2e2e2;--warn:#8a5a00;--bad:#b3261e;--good:#0b6e4f}
*{box-sizing:border-box}
body{margin:0 auto;max-width:72rem;padding:1rem;font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:var(--fg);background:#fff;overflow-wrap:break-word}
h1{font-size:1.5rem;margin:.2rem 0}h2{font-size:1.25rem;margin:2rem 0 .3rem;padding-top:.6rem;border-top:2px solid var(--line)}
h3{font-size:1.05rem;margin:1.2rem 0 .4rem}
.meta{color:var(--muted);margin:.15rem 0;overflow-wrap:anywhere}
nav a{margin-right:1rem}
.table{max-width:100%;overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;white-space:nowrap;font-size:.9rem}
th,td{padding:.3rem .55rem;border-bottom:1px solid var(--line);text-align:left}
th{background:#f6f6f6;font-weight:600}
td.n,th.n{text-align:right}
tr.first td.name{color:var(--good);font-weight:600}
ul{padding-left:1.2rem}li{margin:.2rem 0}
.tied,.nointerval{color:var(--muted)}.failed{color:var(--bad)}.warning{color:var(--warn)}.note{color:var(--muted)}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,26rem),1fr));gap:1rem;margin:.6rem 0}
figure{margin:0;min-width:0;border:1px solid var(--line);border-radius:6px;padding:.4rem}
figure svg{display:block;width:100%;height:auto;max-width:32rem;margin:0 auto}
figcaption{color:var(--muted);font-size:.85rem;margin-top:.2rem}
details{margin:.6rem 0}pre{overflow-x:auto;background:#f6f6f6;padding:.6rem;font-size:.85rem}
@media (max-width:40rem){body{padding:.5rem;font-size:14px}table{font-size:.8rem}th,td{padding:.25rem .4rem}figure{padding:.2rem}}
";

impl Exporter for Html {
    fn render(&self, a: &Analysis, _: &RenderOptions) -> String {
        let mut out = String::new();
        let title = format!("stackbench report · {}", a.source.dir);
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
            esc(&title)
        );
        let _ = writeln!(out, "<header>\n<h1>stackbench report</h1>");
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", esc(&table::source_line(a)));
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", esc(&table::machine_line(a)));
        if let Some(b) = &a.budget {
            let class = if b.cpu_cores.is_some() { "meta" } else { "warning" };
            let _ = writeln!(out, "<p class=\"{class}\">{}</p>", esc(&b.line));
        }
        for n in &a.notes {
            let _ = writeln!(out, "<p class=\"warning\">{}</p>", esc(n));
        }
        if let Some(st) = &a.stopping {
            let class = if st.met { "meta" } else { "warning" };
            let _ = writeln!(out, "<p class=\"{class}\">Precision: {}</p>", esc(&st.summary));
            if !st.undecided.is_empty() {
                let items: Vec<String> =
                    st.undecided.iter().map(|u| format!("<li>{}</li>", esc(u))).collect();
                let _ = writeln!(out, "<ul class=\"statements\">{}</ul>", items.concat());
            }
        }
        if a.scenarios.len() > 1 {
            let links: Vec<String> = a
                .scenarios
                .iter()
                .map(|s| format!("<a href=\"#{}\">{}</a>", anchor(&s.name), esc(&s.name)))
                .collect();
            let _ = writeln!(out, "<nav>{}</nav>", links.join(""));
        }
        let _ = writeln!(out, "</header>");
        if a.scenarios.is_empty() {
            let _ = writeln!(out, "<p>No run and no contestant in this result set yet.</p>");
        }
        for s in &a.scenarios {
            scenario(&mut out, s);
        }
        footer(&mut out, a);
        out.push_str("</body>\n</html>\n");
        out
    }

    fn comparison(&self, c: &Comparison, _: &RenderOptions) -> String {
        super::compare::html(c)
    }
}

/// A scenario file's requests by name (none for the built-in scenarios).
fn requests_table(out: &mut String, s: &ScenarioReport) {
    let rows = table::request_rows(s);
    plain_table(out, "By request (scenario file)", &table::REQUEST_HEADERS, &table::REQUEST_NUMERIC, &rows);
}

/// What each contestant's TLS agreed, and TLS beside cleartext (none in the clear).
fn tls_table(out: &mut String, s: &ScenarioReport) {
    let rows = table::tls_rows(s);
    plain_table(out, table::TLS_CAPTION, &table::TLS_HEADERS, &table::TLS_NUMERIC, &rows);
}

/// A captioned table of text cells, numbers right-aligned; nothing without rows.
fn plain_table<const N: usize>(
    out: &mut String,
    caption: &str,
    headers: &[&str; N],
    numeric: &[bool; N],
    rows: &[[String; N]],
) {
    if rows.is_empty() {
        return;
    }
    let _ = write!(out, "<div class=\"table\"><table>\n<caption>{}</caption>\n<thead><tr>", esc(caption));
    for (h, n) in headers.iter().zip(numeric) {
        let _ = write!(out, "<th{}>{}</th>", if *n { " class=\"n\"" } else { "" }, esc(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for (cell, n) in row.iter().zip(numeric) {
            let _ = write!(out, "<td{}>{}</td>", if *n { " class=\"n\"" } else { "" }, esc(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// An id for a scenario's section.
fn anchor(name: &str) -> String {
    let s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    format!("s-{s}")
}

fn figure(out: &mut String, svg: Option<String>, caption: &str) {
    if let Some(svg) = svg {
        let _ = writeln!(out, "<figure>{svg}<figcaption>{}</figcaption></figure>", esc(caption));
    }
}

fn scenario(out: &mut String, s: &ScenarioReport) {
    let _ = writeln!(out, "<section id=\"{}\">\n<h2>{}</h2>", anchor(&s.name), esc(&s.name));
    let _ = writeln!(
        out,
        "<p class=\"meta\">{} · throughput is correct answers per second, the mean · {}</p>",
        table::runs_caption(s),
        table::INTERVAL_CAPTION
    );
    if !s.contestants.is_empty() {
        out.push_str("<div class=\"table\"><table>\n<thead><tr>");
        for (h, numeric) in HEADERS.iter().zip(NUMERIC) {
            let _ = write!(out, "<th{}>{}</th>", if numeric { " class=\"n\"" } else { "" }, esc(h));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for c in &s.contestants {
            let _ = write!(out, "<tr{}>", if c.rank_worst == 1 { " class=\"first\"" } else { "" });
            for (i, (cell, numeric)) in table::row(c).iter().zip(NUMERIC).enumerate() {
                let class = match (i, numeric) {
                    (1, _) => " class=\"name\"",
                    (_, true) => " class=\"n\"",
                    _ => "",
                };
                let _ = write!(out, "<td{class}>{}</td>", esc(cell));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
    }
    requests_table(out, s);
    tls_table(out, s);
    if !s.statements.is_empty() {
        out.push_str("<ul class=\"statements\">\n");
        for st in &s.statements {
            let class = match st.verdict {
                Verdict::Faster => "faster",
                Verdict::Tied => "tied",
                Verdict::NoInterval => "nointerval",
                Verdict::NothingAnswered => "failed",
            };
            let _ = writeln!(out, "<li class=\"{class}\">{}</li>", esc(&st.text));
        }
        out.push_str("</ul>\n");
    }
    let mut items = Vec::new();
    for f in &s.failed {
        items.push(format!("<li class=\"failed\">'{}' not measured: {}</li>", esc(&f.name), esc(&f.reason)));
    }
    for c in &s.contestants {
        for w in &c.warnings {
            items.push(format!("<li class=\"warning\">'{}': {}</li>", esc(&c.name), esc(w)));
        }
    }
    for e in table::error_lines(s) {
        items.push(format!("<li>Errors: {}</li>", esc(&e)));
    }
    for n in &s.notes {
        items.push(format!("<li class=\"note\">{}</li>", esc(n)));
    }
    if !items.is_empty() {
        let _ = writeln!(out, "<ul class=\"issues\">\n{}\n</ul>", items.join("\n"));
    }
    out.push_str("<div class=\"charts\">\n");
    figure(
        out,
        chart::throughput(s),
        "Mean throughput; the whisker is its 95% bootstrap interval, dots are the runs.",
    );
    figure(
        out,
        chart::percentiles(s),
        "Latency at each percentile, all runs merged (HdrHistogram); 99% means 1 request in 100 was slower.",
    );
    figure(out, chart::cpu(s), "CPU of the contestant's whole process tree, sampled every 250 ms.");
    figure(out, chart::rss(s), "Resident memory of the contestant's whole process tree.");
    figure(
        out,
        chart::cold_start(s),
        "From exec to the first verified answer: the bar is the median of the trials, the whisker reaches p95.",
    );
    figure(out, chart::artifact(s), "Size of what is deployed (binary, bundle or image).");
    out.push_str("</div>\n");
    let signatures: Vec<String> = (0..s.contestants.len()).filter_map(|i| chart::signature(s, i)).collect();
    if !signatures.is_empty() {
        let _ = writeln!(
            out,
            "<h3>Latency signatures</h3>\n<p class=\"meta\">Latency of each second of each run, on the same axes for every \
             contestant: the shape tells a steady server from a wave-like or erratic one.</p>\n<div class=\"charts\">"
        );
        for svg in signatures {
            let _ = writeln!(out, "<figure>{svg}</figure>");
        }
        out.push_str("</div>\n");
    }
    out.push_str("</section>\n");
}

fn footer(out: &mut String, a: &Analysis) {
    let _ = writeln!(
        out,
        "<footer>\n<h2>How to read this</h2>\n<p>Each contestant ran the same load several times (runs). Throughput is \
         the mean of the runs' correct answers per second; its 95% interval comes from a bootstrap over the runs, \
         widened for small samples so that it keeps its 95% coverage even with 3 runs. Two contestants are \
         statistically tied when the 95% interval of the ratio of their throughputs includes 1. A rank is the range of \
         places the data allow (<code>2–4</code>): best is 1 + those significantly better, worst is the number of \
         contestants less those significantly worse; rows are ordered by the mean. \
         With fewer than {} runs no interval is stated. Runs far from the others (modified z-score above 3.5) are \
         flagged as outliers, not removed.</p>",
        a.min_runs_for_interval
    );
    let built = table::provenance(a);
    if !built.is_empty() {
        out.push_str("<h2>Toolchains and lockfiles</h2>\n<ul>\n");
        for line in built {
            let _ = writeln!(out, "<li>{}</li>", esc(&line));
        }
        out.push_str("</ul>\n");
    }
    if !a.source.plan_text.is_empty() {
        let _ = writeln!(
            out,
            "<details><summary>The plan{}</summary><pre>{}</pre></details>",
            a.source.plan_path.as_deref().map(|p| format!(" ({})", esc(p))).unwrap_or_default(),
            esc(&a.source.plan_text)
        );
    }
    out.push_str("</footer>\n");
}
