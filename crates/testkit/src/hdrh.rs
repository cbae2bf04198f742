//! Interval logs (`--hlog`) read by an independent implementation: Python's `hdrhistogram`
//! package (HdrHistogram_py), a port of the Java reader, named by
//! `STACKBENCH_TEST_HDRH_PYTHON` (`.ci/run` makes a venv with it).

/// The environment variable naming a Python with `hdrhistogram` installed.
pub const PYTHON: &str = "STACKBENCH_TEST_HDRH_PYTHON";

/// A Python program that adds up every interval of the logs named on its command line and
/// prints, as JSON: `intervals`, `count`, `p50`, `p90`, `p95`, `p99`, `p999`, `max` and the
/// sum `encoded` (V2 compressed, base64). Its percentiles are HdrHistogram's (Java's
/// `getValueAtPercentile`, Rust's `value_at_quantile`): the highest equivalent value of the
/// bucket that holds the ⌈q·n⌉-th latency, taken from the package's own bucket walk. (The
/// package's `get_value_at_percentile` rounds the rank to the nearest instead, so it can say
/// one rank less; `py_p99` is what it says, for comparison.)
pub const UNION: &str = r#"
import json, math, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
total = HdrHistogram(1, 60_000_000, 3)
intervals = 0
for path in sys.argv[1:]:
    reader = HistogramLogReader(path, HdrHistogram(1, 60_000_000, 3))
    while True:
        h = reader.get_next_interval_histogram()
        if h is None:
            break
        intervals += 1
        total.add(h)
def at(q):
    rank = max(1, math.ceil(q * total.get_total_count()))
    seen = 0
    for step in total.get_recorded_iterator():
        seen += step.count_added_in_this_iter_step
        if seen >= rank:
            return total.get_highest_equivalent_value(step.value_iterated_to)
    return 0
print(json.dumps({
    "intervals": intervals,
    "count": total.get_total_count(),
    "p50": at(0.50),
    "p90": at(0.90),
    "p95": at(0.95),
    "p99": at(0.99),
    "p999": at(0.999),
    "max": total.get_max_value(),
    "py_p99": total.get_value_at_percentile(99),
    "encoded": total.encode().decode(),
}))
"#;
