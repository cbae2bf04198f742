//! A scenario file's figures by request name (and its iterations), kept beside a run's
//! totals ([`crate::RunRecord::per_request`]), and how shards' entries merge.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::NotSent;
use crate::histogram::{Latency, decode_histogram, encode_histogram};

/// The requests of one name (or the iterations) of a scenario-file run: the totals'
/// numbers for that part of the load alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Named {
    /// `POST /todos`, `GET /todos/{{todo_id}}`, or the name the TOML gives it.
    pub name: String,
    /// Completed with any outcome.
    pub requests: u64,
    pub ok: u64,
    /// `requests / duration_s` of the run.
    pub rps: f64,
    /// Errors by kind (`check` for a failed assert), as [`RunRecord::errors`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, u64>,
    pub latency: Latency,
    /// Its latency histogram, as [`RunRecord::histogram`].
    pub histogram: String,
    /// Requests of this name that could not be written (counted `check` above, never sent),
    /// by reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_sent: Vec<NotSent>,
}

impl Named {
    /// Whether a "by request" table of `per_request` and `iterations` says more than the
    /// totals: not when one request name is every request and every iteration is one request
    /// (a built-in's flow, a one-request file), so the table would restate the totals.
    pub fn adds_to_totals(per_request: &[Named], iterations: Option<&Named>) -> bool {
        match per_request {
            [] => false,
            [one] => iterations.is_some_and(|i| i.requests != one.requests),
            _ => true,
        }
    }

    /// The entry of `name` from its histogram and counts, over a run of `duration_s`.
    pub fn from_parts(
        name: &str,
        latency: &hdrhistogram::Histogram<u64>,
        requests: u64,
        ok: u64,
        errors: BTreeMap<String, u64>,
        duration_s: f64,
    ) -> Named {
        Named {
            name: name.to_owned(),
            requests,
            ok,
            rps: requests as f64 / duration_s.max(1e-9),
            errors,
            latency: Latency::from_histogram(latency),
            histogram: encode_histogram(latency),
            not_sent: Vec::new(),
        }
    }

    /// Puts together the entries of the same name from several records (shards of one
    /// load), keeping the first's order; `None` when a histogram does not decode.
    pub fn merge<'a>(parts: impl IntoIterator<Item = &'a Named>, duration_s: f64) -> Option<Vec<Named>> {
        let (mut merged, mut latency): (Vec<Named>, Vec<hdrhistogram::Histogram<u64>>) =
            (Vec::new(), Vec::new());
        for n in parts {
            let h = decode_histogram(&n.histogram).ok()?;
            if let Some(i) = merged.iter().position(|m| m.name == n.name) {
                latency[i].add(&h).ok()?;
                let m = &mut merged[i];
                m.requests += n.requests;
                m.ok += n.ok;
                for (k, v) in &n.errors {
                    *m.errors.entry(k.clone()).or_default() += v;
                }
                NotSent::merge(&mut m.not_sent, &n.not_sent);
            } else {
                merged.push(n.clone());
                latency.push(h);
            }
        }
        Some(
            merged
                .into_iter()
                .zip(&latency)
                .map(|(m, h)| Named {
                    not_sent: m.not_sent,
                    ..Named::from_parts(&m.name, h, m.requests, m.ok, m.errors, duration_s)
                })
                .collect(),
        )
    }

    /// `requests - ok`.
    pub fn error_count(&self) -> u64 {
        self.requests.saturating_sub(self.ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::new_histogram;

    #[test]
    fn a_by_request_table_is_kept_only_when_it_says_more_than_the_totals() {
        let h = new_histogram();
        let named =
            |name: &str, requests: u64| Named::from_parts(name, &h, requests, requests, BTreeMap::new(), 1.0);
        let (post, get) = (named("POST /events", 10), named("GET /x", 10));
        assert!(!Named::adds_to_totals(&[], None));
        assert!(!Named::adds_to_totals(std::slice::from_ref(&post), Some(&named("iteration", 10))));
        assert!(!Named::adds_to_totals(std::slice::from_ref(&post), None));
        assert!(Named::adds_to_totals(std::slice::from_ref(&post), Some(&named("iteration", 5))));
        assert!(Named::adds_to_totals(&[post, get], Some(&named("iteration", 10))));
    }

    #[test]
    fn named_entries_of_shards_merge_by_name() {
        let part = |name: &str, values: &[u64], errors: &[(&str, u64)]| {
            let mut h = new_histogram();
            for &v in values {
                h.record(v).unwrap();
            }
            let errors: BTreeMap<String, u64> = errors.iter().map(|(k, n)| ((*k).to_owned(), *n)).collect();
            let failed: u64 = errors.values().sum();
            Named::from_parts(name, &h, values.len() as u64, values.len() as u64 - failed, errors, 1.0)
        };
        let a = [part("GET /a", &[100, 200], &[("check", 1)]), part("POST /b", &[50], &[])];
        let b = [part("POST /b", &[70, 90], &[("http_500", 1)]), part("GET /a", &[300], &[("check", 1)])];
        let merged = Named::merge(a.iter().chain(&b), 2.0).unwrap();
        assert_eq!(merged.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(), ["GET /a", "POST /b"]);
        let (get, post) = (&merged[0], &merged[1]);
        assert_eq!((get.requests, get.ok, get.errors.get("check")), (3, 1, Some(&2)));
        assert_eq!((get.latency.count, get.latency.max_us, get.rps), (3, 300, 1.5));
        assert_eq!((post.requests, post.error_count(), post.latency.min_us), (3, 1, 50));
        let mut broken = a[0].clone();
        broken.histogram = "not a histogram".into();
        assert!(Named::merge([&broken], 1.0).is_none());
    }
}
