//! `stackbench merge`: one [`RunRecord`] from the records of a load's shards
//! (`--shard I/N` on several generators, `shard`), exactly:
//!
//! - latency histograms are added bucket by bucket (HdrHistogram addition is
//!   lossless), so the merged percentiles are those of the union of every
//!   shard's latencies, not an average of percentiles;
//! - counts, bytes and errors by kind are summed, and so is the generators' CPU;
//! - timelines are lined up on wall-clock seconds (each row's `at_ms`); with
//!   the per-second histograms `--shard` runs keep, each merged second's
//!   percentiles are exact too;
//! - thresholds are evaluated on the merged whole, which is what k6's
//!   distributed runs cannot do.
//!
//! Inputs are read by [`read_records`]: a record file (`--json`), or a stream
//! holding one JSON record per line among other lines (`kubectl logs` of the
//! shards' pods, which also holds their summaries).

use std::collections::BTreeMap;
use std::path::Path;

use hdrhistogram::Histogram;
use stackbench_record::{
    GeneratorUsage, HistogramError, Latency, Model, Named, RunRecord, SCHEMA_VERSION, Second, Summary,
    decode_histogram, encode_histogram, new_histogram,
};

use crate::threshold::Threshold;

/// Shards whose measured starts differ by more than this get a warning.
pub const START_SKEW_MS: u64 = 100;

/// Why records cannot be merged (or read).
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge: no run records were given")]
    Empty,
    #[error(
        "{source_name}: holds no run record (give the files `stackbench load --json` wrote, or its `--json -` lines)"
    )]
    NoRecord { source_name: String },
    #[error("{source_name}, line {line}: not a run record: {why}")]
    Parse { source_name: String, line: usize, why: String },
    #[error("{name}: written with record schema {schema}, and this stackbench reads schema {reads}; merge with the stackbench that wrote it", reads = SCHEMA_VERSION)]
    Schema { name: String, schema: u32 },
    #[error("{name}: its {which} histogram cannot be read: {source}")]
    Histogram { name: String, which: &'static str, source: HistogramError },
    #[error("{first} and {second} are both shard {shard}: give each shard's record once")]
    DuplicateShard { first: String, second: String, shard: String },
    #[error(
        "{first} ran the {first_model} model and {second} the {second_model}: their latencies mean different things and cannot be added"
    )]
    Models { first: String, first_model: &'static str, second: String, second_model: &'static str },
    #[error("cannot write the interval log {path}: {why}")]
    Hlog { path: String, why: String },
}

/// One input record and where it came from (a file name, `stdin`, `stdin line 7`).
#[derive(Debug, Clone)]
pub struct Input {
    pub name: String,
    pub record: RunRecord,
}

/// The merged record and what the merge noticed.
#[derive(Debug, Clone)]
pub struct Merged {
    pub record: RunRecord,
    /// Sentences to show: shards missing, starts apart, parameters that differ.
    pub warnings: Vec<String>,
    /// Spread of the shards' measured starts, milliseconds.
    pub start_skew_ms: u64,
}

/// The records in `text`: one record (a file `--json FILE` wrote, pretty or
/// not), or every line that starts with `{` (`--json -` lines among other
/// output); other lines are skipped, and their number is returned.
pub fn read_records(source_name: &str, text: &str) -> Result<(Vec<Input>, usize), MergeError> {
    let trimmed = text.trim();
    if trimmed.starts_with('{')
        && let Ok(record) = serde_json::from_str::<RunRecord>(trimmed)
    {
        return Ok((vec![Input { name: source_name.to_owned(), record }], 0));
    }
    let (mut records, mut skipped) = (Vec::new(), 0);
    let many = text.lines().filter(|l| l.trim_start().starts_with('{')).count() > 1;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with('{') {
            skipped += usize::from(!line.is_empty());
            continue;
        }
        let record = serde_json::from_str::<RunRecord>(line).map_err(|e| MergeError::Parse {
            source_name: source_name.to_owned(),
            line: i + 1,
            why: e.to_string(),
        })?;
        let name = if many { format!("{source_name} line {}", i + 1) } else { source_name.to_owned() };
        records.push(Input { name, record });
    }
    if records.is_empty() {
        return Err(MergeError::NoRecord { source_name: source_name.to_owned() });
    }
    Ok((records, skipped))
}

