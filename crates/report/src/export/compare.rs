//! Renders a [`Comparison`] (`stackbench compare`): a table per scenario for
//! the terminal and Markdown, one row per contestant in CSV, the structure in
//! JSON, and a small self-contained HTML page. Each format's exporter calls
//! its function here, so a comparison and an analysis share one dispatch.

use std::fmt::Write as _;

use crate::chart::svg::esc;
use crate::compare::{Change, ChangeVerdict, Comparison, Side};
use crate::export::md_escape;
use crate::fmt;

const HEADERS: [&str; 6] = ["contestant", "base req/s", "new req/s", "change", "p99 base → new", "verdict"];

fn verdict_word(v: ChangeVerdict) -> &'static str {
    match v {
        ChangeVerdict::Regression => "REGRESSION",
        ChangeVerdict::NowFailing => "NOW FAILING",
        ChangeVerdict::PossibleRegression => "possible regression",
        ChangeVerdict::Unchanged => "unchanged",
        ChangeVerdict::Improvement => "improvement",
        ChangeVerdict::NotTestable => "not testable",
        ChangeVerdict::Fixed => "fixed",
        ChangeVerdict::StillFailing => "still failing",
        ChangeVerdict::Added => "added",
        ChangeVerdict::Removed => "removed",
    }
}

fn rps(v: Option<f64>, ci: Option<crate::stats::Interval>) -> String {
    match (v, ci) {
        (Some(v), Some(ci)) => fmt::with_interval(v, ci.lo, ci.hi),
        (Some(v), None) => fmt::rate(v),
        (None, _) => "–".to_owned(),
    }
}

fn cells(c: &Change) -> [String; 6] {
    let change = match c.ratio {
        Some(r) => match r.ci {
            Some(ci) => format!(
                "{} ({} to {})",
                fmt::change(r.value - 1.0),
                fmt::change(ci.lo - 1.0),
                fmt::change(ci.hi - 1.0)
            ),
            None => format!("{} (no interval)", fmt::change(r.value - 1.0)),
        },
        None => "–".to_owned(),
    };
    let p99 = |v: Option<u64>| v.map_or("–".to_owned(), |u| fmt::micros(u as f64));
    [
        c.contestant.clone(),
        rps(c.base_ok_rps, c.base_ci),
        rps(c.new_ok_rps, c.new_ci),
        change,
        format!("{} → {}", p99(c.base_p99_us), p99(c.new_p99_us)),
        verdict_word(c.verdict).to_owned(),
    ]
}

fn scenarios(c: &Comparison) -> Vec<(&str, Vec<&Change>)> {
    let mut out: Vec<(&str, Vec<&Change>)> = Vec::new();
    for ch in &c.changes {
        match out.iter_mut().find(|(s, _)| *s == ch.scenario) {
            Some((_, v)) => v.push(ch),
            None => out.push((&ch.scenario, vec![ch])),
        }
    }
    out
}

fn header_line(c: &Comparison) -> String {
    let side = |s: &Side| {
        let commit = s
            .git_commit
            .as_deref()
            .map(|g| format!(", commit {}", &g[..g.len().min(10)]))
            .unwrap_or_default();
        format!("{} ({}{commit})", s.dir, fmt::utc(s.created_at_ms))
    };
    format!("BASE {} → NEW {}", side(&c.base), side(&c.new))
}

fn rule_line(c: &Comparison) -> String {
    format!(
        "A regression is a drop in throughput whose whole 95% interval lies beyond −{}, or a contestant that no longer runs.",
        fmt::percent(c.max_regression * 100.0)
    )
}

fn summary_line(c: &Comparison) -> String {
    let regs: Vec<String> =
        c.regressions().map(|r| format!("'{}' ({}): {}", r.contestant, r.scenario, r.text)).collect();
    if regs.is_empty() {
        "No regression.".to_owned()
    } else {
        format!("{} regression{}: {}", regs.len(), if regs.len() == 1 { "" } else { "s" }, regs.join("; "))
    }
}

pub(crate) fn json(c: &Comparison) -> String {
    let mut s = serde_json::to_string_pretty(c).expect("the comparison serializes");
    s.push('\n');
    s
}

pub(crate) fn terminal(c: &Comparison, color: bool) -> String {
    let p = crate::fmt::Paint(color);
    let mut out = String::new();
    let _ = writeln!(out, "{}", p.wrap("1", &format!("stackbench compare · {}", header_line(c))));
    let _ = writeln!(out, "{}", p.wrap("2", &rule_line(c)));
    for n in &c.notes {
        let _ = writeln!(out, "{}", p.wrap("33", &format!("! {n}")));
    }
    for (scenario, changes) in scenarios(c) {
        let _ = writeln!(out, "\n{}", p.wrap("1", scenario));
        let rows: Vec<[String; 6]> = changes.iter().map(|ch| cells(ch)).collect();
        let widths = super::table::column_widths(&HEADERS, &rows);
        // Contestant and verdict are words; the columns between are numbers.
        let pad = |s: &str, i: usize| super::table::pad(s, widths[i], i != 0 && i != 5);
        let head: Vec<String> = HEADERS.iter().enumerate().map(|(i, h)| pad(h, i)).collect();
        let _ = writeln!(out, "  {}", p.wrap("1", head.join("  ").trim_end()));
        for (row, ch) in rows.iter().zip(&changes) {
            let mut line: Vec<String> = row.iter().enumerate().map(|(i, s)| pad(s, i)).collect();
            let code = match ch.verdict {
                v if v.is_regression() => "31;1",
                ChangeVerdict::PossibleRegression => "33",
                ChangeVerdict::Improvement | ChangeVerdict::Fixed => "32",
                _ => "0",
            };
            line[5] = p.wrap(code, &line[5]);
            let _ = writeln!(out, "  {}", line.join("  ").trim_end());
        }
        for ch in changes.iter().filter(|ch| !matches!(ch.verdict, ChangeVerdict::Unchanged)) {
            let _ = writeln!(out, "  {}", p.wrap("2", &format!("'{}': {}", ch.contestant, ch.text)));
        }
    }
    let summary = summary_line(c);
    let _ = writeln!(
        out,
        "\n{}",
        if c.has_regression() { p.wrap("31;1", &summary) } else { p.wrap("32", &summary) }
    );
    out
}

