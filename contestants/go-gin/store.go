package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Store is where event-log writes events and counts them (the original
// experiment's steps 3 and 4). Append writes one event with the store's
// acknowledged-write durability and returns the number of events after it;
// Count returns that number without writing. Both are safe for concurrent use.
type Store interface {
	Append(ctx context.Context, ev Event) (int64, error)
	Count(ctx context.Context) (int64, error)
	Describe() string
	Close()
}

// errUnstorable wraps a valid event the store cannot hold (400, nothing written).
type errUnstorable struct{ msg string }

func (e *errUnstorable) Error() string { return e.msg }

func isUnstorable(err error) bool {
	var u *errUnstorable
	return errors.As(err, &u)
}

// storeTimeout bounds one store operation; past it the request gets a 503.
const storeTimeout = 5 * time.Second

// poolSize is the connection count of the server stores: four per core this
// process may use, at least eight (the Rust reference contestant's rule).
// runtime.NumCPU honours the CPU affinity mask stackbench pins us to.
func poolSize() int {
	n := 4 * runtime.NumCPU()
	if n < 8 {
		n = 8
	}
	return n
}

func nowMs() uint64 {
	return uint64(time.Now().UnixMilli())
}

func unavailable(label string, err error) error {
	return fmt.Errorf("%s is unavailable: %w", label, err)
}