fn shard_of(r: &RunRecord) -> Option<(u32, u32)> {
    let s = r.params.extra.get("shard")?.as_str()?;
    let (i, n) = s.split_once('/')?;
    Some((i.parse().ok()?, n.parse().ok()?))
}

fn model_name(m: &Model) -> &'static str {
    match m {
        Model::Closed { .. } => "closed",
        Model::Open { .. } => "open",
    }
}

/// The shards' connections added up: counts summed, connect and handshake times and the
/// requests that opened their connection added bucket by bucket.
fn connections(inputs: &[Input]) -> Result<Option<stackbench_record::Connections>, MergeError> {
    let mut merged: Option<stackbench_record::Connections> = None;
    for i in inputs {
        let Some(c) = &i.record.connections else { continue };
        match &mut merged {
            None => merged = Some(c.clone()),
            Some(m) => m.merge(c).map_err(|source| MergeError::Histogram {
                name: i.name.clone(),
                which: "connections",
                source,
            })?,
        }
    }
    Ok(merged)
}

fn decode(name: &str, which: &'static str, text: &str) -> Result<Histogram<u64>, MergeError> {
    decode_histogram(text).map_err(|source| MergeError::Histogram { name: name.to_owned(), which, source })
}

/// Merges `inputs` (in any order) and evaluates `thresholds` on the whole;
/// with no thresholds given, the shards' own expressions are evaluated on it.
pub fn merge(mut inputs: Vec<Input>, thresholds: &[Threshold]) -> Result<Merged, MergeError> {
    check(&mut inputs)?;
    let mut warnings = coverage(&inputs);
    warnings.extend(differences(&inputs));

    let first = &inputs[0].record;
    let start = inputs.iter().map(|i| i.record.started_at_ms).min().expect("not empty");
    let latest = inputs.iter().map(|i| i.record.started_at_ms).max().expect("not empty");
    let end_ms = inputs
        .iter()
        .map(|i| i.record.started_at_ms as f64 + i.record.summary.duration_s * 1000.0)
        .fold(0.0, f64::max);
    let start_skew_ms = latest - start;
    if start_skew_ms > START_SKEW_MS {
        warnings.push(format!(
            "the shards' measured starts differ by {start_skew_ms} ms (more than {START_SKEW_MS} ms): they did not \
             run together the whole time, so the merged rate is lower than the load's (start them with the same \
             --start-at)"
        ));
    }
    let duration_s = ((end_ms - start as f64) / 1000.0).max(1e-9);
    let totals = totals(&inputs, duration_s)?;
    let (timeline, exact) = timeline(&inputs, start)?;
    if !exact {
        warnings.push(
            "some records have no per-second histograms (they were not run with --shard): each merged second's \
             percentiles are the highest shard's, an upper bound; the whole run's are exact"
                .to_owned(),
        );
    }
    let invalid = inputs.iter().find_map(|i| {
        i.record.invalid.as_ref().map(|v| stackbench_record::Invalid {
            kind: v.kind.clone(),
            reason: format!("{}: {}", i.name, v.reason),
        })
    });
    let same_label = inputs.iter().all(|i| i.record.label == first.label);
    let per_request =
        Named::merge(inputs.iter().flat_map(|i| &i.record.per_request), duration_s).unwrap_or_default();
    let iterations = Named::merge(inputs.iter().filter_map(|i| i.record.iterations.as_ref()), duration_s)
        .and_then(|mut v| v.pop());
    let record = RunRecord {
        schema: SCHEMA_VERSION,
        tool_version: first.tool_version.clone(),
        started_at_ms: start,
        label: if same_label { first.label.clone() } else { stackbench_record::Label::default() },
        params: params(&inputs),
        environment: first.environment.clone(),
        thresholds: expressions(&inputs, thresholds)
            .iter()
            .map(|t| t.evaluate_run(&totals.summary, &per_request, iterations.as_ref()))
            .collect(),
        summary: totals.summary,
        histogram: encode_histogram(&totals.latency),
        service_histogram: totals.service.as_ref().map(encode_histogram),
        errors: totals.errors,
        timeline,
        generator: totals.generator,
        samples: None,
        interrupted: inputs.iter().any(|i| i.record.interrupted),
        invalid,
        find_max: None,
        per_request,
        iterations,
        // The shards' warm-ups stay in their own records.
        warmup: None,
        connections: connections(&inputs)?,
        companion: None,
    };
    Ok(Merged { record, warnings, start_skew_ms })
}

