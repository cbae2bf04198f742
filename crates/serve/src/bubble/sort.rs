//! Bubble sort, as the `bubble-sort` contract defines it: passes of adjacent
//! compare-and-swap over `v[0..bound]`, the bound shrinking by one each pass
//! (the largest element of the range has bubbled to its end), stopping after
//! a pass that swapped nothing (Knuth, TAOCP vol. 3, §5.2.2, "bubble sort").
//!
//! It is made as fast as bubble sort honestly can be, in safe code, without
//! changing a single comparison's operands or outcome:
//!
//! - **Branch-free passes.** A pass carries the element being bubbled in a
//!   register: comparing `v[i-1]` with `v[i]` and swapping is
//!   `v[i-1] = min(carried, v[i]); carried = max(carried, v[i])`, which the
//!   compiler emits as `cmov`. The outcome of a comparison of random data is
//!   unpredictable, so a branch would be mispredicted about half the time.
//! - **No bounds checks.** The loops run over ranges the compiler can prove in
//!   bounds (checked in the generated assembly: no panic path in the loops).
//! - **Passes in flight ([`PIPELINE`] of them).** Pass `p + 1` only needs
//!   positions `..i` to be final for pass `p` when it compares `(i-1, i)`, so
//!   it can follow pass `p` one position behind instead of waiting for it to
//!   reach the end: each element read from memory goes through [`PIPELINE`]
//!   consecutive passes in registers. Every pass still makes exactly the
//!   comparisons and swaps the textbook loop makes, in the same order (the
//!   tests check the swaps of every pass against a textbook implementation);
//!   what changes is that one pass's carried-value dependency chain (`cmp` +
//!   `cmov`, two cycles per element) no longer serialises the whole sort. It
//!   runs about twice as fast as the textbook loop on the original experiment's list.
//!   The price: the early exit is checked after each group of passes, so up
//!   to `PIPELINE - 1` passes that find nothing to swap may run at the end
//!   (a few thousand comparisons on an already sorted list).
//!
//! A different algorithm (insertion sort, `sort_unstable`) would be faster
//! still and is exactly what the contract forbids.

use std::hint::select_unpredictable;

/// How many passes run interleaved. Six saturates the integer units of
/// current x86-64 cores (measured: 6 and 8 are equal, 2 is 1.4× slower than 6,
/// 12 spills registers) while wasting few passes at the end.
pub const PIPELINE: usize = 6;

/// Which bubble sort a contestant runs (`--sort`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SortKind {
    /// [`bubble_sort`]: the tuned passes (about twice the textbook loop's speed).
    #[default]
    Fast,
    /// [`textbook_bubble_sort`]: the nested loop as the experiment's servers
    /// and most people write it, for comparisons of stacks rather than of
    /// algorithm engineering.
    Textbook,
}

impl std::str::FromStr for SortKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "fast" => Ok(SortKind::Fast),
            "textbook" => Ok(SortKind::Textbook),
            other => Err(format!("--sort is textbook or fast, got {other:?}")),
        }
    }
}

impl SortKind {
    pub fn name(self) -> &'static str {
        match self {
            SortKind::Fast => "fast",
            SortKind::Textbook => "textbook",
        }
    }

    pub fn sort(self, v: &mut [i32]) {
        match self {
            SortKind::Fast => bubble_sort(v),
            SortKind::Textbook => textbook_bubble_sort(v),
        }
    }
}

/// Bubble sort as the textbook (and the Bubble Benchmark's Rust and Go
/// servers) write it: a nested loop over a shrinking bound, one branch per
/// comparison, stopping after a pass that swapped nothing. The same
/// comparisons and swaps as [`bubble_sort`], made one at a time.
pub fn textbook_bubble_sort(v: &mut [i32]) {
    let n = v.len();
    for pass in 0..n.saturating_sub(1) {
        let mut swapped = false;
        for j in 0..n - 1 - pass {
            if v[j] > v[j + 1] {
                v.swap(j, j + 1);
                swapped = true;
            }
        }
        if !swapped {
            break;
        }
    }
}

