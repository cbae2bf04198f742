package main

import (
	"context"
	"fmt"
	"runtime"
)

// selectSQL is the one query of every SQL driver: both rows in one round trip.
const (
	selectPG     = "SELECT id, name, price FROM items WHERE id IN ($1, $2) ORDER BY id"
	selectQMarks = "SELECT id, name, price FROM items WHERE id IN (?, ?) ORDER BY id"
)

// Fetcher reads the rows of ids lo <= hi (possibly equal) in one round trip;
// an id without a row is simply absent from the result.
type Fetcher interface {
	Fetch(ctx context.Context, lo, hi int32) ([]Item, error)
	Close()
}

// Driver is one served driver: its name in /db/<name>, what it reads and how.
type Driver struct {
	Name     string
	Database string
	Layer    string
	Pool     string
	Location string
	Fetcher  Fetcher
}

// allDrivers lists this contestant's driver names in order, with the
// environment variable that enables each.
var allDrivers = []struct{ name, env string }{
	{"pgx", "POSTGRES_URL"},
	{"lib-pq", "POSTGRES_URL"},
	{"sqlx", "POSTGRES_URL"},
	{"go-mysql", "MYSQL_URL"},
	{"sqlite", "SQLITE_PATH"},
	{"go-redis", "REDIS_URL"},
}

// Pool sizes, the Rust reference contestant's rule: SQL pools (and the Redis
// pool) 16 connections per core this process may use, at most 30; SQLite one
// connection per core.
// runtime.NumCPU honours the CPU affinity mask (taskset -c 0 counts one).
func sqlPoolSize() int {
	n := 16 * runtime.NumCPU()
	if n > 30 {
		n = 30
	}
	return n
}

func sqlitePoolSize() int { return runtime.NumCPU() }

func connections(n int) string {
	if n == 1 {
		return "1 connection"
	}
	return fmt.Sprintf("%d connections", n)
}
