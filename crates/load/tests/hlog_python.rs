//! The interval log (`--hlog`) read by an independent implementation: Python's
//! `hdrhistogram` package (HdrHistogram_py, PyPI), whose `HistogramLogReader`
//! is a port of the Java reader. The test needs a Python with that package,
//! named by `STACKBENCH_TEST_HDRH_PYTHON` (`.ci/run` makes a venv for it);
//! without it the test skips visibly, and under `CI=true` it fails.

use std::process::Command;
use std::time::Duration;

use crate::common::{Behavior, start};
use stackbench_load::{Dur, LoadOptions, Stop, run};
use stackbench_testkit::{in_ci, skip};

const VAR: &str = "STACKBENCH_TEST_HDRH_PYTHON";

const READER: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
ref = HdrHistogram(1, 60_000_000, 3)
reader = HistogramLogReader(sys.argv[1], ref)
total = HdrHistogram(1, 60_000_000, 3)
intervals = 0
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    intervals += 1
    total.add(h)
print(json.dumps({
    "intervals": intervals,
    "count": total.get_total_count(),
    "p50": total.get_value_at_percentile(50),
    "p99": total.get_value_at_percentile(99),
    "max": total.get_max_value(),
    "encoded": total.encode().decode(),
}))
"#;

#[test]
fn python_hdrhistogram_reads_the_interval_log() {
    let Some(python) = std::env::var(VAR).ok().filter(|p| !p.trim().is_empty()) else {
        assert!(
            !in_ci(),
            "{VAR} is not set, and CI=true: .ci/run makes a venv with hdrhistogram for this test"
        );
        skip(&format!("{VAR} is not set; point it at a python with `pip install hdrhistogram`"));
        return;
    };
    let s = start(Behavior { delay: Some(Duration::from_millis(2)), ..Behavior::default() });
    let dir = std::env::temp_dir().join(format!("sb-load-hlog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.hlog");
    let o = LoadOptions {
        connections: Some(4),
        duration: Some(Dur(Duration::from_millis(2500))),
        threads: Some(2),
        ..LoadOptions::default()
    };
    let mut spec = o.to_spec(&s.url("/")).unwrap();
    spec.hlog = Some(path.clone());
    let r = stackbench_testkit::record::valid(run(&spec, &Stop::new()).unwrap());

    let out = Command::new(&python).arg("-c").arg(READER).arg(&path).output().expect("run python");
    assert!(out.status.success(), "python failed: {}", String::from_utf8_lossy(&out.stderr));
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["intervals"], r.timeline.len() as u64, "{got}");
    assert_eq!(got["count"], r.summary.latency.count, "{got}");
    assert_eq!(got["max"], r.summary.latency.max_us, "{got}");
    // Python's sum of the intervals, encoded by Python, is bucket for bucket the run's histogram.
    let theirs = stackbench_record::decode_histogram(got["encoded"].as_str().unwrap()).unwrap();
    let ours = stackbench_record::decode_histogram(&r.histogram).unwrap();
    let buckets = |h: &hdrhistogram::Histogram<u64>| {
        h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect::<Vec<_>>()
    };
    assert_eq!(buckets(&theirs), buckets(&ours));
    std::fs::remove_dir_all(&dir).unwrap();
}
