//! Snapshot tests (insta) of every text format and of each chart's SVG, from
//! the fixed synthetic result store. A change to a report shows up as a diff
//! to review (`INSTA_UPDATE=always cargo test -p stackbench-report --test
//! snapshots`, then read the `.snap` diff before committing).

use stackbench_report::synthetic::{three_kings, three_kings_with, tls_beside_cleartext};
use stackbench_report::{Analysis, AnalysisOptions};
use stackbench_report::{Format, RenderOptions, chart, compare, render, render_comparison};

fn analysis() -> Analysis {
    Analysis::from_results(&three_kings("results/three-kings"), &AnalysisOptions::default())
}

#[test]
fn markdown() {
    insta::assert_snapshot!(render(&analysis(), Format::Markdown, &RenderOptions::default()));
}

#[test]
fn csv() {
    let text = render(&analysis(), Format::Csv, &RenderOptions::default());
    // One row per contestant and scenario, the failed one included.
    assert_eq!(text.lines().count(), 1 + 13);
    insta::assert_snapshot!(text);
}

#[test]
fn json() {
    let text = render(&analysis(), Format::Json, &RenderOptions::default());
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(v["schema"], 1);
    insta::assert_snapshot!(text);
}

#[test]
fn terminal_without_colour() {
    let text = render(&analysis(), Format::Terminal, &RenderOptions { color: false });
    assert!(!text.contains('\x1b'), "no escape codes without colour");
    insta::assert_snapshot!(text);
}

#[test]
fn terminal_colour_is_only_decoration() {
    let a = analysis();
    let coloured = render(&a, Format::Terminal, &RenderOptions { color: true });
    assert!(coloured.contains("\x1b[1m"));
    let stripped = strip_ansi(&coloured);
    assert_eq!(stripped, render(&a, Format::Terminal, &RenderOptions { color: false }));
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn charts() {
    let a = analysis();
    let s = a.scenarios.iter().find(|s| s.name == "dummy").unwrap();
    insta::assert_snapshot!("chart_throughput", chart::throughput(s).unwrap());
    insta::assert_snapshot!("chart_percentiles", chart::percentiles(s).unwrap());
    insta::assert_snapshot!("chart_signature", chart::signature(s, 0).unwrap());
    insta::assert_snapshot!("chart_cpu", chart::cpu(s).unwrap());
    insta::assert_snapshot!("chart_rss", chart::rss(s).unwrap());
    insta::assert_snapshot!("chart_cold_start", chart::cold_start(s).unwrap());
    insta::assert_snapshot!("chart_artifact", chart::artifact(s).unwrap());
}

#[test]
fn comparison() {
    let base = three_kings("results/base");
    let new = three_kings_with("results/new", |n| match n {
        "flask" => 0.8,
        "gin" => 1.3,
        _ => 1.0,
    });
    let c = compare(&base, &new, 0.05);
    assert!(c.has_regression());
    insta::assert_snapshot!(
        "compare_markdown",
        render_comparison(&c, Format::Markdown, &RenderOptions::default())
    );
    insta::assert_snapshot!(
        "compare_terminal",
        render_comparison(&c, Format::Terminal, &RenderOptions::default())
    );
    insta::assert_snapshot!("compare_csv", render_comparison(&c, Format::Csv, &RenderOptions::default()));
    insta::assert_snapshot!("compare_json", render_comparison(&c, Format::Json, &RenderOptions::default()));
}

/// TLS beside cleartext: each `-tls` twin's ratio to its namesake, and what every TLS
/// contestant agreed, in each format.
#[test]
fn tls_beside_cleartext_in_every_format() {
    let a =
        Analysis::from_results(&tls_beside_cleartext("results/three-kings-tls"), &AnalysisOptions::default());
    let s = &a.scenarios[0];
    let pairs: Vec<(&str, &str)> =
        s.tls_pairs.iter().map(|p| (p.cleartext.as_str(), p.tls.as_str())).collect();
    assert_eq!(pairs, [("gin", "gin-tls"), ("flask", "flask-tls")], "nginx-tls has no cleartext twin");
    for p in &s.tls_pairs {
        let r = p.ratio.expect("both answered");
        assert!(r.value > 0.6 && r.value < 0.8, "{p:?}");
        assert!(r.ci.is_some_and(|ci| ci.lo < r.value && r.value < ci.hi), "{p:?}");
    }
    let terminal = render(&a, Format::Terminal, &RenderOptions { color: false });
    insta::assert_snapshot!("tls_terminal", terminal);
    let markdown = render(&a, Format::Markdown, &RenderOptions::default());
    insta::assert_snapshot!("tls_markdown", markdown);
    let csv = render(&a, Format::Csv, &RenderOptions::default());
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let gin_tls: Vec<&str> =
        csv.lines().find(|l| l.starts_with("dummy,gin-tls,")).unwrap().split(',').collect();
    assert_eq!(gin_tls[at("tls_group")], "X25519MLKEM768");
    assert!(gin_tls[at("tls_to_cleartext")].starts_with("0.7"), "{gin_tls:?}");
    let gin: Vec<&str> = csv.lines().find(|l| l.starts_with("dummy,gin,")).unwrap().split(',').collect();
    assert_eq!((gin[at("tls_version")], gin[at("tls_to_cleartext")]), ("", ""));
    let html = render(&a, Format::Html, &RenderOptions::default());
    for needle in
        ["<th class=\"n\">TLS/cleartext</th>", "<td>X25519MLKEM768</td>", "<td>TLS13_AES_128_GCM_SHA256</td>"]
    {
        assert!(html.contains(needle), "the HTML report lacks {needle}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&render(&a, Format::Json, &RenderOptions::default())).expect("valid JSON");
    let scenario = &json["scenarios"][0];
    assert_eq!(scenario["tls_pairs"][0]["tls"], "gin-tls");
    assert!(scenario["tls_pairs"][0]["ratio"]["ci"]["lo"].is_number());
    let gin_tls =
        scenario["contestants"].as_array().unwrap().iter().find(|c| c["name"] == "gin-tls").unwrap();
    assert_eq!(gin_tls["tls"]["key_exchange_group"], "X25519MLKEM768");
    assert_eq!(gin_tls["tls"]["version"], "TLSv1.3");
    assert_eq!(gin_tls["tls"]["full"], 3 * 64);
    let gin = scenario["contestants"].as_array().unwrap().iter().find(|c| c["name"] == "gin").unwrap();
    assert!(gin.get("tls").is_none(), "a cleartext contestant has no tls field");
}
