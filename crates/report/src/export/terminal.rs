//! The terminal report printed after `stackbench run` and `bench`: per
//! scenario an aligned table, then the comparison sentences, contestants that
//! were not measured (with the reason), warnings and notes. ANSI colour only
//! when [`RenderOptions::color`] says so (a TTY without `NO_COLOR`).

use std::fmt::Write as _;

use super::table::{self, HEADERS, NUMERIC, REQUEST_HEADERS, REQUEST_NUMERIC, column_widths, pad};
use super::{Exporter, RenderOptions};
use crate::analysis::{Analysis, ScenarioReport, Verdict};
use crate::compare::Comparison;
use crate::fmt::Paint;

pub struct Terminal;

impl Exporter for Terminal {
    fn render(&self, a: &Analysis, options: &RenderOptions) -> String {
        let p = Paint(options.color);
        let mut out = String::new();
        let _ = writeln!(out, "{}", p.bold(&format!("stackbench report · {}", table::source_line(a))));
        let _ = writeln!(out, "{}", p.dim(&table::machine_line(a)));
        if let Some(b) = &a.budget {
            let _ =
                writeln!(out, "{}", if b.cpu_cores.is_some() { b.line.clone() } else { p.yellow(&b.line) });
        }
        for note in &a.notes {
            let _ = writeln!(out, "{}", p.yellow(&format!("! {note}")));
        }
        if let Some(st) = &a.stopping {
            let line = format!("precision: {}", st.summary);
            let _ = writeln!(out, "{}", if st.met { p.green(&line) } else { p.yellow(&line) });
            for u in &st.undecided {
                let _ = writeln!(out, "  {u}");
            }
        }
        if a.scenarios.is_empty() {
            let _ = writeln!(out, "\nNo run and no contestant in this result set yet.");
        }
        for s in &a.scenarios {
            out.push('\n');
            scenario(&mut out, s, &p);
        }
        out
    }

    fn comparison(&self, c: &Comparison, options: &RenderOptions) -> String {
        super::compare::terminal(c, options.color)
    }
}

fn scenario(out: &mut String, s: &ScenarioReport, p: &Paint) {
    let _ = writeln!(
        out,
        "{} {}",
        p.bold(&s.name),
        p.dim(&format!("· {} · {}", table::runs_caption(s), table::INTERVAL_CAPTION))
    );
    if !s.contestants.is_empty() {
        let rows: Vec<[String; table::COLUMNS]> = s.contestants.iter().map(table::row).collect();
        let widths = column_widths(&HEADERS, &rows);
        let header: Vec<String> =
            HEADERS.iter().enumerate().map(|(i, h)| pad(h, widths[i], NUMERIC[i])).collect();
        let _ = writeln!(out, "  {}", p.bold(header.join("  ").trim_end()));
        for (row, c) in rows.iter().zip(&s.contestants) {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(i, cell)| {
                    let padded = pad(cell, widths[i], NUMERIC[i]);
                    if i == 1 && c.rank_worst == 1 { p.green(&padded) } else { padded }
                })
                .collect();
            let _ = writeln!(out, "  {}", cells.join("  ").trim_end());
        }
    }
    let requests = table::request_rows(s);
    if !requests.is_empty() {
        out.push('\n');
        aligned(out, &REQUEST_HEADERS, &REQUEST_NUMERIC, &requests, p);
    }
    let tls = table::tls_rows(s);
    if !tls.is_empty() {
        let _ = writeln!(out, "\n  {}", p.dim(table::TLS_CAPTION));
        aligned(out, &table::TLS_HEADERS, &table::TLS_NUMERIC, &tls, p);
    }
    if !s.statements.is_empty() {
        out.push('\n');
    }
    for st in &s.statements {
        let line = match st.verdict {
            Verdict::Faster => st.text.clone(),
            Verdict::Tied | Verdict::NoInterval => p.dim(&st.text),
            Verdict::NothingAnswered => p.red(&st.text),
        };
        let _ = writeln!(out, "  {line}");
    }
    let mut extra = Vec::new();
    for f in &s.failed {
        extra.push(p.red(&format!("✗ '{}' not measured: {}", f.name, f.reason)));
    }
    for c in &s.contestants {
        for w in &c.warnings {
            extra.push(p.yellow(&format!("! '{}': {w}", c.name)));
        }
    }
    for e in table::error_lines(s) {
        extra.push(format!("errors: {e}"));
    }
    for n in &s.notes {
        extra.push(p.dim(&format!("note: {n}")));
    }
    if !extra.is_empty() {
        out.push('\n');
    }
    for line in extra {
        let _ = writeln!(out, "  {line}");
    }
}

/// A plain aligned table under bold headers.
fn aligned<const N: usize>(
    out: &mut String,
    headers: &[&str; N],
    numeric: &[bool; N],
    rows: &[[String; N]],
    p: &Paint,
) {
    let widths = column_widths(headers, rows);
    let header: Vec<String> = (0..N).map(|i| pad(headers[i], widths[i], numeric[i])).collect();
    let _ = writeln!(out, "  {}", p.bold(header.join("  ").trim_end()));
    for row in rows {
        let cells: Vec<String> = (0..N).map(|i| pad(&row[i], widths[i], numeric[i])).collect();
        let _ = writeln!(out, "  {}", cells.join("  ").trim_end());
    }
}