pub(crate) fn markdown(c: &Comparison) -> String {
    let mut out = String::from("# stackbench compare\n\n");
    let _ = writeln!(out, "{}\n\n{}\n", md_escape(&header_line(c)), md_escape(&rule_line(c)));
    for n in &c.notes {
        let _ = writeln!(out, "> **Note:** {}\n", md_escape(n));
    }
    for (scenario, changes) in scenarios(c) {
        let _ = writeln!(
            out,
            "## {}\n\n| {} |\n|---|--:|--:|--:|--:|---|",
            md_escape(scenario),
            HEADERS.join(" | ")
        );
        for ch in &changes {
            let row: Vec<String> = cells(ch).iter().map(|s| md_escape(s)).collect();
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        out.push('\n');
        for ch in changes.iter().filter(|ch| !matches!(ch.verdict, ChangeVerdict::Unchanged)) {
            let _ = writeln!(out, "- `{}`: {}", ch.contestant, md_escape(&ch.text));
        }
        out.push('\n');
    }
    let _ = writeln!(out, "**{}**", md_escape(&summary_line(c)));
    out
}

pub(crate) fn csv(c: &Comparison) -> String {
    let mut out = String::from(
        "scenario,contestant,verdict,base_ok_rps,base_ci_lo,base_ci_hi,base_runs,new_ok_rps,new_ci_lo,new_ci_hi,new_runs,\
         ratio,ratio_ci_lo,ratio_ci_hi,base_p99_us,new_p99_us,text\r\n",
    );
    let num = |v: Option<f64>| v.map(|x| format!("{x:.4}")).unwrap_or_default();
    for ch in &c.changes {
        let text = if ch.text.contains([',', '"']) {
            format!("\"{}\"", ch.text.replace('"', "\"\""))
        } else {
            ch.text.clone()
        };
        let quote = |s: &str| {
            if s.contains([',', '"']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_owned() }
        };
        let _ = write!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\r\n",
            quote(&ch.scenario),
            quote(&ch.contestant),
            serde_json::to_value(ch.verdict)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            num(ch.base_ok_rps),
            num(ch.base_ci.map(|i| i.lo)),
            num(ch.base_ci.map(|i| i.hi)),
            ch.base_runs,
            num(ch.new_ok_rps),
            num(ch.new_ci.map(|i| i.lo)),
            num(ch.new_ci.map(|i| i.hi)),
            ch.new_runs,
            num(ch.ratio.map(|r| r.value)),
            num(ch.ratio.and_then(|r| r.ci).map(|i| i.lo)),
            num(ch.ratio.and_then(|r| r.ci).map(|i| i.hi)),
            ch.base_p99_us.map(|v| v.to_string()).unwrap_or_default(),
            ch.new_p99_us.map(|v| v.to_string()).unwrap_or_default(),
            text
        );
    }
    out
}

pub(crate) fn html(c: &Comparison) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <title>stackbench compare</title>\n<style>body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:auto;padding:1rem}\
         .t{overflow-x:auto}table{border-collapse:collapse;white-space:nowrap;font-variant-numeric:tabular-nums}\
         th,td{padding:.3rem .5rem;border-bottom:1px solid #ddd;text-align:right}th:first-child,td:first-child,td:last-child{text-align:left}\
         .bad{color:#b3261e;font-weight:600}.good{color:#0b6e4f}.meta{color:#5f6368}</style>\n</head>\n<body>\n<h1>stackbench compare</h1>\n",
    );
    let _ = writeln!(
        out,
        "<p class=\"meta\">{}</p>\n<p class=\"meta\">{}</p>",
        esc(&header_line(c)),
        esc(&rule_line(c))
    );
    for n in &c.notes {
        let _ = writeln!(out, "<p class=\"bad\">{}</p>", esc(n));
    }
    for (scenario, changes) in scenarios(c) {
        let _ = writeln!(out, "<h2>{}</h2>\n<div class=\"t\"><table><tr>", esc(scenario));
        for h in HEADERS {
            let _ = write!(out, "<th>{}</th>", esc(h));
        }
        out.push_str("</tr>\n");
        for ch in &changes {
            let class = if ch.verdict.is_regression() {
                " class=\"bad\""
            } else if matches!(ch.verdict, ChangeVerdict::Improvement | ChangeVerdict::Fixed) {
                " class=\"good\""
            } else {
                ""
            };
            out.push_str("<tr>");
            for (i, cell) in cells(ch).iter().enumerate() {
                let _ = write!(out, "<td{}>{}</td>", if i == 5 { class } else { "" }, esc(cell));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table></div>\n<ul>\n");
        for ch in changes.iter().filter(|ch| !matches!(ch.verdict, ChangeVerdict::Unchanged)) {
            let _ = writeln!(out, "<li>'{}': {}</li>", esc(&ch.contestant), esc(&ch.text));
        }
        out.push_str("</ul>\n");
    }
    let _ = writeln!(
        out,
        "<p class=\"{}\">{}</p>\n</body>\n</html>",
        if c.has_regression() { "bad" } else { "good" },
        esc(&summary_line(c))
    );
    out
}
