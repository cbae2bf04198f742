//! The HdrHistogram interval log (`.hlog`): one latency histogram per second,
//! in the text format of HdrHistogram's `HistogramLogWriter` (Java, and every
//! port: `HistogramLogProcessor`, Python's `hdrhistogram`, HdrHistogramVisualizer
//! read it). Each line is `start,length,max,HISTFAAA…` with start relative to
//! the `BaseTime` header, max in milliseconds (values are recorded in µs, so
//! the max-value divisor is 1000), and the histogram V2-compressed, base64.
//!
//! Lines are written as each second ends, so an interrupted run keeps its log.
//!
//! The `hdrhistogram` crate has a writer of this format too, but it borrows its output
//! and serializer for its whole life (`IntervalLogWriter<'a, 'b, W, S>`), so the collector
//! that keeps the log open over a run and writes a line each second could hold it only in a
//! self-referential struct; and it writes neither the format-version line nor the legend
//! that Java's writer writes. The lines here are the crate's, byte for byte (a test below
//! holds them to it), plus those two (docs/design.md, "The interval log").

use std::fs::File;
use std::io::{self, BufWriter, Write as _};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
use stackbench_record::encode_histogram;

/// An open interval log.
#[derive(Debug)]
pub struct HlogWriter {
    out: BufWriter<File>,
}

impl HlogWriter {
    /// Creates the file and writes the header; `start` is the start of the measured phase.
    pub fn create(path: &Path, start: SystemTime, comment: &str) -> io::Result<HlogWriter> {
        let mut out = BufWriter::new(File::create(path)?);
        let secs = start.duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        writeln!(out, "#{comment}")?;
        writeln!(out, "#[Histogram log format version 1.3]")?;
        writeln!(out, "#[StartTime: {secs:.3} (seconds since epoch)]")?;
        writeln!(out, "#[BaseTime: {secs:.3} (seconds since epoch)]")?;
        writeln!(out, "#[MaxValueDivisor: 1000.000]")?;
        writeln!(
            out,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        )?;
        out.flush()?;
        Ok(HlogWriter { out })
    }

    /// Appends one interval (`start_s` seconds after the base time, lasting `length_s`).
    pub fn interval(&mut self, start_s: f64, length_s: f64, h: &Histogram<u64>) -> io::Result<()> {
        let max_ms = h.max() as f64 / 1000.0;
        writeln!(self.out, "{start_s:.3},{length_s:.3},{max_ms:.3},{}", encode_histogram(h))?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use stackbench_record::{decode_histogram, new_histogram};

    #[test]
    fn the_rust_reader_reads_it_back() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        let path = dir.join("t.hlog");
        let mut w = HlogWriter::create(&path, SystemTime::now(), "test").unwrap();
        let mut h = new_histogram();
        for v in [100, 200, 20_000] {
            h.record(v).unwrap();
        }
        w.interval(0.0, 1.0, &h).unwrap();
        w.interval(1.0, 1.0, &new_histogram()).unwrap();
        drop(w);
        let text = std::fs::read(&path).unwrap();
        let entries: Vec<_> = IntervalLogIterator::new(&text)
            .filter_map(|e| match e.unwrap() {
                LogEntry::Interval(i) => {
                    Some((i.start_timestamp(), i.max(), i.encoded_histogram().to_owned()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(entries.len(), 2);
        assert!((entries[0].1 - 20.0).abs() < 0.1, "{entries:?}");
        assert_eq!(decode_histogram(&entries[0].2).unwrap().len(), 3);
    }

    #[test]
    fn the_lines_are_the_hdrhistogram_crates_with_javas_version_and_legend() {
        use hdrhistogram::serialization::V2DeflateSerializer;
        use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
        use std::time::Duration;

        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        let path = dir.join("t.hlog");
        let start = UNIX_EPOCH + Duration::from_millis(1_765_000_000_123);
        let mut busy = new_histogram();
        for v in [100, 200, 20_000, 59_000_000] {
            busy.record(v).unwrap();
        }
        let seconds = [busy, new_histogram()];
        let mut w = HlogWriter::create(&path, start, "stackbench load http://127.0.0.1:1/").unwrap();
        for (t, h) in seconds.iter().enumerate() {
            w.interval(t as f64, 1.0, h).unwrap();
        }
        drop(w);
        let ours = std::fs::read_to_string(&path).unwrap();

        let (mut theirs, mut serializer) = (Vec::new(), V2DeflateSerializer::new());
        let mut log = IntervalLogWriterBuilder::new()
            .add_comment("stackbench load http://127.0.0.1:1/")
            .add_comment("[Histogram log format version 1.3]")
            .with_start_time(start)
            .with_base_time(start)
            .with_max_value_divisor(1000.0)
            .begin_log_with(&mut theirs, &mut serializer)
            .unwrap();
        for (t, h) in seconds.iter().enumerate() {
            log.write_histogram(h, Duration::from_secs(t as u64), Duration::from_secs(1), None).unwrap();
        }
        drop(log);
        let theirs = String::from_utf8(theirs).unwrap();
        let legend =
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";
        let (headers, intervals) = theirs.split_at(theirs.find("0.000,").unwrap());
        assert_eq!(ours, format!("{headers}{legend}{intervals}"));
    }
}
