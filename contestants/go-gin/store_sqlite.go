package main

// The embedded store: one SQLite file in WAL mode through database/sql and
// mattn/go-sqlite3. SQLite takes one writer at a time, so writes go through a
// pool of exactly one connection (the usual Go setup: SetMaxOpenConns(1)),
// each event's INSERT and its COUNT(*) in one transaction; reads of the count
// alone use a second pool of read connections, which WAL lets run beside the
// writer. synchronous=FULL: the commit is fsynced before the answer, so an
// acknowledged event survives SIGKILL (and power loss).

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"

	_ "github.com/mattn/go-sqlite3"
)

type sqliteStore struct {
	writer *sql.DB
	reader *sql.DB
	label  string
}

func openSqlite(path string) (Store, error) {
	label := "the SQLite file " + path
	dsn := path + "?_journal_mode=WAL&_synchronous=FULL&_busy_timeout=5000&_txlock=immediate"
	writer, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", label, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	if _, err := writer.Exec(`CREATE TABLE IF NOT EXISTS events (
		id INTEGER PRIMARY KEY, kind TEXT NOT NULL, source TEXT NOT NULL,
		value REAL NOT NULL, ts_ms INTEGER NOT NULL)`); err != nil {
		writer.Close()
		return nil, fmt.Errorf("cannot create the events table in %s: %w (is the directory writable?)", label, err)
	}
	reader, err := sql.Open("sqlite3", dsn)
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("cannot open %s: %w", label, err)
	}
	reader.SetMaxOpenConns(runtime.NumCPU())
	reader.SetMaxIdleConns(runtime.NumCPU())
	return &sqliteStore{writer: writer, reader: reader, label: label}, nil
}

func (s *sqliteStore) Append(ctx context.Context, ev Event) (int64, error) {
	tx, err := s.writer.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return 0, unavailable(s.label, err)
	}
	defer tx.Rollback() // no-op after Commit
	if _, err := tx.ExecContext(ctx, "INSERT INTO events (kind, source, value, ts_ms) VALUES (?, ?, ?, ?)",
		ev.Type, ev.Source, ev.Value, int64(ev.TimestampMs)); err != nil {
		return 0, unavailable(s.label, err)
	}
	var n int64
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM events").Scan(&n); err != nil {
		return 0, unavailable(s.label, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, unavailable(s.label, err)
	}
	return n, nil
}

func (s *sqliteStore) Count(ctx context.Context) (int64, error) {
	var n int64
	if err := s.reader.QueryRowContext(ctx, "SELECT COUNT(*) FROM events").Scan(&n); err != nil {
		return 0, unavailable(s.label, err)
	}
	return n, nil
}

func (s *sqliteStore) Describe() string {
	return s.label + " (WAL, synchronous=FULL: every acknowledged event is fsynced; one writer connection)"
}

func (s *sqliteStore) Close() {
	s.reader.Close()
	s.writer.Close()
}
