package stackbench.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BubbleSortTest {
    private static void check(int[] input) {
        int[] want = input.clone();
        Arrays.sort(want);
        int[] got = input.clone();
        BubbleSort.sort(got);
        assertArrayEquals(want, got, () -> "sorting " + Arrays.toString(input));
    }

    @Test
    void sortsEdgeCases() {
        check(new int[] {});
        check(new int[] {42});
        check(new int[] {5, -3, 5, 0, Integer.MIN_VALUE, Integer.MAX_VALUE, -3, 1});
        check(new int[] {3, 2, 1});
        check(new int[] {1, 2, 3});
    }

    @Test
    void sortsAThousandRandomNumbers() {
        check(new Random(1).ints(1000).toArray());
    }
}
