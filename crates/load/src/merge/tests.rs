//! Tests of [`super`]: the merge is the union, exactly.

use std::collections::BTreeMap;

use proptest::prelude::*;
use stackbench_record::{
    Latency, Model, RunRecord, Second, decode_histogram, encode_histogram, new_histogram,
};

use super::*;

/// A shard's record holding `values` (µs), spread one second per chunk of 10.
fn shard(index: u32, count: u32, started_at_ms: u64, values: &[u64]) -> Input {
    let mut r: RunRecord =
        crate::summary::tests::record(Model::Closed { connections: 4, think_ms: 0, ramp_up_ms: 0 });
    r.started_at_ms = started_at_ms;
    r.params.extra.insert("shard".into(), format!("{index}/{count}").into());
    r.params.extra.insert("tcp_connections".into(), 4.into());
    let mut whole = new_histogram();
    r.timeline.clear();
    for (t, chunk) in values.chunks(10).enumerate() {
        let mut h = new_histogram();
        for v in chunk {
            h.record(*v).unwrap();
        }
        whole.add(&h).unwrap();
        r.timeline.push(Second {
            t: t as u32,
            completed: chunk.len() as u64,
            errors: BTreeMap::from([("reset".into(), 1)]),
            p50_us: h.value_at_quantile(0.5),
            p90_us: h.value_at_quantile(0.9),
            p99_us: h.value_at_quantile(0.99),
            max_us: h.max(),
            in_flight: 1,
            bytes_received: 100,
            at_ms: Some(started_at_ms + 1000 * t as u64),
            histogram: Some(encode_histogram(&h)),
        });
    }
    r.histogram = encode_histogram(&whole);
    r.summary.requests = values.len() as u64;
    r.summary.ok = (values.len() as u64).saturating_sub(1);
    r.summary.errors = r.summary.requests - r.summary.ok;
    r.summary.duration_s = r.timeline.len() as f64;
    r.summary.rps = values.len() as f64 / r.summary.duration_s;
    r.summary.latency = Latency::from_histogram(&whole);
    r.errors = BTreeMap::from([("reset".into(), 1)]);
    r.generator.cpu_user_s = 0.5;
    r.generator.cpu_system_s = 1.5;
    r.generator.cores = 1;
    Input { name: format!("shard{index}.json"), record: r }
}

fn values(seed: u64, n: usize) -> Vec<u64> {
    (0..n as u64).map(|i| 50 + (i * 7919 + seed * 104_729) % 20_000).collect()
}

#[test]
fn the_merge_is_the_union_of_the_shards() {
    let (one, two, three) = (values(1, 30), values(2, 30), values(3, 25));
    let inputs =
        vec![shard(2, 3, 1_000_040, &two), shard(1, 3, 1_000_000, &one), shard(3, 3, 1_000_020, &three)];
    let m = merge(inputs, &[]).unwrap();
    let mut union = new_histogram();
    for v in one.iter().chain(&two).chain(&three) {
        union.record(*v).unwrap();
    }
    let r = &m.record;
    assert_eq!(r.summary.latency, Latency::from_histogram(&union));
    assert_eq!(decode_histogram(&r.histogram).unwrap(), union);
    assert_eq!((r.summary.requests, r.summary.ok, r.summary.errors), (85, 82, 3));
    assert_eq!(r.errors["reset"], 3);
    assert_eq!(r.started_at_ms, 1_000_000);
    assert_eq!(m.start_skew_ms, 40);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    assert!((r.generator.cpu_user_s - 1.5).abs() < 1e-9 && r.generator.cores == 3);
    assert_eq!(r.params.extra.get("shard"), None);
    assert_eq!(r.params.extra["tcp_connections"], 12);
    assert_eq!(r.params.model, Model::Closed { connections: 12, think_ms: 0, ramp_up_ms: 0 });
    // Seconds line up on the wall clock: 40 ms apart is the same second.
    assert_eq!(r.timeline.len(), 3);
    assert_eq!(r.timeline.iter().map(|s| s.completed).collect::<Vec<_>>(), [30, 30, 25]);
    let mut second0 = new_histogram();
    for v in one[..10].iter().chain(&two[..10]).chain(&three[..10]) {
        second0.record(*v).unwrap();
    }
    assert_eq!(r.timeline[0].p99_us, second0.value_at_quantile(0.99));
    assert_eq!(r.timeline[0].at_ms, Some(1_000_000));
    assert!(write_hlog_round_trips(r));
}

