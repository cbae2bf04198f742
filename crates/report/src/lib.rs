//! The reports of stackbench: statistics over run records (bootstrap
//! confidence intervals, ratios with their uncertainty, ties, outliers), kept
//! pure in [`stats`]; [`Analysis`] turns a result store into what a report
//! says; one exporter per format renders it ([`export`], charts in
//! [`chart`]); [`compare()`] measures the change between two result stores.
//! [`synthetic`] makes result stores from a few numbers, for tests and demos.
//!
//! ```no_run
//! use stackbench_report::{Analysis, AnalysisOptions, Format, RenderOptions, render};
//! let set = stackbench_record::ResultSet::load("results/x".as_ref()).unwrap();
//! let analysis = Analysis::from_results(&set, &AnalysisOptions::default());
//! print!("{}", render(&analysis, Format::Terminal, &RenderOptions::for_stdout()));
//! ```

pub mod analysis;
mod cell;
pub mod chart;
pub mod compare;
pub mod export;
/// Number formatting, shared with the load engine's summary.
pub use stackbench_record::fmt;
pub mod stats;
pub mod synthetic;

pub use analysis::{Analysis, AnalysisOptions};
pub use compare::{Comparison, compare};
pub use export::{Exporter, Format, RenderOptions, render, render_comparison};
