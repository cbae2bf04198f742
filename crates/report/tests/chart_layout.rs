//! Every chart's layout, from its SVG text: for result stores from a
//! fraction of a request per second to millions, latencies from microseconds
//! to seconds, one contestant or five with long names, no two pieces of
//! text overlap and none leaves the view box (text extents estimated as the
//! charts estimate them, an upper bound of DejaVu Sans; the browser test
//! checks the real fonts). Every chart has a view box and no fixed size.

use stackbench_report::chart::{self, text};
use stackbench_report::synthetic;
use stackbench_report::{Analysis, AnalysisOptions, ScenarioReport};
use stackbench_report::{Format, RenderOptions, render};

/// A `<text>` as drawn: its box (x0, y0, x1, y1) and content.
#[derive(Debug)]
struct TextBox {
    rect: (f64, f64, f64, f64),
    content: String,
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    Some(&tag[start..start + tag[start..].find('"')?])
}

fn num(tag: &str, name: &str) -> Option<f64> {
    attr(tag, name).map(|v| v.parse().unwrap_or_else(|_| panic!("{name}={v} in {tag}")))
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The view box (width, height) of an SVG, checking it has no fixed size.
fn view_box(svg: &str) -> (f64, f64) {
    let root = &svg[..svg.find('>').unwrap()];
    assert!(!root.contains(" width=") && !root.contains(" height="), "fixed size: {root}");
    let vb: Vec<f64> =
        attr(root, "viewBox").expect("a viewBox").split(' ').map(|v| v.parse().unwrap()).collect();
    assert_eq!(vb.len(), 4);
    (vb[2], vb[3])
}

/// Every `<text>` of an SVG with its estimated box.
fn texts(svg: &str) -> Vec<TextBox> {
    let default_size = num(&svg[..svg.find('>').unwrap()], "font-size").unwrap_or(16.0);
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find("<text ") {
        let open_end = start + rest[start..].find('>').unwrap();
        let tag = &rest[start..open_end];
        let close = open_end + rest[open_end..].find("</text>").unwrap();
        let content = unescape(&rest[open_end + 1..close]);
        rest = &rest[close..];
        let (x, y) = (num(tag, "x").unwrap(), num(tag, "y").unwrap());
        let size = num(tag, "font-size").unwrap_or(default_size);
        let w = text::width_at(&content, size, attr(tag, "font-weight").is_some());
        let (ascent, descent) = (0.76 * size, 0.24 * size);
        let rect = if attr(tag, "transform").is_some_and(|t| t.starts_with("rotate(-90")) {
            assert_eq!(attr(tag, "text-anchor"), Some("middle"));
            (x - ascent, y - w / 2.0, x + descent, y + w / 2.0)
        } else {
            let x0 = match attr(tag, "text-anchor").unwrap_or("start") {
                "start" => x,
                "middle" => x - w / 2.0,
                "end" => x - w,
                a => panic!("anchor {a}"),
            };
            (x0, y - ascent, x0 + w, y + descent)
        };
        out.push(TextBox { rect, content });
    }
    out
}

/// Asserts that no text of `svg` overlaps another or leaves its view box.
fn assert_legible(what: &str, svg: &str) {
    let (w, h) = view_box(svg);
    let boxes = texts(svg);
    assert!(!boxes.is_empty(), "{what}: no text");
    for b in &boxes {
        let (x0, y0, x1, y1) = b.rect;
        assert!(
            x0 >= -0.5 && y0 >= -0.5 && x1 <= w + 0.5 && y1 <= h + 0.5,
            "{what}: {b:?} leaves the view box {w}×{h}"
        );
    }
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            let overlap_x = a.rect.0.max(b.rect.0) < a.rect.2.min(b.rect.2) - 0.5;
            let overlap_y = a.rect.1.max(b.rect.1) < a.rect.3.min(b.rect.3) - 0.5;
            assert!(!(overlap_x && overlap_y), "{what}: {a:?} overlaps {b:?}");
        }
    }
    let units = boxes.iter().filter(|b| b.content.contains(" (") && b.content.ends_with(')')).count();
    assert!(units >= 1, "{what}: no axis title names its unit");
}

fn extremes() -> Analysis {
    Analysis::from_results(&synthetic::extremes("results/extremes"), &AnalysisOptions::default())
}

fn three_kings() -> Analysis {
    Analysis::from_results(&synthetic::three_kings("results/three-kings"), &AnalysisOptions::default())
}

fn charts(s: &ScenarioReport) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = [
        ("throughput", chart::throughput(s)),
        ("percentiles", chart::percentiles(s)),
        ("cpu", chart::cpu(s)),
        ("rss", chart::rss(s)),
        ("cold start", chart::cold_start(s)),
        ("artifact", chart::artifact(s)),
    ]
    .into_iter()
    .map(|(k, svg)| (format!("{}/{k}", s.name), svg.unwrap_or_else(|| panic!("{}: no {k} chart", s.name))))
    .collect();
    for i in 0..s.contestants.len() {
        if let Some(svg) = chart::signature(s, i) {
            out.push((format!("{}/signature {i}", s.name), svg));
        }
    }
    out
}

/// Regression: tick labels of the throughput axis overlapped, so did the
/// percentile labels 99.99% and 99.999%, and long names ran out of the chart.
#[test]
fn no_chart_text_overlaps_at_any_magnitude() {
    let a = extremes();
    assert_eq!(a.scenarios.len(), 10);
    for s in &a.scenarios {
        for (what, svg) in charts(s) {
            assert_legible(&what, &svg);
        }
    }
    let s = &three_kings();
    for s in &s.scenarios {
        for (what, svg) in charts(s) {
            assert_legible(&what, &svg);
        }
    }
}

/// Regression: a lone contestant's latency signature filled a desktop
/// screen; every chart must scale to its container, at most 32rem wide.
#[test]
fn every_svg_in_the_html_has_a_view_box_and_no_fixed_size() {
    let a = extremes();
    let html = render(&a, Format::Html, &RenderOptions::default());
    let svgs: Vec<&str> = html.match_indices("<svg").map(|(i, _)| &html[i..]).collect();
    assert!(svgs.len() >= 60, "six charts per scenario and the signatures");
    for svg in svgs {
        view_box(svg);
    }
    assert!(html.contains("figure svg{display:block;width:100%;height:auto;max-width:32rem"));
    assert!(html.contains("repeat(auto-fill,"), "a lone chart keeps a column's width");
    assert!(html.contains(".table{max-width:100%;overflow-x:auto"), "a wide table scrolls in its box");
}
