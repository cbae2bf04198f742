//! The HTML report in a real browser: headless Chromium (Debian's
//! `chromium`, installed by `.ci/run`) opens the report of the synthetic
//! result store offline. The test fails on any console message (a script
//! error, a blocked fetch: the page's Content-Security-Policy forbids every
//! network load, so a stray dependency shows up here), checks that every
//! chart is in the parsed DOM, and writes a phone and a desktop screenshot as
//! CI artifacts (paths printed). Two control pages prove the console check
//! can fail. A second test measures the laid-out page with the real fonts,
//! in a 390 px (phone) and a 1280 px frame: no text of a chart overlaps
//! another or leaves its chart, no chart is wider than its box or 32rem,
//! nothing widens the page; a control page proves the overlap check can
//! fail. Without Chromium the tests skip visibly, unless `CI=true`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use stackbench_report::synthetic::{extremes, three_kings};
use stackbench_report::{Analysis, AnalysisOptions};
use stackbench_report::{Format, RenderOptions, render};

/// Chromium's path: `STACKBENCH_CHROMIUM`, else the usual names on `PATH`.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("STACKBENCH_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

struct Output {
    stdout: String,
    stderr: String,
}

/// Runs Chromium headless with a fresh profile on a local file, killed after 120 s.
fn run_chromium(browser: &Path, page: &Path, extra: &[String], tag: &str) -> Output {
    let profile = out_dir().join(format!("profile-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()))
    .stdin(Stdio::null());
    let stdout_path = profile.with_extension("out");
    let stderr_path = profile.with_extension("err");
    cmd.stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::fs::File::create(&stderr_path).unwrap());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {}: {e}", browser.display()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_mins(2) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("Chromium did not finish within 120 s on {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = Output {
        stdout: std::fs::read_to_string(&stdout_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&stderr_path).unwrap_or_default(),
    };
    let _ = std::fs::remove_dir_all(&profile);
    let _ = std::fs::remove_file(&stdout_path);
    let _ = std::fs::remove_file(&stderr_path);
    assert!(status.success(), "Chromium failed ({status}) on {}:\n{}", page.display(), out.stderr);
    out
}

/// The console messages Chromium logged for the page.
fn console_messages(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Chromium, or `None` after saying the test is skipped (an error in CI).
fn browser_or_skip() -> Option<PathBuf> {
    let browser = chromium();
    if browser.is_none() {
        assert!(
            !stackbench_testkit::in_ci(),
            "CI=true but no Chromium (install Debian's chromium, as .ci/run does, or set STACKBENCH_CHROMIUM)"
        );
        stackbench_testkit::skip(
            "Chromium not found; install Debian's `chromium` or set STACKBENCH_CHROMIUM",
        );
    }
    browser
}

#[test]
fn html_report_opens_offline_without_console_errors_and_shows_every_chart() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let dir = out_dir();

    // Controls: the check sees a script's console error, and the page's
    // policy blocking a script.
    let control = dir.join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><html><body><script>console.error('control')</script></body></html>",
    )
    .unwrap();
    let logged = run_chromium(&browser, &control, &["--dump-dom".into()], "control");
    assert!(console_messages(&logged.stderr).iter().any(|l| l.contains("control")), "{}", logged.stderr);
    let analysis = Analysis::from_results(&three_kings("results/three-kings"), &AnalysisOptions::default());
    let html = render(&analysis, Format::Html, &RenderOptions::default());
    let head_end = html.find("</head>").unwrap();
    let blocked = dir.join("control-csp.html");
    std::fs::write(&blocked, format!("{}<script>1</script>{}", &html[..head_end], &html[head_end..]))
        .unwrap();
    let refused = run_chromium(&browser, &blocked, &["--dump-dom".into()], "csp");
    assert!(
        console_messages(&refused.stderr).iter().any(|l| l.contains("Content Security Policy")),
        "the report's policy must block scripts: {}",
        refused.stderr
    );

    // The report itself.
    let page = dir.join("report.html");
    std::fs::write(&page, &html).unwrap();
    let dom = run_chromium(&browser, &page, &["--dump-dom".into()], "dom");
    let console = console_messages(&dom.stderr);
    assert!(console.is_empty(), "console messages:\n{}", console.join("\n"));
    let count = |kind: &str| dom.stdout.matches(&format!("data-chart=\"{kind}\"")).count();
    let scenarios = analysis.scenarios.len();
    for kind in ["throughput", "percentiles", "cpu", "rss", "cold-start", "artifact"] {
        assert_eq!(count(kind), scenarios, "one {kind} chart per scenario in the DOM");
    }
    let measured: usize = analysis.scenarios.iter().map(|s| s.contestants.len()).sum();
    assert_eq!(count("signature"), measured, "one signature per measured contestant");
    assert_eq!(dom.stdout.matches("<svg").count(), 6 * scenarios + measured);
    for s in &analysis.scenarios {
        assert!(dom.stdout.contains(&format!("<h2>{}</h2>", s.name)));
    }

    for (name, size) in [("report-phone.png", "390,2600"), ("report-desktop.png", "1280,3200")] {
        let shot = dir.join(name);
        let _ = std::fs::remove_file(&shot);
        let out = run_chromium(
            &browser,
            &page,
            &[format!("--window-size={size}"), format!("--screenshot={}", shot.display())],
            name,
        );
        let console = console_messages(&out.stderr);
        assert!(console.is_empty(), "console messages:\n{}", console.join("\n"));
        let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot {}: {e}", shot.display()));
        assert!(png.starts_with(b"\x89PNG") && png.len() > 20_000, "{} looks empty", shot.display());
        say(&format!("screenshot (CI artifact): {}", shot.display()));
    }
}

/// Measures a page shown in an iframe of the given width (the frame's
/// document is the report, unchanged, its policy included) and writes what
/// is wrong, or `ok`, into `#layout-check`. Text boxes are the browser's own.
const LAYOUT_CHECK: &str = r#"
function check(doc) {
  const out = [];
  const vw = doc.documentElement.clientWidth;
  if (doc.documentElement.scrollWidth > vw + 1)
    out.push('the page is ' + doc.documentElement.scrollWidth + ' px wide in a ' + vw + ' px window');
  const name = (svg) => svg.getAttribute('data-chart') + ' "' + (svg.querySelector('title') || {}).textContent + '"';
  for (const svg of doc.querySelectorAll('svg')) {
    const r = svg.getBoundingClientRect();
    const box = svg.parentElement.getBoundingClientRect();
    if (r.width > box.width + 1) out.push(name(svg) + ' is ' + r.width + ' px wide in a ' + box.width + ' px box');
    if (r.width > 32 * 16 + 1) out.push(name(svg) + ' is ' + r.width + ' px wide, more than 32rem');
    const texts = [...svg.querySelectorAll('text')].map(t => [t, t.getBoundingClientRect()]);
    for (const [t, b] of texts)
      if (b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1 || b.bottom > r.bottom + 1)
        out.push(name(svg) + ': "' + t.textContent + '" leaves the chart');
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
      const [ta, a] = texts[i], [tb, b] = texts[j];
      const ox = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const oy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      // A text's box includes its line spacing: glyphs meet when the boxes overlap by more.
      if (ox > 0.5 && oy > 0.25 * Math.min(a.height, b.height))
        out.push(name(svg) + ': "' + ta.textContent + '" overlaps "' + tb.textContent + '"');
    }
  }
  for (const t of doc.querySelectorAll('.table'))
    if (t.getBoundingClientRect().right > vw + 1) out.push('a table reaches past the window');
  return out.length ? out.join('\n') : 'ok';
}
document.getElementById('frame').onload = function () {
  document.getElementById('layout-check').textContent = check(this.contentDocument);
};
"#;