/// Sorts `v` ascending with bubble sort. Equal elements keep their order
/// (a swap needs `v[i-1] > v[i]`).
pub fn bubble_sort(v: &mut [i32]) {
    sort_counting::<false>(v, &mut Stats::default());
}

/// Sorts `v` like [`bubble_sort`], counting what the sort did. The same code
/// as [`bubble_sort`] (with the counters compiled in): tests use it to prove
/// that the sort is bubble sort.
#[cfg(test)]
fn bubble_sort_with_stats(v: &mut [i32]) -> Stats {
    let mut stats = Stats::default();
    sort_counting::<true>(v, &mut stats);
    stats
}

/// What one sort did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Swaps made by each pass, in order of passes (so `swaps_per_pass.len()`
    /// is the number of passes).
    pub swaps_per_pass: Vec<u64>,
    /// Comparisons made (a pass over `v[0..bound]` makes `bound - 1`).
    pub comparisons: u64,
}

#[cfg(test)]
impl Stats {
    fn passes(&self) -> usize {
        self.swaps_per_pass.len()
    }

    fn swaps(&self) -> u64 {
        self.swaps_per_pass.iter().sum()
    }
}

fn sort_counting<const COUNT: bool>(v: &mut [i32], stats: &mut Stats) {
    let mut bound = v.len();
    // Groups of PIPELINE passes while every pass of the group has at least two
    // elements; pass `j` of a group covers `v[0..bound - j]`.
    while bound > PIPELINE {
        let swapped = passes_in_flight::<COUNT>(&mut v[..bound], stats);
        if !swapped {
            return;
        }
        bound -= PIPELINE;
    }
    // The last few passes, over at most PIPELINE elements, one at a time.
    while bound > 1 {
        if !single_pass::<COUNT>(&mut v[..bound], stats) {
            return;
        }
        bound -= 1;
    }
}

/// One textbook pass over `w`: compare-and-swap `(w[i-1], w[i])` for `i` in
/// `1..w.len()`. Returns whether it swapped anything. `w.len() >= 2`.
fn single_pass<const COUNT: bool>(w: &mut [i32], stats: &mut Stats) -> bool {
    let mut carried = w[0];
    let mut swaps = 0u64;
    let mut swapped = false;
    for i in 1..w.len() {
        let x = w[i];
        let swap = x < carried;
        swapped |= swap;
        if COUNT {
            swaps += u64::from(swap);
        }
        w[i - 1] = select_unpredictable(swap, x, carried);
        carried = select_unpredictable(swap, carried, x);
    }
    let last = w.len() - 1;
    w[last] = carried;
    if COUNT {
        stats.swaps_per_pass.push(swaps);
        stats.comparisons += last as u64;
    }
    swapped
}

