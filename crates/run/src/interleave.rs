//! The order of measured runs: repetitions interleaved across contestants,
//! each round a fresh random permutation (A B C, C A B, B C A, …), so slow
//! drift on a shared machine (thermal throttling, a neighbour's build) spreads
//! over everyone instead of favouring whoever ran first. With three or more
//! contestants a round never starts with the contestant that ended the
//! previous one, so nobody runs twice in a row. With two that rule would fix
//! the order (A B, A B, …: B always second, in step with any drift within a
//! round), so two are shuffled freely each round and either may go first.
//! Shuffling is Fisher–Yates over SplitMix64 (Steele, Lea, Flood 2014), so a
//! seed always gives the same order.

use std::collections::BTreeSet;

use stackbench_contract::rng::SplitMix64;

/// One measured run to do: contestant index and 1-based repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub contestant: usize,
    pub repetition: u32,
}

/// The order of `repetitions` rounds over `contestants`, minus what is `done`.
pub fn interleaved(
    contestants: usize,
    repetitions: u32,
    seed: u64,
    done: &BTreeSet<(usize, u32)>,
) -> Vec<Slot> {
    let mut rng = SplitMix64(seed);
    let mut out: Vec<Slot> = Vec::new();
    let mut last: Option<usize> = None;
    for rep in 1..=repetitions {
        let mut order: Vec<usize> = (0..contestants).collect();
        for i in (1..order.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        if order.len() > 2 && Some(order[0]) == last {
            order.swap(0, 1);
        }
        last = order.last().copied();
        out.extend(
            order
                .into_iter()
                .filter(|&c| !done.contains(&(c, rep)))
                .map(|c| Slot { contestant: c, repetition: rep }),
        );
    }
    out
}

/// A seed from the clock, for plans that do not fix one.
pub fn clock_seed() -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    SplitMix64(t.as_nanos() as u64 ^ u64::from(std::process::id())).next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_run_once_rounds_in_order_never_twice_in_a_row(n in 1usize..7, reps in 1u32..6, seed: u64) {
            let s = interleaved(n, reps, seed, &BTreeSet::new());
            prop_assert_eq!(s.len(), n * reps as usize);
            for (i, chunk) in s.chunks(n).enumerate() {
                let mut seen: Vec<usize> = chunk.iter().map(|x| x.contestant).collect();
                seen.sort_unstable();
                prop_assert_eq!(seen, (0..n).collect::<Vec<_>>());
                prop_assert!(chunk.iter().all(|x| x.repetition == i as u32 + 1));
            }
            if n > 2 {
                prop_assert!(s.windows(2).all(|w| w[0].contestant != w[1].contestant));
            }
            prop_assert_eq!(&s, &interleaved(n, reps, seed, &BTreeSet::new()));
        }
    }

    #[test]
    fn orders_vary_and_done_runs_are_skipped() {
        let s = interleaved(3, 6, 7, &BTreeSet::new());
        let rounds: BTreeSet<Vec<usize>> =
            s.chunks(3).map(|c| c.iter().map(|x| x.contestant).collect()).collect();
        assert!(rounds.len() > 1, "{rounds:?}");
        // Two contestants: either goes first, round by round.
        let two = interleaved(2, 20, 7, &BTreeSet::new());
        let firsts: BTreeSet<usize> = two.chunks(2).map(|c| c[0].contestant).collect();
        assert_eq!(firsts.len(), 2, "{two:?}");
        let done = BTreeSet::from([(0, 1), (2, 3)]);
        let rest = interleaved(3, 3, 7, &done);
        assert_eq!(rest.len(), 7);
        assert!(!rest.iter().any(|x| (x.contestant, x.repetition) == (0, 1)));
    }
}
