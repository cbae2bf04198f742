//! The reports of stackbench: statistics over run records (bootstrap
//! confidence intervals, ratios with their uncertainty, ties, outliers), kept
//! pure in [`stats`]; [`Analysis`] turns a result store into what a report
//! says; one exporter per format renders it ([`export`]); [`compare()`]
//! measures the change between two result stores.

pub mod analysis;
pub mod chart;
pub mod fmt;
pub mod stats;

pub use analysis::{Analysis, AnalysisOptions};
pub mod export;
pub mod synthetic;

pub use export::{Exporter, Format, RenderOptions, render};
