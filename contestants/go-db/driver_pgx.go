package main

// pgx v5, the native PostgreSQL driver, through its own pool (pgxpool): the
// query is prepared under a name on every new connection (AfterConnect), and
// each request executes it: one round trip (Bind/Execute) per request.

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

const pgxStatement = "items_by_ids"

type pgxFetcher struct{ pool *pgxpool.Pool }

func openPgx(ctx context.Context, url string, size int) (Fetcher, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("POSTGRES_URL is not a PostgreSQL URL (%v); write postgres://USER@HOST:5432/DB", err)
	}
	cfg.MaxConns = int32(size)
	cfg.ConnConfig.ConnectTimeout = connectTimeout
	cfg.HealthCheckPeriod = 10 * time.Second
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Prepare(ctx, pgxStatement, selectPG)
		return err
	}
	// pgx v5's pool connects lazily: Ping makes the first connection, so an
	// unreachable server is reported at start.
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return &pgxFetcher{pool}, nil
}

func (f *pgxFetcher) Fetch(ctx context.Context, lo, hi int32) ([]Item, error) {
	rows, err := f.pool.Query(ctx, pgxStatement, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	items := make([]Item, 0, 2)
	for rows.Next() {
		var it Item
		if err := rows.Scan(&it.ID, &it.Name, &it.Price); err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, rows.Err()
}

func (f *pgxFetcher) Close() { f.pool.Close() }
