package main

// The database/sql drivers: lib/pq, sqlx over lib/pq, go-sql-driver/mysql and
// go-sqlite3. Each has its own *sql.DB pool (max open = max idle, so a
// connection is kept, not closed after its request, which database/sql's
// default of 2 idle connections would do) and one *sql.Stmt prepared at start:
// database/sql prepares it on each connection the first time that connection
// runs it, then each request is one round trip (lib/pq and go-mysql would
// otherwise prepare, execute and close a statement per query: two or three
// round trips).

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	_ "github.com/mattn/go-sqlite3"
)

func pool(db *sql.DB, size int) {
	db.SetMaxOpenConns(size)
	db.SetMaxIdleConns(size)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
}

// stmtFetcher: database/sql with rows.Scan, the raw driver's usual code.
type stmtFetcher struct {
	db      *sql.DB
	stmt    *sql.Stmt
	bounded bool // lib/pq: see bounded
}

func newStmtFetcher(ctx context.Context, db *sql.DB, query string) (Fetcher, error) {
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	stmt, err := db.PrepareContext(ctx, query)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &stmtFetcher{db: db, stmt: stmt}, nil
}

func (f *stmtFetcher) Fetch(ctx context.Context, lo, hi int32) ([]Item, error) {
	if f.bounded {
		return bounded(ctx, func() ([]Item, error) { return f.fetch(ctx, lo, hi) })
	}
	return f.fetch(ctx, lo, hi)
}

func (f *stmtFetcher) fetch(ctx context.Context, lo, hi int32) ([]Item, error) {
	rows, err := f.stmt.QueryContext(ctx, lo, hi)
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

func (f *stmtFetcher) Close() {
	f.stmt.Close()
	f.db.Close()
}

func pqDB(url string, size int) (*sql.DB, error) {
	connector, err := pq.NewConnector(url)
	if err != nil {
		return nil, fmt.Errorf("POSTGRES_URL is not a PostgreSQL URL (%v); write postgres://USER@HOST:5432/DB?sslmode=disable", err)
	}
	connector.Dialer(deadlineDialer{})
	db := sql.OpenDB(connector)
	pool(db, size)
	return db, nil
}

// deadlineDialer gives every read on a lib/pq connection a deadline. lib/pq
// does not unblock a query waiting on its socket when the context ends: it
// asks the server to cancel the query and keeps waiting for its answer, so a
// database that hangs (stopped, or a network that drops packets) would hang
// the request for good. With the deadline the read fails after fetchTimeout,
// the connection is dropped and the request gets its 503.
type deadlineDialer struct{ net.Dialer }

func (d deadlineDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.Dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return deadlineConn{c}, nil
}

func (d deadlineDialer) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, addr)
}

func (d deadlineDialer) DialTimeout(network, addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, addr)
}

type deadlineConn struct{ net.Conn }

// bounded runs a lib/pq read and gives up on it when ctx ends. The read
// deadline alone does not bound a request: when a connection times out,
// database/sql retries on a new one, whose startup reads lib/pq does not tie
// to the context either, so a hung database took two deadlines (3 s) to
// answer. The abandoned read ends at its own read deadline.
func bounded(ctx context.Context, read func() ([]Item, error)) ([]Item, error) {
	type result struct {
		items []Item
		err   error
	}
	done := make(chan result, 1)
	go func() {
		items, err := read()
		done <- result{items, err}
	}()
	select {
	case r := <-done:
		return r.items, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c deadlineConn) Read(b []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(fetchTimeout)); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

// openLibPq: database/sql + lib/pq.
func openLibPq(ctx context.Context, url string, size int) (Fetcher, error) {
	db, err := pqDB(url, size)
	if err != nil {
		return nil, err
	}
	f, err := newStmtFetcher(ctx, db, selectPG)
	if err != nil {
		return nil, err
	}
	f.(*stmtFetcher).bounded = true
	return f, nil
}

// sqlxFetcher: sqlx over lib/pq, the rows scanned into []Item by their db tags.
type sqlxFetcher struct {
	db   *sqlx.DB
	stmt *sqlx.Stmt
}

func openSqlx(ctx context.Context, url string, size int) (Fetcher, error) {
	raw, err := pqDB(url, size)
	if err != nil {
		return nil, err
	}
	db := sqlx.NewDb(raw, "postgres")
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	stmt, err := db.PreparexContext(ctx, selectPG)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &sqlxFetcher{db, stmt}, nil
}

func (f *sqlxFetcher) Fetch(ctx context.Context, lo, hi int32) ([]Item, error) {
	return bounded(ctx, func() ([]Item, error) {
		items := make([]Item, 0, 2)
		err := f.stmt.SelectContext(ctx, &items, lo, hi)
		return items, err
	})
}

func (f *sqlxFetcher) Close() {
	f.stmt.Close()
	f.db.Close()
}

// mysqlConfig reads mysql://USER[:PASSWORD]@HOST[:PORT]/DB (the form stackbench
// seed takes) or a go-sql-driver DSN (USER@tcp(HOST:PORT)/DB).
func mysqlConfig(raw string) (*mysql.Config, error) {
	if !strings.HasPrefix(raw, "mysql://") {
		return mysql.ParseDSN(raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	if u.Port() == "" {
		cfg.Addr = net.JoinHostPort(u.Hostname(), "3306")
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if cfg.DBName == "" {
		return nil, fmt.Errorf("no database name in %s", raw)
	}
	return cfg, nil
}

// openMysql: database/sql + go-sql-driver/mysql, a server-side prepared
// statement (binary protocol).
func openMysql(ctx context.Context, raw string, size int) (Fetcher, error) {
	cfg, err := mysqlConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("MYSQL_URL is not a MySQL URL (%v); write mysql://USER@HOST:3306/DB", err)
	}
	cfg.Timeout = connectTimeout
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	pool(db, size)
	return newStmtFetcher(ctx, db, selectQMarks)
}

// openSqlite: database/sql + go-sqlite3, read-only connections.
func openSqlite(ctx context.Context, path string, size int) (Fetcher, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=2000")
	if err != nil {
		return nil, err
	}
	pool(db, size)
	return newStmtFetcher(ctx, db, selectQMarks)
}
