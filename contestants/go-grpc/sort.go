package main

// bubbleSort sorts a ascending: the textbook nested loop, as the Bubble
// Benchmark's Go server wrote it. Pass i bubbles the largest of a[0:n-i] to
// its end, so the inner loop stops one earlier each pass; there is no early
// exit after a pass without a swap: every call makes n(n-1)/2 comparisons.
func bubbleSort(a []int32) {
	n := len(a)
	for i := 0; i < n; i++ {
		for j := 0; j < n-1-i; j++ {
			if a[j] > a[j+1] {
				a[j], a[j+1] = a[j+1], a[j]
			}
		}
	}
}
