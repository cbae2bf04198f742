// Command go-grpc is the stackbench `bubble-sort` contestant on grpc-go
// (docs/scenarios.md): the service sort.v1.SortService/BubbleSort over
// HTTP/2 cleartext, bubble-sorting a list of int32, as the Bubble Benchmark's
// Go server did.
//
// Environment: PORT (required), BIND (default 127.0.0.1).
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sortv1 "stackbench.local/go-grpc/sortv1"
)

// maxLen is the longest list sorted: bubble sort is O(n²), and a million
// numbers would hold a core for minutes.
const maxLen = 10_000

type sortServer struct {
	sortv1.UnimplementedSortServiceServer
}

func (sortServer) BubbleSort(_ context.Context, in *sortv1.List) (*sortv1.List, error) {
	if n := len(in.Data); n > maxLen {
		return nil, status.Errorf(codes.InvalidArgument,
			"the list has %d numbers; bubble sort accepts at most %d (it is O(n²): a much longer list would hold a core for minutes); send a shorter list",
			n, maxLen)
	}
	bubbleSort(in.Data) // in place: the request's list is ours
	return &sortv1.List{Data: in.Data}, nil
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("go-grpc: ")
	port := os.Getenv("PORT")
	if port == "" {
		log.Fatal("set PORT to the port to listen on")
	}
	bind := os.Getenv("BIND")
	if bind == "" {
		bind = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(bind, port))
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer()
	sortv1.RegisterSortServiceServer(srv, sortServer{})
	log.Printf("sort.v1.SortService (bubble sort, at most %d numbers) on h2c %s", maxLen, ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		log.Fatal(err)
	case <-ctx.Done():
	}
	// GracefulStop stops accepting and waits for the calls in flight; a
	// client holding a connection open past 4 s gets it closed.
	done := make(chan struct{})
	go func() { srv.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(4 * time.Second):
		srv.Stop()
	}
	fmt.Fprintln(os.Stderr, "go-grpc: stopped")
}
