"""The `bubble-sort` scenario of stackbench on grpcio: sort.v1.SortService/
BubbleSort over h2c on 127.0.0.1:$PORT, with the code grpcio-tools generated
from proto/sort/v1/sort.proto at install time (gen/).

The server is grpcio's thread-pool server (grpc.server with a
ThreadPoolExecutor), not grpc.aio: the work of a call is a pure-Python
CPU-bound loop that holds the GIL for its whole length (about 50 ms for the
experiment's 1000 numbers), so under grpc.aio it would stop the event loop, and with
it every other call's I/O and every new connection's handshake, unless it
were handed to a thread anyway. In the thread-pool server gRPC's core does
the HTTP/2 work outside the GIL and a sort shares the GIL with the others
every 5 ms, so a long list does not stall the rest. As the GIL lets one
process use one core, the server runs one process per CPU this process may
use (its affinity, which stackbench's `cpus` pins), each with its own server
on the same port (SO_REUSEPORT), forked before any gRPC server starts: the
layout of grpc's own multiprocessing example. On one core it is a single
process. PROCESSES and THREADS (per process, default 4) override the sizes.

SIGTERM (or SIGINT) stops it gracefully: no new calls, in-flight calls get
3 s."""

import multiprocessing
import os
import signal
import sys
from concurrent import futures

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

import grpc  # noqa: E402
from sort.v1 import sort_pb2, sort_pb2_grpc  # noqa: E402

MAX_LEN = 10_000
GRACE_S = 3


def bubble_sort(a):
    """Sorts the list `a` in place, ascending: the textbook bubble sort, passes
    of adjacent compare-and-swap over a range that shrinks by one each pass;
    it stops early after a pass that swapped nothing (as the Rust reference
    does, and as the contract allows)."""
    n = len(a)
    for i in range(n):
        swapped = False
        for j in range(n - 1 - i):
            if a[j] > a[j + 1]:
                a[j], a[j + 1] = a[j + 1], a[j]
                swapped = True
        if not swapped:
            break


class SortService(sort_pb2_grpc.SortServiceServicer):
    def BubbleSort(self, request, context):
        n = len(request.data)
        if n > MAX_LEN:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"the list has {n} numbers; bubble sort accepts at most {MAX_LEN} (it is O(n^2): "
                          "a much longer list would hold a core for minutes); send a shorter list")
        data = list(request.data)
        bubble_sort(data)
        return sort_pb2.List(data=data)


def serve(address, threads, reuse_port):
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=threads),
                         options=[("grpc.so_reuseport", 1 if reuse_port else 0)])
    sort_pb2_grpc.add_SortServiceServicer_to_server(SortService(), server)
    if server.add_insecure_port(address) == 0:
        sys.exit(f"server.py: cannot listen on {address}")
    server.start()

    def stop(signum, _frame):
        server.stop(GRACE_S)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.wait_for_termination()


def main():
    address = f"127.0.0.1:{int(os.environ['PORT'])}"
    processes = int(os.environ.get("PROCESSES") or len(os.sched_getaffinity(0)))
    threads = int(os.environ.get("THREADS") or 4)
    if processes <= 1:
        serve(address, threads, reuse_port=False)
        return
    # Forked before any gRPC server exists (grpc/grpc#16001).
    workers = [multiprocessing.Process(target=serve, args=(address, threads, True)) for _ in range(processes)]
    for w in workers:
        w.start()

    def forward(signum, _frame):
        for w in workers:
            if w.is_alive():
                os.kill(w.pid, signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    status = 0
    for w in workers:
        w.join()
        status = status or (w.exitcode != 0 and w.exitcode != -signal.SIGTERM)
    sys.exit(1 if status else 0)


if __name__ == "__main__":
    main()