/// Refuses what cannot be merged, and orders the inputs by shard.
fn check(inputs: &mut [Input]) -> Result<(), MergeError> {
    if inputs.is_empty() {
        return Err(MergeError::Empty);
    }
    for i in inputs.iter() {
        if i.record.schema != SCHEMA_VERSION {
            return Err(MergeError::Schema { name: i.name.clone(), schema: i.record.schema });
        }
    }
    inputs.sort_by_key(|i| shard_of(&i.record));
    for pair in inputs.windows(2) {
        if let (Some(a), Some(b)) = (shard_of(&pair[0].record), shard_of(&pair[1].record))
            && a == b
        {
            return Err(MergeError::DuplicateShard {
                first: pair[0].name.clone(),
                second: pair[1].name.clone(),
                shard: format!("{}/{}", a.0, a.1),
            });
        }
        let (ma, mb) = (model_name(&pair[0].record.params.model), model_name(&pair[1].record.params.model));
        if ma != mb {
            return Err(MergeError::Models {
                first: pair[0].name.clone(),
                first_model: ma,
                second: pair[1].name.clone(),
                second_model: mb,
            });
        }
    }
    Ok(())
}

/// The sums of the shards.
struct Totals {
    summary: Summary,
    latency: Histogram<u64>,
    service: Option<Histogram<u64>>,
    errors: BTreeMap<String, u64>,
    generator: GeneratorUsage,
}

fn totals(inputs: &[Input], duration_s: f64) -> Result<Totals, MergeError> {
    let first = &inputs[0].record;
    let mut latency = new_histogram();
    let mut service = first.service_histogram.as_ref().map(|_| new_histogram());
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let mut s = Summary {
        duration_s,
        requests: 0,
        ok: 0,
        bytes_sent: 0,
        bytes_received: 0,
        late: 0,
        checks: stackbench_record::Checks::default(),
        ..first.summary.clone()
    };
    let mut g =
        GeneratorUsage { cpu_user_s: 0.0, cpu_system_s: 0.0, cores: 0, utilization: 0.0, saturated: false };
    for i in inputs {
        let r = &i.record;
        latency.add(decode(&i.name, "latency", &r.histogram)?).expect("same bounds");
        match (&mut service, &r.service_histogram) {
            (Some(total), Some(h)) => total.add(decode(&i.name, "service-time", h)?).expect("same bounds"),
            (Some(_), None) => service = None,
            _ => {}
        }
        for (k, n) in &r.errors {
            *errors.entry(k.clone()).or_default() += n;
        }
        s.requests += r.summary.requests;
        s.ok += r.summary.ok;
        s.bytes_sent += r.summary.bytes_sent;
        s.bytes_received += r.summary.bytes_received;
        s.late += r.summary.late;
        s.checks.performed += r.summary.checks.performed;
        s.checks.failed += r.summary.checks.failed;
        g.cpu_user_s += r.generator.cpu_user_s;
        g.cpu_system_s += r.generator.cpu_system_s;
        g.cores += r.generator.cores;
        g.saturated |= r.generator.saturated;
    }
    s.errors = s.requests - s.ok;
    s.rps = s.requests as f64 / duration_s;
    s.ok_rps = s.ok as f64 / duration_s;
    s.latency = Latency::from_histogram(&latency);
    s.service_latency = service.as_ref().map(Latency::from_histogram);
    g.utilization =
        ((g.cpu_user_s + g.cpu_system_s) / (duration_s * f64::from(g.cores.max(1)))).clamp(0.0, 1.0);
    Ok(Totals { summary: s, latency, service, errors, generator: g })
}

/// The thresholds to judge the whole by: those given, or else every shard's own.
fn expressions(inputs: &[Input], given: &[Threshold]) -> Vec<Threshold> {
    if !given.is_empty() {
        return given.to_vec();
    }
    let mut seen: Vec<String> = Vec::new();
    for i in inputs {
        for t in &i.record.thresholds {
            if !seen.contains(&t.expression) {
                seen.push(t.expression.clone());
            }
        }
    }
    seen.iter().filter_map(|e| e.parse().ok()).collect()
}

