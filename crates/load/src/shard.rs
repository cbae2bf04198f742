//! One slice of a load spread over several generators (`--shard I/N`), cut
//! so that the union of the N shards is the load one generator would make:
//!
//! - open model: every shard keeps the whole schedule and sends every N-th
//!   due request (shard I the I-th, N+I-th, …), so the rates add up to the
//!   rate asked and the arrival times interleave exactly; the in-flight and
//!   connection limits are split as evenly as integers allow;
//! - closed model: the connections (and their users) are split by k6's
//!   execution-segment rule; a shard's users keep their global numbers, so a
//!   ramp or stages (whose targets are global users) start them in the same
//!   order as one generator would;
//! - a request count (`-n`) is split the same way.
//!
//! Shards start together with `--start-at`; `stackbench merge` puts their
//! records back together (`crate::merge`).

use crate::spec::{Bound, LoadSpec, ModelSpec, ShardSpec};
use crate::spec_error::SpecError;
use crate::values::Shard;

/// `spec` (the whole load) cut down to shard `shard`.
pub fn apply(mut spec: LoadSpec, shard: Shard) -> Result<LoadSpec, SpecError> {
    if spec.search.is_some() {
        return Err(SpecError::Invalid {
            flag: "--shard",
            why: "a capacity search (--find-max) picks each step's rate from the last one on one generator, and \
                  shards cannot follow it: search on one generator, then shard a load at the rate it found"
                .into(),
        });
    }
    let none = |what: &str, total: usize| SpecError::Invalid {
        flag: "--shard",
        why: format!(
            "shard {shard} of {total} {what} gets none; give at least {} (one per shard)",
            shard.count
        ),
    };
    let share = |total: usize| shard.share(total as u64) as usize;
    let mut first_user = 0;
    spec.model = match spec.model {
        ModelSpec::Closed { connections, streams, think, ramp_up } => {
            let (from, _) = shard.slice(connections as u64);
            first_user = from as usize * streams;
            let mine = share(connections);
            if mine == 0 {
                return Err(none("connections", connections));
            }
            ModelSpec::Closed { connections: mine, streams, think, ramp_up }
        }
        ModelSpec::Open { rate, max_in_flight, connections, max_connections } => ModelSpec::Open {
            rate,
            max_in_flight: share(max_in_flight).max(1),
            connections: share(connections).max(1),
            max_connections: share(max_connections).max(1),
        },
    };
    if let Bound::Requests(n) = spec.bound {
        let mine = shard.share(n);
        if mine == 0 {
            return Err(none("requests", n as usize));
        }
        spec.bound = Bound::Requests(mine);
    }
    if let ModelSpec::Closed { connections, .. } = spec.model {
        spec.threads = spec.threads.min(connections).max(1);
    }
    spec.shard = Some(ShardSpec { shard, first_user });
    Ok(spec)
}

/// The 1-based number, in the whole schedule, of a worker's `k`-th request
/// (0-based) of the open model: worker `worker` of `threads` takes every
/// `threads`-th of its shard's requests, and shard I of N every N-th of all.
pub fn schedule_number(k: u64, threads: u64, worker: u64, shard: Option<ShardSpec>) -> u64 {
    let in_shard = k * threads + worker;
    match shard {
        Some(s) => in_shard * u64::from(s.shard.count) + u64::from(s.shard.index - 1) + 1,
        None => in_shard + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::LoadOptions;

    fn spec(o: &LoadOptions) -> LoadSpec {
        o.to_spec("http://127.0.0.1:9/").unwrap()
    }

    /// The shards' open-model requests are one generator's, each exactly once.
    #[test]
    fn the_union_of_the_shards_is_the_whole_schedule() {
        for (n, threads) in [(1u32, 1u64), (3, 1), (3, 2), (4, 3)] {
            let mut seen = Vec::new();
            for i in 1..=n {
                let s = Some(ShardSpec { shard: Shard { index: i, count: n }, first_user: 0 });
                for w in 0..threads {
                    for k in 0..20 {
                        seen.push(schedule_number(k, threads, w, s));
                    }
                }
            }
            seen.sort_unstable();
            let expected: Vec<u64> = (1..=seen.len() as u64).collect();
            assert_eq!(seen, expected, "{n} shards of {threads} threads");
        }
    }

    #[test]
    fn closed_users_and_counts_are_split() {
        let o = LoadOptions {
            connections: Some(10),
            requests: Some(1000),
            threads: Some(4),
            ..LoadOptions::default()
        };
        let whole = spec(&o);
        let mut total_connections = 0;
        let mut total_requests = 0;
        let mut firsts = Vec::new();
        for i in 1..=3 {
            let s = apply(whole.clone(), Shard { index: i, count: 3 }).unwrap();
            let ModelSpec::Closed { connections, .. } = s.model else { panic!() };
            let Bound::Requests(n) = s.bound else { panic!() };
            total_connections += connections;
            total_requests += n;
            firsts.push(s.shard.unwrap().first_user);
            assert!(s.threads <= connections);
        }
        assert_eq!((total_connections, total_requests), (10, 1000));
        assert_eq!(firsts, [0, 3, 6]);
        let one = LoadOptions { connections: Some(2), ..LoadOptions::default() };
        let e = apply(spec(&one), Shard { index: 1, count: 3 }).unwrap_err().to_string();
        assert!(e.contains("gets none"), "{e}");
    }

    #[test]
    fn open_limits_are_split_and_the_rate_kept() {
        let o = LoadOptions { rate: Some(3000.0), max_in_flight: Some(100), ..LoadOptions::default() };
        let s = apply(spec(&o), Shard { index: 2, count: 3 }).unwrap();
        let ModelSpec::Open { rate, max_in_flight, .. } = s.model else { panic!() };
        assert_eq!(
            (rate, max_in_flight),
            (3000.0, 33),
            "the schedule stays whole; the shard takes every 3rd"
        );
    }
}
