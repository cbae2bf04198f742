'use strict';
// Bubble sort as JavaScript users write it: the textbook nested loop, one
// pass of adjacent compare-and-swap per outer step, each pass one shorter
// (its last element has bubbled into place), sorting the array in place.
// n(n-1)/2 comparisons, the count of the Bubble Benchmark's Rust and Go
// servers. Its Node server ran the inner loop to n - 1 on every pass,
// n(n-1) comparisons, twice the work: the `- i` is the textbook's, and what
// makes the comparison with the other stacks fair. No early exit (the
// contract allows one; the usual form has none, and on the benchmark's
// unsorted list it would save little).

const MAX_LEN = 10_000;

function bubbleSort(arr) {
  const n = arr.length;
  for (let i = 0; i < n - 1; i++) {
    for (let j = 0; j < n - 1 - i; j++) {
      if (arr[j] > arr[j + 1]) {
        const tmp = arr[j];
        arr[j] = arr[j + 1];
        arr[j + 1] = tmp;
      }
    }
  }
  return arr;
}

module.exports = { bubbleSort, MAX_LEN };
