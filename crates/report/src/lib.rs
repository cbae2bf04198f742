//! The reports of stackbench (to be built, issue "Statistics and reports").
//!
//! It will own the statistics over run records (bootstrap confidence
//! intervals, ratios with their uncertainty, ties, outliers), kept pure, and
//! one exporter per format: terminal, Markdown, CSV, JSON and a self-contained
//! HTML page with inline SVG charts.
