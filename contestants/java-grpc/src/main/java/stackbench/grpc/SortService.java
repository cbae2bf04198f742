package stackbench.grpc;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import sort.v1.Sort;
import sort.v1.SortServiceGrpc;

/**
 * sort.v1.SortService/BubbleSort: refuses more than {@link #MAX_LEN} numbers
 * with INVALID_ARGUMENT, bubble-sorts the rest and answers them.
 */
final class SortService extends SortServiceGrpc.SortServiceImplBase {
    /** The longest list sorted: bubble sort is O(n²), a million numbers would hold a core for minutes. */
    static final int MAX_LEN = 10_000;

    @Override
    public void bubbleSort(Sort.List request, StreamObserver<Sort.List> response) {
        int n = request.getDataCount();
        if (n > MAX_LEN) {
            response.onError(Status.INVALID_ARGUMENT
                    .withDescription("the list has " + n + " numbers; bubble sort accepts at most " + MAX_LEN
                            + " (it is O(n²): a much longer list would hold a core for minutes); send a shorter list")
                    .asRuntimeException());
            return;
        }
        // The decoded message is immutable: copy its numbers into an int[]
        // (one allocation, no boxing), sort that, build the answer from it.
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = request.getData(i);
        }
        BubbleSort.sort(a);
        Sort.List.Builder out = Sort.List.newBuilder();
        for (int v : a) {
            out.addData(v);
        }
        response.onNext(out.build());
        response.onCompleted();
    }
}
