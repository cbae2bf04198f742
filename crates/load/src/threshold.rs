//! `--threshold` pass/fail criteria, k6-style (`p99<50ms`, `errors<1%`,
//! `rps>1000`): parsed once, evaluated against a finished run's summary. A run
//! with a failed threshold makes `stackbench load` (and `stackbench merge`)
//! exit with code 99, so a CI pipeline can gate on it.
//!
//! Grammar: `METRIC OP VALUE[UNIT]` with OP one of `<`, `<=`, `>`, `>=`.
//! Latency metrics (`min`, `avg`, `stdev`, `p50`, `p90`, `p95`, `p99`,
//! `p99.9`, `max`) take a unit `us`, `ms` or `s`; `errors` takes `%` (of all
//! requests) or a plain count; `rps`, `ok_rps`, `requests`, `late` take a plain
//! number. The measured value is reported in the expression's own unit.
//!
//! With a scenario file, `METRIC{NAME}OP VALUE` holds one request name (or
//! `iteration`) to the bound instead of the totals: `p99{GET /todos/{{todo_id}}}<20ms`.

use std::fmt;
use std::str::FromStr;

use serde::Deserialize;
use stackbench_record::{Named, Summary, ThresholdOutcome};

/// A parsed threshold.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub struct Threshold {
    pub expression: String,
    metric: Metric,
    op: Op,
    /// The bound, in the unit of [`Threshold::unit_scale`].
    value: f64,
    /// What one unit of the expression is, in the metric's base unit (µs for
    /// latency, 1 for counts, 1 for a percentage).
    unit_scale: f64,
    /// `METRIC{NAME}`: the request name (or `iteration`) it holds to the bound.
    pub request: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Metric {
    /// A latency quantity, µs.
    Latency(LatencyStat),
    ErrorsPercent,
    ErrorsCount,
    Rps,
    OkRps,
    Requests,
    Late,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum LatencyStat {
    Min,
    Avg,
    Stdev,
    Quantile(u32), // in tenths of a percent: p99.9 -> 999
    Max,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.expression)
    }
}

impl TryFrom<String> for Threshold {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl FromStr for Threshold {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        // `METRIC{NAME}REST`: the name is kept as written (it may hold spaces and `{{...}}`).
        let (s, request) = match (s.find('{'), s.rfind('}')) {
            (Some(open), Some(close)) if open < close => {
                let name = s[open + 1..close].trim();
                if name.is_empty() {
                    return Err(format!("threshold {s:?}: write a request name between {{ and }}"));
                }
                let mut unnamed = s[..open].to_owned();
                unnamed.push_str(&s[close + 1..]);
                let t: Threshold = unnamed.parse()?;
                let (metric, rest) = t.expression.split_at(t.expression.find(['<', '>']).unwrap_or(0));
                let expression = format!("{metric}{{{name}}}{rest}");
                return Ok(Threshold { expression, request: Some(name.to_owned()), ..t });
            }
            (None, None) => (s, None::<String>),
            _ => {
                return Err(format!(
                    "threshold {s:?}: a request name goes between {{ and }}, like p99{{GET /a}}<20ms"
                ));
            }
        };
        let expression: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        let help = "write it like p99<50ms, errors<1% or rps>1000";
        let at = expression
            .find(['<', '>'])
            .ok_or_else(|| format!("threshold {s:?} has no comparison (< <= > >=); {help}"))?;
        let (name, rest) = expression.split_at(at);
        let (op, rest) = if let Some(r) = rest.strip_prefix("<=") {
            (Op::Le, r)
        } else if let Some(r) = rest.strip_prefix(">=") {
            (Op::Ge, r)
        } else if let Some(r) = rest.strip_prefix('<') {
            (Op::Lt, r)
        } else {
            (Op::Gt, &rest[1..])
        };
        let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let (num, unit) = rest.split_at(number_end);
        let value: f64 =
            num.parse().map_err(|_| format!("threshold {s:?}: {num:?} is not a number; {help}"))?;
        let latency = |stat| -> Result<(Metric, f64), String> {
            let scale = match unit {
                "us" | "µs" => 1.0,
                "ms" => 1_000.0,
                "s" => 1_000_000.0,
                "" => return Err(format!("threshold {s:?}: a latency needs a unit (us, ms or s)")),
                u => return Err(format!("threshold {s:?}: unknown unit {u:?}; use us, ms or s")),
            };
            Ok((Metric::Latency(stat), scale))
        };
        let plain = |m| -> Result<(Metric, f64), String> {
            if unit.is_empty() {
                Ok((m, 1.0))
            } else {
                Err(format!("threshold {s:?}: {name} takes a plain number, not {unit:?}"))
            }
        };
        let (metric, unit_scale) = match name {
            "min" => latency(LatencyStat::Min)?,
            "avg" | "mean" => latency(LatencyStat::Avg)?,
            "stdev" => latency(LatencyStat::Stdev)?,
            "max" => latency(LatencyStat::Max)?,
            "med" | "median" => latency(LatencyStat::Quantile(500))?,
            "errors" if unit == "%" => (Metric::ErrorsPercent, 1.0),
            "errors" => plain(Metric::ErrorsCount)?,
            "rps" => plain(Metric::Rps)?,
            "ok_rps" => plain(Metric::OkRps)?,
            "requests" => plain(Metric::Requests)?,
            "late" => plain(Metric::Late)?,
            q if q.starts_with('p') => {
                let tenths = match &q[1..] {
                    "50" => 500,
                    "90" => 900,
                    "95" => 950,
                    "99" => 990,
                    "99.9" | "999" => 999,
                    other => {
                        return Err(format!(
                            "threshold {s:?}: unknown percentile p{other}; use p50, p90, p95, p99 or p99.9"
                        ));
                    }
                };
                latency(LatencyStat::Quantile(tenths))?
            }
            other => {
                return Err(format!(
                    "threshold {s:?}: unknown metric {other:?}; use min, avg, stdev, p50, p90, p95, p99, \
                     p99.9, max, errors, rps, ok_rps, requests or late"
                ));
            }
        };
        Ok(Threshold { expression, metric, op, value, unit_scale, request })
    }
}

