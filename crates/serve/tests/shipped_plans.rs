//! Every command line of a shipped plan (`plans/*.toml`, `contestants/*/plan.toml`)
//! that starts a Rust contestant (`{bin_dir}/sb-…`) or seeds with
//! `{bin_dir}/sb-db-read seed` parses with that binary's own argument
//! definition: a flag renamed or removed here fails this test, not a plan run.

use clap::Parser as _;
use stackbench_serve::{BubbleSortCli, DbReadCli, DummyCli, EventLogCli};

/// A placeholder-free argument, as the orchestrator would pass it.
fn fill(arg: &str) -> String {
    arg.replace("{port}", "0").replace("{scratch}", "/tmp/scratch").replace("{plan_dir}", "/tmp/plan")
}

/// Parses `argv` (its first element `{bin_dir}/sb-NAME`) with that binary's definition.
fn parse(argv: &[String]) -> Result<(), String> {
    let name = argv[0].trim_start_matches("{bin_dir}/");
    let argv: Vec<String> = argv.iter().map(|a| fill(a)).collect();
    let parsed = match name {
        "sb-dummy" => DummyCli::try_parse_from(&argv).map(drop),
        "sb-event-log" => EventLogCli::try_parse_from(&argv).map(drop),
        "sb-bubble-sort" => BubbleSortCli::try_parse_from(&argv).map(drop),
        "sb-db-read" => DbReadCli::try_parse_from(&argv).map(drop),
        other => return Err(format!("no Rust contestant is called {other}")),
    };
    parsed.map_err(|e| e.to_string())
}

/// Every `{bin_dir}/sb-…` command line in `value`: string arrays that start with
/// one, and the words after one inside a shell string (`sh -c "… && {bin_dir}/sb-db-read seed --store URL"`).
fn command_lines(value: &toml::Value, out: &mut Vec<Vec<String>>) {
    match value {
        toml::Value::Array(items) => {
            let words: Vec<&str> = items.iter().filter_map(toml::Value::as_str).collect();
            if words.len() == items.len() && words.first().is_some_and(|w| w.starts_with("{bin_dir}/sb-")) {
                out.push(words.iter().map(|w| (*w).to_owned()).collect());
            } else {
                for v in items {
                    command_lines(v, out);
                }
            }
        }
        toml::Value::Table(t) => {
            for v in t.values() {
                command_lines(v, out);
            }
        }
        toml::Value::String(s) if s.contains(' ') => {
            for part in s.split(['&', ';', '|']).map(str::trim) {
                if part.starts_with("{bin_dir}/sb-") {
                    out.push(part.split_whitespace().map(|w| w.trim_matches('\'').to_owned()).collect());
                }
            }
        }
        _ => {}
    }
}

#[test]
fn every_shipped_sb_command_line_parses() {
    let mut seen = 0;
    for path in stackbench_testkit::contestants::shipped_plans() {
        let text = std::fs::read_to_string(&path).unwrap();
        let value: toml::Value = toml::from_str(&text).unwrap();
        let mut lines = Vec::new();
        command_lines(&value, &mut lines);
        for argv in lines {
            if let Err(e) = parse(&argv) {
                panic!("{}: {argv:?} does not parse:\n{e}", path.display());
            }
            seen += 1;
        }
    }
    // db-drivers alone starts eight Rust drivers and seeds every database.
    assert!(seen >= 40, "only {seen} sb-* command lines found: is the walk still right?");
}

#[test]
fn the_walk_finds_stale_flags() {
    let plan: toml::Value = toml::from_str(
        "[[contestant]]\ncommand = [\"{bin_dir}/sb-db-read\", \"--port\", \"{port}\", \"--postgres\", \"postgres://h/db\"]\n\
         build = [\"sh\", \"-c\", \"x.sh && {bin_dir}/sb-db-read seed --store 'ftp://h'\"]\n",
    )
    .unwrap();
    let mut lines = Vec::new();
    command_lines(&plan, &mut lines);
    assert_eq!(lines.len(), 2, "{lines:?}");
    let errors: Vec<String> = lines.iter().map(|argv| parse(argv).unwrap_err()).collect();
    assert!(errors.iter().any(|e| e.contains("'--postgres'")), "{errors:?}");
    assert!(errors.iter().any(|e| e.contains("ftp://h") && e.contains("sqlite:PATH")), "{errors:?}");
}
