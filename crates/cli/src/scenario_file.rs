//! `stackbench verify URL --scenario-file F`: a scenario of the user's own
//! (a `.toml` scenario or a `.hurl` file, `crates/hurl`), its verification
//! cases run once against URL with the orchestrator's prober, each failed
//! check printed with its `file:line:col`. Exit 0 when every core case holds,
//! 1 otherwise (and for a scenario file that does not load).

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, bail};
use stackbench_hurl::model::Entry;
use stackbench_hurl::run::{Verification, verify as run_cases};
use stackbench_hurl::scenario::{Level, Protocol, Scenario};
use stackbench_hurl::{Answer, Request};
use stackbench_run::client::{HyperProber, Reply};

use crate::exit;

/// How long one request of a case may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// An answer of the prober, as the checks see it.
struct Answered(Reply);

impl Answer for Answered {
    fn status(&self) -> u16 {
        self.0.status
    }
    fn header(&self, name: &str, nth: usize) -> Option<&str> {
        let mut values = self.0.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name));
        values.nth(nth).and_then(|(_, v)| std::str::from_utf8(v).ok())
    }
    fn body(&self) -> &[u8] {
        &self.0.body
    }
}

pub fn verify(url: &str, file: &Path, variables: &[String]) -> anyhow::Result<ExitCode> {
    let defined: Vec<(&str, &str)> = variables
        .iter()
        .map(|v| v.split_once('=').ok_or_else(|| anyhow!("--variable {v:?}: write NAME=VALUE")))
        .collect::<anyhow::Result<_>>()?;
    let names: Vec<&str> = defined.iter().map(|(k, _)| *k).collect();
    let scenario = Scenario::load(file, &names)?;
    if scenario.protocol != Protocol::Http1 {
        bail!("{}: verify runs HTTP/1.1 scenario files for now (this one is h2c or gRPC)", file.display());
    }
    let prober = HyperProber::new()?;
    let mut send = |e: &Entry, req: &Request| -> Result<Answered, String> {
        let url = std::str::from_utf8(&req.url).map_err(|_| "the URL is not UTF-8".to_owned())?;
        let headers = std::str::from_utf8(&req.headers).map_err(|_| "a header is not UTF-8".to_owned())?;
        let headers: Vec<(&str, &str)> =
            headers.split("\r\n").filter_map(|l| l.split_once(':')).map(|(k, v)| (k, v.trim())).collect();
        prober
            .send_http1(url, &e.method, &headers, &req.body, TIMEOUT)
            .map(Answered)
            .map_err(|e| e.to_string())
    };
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut reset = |argv: &[String]| -> Result<(), String> {
        let status = std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(dir)
            .status()
            .map_err(|e| format!("cannot run {:?}: {e}", argv[0]))?;
        if status.success() { Ok(()) } else { Err(format!("{argv:?} exited with {status}")) }
    };
    let v = run_cases(&scenario, url.trim_end_matches('/'), &defined, 1, &mut send, &mut reset);
    print(&v, url, &scenario.name)?;
    Ok(exit::code(if v.passed() { exit::OK } else { exit::ERROR }))
}

fn print(v: &Verification, url: &str, name: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    for c in &v.cases {
        let level = match c.level {
            Level::Core => "core",
            Level::Hardening => "hardening",
        };
        let result = if c.passed() { "ok    " } else { "FAILED" };
        writeln!(out, "{result}  {level:<9}  {}", c.name)?;
        write!(out, "{c}")?;
    }
    let failed = |level| v.cases.iter().filter(|c| c.level == level && !c.passed()).count();
    match (failed(Level::Core), failed(Level::Hardening)) {
        (0, 0) => writeln!(out, "{url}: passes the {name} scenario ({} cases)", v.cases.len()),
        (0, h) => writeln!(
            out,
            "{url}: passes the {name} scenario's core cases, with warnings: {h} hardening case(s) failed"
        ),
        (c, _) => writeln!(out, "{url}: failed {c} core case(s) of the {name} scenario"),
    }
}
