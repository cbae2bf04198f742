package main

// InfluxDB 1.x, the original experiment's store, through the official Go
// client (github.com/influxdata/influxdb1-client/v2): the event is one point
// (measurement `events`, tags `type` and `source`, field `value`), written
// over HTTP, then InfluxQL `SELECT COUNT(value) FROM events` gives the count:
// the original experiment's algorithm.
//
// Two details keep the count exact:
//   - InfluxDB keeps one point per (measurement, tag set, timestamp): a second
//     event with the same type, source and millisecond would replace the first.
//     Each write gets a distinct sub-millisecond offset (nanoseconds
//     0..999,999 within its millisecond), so the stored millisecond is still
//     the event's.
//   - InfluxDB stores nanoseconds in an int64: times after 2262-04-11 cannot be
//     stored, and such an event gets a 400 saying so (nothing is written).
//
// Durability: InfluxDB answers a write once the point is in its WAL, which it
// fsyncs before answering with the default wal-fsync-delay = "0s".
//
// Connections: the client's http.Transport keeps Go's default of two idle
// connections per host and closes any other connection after its exchange, so
// one client shared by 50 concurrent requests opens and closes a TCP
// connection for most writes. The store holds a pool of clients instead, one
// request at a time on each, so each client keeps its one connection alive.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"time"

	client "github.com/influxdata/influxdb1-client/v2"
)

// maxInfluxMs is the last millisecond InfluxDB can store with any offset.
const maxInfluxMs = (math.MaxInt64-1)/1_000_000 - 1

type influxStore struct {
	clients  chan client.Client
	db       string
	count    client.Query
	sequence atomic.Uint64 // source of the distinct sub-millisecond offsets
	label    string
	describe string
}

func openInflux(addr, db string) (Store, error) {
	if !identifier.MatchString(db) {
		return nil, fmt.Errorf("INFLUX_DB=%q is not a plain database name ([A-Za-z_][A-Za-z0-9_]*)", db)
	}
	label := fmt.Sprintf("InfluxDB at %s/%s", addr, db)
	n := poolSize()
	s := &influxStore{
		clients: make(chan client.Client, n),
		db:      db,
		count:   client.NewQuery("SELECT COUNT(value) FROM events", db, ""),
		label:   label,
	}
	for i := 0; i < n; i++ {
		c, err := client.NewHTTPClient(client.HTTPConfig{Addr: addr, Timeout: storeTimeout})
		if err != nil {
			return nil, fmt.Errorf("INFLUX_URL=%q: %w", addr, err)
		}
		s.clients <- c
	}
	s.sequence.Store(uint64(os.Getpid())*7919 ^ nowMs())
	c := <-s.clients
	resp, err := c.Query(client.NewQuery("CREATE DATABASE "+db, "", ""))
	s.clients <- c
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("cannot create database %s in %s: %w (is it running? check INFLUX_URL)", db, label, err)
	}
	s.describe = fmt.Sprintf("%s, measurement events, %d clients (an event is acknowledged once InfluxDB has it in its WAL)", label, n)
	return s, nil
}

// with runs f on a client of the pool, waiting for one if all are busy.
func (s *influxStore) with(ctx context.Context, f func(client.Client) error) error {
	select {
	case c := <-s.clients:
		defer func() { s.clients <- c }()
		return f(c)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *influxStore) Append(ctx context.Context, ev Event) (int64, error) {
	if ev.TimestampMs > maxInfluxMs {
		return 0, &errUnstorable{fmt.Sprintf("InfluxDB cannot store times after 2262-04-11: field `timestamp` "+
			"must be at most %d with this store, got %d", uint64(maxInfluxMs), ev.TimestampMs)}
	}
	offset := s.sequence.Add(1) % 1_000_000
	ns := int64(ev.TimestampMs)*1_000_000 + int64(offset)
	pt, err := client.NewPoint("events",
		map[string]string{"type": ev.Type, "source": ev.Source},
		map[string]interface{}{"value": ev.Value},
		time.Unix(0, ns))
	if err != nil {
		return 0, &errUnstorable{fmt.Sprintf("the event cannot be written to InfluxDB: %v", err)}
	}
	bp, _ := client.NewBatchPoints(client.BatchPointsConfig{Database: s.db, Precision: "ns"})
	bp.AddPoint(pt)
	var n int64
	err = s.with(ctx, func(c client.Client) error {
		if err := c.Write(bp); err != nil {
			return err
		}
		n, err = s.countWith(c)
		return err
	})
	if err != nil {
		return 0, unavailable(s.label, err)
	}
	return n, nil
}

func (s *influxStore) Count(ctx context.Context) (int64, error) {
	var n int64
	err := s.with(ctx, func(c client.Client) (err error) {
		n, err = s.countWith(c)
		return err
	})
	if err != nil {
		return 0, unavailable(s.label, err)
	}
	return n, nil
}

// countWith runs the count query: {"results":[{"series":[{"values":[[t, N]]}]}]},
// no series when the measurement is empty.
func (s *influxStore) countWith(c client.Client) (int64, error) {
	resp, err := c.Query(s.count)
	if err != nil {
		return 0, err
	}
	if err := resp.Error(); err != nil {
		return 0, err
	}
	if len(resp.Results) == 0 || len(resp.Results[0].Series) == 0 {
		return 0, nil
	}
	values := resp.Results[0].Series[0].Values
	if len(values) == 0 || len(values[0]) < 2 {
		return 0, nil
	}
	num, ok := values[0][1].(json.Number)
	if !ok {
		return 0, fmt.Errorf("the count query answered %v, not a number", values[0][1])
	}
	return num.Int64()
}

func (s *influxStore) Describe() string { return s.describe }

func (s *influxStore) Close() {
	for {
		select {
		case c := <-s.clients:
			c.Close()
		default:
			return
		}
	}
}