/// PIPELINE consecutive passes, pass `j` covering `w[0..w.len() - j]` and
/// following pass `j - 1` one position behind. Returns whether the last pass
/// of the group swapped anything (if it did not, the list is sorted; if an
/// earlier pass did not, the later ones did not either). `w.len() > PIPELINE`.
fn passes_in_flight<const COUNT: bool>(w: &mut [i32], stats: &mut Stats) -> bool {
    const K: usize = PIPELINE;
    // carried[j]: the element pass j is bubbling; swaps[j]: its swap count.
    let mut carried = [0i32; K];
    let mut swaps = [0u64; K];
    let mut last_pass_swapped = false;

    // One step of pass j: compare-and-swap its carried element with `x`, the
    // element at its next position (as pass j - 1 left it). Returns the element
    // that pass j leaves behind, which is the input of pass j + 1.
    macro_rules! step {
        ($j:expr, $x:expr) => {{
            let (j, x) = ($j, $x);
            let swap = x < carried[j];
            if COUNT {
                swaps[j] += u64::from(swap);
            }
            if j == K - 1 {
                last_pass_swapped |= swap;
            }
            let left = select_unpredictable(swap, x, carried[j]);
            carried[j] = select_unpredictable(swap, carried[j], x);
            left
        }};
    }

    // Ramp-up: at step i < K, passes 0..i are running; what pass i - 1 leaves
    // at position 0 is the element pass i starts with.
    carried[0] = w[0];
    for i in 1..K {
        let mut x = w[i];
        for j in 0..i {
            x = step!(j, x);
        }
        carried[i] = x;
    }
    // Steady state: the element read at position i goes through all K passes;
    // the last pass leaves its result at position i - K, final for this group.
    for i in K..w.len() {
        let mut x = w[i];
        for j in 0..K {
            x = step!(j, x);
        }
        w[i - K] = x;
    }
    // Each pass j ends by dropping its carried element at the end of its range.
    let n = w.len();
    for (j, &c) in carried.iter().enumerate() {
        w[n - 1 - j] = c;
    }
    if COUNT {
        for (j, &s) in swaps.iter().enumerate() {
            stats.swaps_per_pass.push(s);
            stats.comparisons += (n - 1 - j) as u64;
        }
    }
    last_pass_swapped
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use stackbench_contract::bubble::{SEED, SEED_SORTED};

    #[test]
    fn the_textbook_loop_sorts_as_the_fast_one_does() {
        let mut a = SEED.to_vec();
        textbook_bubble_sort(&mut a);
        assert_eq!(a, &SEED_SORTED[..]);
        for v in [vec![], vec![1], vec![2, 1], vec![3, 3, -1, i32::MIN, i32::MAX, 0]] {
            let (mut t, mut f) = (v.clone(), v.clone());
            textbook_bubble_sort(&mut t);
            bubble_sort(&mut f);
            assert_eq!(t, f);
        }
        assert_eq!("textbook".parse::<SortKind>(), Ok(SortKind::Textbook));
        assert!("quick".parse::<SortKind>().unwrap_err().contains("textbook or fast"));
    }

    /// Bubble sort as a textbook writes it, recording the swaps of each pass.
    fn textbook(v: &mut [i32]) -> Stats {
        let mut stats = Stats::default();
        for pass in 0..v.len().saturating_sub(1) {
            let mut swaps = 0;
            for i in 1..v.len() - pass {
                stats.comparisons += 1;
                if v[i - 1] > v[i] {
                    v.swap(i - 1, i);
                    swaps += 1;
                }
            }
            stats.swaps_per_pass.push(swaps);
            if swaps == 0 {
                break;
            }
        }
        stats
    }

    /// Knuth's inversion table: for each element, how many greater elements
    /// stand to its left. Bubble sort needs exactly `max` passes that swap
    /// (each such pass moves every element with a non-zero entry one step left),
    /// and makes exactly `sum` swaps (the number of inversions).
    fn inversion_table(v: &[i32]) -> Vec<u64> {
        (0..v.len()).map(|k| v[..k].iter().filter(|&&x| x > v[k]).count() as u64).collect()
    }

    /// Checks the pipelined sort against the textbook one on `input`.
    fn same_as_textbook(input: &[i32]) -> Stats {
        let mut ours = input.to_vec();
        let stats = bubble_sort_with_stats(&mut ours);
        let mut theirs = input.to_vec();
        let reference = textbook(&mut theirs);
        assert_eq!(ours, theirs);
        // Pass by pass the same swaps; ours may end with up to PIPELINE - 1
        // extra passes that swap nothing (the group's early exit).
        let common = reference.passes();
        assert!(stats.passes() >= common && stats.passes() < common + PIPELINE, "{stats:?} vs {reference:?}");
        assert_eq!(stats.swaps_per_pass[..common], reference.swaps_per_pass[..]);
        assert!(stats.swaps_per_pass[common..].iter().all(|&s| s == 0));
        let table = inversion_table(input);
        assert_eq!(stats.swaps(), table.iter().sum::<u64>(), "swaps = inversions");
        let passes_that_swap = stats.swaps_per_pass.iter().filter(|&&s| s > 0).count() as u64;
        assert_eq!(passes_that_swap, table.iter().copied().max().unwrap_or(0), "Knuth's pass count");
        stats
    }

    #[test]
    fn a_reversed_list_takes_n_minus_1_passes_and_every_comparison_swaps() {
        for n in [2usize, 5, PIPELINE, PIPELINE + 1, 2 * PIPELINE + 3, 1000] {
            let mut v: Vec<i32> = (0..n as i32).rev().collect();
            let stats = bubble_sort_with_stats(&mut v);
            assert!(v.windows(2).all(|w| w[0] < w[1]), "n={n}");
            let n = n as u64;
            assert_eq!(stats.passes() as u64, n - 1, "n={n}");
            assert_eq!(stats.comparisons, n * (n - 1) / 2, "n={n}");
            assert_eq!(stats.swaps(), n * (n - 1) / 2, "n={n}");
            // pass p (from 0) moves the largest remaining element n - 1 - p steps
            let expected: Vec<u64> = (0..n - 1).map(|p| n - 1 - p).collect();
            assert_eq!(stats.swaps_per_pass, expected);
        }
    }

    #[test]
    fn turtles_are_slow_and_rabbits_are_fast() {
        // The signature of bubble sort: a small element at the end (a turtle)
        // moves one step per pass, a large element at the start (a rabbit)
        // reaches the end in one pass. Insertion sort would take n - 1 swaps
        // and about 2n comparisons for both.
        let n = 200u64;
        let mut turtle: Vec<i32> = (2..=n as i32).chain([1]).collect();
        let stats = same_as_textbook(&turtle);
        bubble_sort(&mut turtle);
        assert_eq!(stats.swaps_per_pass.iter().filter(|&&s| s == 1).count() as u64, n - 1);
        assert_eq!(stats.comparisons, n * (n - 1) / 2);

        let rabbit: Vec<i32> = [n as i32].into_iter().chain(1..n as i32).collect();
        let stats = same_as_textbook(&rabbit);
        assert_eq!(stats.swaps_per_pass[0], n - 1);
        assert_eq!(stats.swaps(), n - 1);
        assert_eq!(stats.passes(), PIPELINE, "one group: one pass that swaps, then nothing to swap");
    }

    #[test]
    fn sorted_empty_and_tiny_lists() {
        let mut empty: [i32; 0] = [];
        assert_eq!(bubble_sort_with_stats(&mut empty), Stats::default());
        let mut one = [7];
        assert_eq!(bubble_sort_with_stats(&mut one), Stats::default());
        let mut two = [2, 1];
        bubble_sort(&mut two);
        assert_eq!(two, [1, 2]);
        let mut sorted: Vec<i32> = (0..100).collect();
        let stats = bubble_sort_with_stats(&mut sorted);
        assert_eq!(stats.swaps(), 0);
        assert_eq!(stats.swaps_per_pass, vec![0; PIPELINE], "stops after the first group");
    }

    #[test]
    fn extremes_and_duplicates() {
        let input = [i32::MAX, 0, i32::MIN, -1, i32::MAX, 1, i32::MIN, 0, 0, 5, -5, 3, 3];
        same_as_textbook(&input);
        let mut v = input;
        bubble_sort(&mut v);
        let mut expected = input;
        expected.sort_unstable();
        assert_eq!(v, expected);
    }

    #[test]
    fn the_seed_list() {
        let stats = same_as_textbook(&SEED);
        let mut v = SEED.clone();
        bubble_sort(&mut v);
        assert_eq!(v, *SEED_SORTED);
        // The original experiment's list is a shuffle: nearly every pass has work to do.
        assert!(stats.passes() > 950, "{}", stats.passes());
    }

    proptest! {
        #[test]
        fn bubble_sort_pass_by_pass(v in proptest::collection::vec(any::<i32>(), 0..300)) {
            same_as_textbook(&v);
        }

        #[test]
        fn bubble_sort_with_many_duplicates(v in proptest::collection::vec(-3i32..3, 0..100)) {
            same_as_textbook(&v);
        }
    }
}