/// The first shard's parameters with the split undone: users, limits and threads summed.
fn params(inputs: &[Input]) -> stackbench_record::LoadParams {
    let mut params = inputs[0].record.params.clone();
    params.extra.remove("shard");
    params.extra.remove("cpus");
    let sum = |key: &str| inputs.iter().filter_map(|i| i.record.params.extra.get(key)?.as_u64()).sum::<u64>();
    for key in ["tcp_connections", "initial_connections", "max_connections"] {
        if params.extra.contains_key(key) {
            params.extra.insert(key.into(), sum(key).into());
        }
    }
    params.extra.insert(
        "merged".into(),
        serde_json::json!(
            inputs
                .iter()
                .map(|i| {
                    let shard = shard_of(&i.record).map(|(a, b)| format!("{a}/{b}"));
                    serde_json::json!({ "source": i.name, "shard": shard, "started_at_ms": i.record.started_at_ms })
                })
                .collect::<Vec<_>>()
        ),
    );
    match &mut params.model {
        Model::Closed { connections, .. } => {
            *connections = inputs
                .iter()
                .map(|i| match i.record.params.model {
                    Model::Closed { connections, .. } => connections,
                    Model::Open { .. } => 0,
                })
                .sum();
        }
        Model::Open { max_in_flight, .. } => {
            *max_in_flight = inputs
                .iter()
                .map(|i| match i.record.params.model {
                    Model::Open { max_in_flight, .. } => max_in_flight,
                    Model::Closed { .. } => 0,
                })
                .sum();
        }
    }
    if params.requests.is_some() {
        params.requests = Some(inputs.iter().filter_map(|i| i.record.params.requests).sum());
    }
    params.threads = inputs.iter().map(|i| i.record.params.threads).sum();
    params.check_every = inputs.iter().map(|i| i.record.params.check_every).max().unwrap_or(0);
    params
}

