//! TLS in a report: what each contestant's connections negotiated (version, cipher
//! suite, key-exchange group, ALPN) and what its handshakes cost, from the runs'
//! `connections.tls`; and, where a scenario holds a contestant `NAME` in the clear
//! and its twin `NAME-tls` over TLS (the convention of every plan's `-tls` entry),
//! the ratio of the twin's mean throughput to the cleartext one's with its 95%
//! interval: what terminating TLS cost that stack.

use serde::Serialize;
use stackbench_record::{Connections, Latency, RunRecord};

use crate::fmt;
use crate::stats::{Estimate, Ratio, ratio_at};

/// The suffix that names a contestant's TLS twin.
pub const TWIN_SUFFIX: &str = "-tls";

/// What a contestant's TLS connections agreed and cost, over every run used.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TlsReport {
    /// `TLSv1.3` or `TLSv1.2`.
    pub version: String,
    /// As IANA names it (`TLS13_AES_128_GCM_SHA256`).
    pub cipher_suite: String,
    /// `X25519MLKEM768`, `X25519`, `secp256r1`; `None` when the record does not say.
    pub key_exchange_group: Option<String>,
    /// What ALPN agreed (`h2`, `http/1.1`), when the server agreed one.
    pub alpn: Option<String>,
    /// Other combinations some handshakes agreed, each `version suite group`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<String>,
    /// Full handshakes, over the runs.
    pub full: u64,
    /// Resumed handshakes, over the runs.
    pub resumed: u64,
    /// Failed handshakes, over the runs.
    pub failed: u64,
    /// Handshake time, all runs' histograms merged.
    pub handshake: Latency,
}

/// A contestant in the clear and its TLS twin in one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct TlsPair {
    /// The contestant in the clear.
    pub cleartext: String,
    /// Its twin over TLS (`cleartext` + `-tls`).
    pub tls: String,
    /// The twin's mean throughput over the cleartext one's; `None` when the cleartext
    /// one answered nothing correctly.
    pub ratio: Option<Ratio>,
    /// One sentence: `'gin-tls' ran 0.72 ± 0.03 times the requests of 'gin'`.
    pub text: String,
}

/// The TLS of a contestant's runs, or `None` when none went over TLS. A record whose
/// histograms cannot be read keeps the first run's figures and says nothing more.
pub(super) fn report(runs: &[&RunRecord]) -> Option<TlsReport> {
    let mut with_tls = runs.iter().filter_map(|r| r.connections.as_ref().filter(|c| c.tls.is_some()));
    let mut all: Connections = with_tls.next()?.clone();
    for c in with_tls {
        if all.merge(c).is_err() {
            break;
        }
    }
    let t = all.tls?;
    Some(TlsReport {
        version: t.version,
        cipher_suite: t.cipher_suite,
        key_exchange_group: t.key_exchange_group,
        alpn: t.alpn,
        others: t.others,
        full: t.full,
        resumed: t.resumed,
        failed: t.failed,
        handshake: t.handshake,
    })
}

/// Each TLS twin beside its cleartext contestant, in the order of the twins; `measured`
/// holds each contestant's report and throughput estimate.
pub(super) fn pairs(measured: &[(&super::ContestantReport, &Estimate)], level: f64) -> Vec<TlsPair> {
    let mut out = Vec::new();
    for (twin, twin_est) in measured.iter().filter(|(c, _)| c.tls.is_some()) {
        let Some(base) = twin.name.strip_suffix(TWIN_SUFFIX) else { continue };
        let Some((clear, clear_est)) = measured.iter().find(|(c, _)| c.name == base && c.tls.is_none())
        else {
            continue;
        };
        let ratio = ratio_at(twin_est, clear_est, level);
        let text = match ratio {
            None => format!("'{}' answered no request correctly: no ratio for '{}'", clear.name, twin.name),
            Some(Ratio { value, ci: Some(ci) }) => format!(
                "'{}' ran {} times the requests of '{}'{}",
                twin.name,
                fmt::ratio_interval(value, ci.lo, ci.hi),
                clear.name,
                if ci.contains(1.0) { " (within noise)" } else { "" }
            ),
            Some(Ratio { value, ci: None }) => format!(
                "'{}' ran {} times the requests of '{}' (no interval: fewer than {} runs)",
                twin.name,
                fmt::ratio(value),
                clear.name,
                crate::stats::MIN_RUNS
            ),
        };
        out.push(TlsPair { cleartext: clear.name.clone(), tls: twin.name.clone(), ratio, text });
    }
    out
}