impl Threshold {
    /// Evaluates the threshold against a run's summary.
    /// `p99 14.2 ms, not < 10 ms`: a missed objective, in its own unit.
    pub fn missed(&self, outcome: &ThresholdOutcome) -> String {
        let unit = match (self.metric, self.unit_scale) {
            (Metric::Latency(_), s) if s >= 1_000_000.0 => " s",
            (Metric::Latency(_), s) if s >= 1_000.0 => " ms",
            (Metric::Latency(_), _) => " µs",
            (Metric::ErrorsPercent, _) => "%",
            _ => "",
        };
        let op = match self.op {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        };
        let name = match self.expression.rfind('}') {
            Some(close) => &self.expression[..=close],
            None => self.expression.split(['<', '>']).next().unwrap_or(""),
        };
        let show = |v: f64| {
            if v.abs() >= 100.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.3}").trim_end_matches('0').trim_end_matches('.').to_owned()
            }
        };
        format!("{name} {}{unit}, not {op} {}{unit}", show(outcome.actual), show(self.value))
    }

    /// Evaluates the threshold against a run: its summary, or, for `METRIC{NAME}`, the
    /// requests of that name (`iteration`: the iterations) of a scenario-file run. A name the
    /// run does not have fails.
    pub fn evaluate_run(
        &self,
        s: &Summary,
        per_request: &[Named],
        iterations: Option<&Named>,
    ) -> ThresholdOutcome {
        let Some(name) = &self.request else { return self.evaluate(s) };
        let found = per_request.iter().chain(iterations).find(|n| n.name == *name);
        let Some(n) = found else {
            return ThresholdOutcome { expression: self.expression.clone(), actual: 0.0, passed: false };
        };
        let part = Summary {
            requests: n.requests,
            ok: n.ok,
            errors: n.error_count(),
            rps: n.rps,
            ok_rps: if n.requests == 0 { 0.0 } else { n.rps * n.ok as f64 / n.requests as f64 },
            latency: n.latency,
            late: n.errors.get("late").copied().unwrap_or(0),
            ..s.clone()
        };
        self.evaluate_totals(&part)
    }

    /// Evaluates the threshold against a run's summary (a `METRIC{NAME}` threshold fails: it
    /// needs the run's requests by name, [`Threshold::evaluate_run`]).
    pub fn evaluate(&self, s: &Summary) -> ThresholdOutcome {
        if self.request.is_some() {
            return ThresholdOutcome { expression: self.expression.clone(), actual: 0.0, passed: false };
        }
        self.evaluate_totals(s)
    }

    fn evaluate_totals(&self, s: &Summary) -> ThresholdOutcome {
        let l = &s.latency;
        let base = match self.metric {
            Metric::Latency(stat) => match stat {
                LatencyStat::Min => l.min_us as f64,
                LatencyStat::Avg => l.mean_us,
                LatencyStat::Stdev => l.stdev_us,
                LatencyStat::Max => l.max_us as f64,
                LatencyStat::Quantile(500) => l.p50_us as f64,
                LatencyStat::Quantile(900) => l.p90_us as f64,
                LatencyStat::Quantile(950) => l.p95_us as f64,
                LatencyStat::Quantile(990) => l.p99_us as f64,
                LatencyStat::Quantile(_) => l.p999_us as f64,
            },
            Metric::ErrorsPercent if s.requests == 0 => 0.0,
            Metric::ErrorsPercent => 100.0 * s.errors as f64 / s.requests as f64,
            Metric::ErrorsCount => s.errors as f64,
            Metric::Rps => s.rps,
            Metric::OkRps => s.ok_rps,
            Metric::Requests => s.requests as f64,
            Metric::Late => s.late as f64,
        };
        let actual = base / self.unit_scale;
        // A latency threshold over a run in which nothing completed cannot pass.
        let nothing = matches!(self.metric, Metric::Latency(_)) && l.count == 0;
        let passed = !nothing
            && match self.op {
                Op::Lt => actual < self.value,
                Op::Le => actual <= self.value,
                Op::Gt => actual > self.value,
                Op::Ge => actual >= self.value,
            };
        ThresholdOutcome { expression: self.expression.clone(), actual, passed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stackbench_record::{Checks, Latency};

    fn summary() -> Summary {
        Summary {
            duration_s: 10.0,
            requests: 1000,
            ok: 990,
            errors: 10,
            rps: 100.0,
            ok_rps: 99.0,
            bytes_sent: 0,
            bytes_received: 0,
            latency: Latency {
                count: 990,
                min_us: 100,
                mean_us: 2_000.0,
                stdev_us: 50.0,
                p50_us: 1_500,
                p90_us: 3_000,
                p95_us: 4_000,
                p99_us: 45_000,
                p999_us: 70_000,
                max_us: 90_000,
            },
            service_latency: None,
            late: 3,
            checks: Checks::default(),
            corrected_for_coordinated_omission: false,
        }
    }

    fn eval(e: &str) -> ThresholdOutcome {
        e.parse::<Threshold>().unwrap().evaluate(&summary())
    }

    #[test]
    fn evaluates_in_the_expressions_unit() {
        let o = eval("p99<50ms");
        assert!(o.passed && (o.actual - 45.0).abs() < 1e-9, "{o:?}");
        assert!(!eval("p99 < 0.04s").passed);
        assert!((eval("p99<0.04s").actual - 0.045).abs() < 1e-9);
        assert!(eval("p99.9<=70ms").passed);
        assert!(!eval("p99.9<70ms").passed);
        assert!(eval("avg<2001us").passed);
        assert!(eval("errors<=1%").passed);
        assert!(!eval("errors<1%").passed);
        assert!(eval("errors<11").passed);
        assert!(eval("rps>99.5").passed && !eval("ok_rps>=99.5").passed);
        assert!(eval("late<4").passed && eval("requests>=1000").passed);
    }

    #[test]
    fn nothing_completed_fails_latency_thresholds() {
        let mut s = summary();
        s.latency = Latency::default();
        assert!(!"p99<1s".parse::<Threshold>().unwrap().evaluate(&s).passed);
    }

    #[test]
    fn bad_expressions_say_what_to_fix() {
        for (bad, says) in [
            ("p99", "no comparison"),
            ("p99<50", "needs a unit"),
            ("p99<50min", "unknown unit"),
            ("p42<5ms", "unknown percentile"),
            ("latency<5ms", "unknown metric"),
            ("rps>1k", "plain number"),
            ("rps>abc", "not a number"),
        ] {
            let e = bad.parse::<Threshold>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_threshold_may_name_one_request() {
        let t: Threshold = "p99{GET /todos/{{todo_id}}} < 20ms".parse().unwrap();
        assert_eq!(t.request.as_deref(), Some("GET /todos/{{todo_id}}"));
        assert_eq!(t.expression, "p99{GET /todos/{{todo_id}}}<20ms");
        let named = |name: &str, p99_us: u64, requests: u64, ok: u64| Named {
            name: name.to_owned(),
            requests,
            ok,
            rps: requests as f64,
            errors: std::collections::BTreeMap::from([("check".to_owned(), requests - ok)]),
            latency: Latency { count: requests, p99_us, ..Latency::default() },
            histogram: String::new(),
            not_sent: Vec::new(),
        };
        let s = summary();
        let fast = [named("POST /todos", 50_000, 10, 10), named("GET /todos/{{todo_id}}", 12_000, 10, 10)];
        let o = t.evaluate_run(&s, &fast, None);
        assert!(o.passed && (o.actual - 12.0).abs() < 1e-9, "{o:?}");
        let slow = [named("GET /todos/{{todo_id}}", 25_000, 10, 10)];
        assert!(!t.evaluate_run(&s, &slow, None).passed);
        assert_eq!(
            t.missed(&t.evaluate_run(&s, &slow, None)),
            "p99{GET /todos/{{todo_id}}} 25 ms, not < 20 ms"
        );
        // A name the run does not have fails, and so does the summary alone.
        assert!(!t.evaluate_run(&s, &[], None).passed);
        assert!(!t.evaluate(&s).passed);
        let errors: Threshold = "errors{iteration}<10%".parse().unwrap();
        let it = named("iteration", 1, 10, 8);
        assert!(!errors.evaluate_run(&s, &fast, Some(&it)).passed, "20% of the iterations failed");
        assert!("errors{}<1%".parse::<Threshold>().unwrap_err().contains("request name"));
        assert!("p99{GET /a<20ms".parse::<Threshold>().unwrap_err().contains("between {"));
    }
}