#[test]
fn a_second_no_shard_reported_is_a_row_of_zeros() {
    // Shard 2's record has no second 1 (say its generator stalled through it).
    let mut two = shard(2, 2, 1_000_000, &values(2, 30));
    two.record.timeline.remove(1);
    let mut one = shard(1, 2, 1_000_000, &values(1, 10));
    one.record.timeline.truncate(1);
    let r = merge(vec![one, two], &[]).unwrap().record;
    assert_eq!(r.timeline.iter().map(|s| s.t).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(r.timeline.iter().map(|s| s.completed).collect::<Vec<_>>(), [20, 0, 10]);
    let gap = &r.timeline[1];
    assert_eq!(gap.at_ms, Some(1_001_000));
    assert!(gap.errors.is_empty() && gap.p99_us == 0 && gap.in_flight == 0);
    assert_eq!(gap.histogram.as_deref().map(|h| decode_histogram(h).unwrap().len()), Some(0));
}

fn write_hlog_round_trips(r: &RunRecord) -> bool {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let path = dir.join("merged.hlog");
    write_hlog(r, &path).unwrap();
    let text = std::fs::read(&path).unwrap();
    let mut total = new_histogram();
    for e in hdrhistogram::serialization::interval_log::IntervalLogIterator::new(&text) {
        if let hdrhistogram::serialization::interval_log::LogEntry::Interval(i) = e.unwrap() {
            total.add(decode_histogram(i.encoded_histogram()).unwrap()).unwrap();
        }
    }
    total == decode_histogram(&r.histogram).unwrap()
}

#[test]
fn thresholds_hold_on_the_whole() {
    let inputs: Vec<Input> = (1..=3).map(|i| shard(i, 3, 0, &values(u64::from(i), 20))).collect();
    let ceiling: Threshold = "rps<25".parse().unwrap();
    for i in &inputs {
        assert!(ceiling.evaluate(&i.record.summary).passed, "each shard alone passes");
    }
    let m = merge(inputs.clone(), std::slice::from_ref(&ceiling)).unwrap();
    assert!(!m.record.thresholds[0].passed, "{:?}", m.record.thresholds);
    // With none given, the shards' own expressions are judged on the whole.
    let mut with_own = inputs;
    for i in &mut with_own {
        i.record.thresholds = vec![ceiling.evaluate(&i.record.summary)];
    }
    let m = merge(with_own, &[]).unwrap();
    assert_eq!(m.record.thresholds.len(), 1);
    assert!(!m.record.thresholds[0].passed);
}

#[test]
fn what_does_not_fit_is_said() {
    let v = values(1, 20);
    let e = merge(vec![shard(1, 2, 0, &v), shard(1, 2, 0, &v)], &[]).unwrap_err().to_string();
    assert!(e.contains("both shard 1/2"), "{e}");
    let mut open = shard(2, 2, 0, &v);
    open.record.params.model = Model::Open { rate: 100.0, max_in_flight: 10 };
    let e = merge(vec![shard(1, 2, 0, &v), open], &[]).unwrap_err().to_string();
    assert!(e.contains("closed model") && e.contains("open"), "{e}");
    assert!(matches!(merge(Vec::new(), &[]), Err(MergeError::Empty)));

    let late = merge(vec![shard(1, 3, 0, &v), shard(3, 3, 250, &v)], &[]).unwrap();
    let all = late.warnings.join("\n");
    assert!(all.contains("shard 2/3 missing"), "{all}");
    assert!(all.contains("differ by 250 ms"), "{all}");

    let mut other = shard(2, 2, 0, &v);
    other.record.params.url = "http://127.0.0.1:9/other".into();
    other.record.params.duration_ms = Some(1);
    let m = merge(vec![shard(1, 2, 0, &v), other], &[]).unwrap();
    assert!(m.warnings.iter().any(|w| w.contains("duration_ms, url")), "{:?}", m.warnings);

    let mut bad = shard(2, 2, 0, &v);
    bad.record.histogram = "not a histogram".into();
    assert!(merge(vec![shard(1, 2, 0, &v), bad], &[]).unwrap_err().to_string().contains("shard2.json"));
}

#[test]
fn seconds_without_histograms_are_an_upper_bound() {
    let v = values(1, 20);
    let mut plain = shard(2, 2, 0, &v);
    for row in &mut plain.record.timeline {
        row.histogram = None;
    }
    let m = merge(vec![shard(1, 2, 0, &v), plain], &[]).unwrap();
    assert!(m.warnings.iter().any(|w| w.contains("upper bound")), "{:?}", m.warnings);
    assert!(write_hlog(&m.record, &std::env::temp_dir().join("never.hlog")).is_err());
}

#[test]
fn records_are_read_from_files_and_log_streams() {
    let r = shard(1, 2, 0, &values(1, 10)).record;
    let pretty = serde_json::to_string_pretty(&r).unwrap();
    let (one, skipped) = read_records("a.json", &pretty).unwrap();
    assert_eq!((one.len(), skipped, one[0].name.as_str()), (1, 0, "a.json"));

    let line = serde_json::to_string(&r).unwrap();
    let logs = format!("stackbench load http://x/\n  requests 10 total\n{line}\n\n  errors 0\n{line}\n");
    let (two, skipped) = read_records("stdin", &logs).unwrap();
    assert_eq!((two.len(), skipped), (2, 3));
    assert_eq!(two[1].name, "stdin line 6");

    let e = read_records("stdin", "summary\n{\"schema\": 1}\n").unwrap_err().to_string();
    assert!(e.starts_with("stdin, line 2: not a run record"), "{e}");
    let e = read_records("empty.log", "nothing here\n").unwrap_err().to_string();
    assert!(e.contains("holds no run record"), "{e}");
}

proptest! {
    /// However the latencies are split into shards, the merged percentiles are the union's.
    #[test]
    fn any_split_merges_to_the_union(all in proptest::collection::vec(1u64..5_000_000, 3..300),
                                     cuts in proptest::collection::vec(any::<prop::sample::Index>(), 2)) {
        let mut at: Vec<usize> = cuts.iter().map(|c| c.index(all.len())).collect();
        at.sort_unstable();
        let parts = [&all[..at[0]], &all[at[0]..at[1]], &all[at[1]..]];
        let inputs: Vec<Input> = parts.iter().enumerate().map(|(i, p)| shard(i as u32 + 1, 3, 0, p)).collect();
        let m = merge(inputs, &[]).unwrap();
        let mut union = new_histogram();
        for v in &all {
            union.record(*v).unwrap();
        }
        prop_assert_eq!(m.record.summary.latency, Latency::from_histogram(&union));
        prop_assert_eq!(m.record.summary.requests, all.len() as u64);
        let per_second: u64 = m.record.timeline.iter().map(|s| s.completed).sum();
        prop_assert_eq!(per_second, all.len() as u64);
    }
}

/// The shards' connections add up: counts summed, handshake times added bucket by bucket.
#[test]
fn connections_and_handshakes_add_up() {
    let conns = |opened: u64, shakes: &[u64]| {
        let mut h = new_histogram();
        for &v in shakes {
            h.record(v).unwrap();
        }
        stackbench_record::Connections {
            opened,
            connect: Latency::from_histogram(&h),
            connect_histogram: encode_histogram(&h),
            tls: Some(stackbench_record::TlsRecord {
                version: "TLSv1.3".into(),
                cipher_suite: "TLS13_AES_128_GCM_SHA256".into(),
                key_exchange_group: Some("X25519".into()),
                alpn: Some("http/1.1".into()),
                others: Vec::new(),
                verified_by: "system roots".into(),
                resumption: true,
                full: opened,
                resumed: 0,
                failed: 0,
                handshake: Latency::from_histogram(&h),
                handshake_histogram: encode_histogram(&h),
            }),
            first_requests: None,
        }
    };
    let mut a = shard(1, 2, 1_000, &values(1, 30));
    a.record.connections = Some(conns(2, &[1000, 2000]));
    let mut b = shard(2, 2, 1_000, &values(2, 30));
    b.record.connections = Some(conns(3, &[3000, 4000, 5000]));
    let merged = merge(vec![a, b], &[]).unwrap().record.connections.unwrap();
    assert_eq!(merged.opened, 5);
    let tls = merged.tls.unwrap();
    assert_eq!((tls.full, tls.handshake.count), (5, 5));
    assert!(tls.handshake.max_us >= 5000 && tls.handshake.min_us <= 1000, "{:?}", tls.handshake);
}
