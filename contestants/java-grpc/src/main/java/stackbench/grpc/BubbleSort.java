package stackbench.grpc;

/**
 * The bubble sort of the bubble-sort scenario: the textbook nested loop, as
 * the Bubble Benchmark's Go and Rust servers wrote it. Pass {@code i} bubbles
 * the largest of {@code a[0..n-i)} to its end, so the inner loop stops one
 * earlier each pass; there is no early exit after a pass without a swap, so
 * every call makes exactly n(n-1)/2 comparisons, the count of the other
 * languages' contestants.
 */
final class BubbleSort {
    private BubbleSort() {}

    /** Sorts {@code a} ascending, in place. */
    static void sort(int[] a) {
        int n = a.length;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n - 1 - i; j++) {
                if (a[j] > a[j + 1]) {
                    int t = a[j];
                    a[j] = a[j + 1];
                    a[j + 1] = t;
                }
            }
        }
    }
}
