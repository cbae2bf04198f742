//! The JSON report: [`Analysis`] serialized, pretty-printed. Its schema is
//! documented in `docs/report-json.md` (`schema` field: [`crate::analysis::REPORT_SCHEMA`]).

use super::{Exporter, RenderOptions};
use crate::analysis::Analysis;
use crate::compare::Comparison;

pub struct Json;

impl Exporter for Json {
    fn render(&self, analysis: &Analysis, _: &RenderOptions) -> String {
        let mut s =
            serde_json::to_string_pretty(analysis).expect("the analysis serializes (string keys only)");
        s.push('\n');
        s
    }

    fn comparison(&self, c: &Comparison, _: &RenderOptions) -> String {
        super::compare::json(c)
    }
}
