//! `stackbench report` and `stackbench compare` on result directories written
//! to disk (synthetic records laid out as the orchestrator writes them): every
//! format, `--out`, exit codes (0, 1 with a one-line reason, 2 on a
//! regression).

use std::path::Path;
use std::process::{Command, Output};

use stackbench_report::synthetic::{self, three_kings, three_kings_with};

fn temp(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("stackbench-report-cli-{name}-")).tempdir().unwrap()
}

fn write_set(dir: &Path, slower: bool) {
    let name = dir.display().to_string();
    let set = if slower {
        three_kings_with(&name, |n| if n == "flask" { 0.8 } else { 1.0 })
    } else {
        three_kings(&name)
    };
    synthetic::write(&set, dir).unwrap();
}

fn stackbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stackbench")).args(args).env_remove("NO_COLOR").output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn report_renders_every_format() {
    let tmp = temp("formats");
    let dir = tmp.path();
    write_set(dir, false);
    let d = dir.to_str().unwrap();

    let out = stackbench(&["report", d]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("'plug' ran 4.53 (4.41..4.64) times more requests than 'flask'"), "{stdout}");
    assert!(stdout.contains("'fastify' not measured: failed contract verification"), "{stdout}");
    assert!(!stdout.contains('\x1b'), "no colour when stdout is not a terminal");

    let html = dir.join("out/report.html");
    let out = stackbench(&["report", d, "--out", html.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("data-chart=\"percentiles\""));
    assert!(!page.contains(" src=") && !page.contains("href=\"http"), "nothing fetched from the network");

    for (format, marker) in [
        ("md", "| # | contestant |"),
        ("csv", "scenario,contestant,language,framework,status"),
        ("json", "\"schema\": 1"),
    ] {
        let out = stackbench(&["report", d, "--format", format]);
        assert!(out.status.success(), "{format}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains(marker), "{format}");
    }
    let out = stackbench(&["report", d, "--format", "md", "--reference", "gin"]);
    assert!(
        text(&out.stdout).contains("'plug' ran 1.41 ± 0.04 times more requests than 'gin'"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn report_refuses_bad_input_in_one_line() {
    let tmp = temp("bad");
    let dir = tmp.path();
    write_set(dir, false);
    let d = dir.to_str().unwrap();
    // 2: a usage error (the value does not parse); 1: it parses, but does not hold.
    for (args, needle, code) in [
        (vec!["report", d, "--format", "pdf"], "use terminal, md, csv, json or html", 2),
        (vec!["report", "/nonexistent/results"], "not a stackbench result directory", 1),
        (vec!["report", d, "--reference", "cobol"], "--reference cobol: no measured contestant", 1),
        (vec!["report", d, "--out", "/tmp/report-without-extension"], "add --format", 1),
        (vec!["compare", d, d, "--max-regression", "lots"], "not a percentage", 2),
    ] {
        let out = stackbench(&args);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
    }
}

#[test]
fn compare_exits_4_on_a_regression_only() {
    let (ta, tb) = (temp("base"), temp("new"));
    let (a, b) = (ta.path(), tb.path());
    write_set(a, false);
    write_set(b, true);
    let (da, db) = (a.to_str().unwrap(), b.to_str().unwrap());

    let same = stackbench(&["compare", da, da]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same.stderr));
    assert!(text(&same.stdout).contains("No regression."));

    let worse = stackbench(&["compare", da, db]);
    assert_eq!(worse.status.code(), Some(4), "{}", text(&worse.stderr));
    let out = text(&worse.stdout);
    assert!(out.contains("REGRESSION") && out.contains("1 regression: 'flask' (dummy): −20.0%"), "{out}");

    let allowed = stackbench(&["compare", da, db, "--max-regression", "25%"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", text(&allowed.stdout));

    let md = a.join("compare.md");
    let file = stackbench(&["compare", da, db, "--out", md.to_str().unwrap()]);
    assert_eq!(file.status.code(), Some(4));
    assert!(std::fs::read_to_string(&md).unwrap().contains("| flask |"));
    assert!(text(&file.stderr).contains("regression: 'flask' (dummy)"), "{}", text(&file.stderr));
}