/// What [`LAYOUT_CHECK`] found on `page` at `width` px.
fn layout_problems(browser: &Path, page: &Path, width: u32) -> String {
    let file = page.file_name().unwrap().to_str().unwrap();
    let check = page.with_file_name(format!("check-{width}-{file}"));
    std::fs::write(
        &check,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0\"><iframe id=\"frame\" src=\"{file}\" \
             style=\"width:{width}px;height:3000px;border:0\"></iframe><pre id=\"layout-check\">not run</pre>\
             <script>{LAYOUT_CHECK}</script></body></html>"
        ),
    )
    .unwrap();
    let dom = run_chromium(
        browser,
        &check,
        &["--allow-file-access-from-files".into(), "--dump-dom".into()],
        &format!("layout-{width}"),
    );
    let start = dom.stdout.find("<pre id=\"layout-check\">").expect("the check's output") + 23;
    let end = start + dom.stdout[start..].find("</pre>").unwrap();
    dom.stdout[start..end].replace("&quot;", "\"").replace("&amp;", "&")
}

/// Regression: tick labels overlapped (throughput axis, 99.99% and
/// 99.999%), and a lone contestant's signature filled a desktop screen.
#[test]
fn html_report_charts_fit_a_phone_and_a_desktop_without_overlapping_text() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let dir = out_dir();
    // Control: two texts drawn over each other are seen.
    let control = dir.join("control-overlap.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><html><body><figure><svg viewBox=\"0 0 200 50\" data-chart=\"control\">\
         <text x=\"10\" y=\"20\">99.99%</text><text x=\"30\" y=\"22\">99.999%</text></svg></figure></body></html>",
    )
    .unwrap();
    let found = layout_problems(&browser, &control, 390);
    assert!(found.contains("\"99.99%\" overlaps \"99.999%\""), "the control must fail: {found}");

    let options = AnalysisOptions::default();
    for (name, set) in
        [("report.html", three_kings("results/three-kings")), ("extremes.html", extremes("results/extremes"))]
    {
        let page = dir.join(name);
        std::fs::write(
            &page,
            render(&Analysis::from_results(&set, &options), Format::Html, &RenderOptions::default()),
        )
        .unwrap();
        for width in [390, 1280] {
            let found = layout_problems(&browser, &page, width);
            assert_eq!(found, "ok", "{name} at {width} px");
        }
    }
    let page = dir.join("extremes.html");
    for (name, size) in [("extremes-phone.png", "390,6000"), ("extremes-desktop.png", "1280,6000")] {
        let shot = dir.join(name);
        run_chromium(
            &browser,
            &page,
            &[format!("--window-size={size}"), format!("--screenshot={}", shot.display())],
            name,
        );
        say(&format!("screenshot (CI artifact): {}", shot.display()));
    }
}
