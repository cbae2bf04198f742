//! GitHub-flavoured Markdown, to paste into an issue or a pull request: per
//! scenario the summary table, the sentences as a list, a second table with
//! each latency percentile and its range across runs, then what was not
//! measured, warnings and notes; last, what each contestant was built with.

use std::fmt::Write as _;

use super::md_escape;
use super::table::{self, HEADERS, NUMERIC};
use super::{Exporter, RenderOptions};
use crate::analysis::{Analysis, ScenarioReport};
use crate::compare::Comparison;
use crate::fmt;

pub struct Markdown;

impl Exporter for Markdown {
    fn render(&self, a: &Analysis, _: &RenderOptions) -> String {
        let mut out = String::from("# stackbench report\n\n");
        let _ = writeln!(
            out,
            "{}  \n{}\n",
            md_escape(&table::source_line(a)),
            md_escape(&table::machine_line(a))
        );
        if let Some(b) = &a.budget {
            let _ = writeln!(out, "**{}**\n", md_escape(&b.line));
        }
        let _ = writeln!(
            out,
            "Throughput is correct answers per second, mean over the runs, with its bootstrap {}. \
             A rank is the range of places the data allow (`2–4`: 1 + those significantly better, to n − those significantly worse); rows follow the mean.\n",
            table::INTERVAL_CAPTION
        );
        for n in &a.notes {
            let _ = writeln!(out, "> **Note:** {}\n", md_escape(n));
        }
        if let Some(st) = &a.stopping {
            let _ = writeln!(out, "**Precision:** {}\n", md_escape(&st.summary));
            for u in &st.undecided {
                let _ = writeln!(out, "- {}", md_escape(u));
            }
            if !st.undecided.is_empty() {
                out.push('\n');
            }
        }
        for s in &a.scenarios {
            scenario(&mut out, s);
        }
        let built = table::provenance(a);
        if !built.is_empty() {
            out.push_str("## Toolchains and lockfiles\n\n");
            for line in built {
                let _ = writeln!(out, "- {}", md_escape(&line));
            }
            out.push('\n');
        }
        out
    }

    fn comparison(&self, c: &Comparison, _: &RenderOptions) -> String {
        super::compare::markdown(c)
    }
}

fn scenario(out: &mut String, s: &ScenarioReport) {
    let _ = writeln!(out, "## {}\n\n{}\n", md_escape(&s.name), table::runs_caption(s));
    if !s.contestants.is_empty() {
        let _ = writeln!(out, "| {} |", HEADERS.join(" | "));
        let align: Vec<&str> = NUMERIC.iter().map(|&n| if n { "--:" } else { "---" }).collect();
        let _ = writeln!(out, "|{}|", align.join("|"));
        for c in &s.contestants {
            let row: Vec<String> = table::row(c).iter().map(|x| md_escape(x)).collect();
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        out.push('\n');
    }
    let requests = table::request_rows(s);
    if !requests.is_empty() {
        let _ = writeln!(out, "By request (scenario file; rate: the mean over the runs)\n");
        let _ = writeln!(out, "| {} |", table::REQUEST_HEADERS.join(" | "));
        let align: Vec<&str> =
            table::REQUEST_NUMERIC.iter().map(|&n| if n { "--:" } else { "---" }).collect();
        let _ = writeln!(out, "|{}|", align.join("|"));
        for row in &requests {
            let row: Vec<String> = row.iter().map(|x| md_escape(x)).collect();
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        out.push('\n');
    }
    tls_table(out, s);
    for st in &s.statements {
        let _ = writeln!(out, "- {}", md_escape(&st.text));
    }
    if !s.statements.is_empty() {
        out.push('\n');
    }
    if s.contestants.iter().any(|c| c.latency.merged.count > 0) {
        let _ = writeln!(
            out,
            "<details><summary>Latency percentiles (all runs merged; range of the per-run values)</summary>\n"
        );
        let _ = writeln!(out, "| contestant | p50 | p90 | p99 | p99.9 | max |\n|---|--:|--:|--:|--:|--:|");
        for c in s.contestants.iter().filter(|c| c.latency.merged.count > 0) {
            let l = &c.latency.merged;
            let cell = |v: u64, key: &str| match c.latency.spread.get(key) {
                Some(r) if c.runs > 1 => {
                    format!("{} ({}–{})", fmt::micros(v as f64), fmt::micros(r.min), fmt::micros(r.max))
                }
                _ => fmt::micros(v as f64),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                md_escape(&c.name),
                cell(l.p50_us, "p50_us"),
                cell(l.p90_us, "p90_us"),
                cell(l.p99_us, "p99_us"),
                cell(l.p999_us, "p999_us"),
                cell(l.max_us, "max_us")
            );
        }
        out.push_str("\n</details>\n\n");
    }
    let mut lines = Vec::new();
    for f in &s.failed {
        lines.push(format!("- **Not measured:** `{}`: {}", f.name, md_escape(&f.reason)));
    }
    for c in &s.contestants {
        for w in &c.warnings {
            lines.push(format!("- **Warning:** `{}`: {}", c.name, md_escape(w)));
        }
    }
    for e in table::error_lines(s) {
        lines.push(format!("- Errors: {}", md_escape(&e)));
    }
    for n in &s.notes {
        lines.push(format!("- Note: {}", md_escape(n)));
    }
    for l in &lines {
        let _ = writeln!(out, "{l}");
    }
    if !lines.is_empty() {
        out.push('\n');
    }
}

/// What each contestant's TLS agreed, and TLS beside cleartext (none in the clear).
fn tls_table(out: &mut String, s: &ScenarioReport) {
    let rows = table::tls_rows(s);
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}\n", md_escape(table::TLS_CAPTION));
    let _ = writeln!(out, "| {} |", table::TLS_HEADERS.join(" | "));
    let align: Vec<&str> = table::TLS_NUMERIC.iter().map(|&n| if n { "--:" } else { "---" }).collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for row in &rows {
        let row: Vec<String> = row.iter().map(|x| md_escape(x)).collect();
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_table_breakers() {
        assert_eq!(super::md_escape("a|b *c* <x>"), "a\\|b \\*c\\* \\<x\\>");
    }
}
