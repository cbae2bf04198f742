//! The reports of stackbench: statistics over run records (bootstrap
//! confidence intervals, ratios with their uncertainty, ties, outliers), kept
//! pure in [`stats`]; [`Analysis`] turns a result store into what a report
//! says; one exporter per format renders it ([`render`], [`Format`], charts in
//! [`chart`]); [`compare()`] measures the change between two result stores.
//! [`synthetic`] makes result stores from a few numbers, for tests and demos.
//!
//! The analysis, the comparison and the exporters are private modules: the root exports what
//! other crates use of them. Three modules stay public, each a namespace whose functions read by
//! it: [`stats`] (the pure statistics the orchestrator's rounds call too:
//! `stats::sequential::judge`, `stats::bootstrap::estimate_with`), [`chart`] (one function per
//! chart: `chart::throughput`, `chart::cpu`) and [`synthetic`] (`synthetic::three_kings()`).
//!
//! ```no_run
//! use stackbench_report::{Analysis, AnalysisOptions, Format, RenderOptions, render};
//! let set = stackbench_record::ResultSet::load("results/x".as_ref()).unwrap();
//! let analysis = Analysis::from_results(&set, &AnalysisOptions::default());
//! print!("{}", render(&analysis, Format::Terminal, &RenderOptions::for_stdout()));
//! ```

mod analysis;
mod cell;
pub mod chart;
mod compare;
mod export;
/// Number formatting, shared with the load engine's summary.
pub use stackbench_record::fmt;
pub mod stats;
pub mod synthetic;

pub use analysis::stopping::{decided as decided_sentence, percent as precision_percent};
pub use analysis::{Analysis, AnalysisOptions, RankedBy, ScenarioReport, Verdict};
pub use cell::throughput as throughput_cell;
pub use compare::{Comparison, compare};
pub use export::{Exporter, Format, RenderOptions, UnknownFormat, render, render_comparison};
