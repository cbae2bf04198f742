package main

// PostgreSQL through pgx v5's pgxpool: one round trip and one statement per
// event. `WITH ins AS (INSERT ...) SELECT COUNT(*) + 1 FROM t`: the parts of
// a WITH statement see the snapshot taken before it, so COUNT(*) does not see
// the row being inserted and + 1 adds it. pgx prepares each statement once per
// connection (its statement cache), so the SQL text is parsed once.
// Durability is the server's: with synchronous_commit=on (the default) the
// statement returns once its WAL record is fsynced.

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

type postgresStore struct {
	pool      *pgxpool.Pool
	appendSQL string
	countSQL  string
	label     string
	describe  string
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,47}$`)

func openPostgres(url, table string) (Store, error) {
	if !identifier.MatchString(table) {
		return nil, fmt.Errorf("PG_TABLE=%q is not a plain table name ([A-Za-z_][A-Za-z0-9_]*)", table)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("POSTGRES_URL is not a PostgreSQL URL (%v); write postgres://USER@HOST:5432/DB", err)
	}
	cfg.MaxConns = int32(poolSize())
	if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > 2*time.Second {
		cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	}
	label := fmt.Sprintf("PostgreSQL at %s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	// pgx v5's pool connects lazily: Ping makes the first connection, so an
	// unreachable server stops the start here with its cause.
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		if err = pool.Ping(ctx); err != nil {
			pool.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w (is it running? check POSTGRES_URL)", label, err)
	}
	// Processes creating the table at once take turns on an advisory lock:
	// CREATE TABLE IF NOT EXISTS alone does not serialize them.
	ddl := fmt.Sprintf(`BEGIN; SELECT pg_advisory_xact_lock(8314034512975230025);
		CREATE TABLE IF NOT EXISTS %s (
			id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			kind TEXT NOT NULL, source TEXT NOT NULL,
			value DOUBLE PRECISION NOT NULL, ts_ms BIGINT NOT NULL);
		COMMIT`, table)
	if _, err := pool.Exec(ctx, ddl); err != nil {
		pool.Close()
		return nil, fmt.Errorf("cannot create table %s in %s: %w", table, label, err)
	}
	var sync string
	if err := pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&sync); err != nil {
		sync = "unknown"
	}
	return &postgresStore{
		pool: pool,
		appendSQL: fmt.Sprintf("WITH ins AS (INSERT INTO %s (kind, source, value, ts_ms) VALUES ($1, $2, $3, $4)) "+
			"SELECT COUNT(*) + 1 FROM %s", table, table),
		countSQL: fmt.Sprintf("SELECT COUNT(*) FROM %s", table),
		label:    label,
		describe: fmt.Sprintf("%s, table %s, pool of %d connections (synchronous_commit=%s)", label, table, cfg.MaxConns, sync),
	}, nil
}

func (s *postgresStore) Append(ctx context.Context, ev Event) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, s.appendSQL, ev.Type, ev.Source, ev.Value, int64(ev.TimestampMs)).Scan(&n)
	if err != nil {
		return 0, unavailable(s.label, err)
	}
	return n, nil
}

func (s *postgresStore) Count(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, s.countSQL).Scan(&n); err != nil {
		return 0, unavailable(s.label, err)
	}
	return n, nil
}

func (s *postgresStore) Describe() string { return s.describe }
func (s *postgresStore) Close()           { s.pool.Close() }