/// `0.72 ± 0.03`, `0.72 (2 runs)` without an interval, `–` without a ratio.
pub fn ratio_cell(pair: &TlsPair) -> String {
    match pair.ratio {
        Some(Ratio { value, ci: Some(ci) }) => fmt::ratio_interval(value, ci.lo, ci.hi),
        Some(Ratio { value, ci: None }) => format!("{} (no interval)", fmt::ratio(value)),
        None => "–".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::estimate;
    use stackbench_record::TlsRecord;

    fn tls(group: &str, full: u64) -> TlsRecord {
        TlsRecord {
            version: "TLSv1.3".into(),
            cipher_suite: "TLS13_AES_128_GCM_SHA256".into(),
            key_exchange_group: Some(group.into()),
            alpn: Some("http/1.1".into()),
            others: Vec::new(),
            verified_by: "--cacert ca.pem".into(),
            resumption: false,
            full,
            resumed: 0,
            failed: 0,
            handshake: Latency::default(),
            handshake_histogram: stackbench_record::encode_histogram(&stackbench_record::new_histogram()),
        }
    }

    fn contestant(name: &str, tls: Option<TlsReport>) -> super::super::ContestantReport {
        let set = crate::synthetic::tls_beside_cleartext("r");
        let a = crate::Analysis::from_results(&set, &crate::AnalysisOptions::default());
        let mut c = a.scenarios[0].contestants[0].clone();
        c.name = name.to_owned();
        c.tls = tls;
        c
    }

    #[test]
    fn a_twin_is_paired_only_with_its_cleartext_namesake() {
        let some = report_of("X25519");
        let (gin, gin_tls, lone) =
            (contestant("gin", None), contestant("gin-tls", some.clone()), contestant("flask-tls", some));
        let (e1, e2) = (estimate(&[100.0, 101.0, 99.0], 1), estimate(&[70.0, 71.0, 69.0], 2));
        let measured = [(&gin, &e1), (&gin_tls, &e2), (&lone, &e2)];
        let p = pairs(&measured, crate::stats::CONFIDENCE);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!((p[0].cleartext.as_str(), p[0].tls.as_str()), ("gin", "gin-tls"));
        let r = p[0].ratio.unwrap();
        assert!((r.value - 0.7).abs() < 1e-9);
        assert!(r.ci.unwrap().hi < 1.0, "{r:?}");
        assert!(p[0].text.starts_with("'gin-tls' ran 0.70"), "{}", p[0].text);
        // A cleartext namesake that itself went over TLS is no cleartext baseline.
        let both = contestant("gin", report_of("X25519"));
        assert!(pairs(&[(&both, &e1), (&gin_tls, &e2)], 0.95).is_empty());
    }

    fn report_of(group: &str) -> Option<TlsReport> {
        let mut run = crate::synthetic::run_record(&crate::synthetic::RunSpec::new("x", "dummy", 1, 10.0));
        run.connections = Some(Connections {
            opened: 1,
            connect: Latency::default(),
            connect_histogram: stackbench_record::encode_histogram(&stackbench_record::new_histogram()),
            tls: Some(tls(group, 3)),
            first_requests: None,
        });
        report(&[&run])
    }

    #[test]
    fn runs_add_their_handshakes_and_keep_what_differs() {
        let mut a = crate::synthetic::run_record(&crate::synthetic::RunSpec::new("x", "dummy", 1, 10.0));
        let mut b = a.clone();
        let conn = |t: TlsRecord| Connections {
            opened: 1,
            connect: Latency::default(),
            connect_histogram: stackbench_record::encode_histogram(&stackbench_record::new_histogram()),
            tls: Some(t),
            first_requests: None,
        };
        a.connections = Some(conn(tls("X25519MLKEM768", 3)));
        b.connections = Some(conn(tls("X25519", 4)));
        let r = report(&[&a, &b]).unwrap();
        assert_eq!(r.full, 7);
        assert_eq!(r.key_exchange_group.as_deref(), Some("X25519MLKEM768"));
        assert_eq!(r.others, vec!["TLSv1.3 TLS13_AES_128_GCM_SHA256 X25519".to_owned()]);
        let clear = crate::synthetic::run_record(&crate::synthetic::RunSpec::new("x", "dummy", 1, 10.0));
        assert_eq!(report(&[&clear]), None);
    }
}
