//! Renders the synthetic "three kings" result set in one format:
//! `cargo run -p stackbench-report --example three_kings -- [terminal|md|csv|json|html] [extremes]`
//! (`extremes` renders [`stackbench_report::synthetic::extremes`] instead,
//! the charts at the edges of what they must show).

use stackbench_report::{Analysis, AnalysisOptions, Format, RenderOptions, render, synthetic};

fn main() {
    let format: Format =
        std::env::args().nth(1).as_deref().unwrap_or("terminal").parse().unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2);
        });
    let set = if std::env::args().nth(2).as_deref() == Some("extremes") {
        synthetic::extremes("results/extremes")
    } else {
        synthetic::three_kings("results/three-kings")
    };
    let analysis = Analysis::from_results(&set, &AnalysisOptions::default());
    print!("{}", render(&analysis, format, &RenderOptions::for_stdout()));
}
