//! What opening connections cost a run ([`Connections`]): how many were opened, their
//! TCP connects and TLS handshakes (full and resumed, with what each side agreed), and
//! the requests that opened their connection, timed with and without that setup. The
//! load engine fills it; `stackbench merge` adds shards' together (histograms bucket by
//! bucket, [`Connections::merge`]).

use serde::{Deserialize, Serialize};

use crate::histogram::{HistogramError, Latency, decode_histogram, encode_histogram};

/// The connections of one run. Counts and times cover every connection the run opened,
/// from the first (before the load starts, which is where a keep-alive run opens nearly
/// all of them) to the end; `first_requests` covers the measured window only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Connections {
    /// Connections opened (TCP connects that succeeded).
    pub opened: u64,
    /// The TCP connect of each (from `connect` to established).
    pub connect: Latency,
    /// The same, HdrHistogram V2 compressed, base64 (µs).
    pub connect_histogram: String,
    /// TLS, when the target is `https://`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsRecord>,
    /// Measured requests that opened the connection they went on (every request under
    /// `--no-keepalive`; a reconnect otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_requests: Option<FirstRequests>,
}

/// TLS as the run's connections negotiated it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TlsRecord {
    /// `TLSv1.3` or `TLSv1.2`, from the run's first full handshake.
    pub version: String,
    /// The cipher suite, as IANA names it (`TLS13_AES_128_GCM_SHA256`).
    pub cipher_suite: String,
    /// The key-exchange group (`X25519MLKEM768`, `X25519`, `secp256r1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_exchange_group: Option<String>,
    /// The protocol agreed by ALPN (`h2`, `http/1.1`), when the server agreed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpn: Option<String>,
    /// Other combinations of version, suite and group that later handshakes agreed (a
    /// target behind a balancer whose servers differ), each written `version suite group`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<String>,
    /// How the server's certificate was checked: `system roots`, `--cacert FILE`, or
    /// `nothing (--insecure)`.
    pub verified_by: String,
    /// Whether the client offered session resumption (`--no-resume` turns it off).
    pub resumption: bool,
    /// Full handshakes (a HelloRetryRequest included).
    pub full: u64,
    /// Handshakes that resumed an earlier session.
    pub resumed: u64,
    /// Handshakes that failed (each also counted as the request's error, when one waited).
    #[serde(default)]
    pub failed: u64,
    /// Time of each completed handshake, from the ClientHello to the end of the handshake.
    pub handshake: Latency,
    /// The same, HdrHistogram V2 compressed, base64 (µs).
    pub handshake_histogram: String,
}

/// Measured requests that opened their connection: their latency as the headline counts it
/// (the connect and the handshake included, as `histogram`), and without them (the
/// exchange alone, as k6's `http_req_duration` counts every request).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FirstRequests {
    pub requests: u64,
    pub with_setup: Latency,
    pub without_setup: Latency,
    pub with_setup_histogram: String,
    pub without_setup_histogram: String,
}

impl Connections {
    /// Adds another generator's connections (a shard of the same load): counts summed,
    /// histograms added bucket by bucket. The negotiated parameters are this record's;
    /// the other's differing ones go to `others`.
    pub fn merge(&mut self, other: &Connections) -> Result<(), HistogramError> {
        self.opened += other.opened;
        add(&mut self.connect, &mut self.connect_histogram, &other.connect_histogram)?;
        match (&mut self.tls, &other.tls) {
            (Some(a), Some(b)) => a.merge(b)?,
            (None, Some(b)) => self.tls = Some(b.clone()),
            (_, None) => {}
        }
        match (&mut self.first_requests, &other.first_requests) {
            (Some(a), Some(b)) => {
                a.requests += b.requests;
                add(&mut a.with_setup, &mut a.with_setup_histogram, &b.with_setup_histogram)?;
                add(&mut a.without_setup, &mut a.without_setup_histogram, &b.without_setup_histogram)?;
            }
            (None, Some(b)) => self.first_requests = Some(b.clone()),
            (_, None) => {}
        }
        Ok(())
    }
}

impl TlsRecord {
    /// The parameters in one line: `TLSv1.3 TLS13_AES_128_GCM_SHA256 X25519MLKEM768`.
    pub fn parameters(&self) -> String {
        let mut s = format!("{} {}", self.version, self.cipher_suite);
        if let Some(g) = &self.key_exchange_group {
            s.push(' ');
            s.push_str(g);
        }
        s
    }

    fn merge(&mut self, other: &TlsRecord) -> Result<(), HistogramError> {
        let mine = self.parameters();
        for p in std::iter::once(other.parameters()).chain(other.others.iter().cloned()) {
            if p != mine && !self.others.contains(&p) {
                self.others.push(p);
            }
        }
        self.full += other.full;
        self.resumed += other.resumed;
        self.failed += other.failed;
        add(&mut self.handshake, &mut self.handshake_histogram, &other.handshake_histogram)
    }
}

/// Adds the histogram `other` to `into` and its summary `latency`.
fn add(latency: &mut Latency, into: &mut String, other: &str) -> Result<(), HistogramError> {
    let mut h = decode_histogram(into)?;
    h.add(&decode_histogram(other)?).expect("every record's histograms have the same bounds");
    *into = encode_histogram(&h);
    *latency = Latency::from_histogram(&h);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::new_histogram;

    fn latency(values: &[u64]) -> (Latency, String) {
        let mut h = new_histogram();
        for &v in values {
            h.record(v).unwrap();
        }
        (Latency::from_histogram(&h), encode_histogram(&h))
    }

    fn tls(group: &str, full: u64, shakes: &[u64]) -> TlsRecord {
        let (handshake, handshake_histogram) = latency(shakes);
        TlsRecord {
            version: "TLSv1.3".into(),
            cipher_suite: "TLS13_AES_128_GCM_SHA256".into(),
            key_exchange_group: Some(group.into()),
            alpn: Some("h2".into()),
            others: Vec::new(),
            verified_by: "system roots".into(),
            resumption: true,
            full,
            resumed: 1,
            failed: 0,
            handshake,
            handshake_histogram,
        }
    }

    #[test]
    fn shards_add_up_and_differing_parameters_are_kept() {
        let (connect, connect_histogram) = latency(&[100, 200]);
        let mut a = Connections {
            opened: 2,
            connect,
            connect_histogram,
            tls: Some(tls("X25519MLKEM768", 1, &[1000, 2000])),
            first_requests: None,
        };
        let (connect, connect_histogram) = latency(&[300]);
        let b = Connections {
            opened: 1,
            connect,
            connect_histogram,
            tls: Some(tls("X25519", 2, &[5000])),
            first_requests: None,
        };
        a.merge(&b).unwrap();
        assert_eq!(a.opened, 3);
        assert_eq!(a.connect.count, 3);
        let t = a.tls.unwrap();
        assert_eq!((t.full, t.resumed, t.handshake.count), (3, 2, 3));
        assert_eq!(t.key_exchange_group.as_deref(), Some("X25519MLKEM768"));
        assert_eq!(t.others, ["TLSv1.3 TLS13_AES_128_GCM_SHA256 X25519"]);
        assert!(t.handshake.max_us >= 5000);
    }
}
