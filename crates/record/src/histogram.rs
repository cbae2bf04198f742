//! Latency histograms: the one configuration every part uses (1 µs to 60 s,
//! 3 significant digits), their portable encoding (HdrHistogram V2 compressed,
//! base64: what `HISTFAAA…` lines in interval logs hold, readable by every
//! HdrHistogram implementation), and the summary a report prints.

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

/// Lowest recordable latency, µs.
pub const LOWEST_US: u64 = 1;
/// Highest recordable latency, µs (60 s); longer values are clamped to it.
pub const HIGHEST_US: u64 = 60_000_000;
/// Significant decimal digits kept.
pub const SIGFIG: u8 = 3;

/// An empty latency histogram with the standard bounds.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(LOWEST_US, HIGHEST_US, SIGFIG).expect("static bounds are valid")
}

/// Why an encoded histogram cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    #[error("histogram is not valid base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("histogram is not a valid HdrHistogram V2 encoding: {0:?}")]
    Decode(hdrhistogram::serialization::DeserializeError),
}

/// V2 compressed, base64 (standard alphabet, padded).
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).expect("serializing to memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Reads what [`encode_histogram`] wrote (or any V2 / V2-compressed histogram).
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, HistogramError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
    Deserializer::new().deserialize(&mut bytes.as_slice()).map_err(HistogramError::Decode)
}

/// Latency of a set of requests, µs. `count == 0` means nothing completed, and
/// then every other field is 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub count: u64,
    pub min_us: u64,
    pub mean_us: f64,
    pub stdev_us: f64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p95_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
}

impl Latency {
    /// The summary of a histogram. Percentiles are HdrHistogram's
    /// `value_at_quantile` (the highest-equivalent value of the bucket holding
    /// that rank), so they agree with every other HdrHistogram tool.
    pub fn from_histogram(h: &Histogram<u64>) -> Latency {
        if h.is_empty() {
            return Latency::default();
        }
        Latency {
            count: h.len(),
            min_us: h.min(),
            mean_us: h.mean(),
            stdev_us: h.stdev(),
            p50_us: h.value_at_quantile(0.50),
            p90_us: h.value_at_quantile(0.90),
            p95_us: h.value_at_quantile(0.95),
            p99_us: h.value_at_quantile(0.99),
            p999_us: h.value_at_quantile(0.999),
            max_us: h.max(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Percentiles take the ⌈q·n⌉-th latency (HdrHistogram's rule, Java's and Rust's): of the
    /// 151 latencies 1..=151 µs, p99 is the 150th. (HdrHistogram_py rounds the rank to the
    /// nearest and says 149: docs/run-record.md, "Percentiles".)
    #[test]
    fn percentiles_take_the_rank_rounded_up() {
        let mut h = new_histogram();
        for v in 1..=151 {
            h.record(v).unwrap();
        }
        let l = Latency::from_histogram(&h);
        assert_eq!(
            (l.p50_us, l.p90_us, l.p95_us, l.p99_us, l.p999_us, l.max_us),
            (76, 136, 144, 150, 151, 151)
        );
    }

    proptest! {
        #[test]
        fn encoding_round_trips(values in proptest::collection::vec(1u64..HIGHEST_US, 0..500)) {
            let mut h = new_histogram();
            for v in &values {
                h.record(*v).unwrap();
            }
            let back = decode_histogram(&encode_histogram(&h)).unwrap();
            prop_assert_eq!(back.len(), h.len());
            prop_assert_eq!(Latency::from_histogram(&back), Latency::from_histogram(&h));
        }

        #[test]
        fn merging_is_lossless(a in proptest::collection::vec(1u64..1_000_000, 1..200),
                               b in proptest::collection::vec(1u64..1_000_000, 1..200)) {
            let (mut ha, mut hb, mut all) = (new_histogram(), new_histogram(), new_histogram());
            for v in &a { ha.record(*v).unwrap(); all.record(*v).unwrap(); }
            for v in &b { hb.record(*v).unwrap(); all.record(*v).unwrap(); }
            ha.add(&hb).unwrap();
            prop_assert_eq!(Latency::from_histogram(&ha), Latency::from_histogram(&all));
        }
    }

    #[test]
    fn percentiles_are_within_the_precision() {
        let mut h = new_histogram();
        for v in 1..=10_000u64 {
            h.record(v * 10).unwrap();
        }
        let l = Latency::from_histogram(&h);
        assert_eq!(l.count, 10_000);
        let near = |got: u64, want: u64| (got as f64 - want as f64).abs() / want as f64 <= 0.001;
        assert!(near(l.p50_us, 50_000) && near(l.p99_us, 99_000) && near(l.max_us, 100_000), "{l:?}");
        assert_eq!(Latency::from_histogram(&new_histogram()), Latency::default());
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(decode_histogram("not base64!").is_err());
        assert!(decode_histogram("aGVsbG8=").is_err());
    }
}