/// Which shards are there, and which are missing.
fn coverage(inputs: &[Input]) -> Vec<String> {
    let shards: Vec<Option<(u32, u32)>> = inputs.iter().map(|i| shard_of(&i.record)).collect();
    if shards.iter().all(Option::is_none) {
        return if inputs.len() > 1 {
            vec![
                "these records are not shards of one load (none ran with --shard): they are added as loads \
                  that ran together"
                    .to_owned(),
            ]
        } else {
            Vec::new()
        };
    }
    let mut out = Vec::new();
    let counts: Vec<u32> = shards.iter().flatten().map(|s| s.1).collect();
    let n = counts.iter().copied().max().unwrap_or(0);
    if counts.iter().any(|&c| c != n) || shards.iter().any(Option::is_none) {
        out.push(format!(
            "the records are not all shards of one load of {n} (shards given: {})",
            inputs
                .iter()
                .map(|i| shard_of(&i.record).map_or_else(|| "none".to_owned(), |(a, b)| format!("{a}/{b}")))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let missing: Vec<String> =
        (1..=n).filter(|k| !shards.iter().flatten().any(|s| s.0 == *k)).map(|k| format!("{k}/{n}")).collect();
    if !missing.is_empty() {
        out.push(format!(
            "shard{} {} missing: the merge is only part of the load",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        ));
    }
    out
}

/// The parameters that should be equal in every shard, as JSON, with what the shard split changes
/// taken out.
fn comparable(r: &RunRecord) -> BTreeMap<String, serde_json::Value> {
    let mut p = r.params.clone();
    match &mut p.model {
        Model::Closed { connections, .. } => *connections = 0,
        Model::Open { max_in_flight, .. } => *max_in_flight = 0,
    }
    p.requests = None;
    p.threads = 0;
    p.check_every = 0;
    let mut out = BTreeMap::new();
    for key in ["shard", "cpus", "tcp_connections", "initial_connections", "max_connections"] {
        p.extra.remove(key);
    }
    for (k, v) in std::mem::take(&mut p.extra) {
        out.insert(k, v);
    }
    if let serde_json::Value::Object(map) = serde_json::to_value(&p).expect("params serialize") {
        for (k, v) in map {
            out.insert(k, v);
        }
    }
    out
}

/// Warnings for parameters that differ between shards beyond the split.
fn differences(inputs: &[Input]) -> Vec<String> {
    let base = comparable(&inputs[0].record);
    let mut out = Vec::new();
    for i in &inputs[1..] {
        let other = comparable(&i.record);
        let keys: Vec<&str> = base
            .keys()
            .chain(other.keys())
            .filter(|k| base.get(*k) != other.get(*k))
            .map(String::as_str)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if !keys.is_empty() {
            out.push(format!(
                "{} differs from {} beyond the shard split, in {}: these are not slices of one load",
                i.name,
                inputs[0].name,
                keys.join(", ")
            ));
        }
    }
    out
}

/// The shards' timelines on one wall clock (seconds from `start`), and
/// whether every second's percentiles are exact.
fn timeline(inputs: &[Input], start: u64) -> Result<(Vec<Second>, bool), MergeError> {
    let mut slots: BTreeMap<u32, (Second, Option<Histogram<u64>>)> = BTreeMap::new();
    let mut exact = true;
    for i in inputs {
        for row in &i.record.timeline {
            let at = row.at_ms.unwrap_or(i.record.started_at_ms + 1000 * u64::from(row.t));
            let t = ((at.saturating_sub(start) + 500) / 1000) as u32;
            let h = if let Some(text) = &row.histogram {
                Some(decode(&i.name, "per-second", text)?)
            } else {
                exact = false;
                None
            };
            let (slot, hist) = slots.entry(t).or_insert_with(|| {
                let mut empty = row.clone();
                empty.t = t;
                empty.completed = 0;
                empty.errors.clear();
                empty.in_flight = 0;
                empty.bytes_received = 0;
                (empty, Some(new_histogram()))
            });
            slot.completed += row.completed;
            slot.in_flight += row.in_flight;
            slot.bytes_received += row.bytes_received;
            for (k, n) in &row.errors {
                *slot.errors.entry(k.clone()).or_default() += n;
            }
            slot.p50_us = slot.p50_us.max(row.p50_us);
            slot.p90_us = slot.p90_us.max(row.p90_us);
            slot.p99_us = slot.p99_us.max(row.p99_us);
            slot.max_us = slot.max_us.max(row.max_us);
            match (hist.as_mut(), h) {
                (Some(total), Some(h)) => total.add(h).expect("same bounds"),
                _ => *hist = None,
            }
        }
    }
    let mut out = Vec::with_capacity(slots.len());
    for (t, (mut row, hist)) in slots {
        // A second no shard reported is a row of zeros, as in one generator's timeline.
        while out.len() < t as usize {
            let gap = out.len() as u32;
            out.push(Second {
                at_ms: Some(start + 1000 * u64::from(gap)),
                histogram: exact.then(|| encode_histogram(&new_histogram())),
                ..crate::collect::empty_second(gap)
            });
        }
        row.at_ms = Some(start + 1000 * u64::from(t));
        row.histogram = None;
        if let (true, Some(h)) = (exact, hist) {
            row.p50_us = h.value_at_quantile(0.50);
            row.p90_us = h.value_at_quantile(0.90);
            row.p99_us = h.value_at_quantile(0.99);
            row.max_us = h.max();
            row.histogram = Some(encode_histogram(&h));
        }
        out.push(row);
    }
    Ok((out, exact))
}

/// Writes the merged record's per-second histograms as an interval log (what
/// `stackbench load --hlog` writes for one generator).
pub fn write_hlog(record: &RunRecord, path: &Path) -> Result<(), MergeError> {
    let err = |why: String| MergeError::Hlog { path: path.display().to_string(), why };
    if record.timeline.iter().any(|r| r.histogram.is_none()) {
        return Err(err(
            "the records have no per-second histograms (run the shards with --shard, which keeps them)"
                .into(),
        ));
    }
    let start = std::time::UNIX_EPOCH + std::time::Duration::from_millis(record.started_at_ms);
    let mut w =
        crate::hlog::HlogWriter::create(path, start, &format!("stackbench merge {}", record.params.url))
            .map_err(|e| err(e.to_string()))?;
    for row in &record.timeline {
        let h = decode("the merged record", "per-second", row.histogram.as_deref().unwrap_or_default())?;
        w.interval(f64::from(row.t), 1.0, &h).map_err(|e| err(e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
