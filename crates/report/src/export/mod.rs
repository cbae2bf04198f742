//! One exporter per output format, behind one trait (hyperfine's
//! `src/export/` is the model): adding a format is one new file and one
//! match arm in [`Format::exporter`]. Exporters only format what
//! [`Analysis`] computed; the columns every table shares live in [`table`].

mod compare;
mod csv;
mod html;
mod json;
mod markdown;
pub mod table;
mod terminal;

use std::str::FromStr;

use crate::analysis::Analysis;
use crate::compare::Comparison;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Tables and sentences for a terminal (colour optional).
    Terminal,
    /// GitHub-flavoured Markdown, for an issue or a pull request.
    Markdown,
    /// One row per contestant and scenario.
    Csv,
    /// The analysis as documented in `docs/report-json.md`.
    Json,
    /// One self-contained page with inline SVG charts.
    Html,
}

impl Format {
    /// The usual file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Terminal => "txt",
            Format::Markdown => "md",
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Html => "html",
        }
    }

    /// The exporter of this format.
    pub fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Format::Terminal => Box::new(terminal::Terminal),
            Format::Markdown => Box::new(markdown::Markdown),
            Format::Csv => Box::new(csv::Csv),
            Format::Json => Box::new(json::Json),
            Format::Html => Box::new(html::Html),
        }
    }

    /// The format a file name asks for by its extension, if any.
    pub fn from_path(path: &std::path::Path) -> Option<Format> {
        path.extension()?.to_str()?.parse().ok()
    }
}

/// A format name that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown report format '{0}'; use terminal, md, csv, json or html")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "terminal" | "term" | "text" | "txt" => Format::Terminal,
            "md" | "markdown" => Format::Markdown,
            "csv" => Format::Csv,
            "json" => Format::Json,
            "html" | "htm" => Format::Html,
            _ => return Err(UnknownFormat(s.to_owned())),
        })
    }
}

/// How to render.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// ANSI colour in the terminal format (see [`color_wanted`]).
    pub color: bool,
}

impl RenderOptions {
    /// Colour when standard output is a terminal and `NO_COLOR` is not set.
    pub fn for_stdout() -> RenderOptions {
        use std::io::IsTerminal as _;
        RenderOptions { color: color_wanted(std::io::stdout().is_terminal(), std::env::var_os("NO_COLOR")) }
    }
}

/// Colour only on a terminal, and never when `NO_COLOR` is set to anything
/// but the empty string (<https://no-color.org>).
pub fn color_wanted(is_terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    is_terminal && no_color.is_none_or(|v| v.is_empty())
}

/// Turns an analysis, or a comparison of two result directories, into text
/// of one format.
pub trait Exporter {
    fn render(&self, analysis: &Analysis, options: &RenderOptions) -> String;
    fn comparison(&self, comparison: &Comparison, options: &RenderOptions) -> String;
}

/// Renders `analysis` as `format`.
pub fn render(analysis: &Analysis, format: Format, options: &RenderOptions) -> String {
    format.exporter().render(analysis, options)
}

/// Renders a comparison of two result directories as `format`.
pub fn render_comparison(comparison: &Comparison, format: Format, options: &RenderOptions) -> String {
    format.exporter().comparison(comparison, options)
}

/// Escapes what would break a table cell or start markup (the analysis's and the
/// comparison's Markdown).
pub(crate) fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '|' | '\\' | '*' | '_' | '`' | '<' | '>' | '[' | ']' => {
                out.push('\\');
                out.push(ch);
            }
            '\n' => out.push(' '),
            _ => out.push(ch),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_and_name_their_extension() {
        for f in [Format::Terminal, Format::Markdown, Format::Csv, Format::Json, Format::Html] {
            assert_eq!(f.extension().parse::<Format>(), Ok(f));
        }
        assert_eq!("Markdown".parse::<Format>(), Ok(Format::Markdown));
        let e = "pdf".parse::<Format>().unwrap_err().to_string();
        assert!(e.contains("'pdf'") && e.contains("html"), "{e}");
        assert_eq!(Format::from_path(std::path::Path::new("out/report.html")), Some(Format::Html));
        assert_eq!(Format::from_path(std::path::Path::new("report")), None);
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(color_wanted(true, None));
        assert!(!color_wanted(false, None));
        assert!(!color_wanted(true, Some("1".into())));
        assert!(color_wanted(true, Some("".into())), "an empty NO_COLOR does not count");
    }
}
