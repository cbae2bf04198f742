// Command go-db is the stackbench `db-read` contestant in Go
// (docs/scenarios.md): GET /db/<driver>?a=&b= reads rows a and b of the
// table items through one named driver, in one round trip, and answers them
// ordered by id; GET /db lists the drivers served. The drivers compare the
// raw drivers with the layer Go people write with, as the original experiment
// compared epgsql, Postgrex and Ecto:
//
//	pgx       PostgreSQL  pgx v5 pgxpool, prepared statement
//	lib-pq    PostgreSQL  database/sql + lib/pq
//	sqlx      PostgreSQL  jmoiron/sqlx over lib/pq, struct scan
//	go-mysql  MySQL       database/sql + go-sql-driver/mysql
//	sqlite    SQLite      database/sql + mattn/go-sqlite3, read-only
//	go-redis  Redis       go-redis v9, pipeline of two HMGET
//
// Environment: PORT (required), BIND (default 127.0.0.1), and the databases:
// POSTGRES_URL (pgx, lib-pq, sqlx), MYSQL_URL (go-mysql), SQLITE_PATH
// (sqlite), REDIS_URL (go-redis). Exactly the drivers whose database is
// given are served.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

const (
	// connectTimeout bounds opening one connection, fetchTimeout one request's
	// read (waiting for a connection included): a database that is down gets
	// a 503 well within 2 seconds.
	connectTimeout = 1 * time.Second
	fetchTimeout   = 1500 * time.Millisecond
	routes         = "GET /db, GET /db/{driver}?a=<id>&b=<id>"
	allow          = "GET, HEAD"
)

type server struct {
	drivers []*Driver
	byName  map[string]*Driver
	list    []byte
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	w.WriteHeader(status)
	w.Write(body)
}

// fail answers {"error": msg}, without HTML escaping (messages quote
// "?a=<id>&b=<id>", which json.Marshal would write as \u003cid\u003e).
func fail(w http.ResponseWriter, status int, msg string) {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	enc.Encode(struct {
		Error string `json:"error"`
	}{msg})
	writeJSON(w, status, bytes.TrimSuffix(body.Bytes(), []byte("\n")))
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	var name string
	switch {
	case path == "/db":
	case strings.HasPrefix(path, "/db/") && len(path) > 4 && !strings.Contains(path[4:], "/"):
		name = path[4:]
	default:
		fail(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s; this server answers %s", r.Method, path, routes))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", allow)
		fail(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s does not accept %s; allowed: %s", path, r.Method, allow))
		return
	}
	if name == "" {
		writeJSON(w, http.StatusOK, s.list)
		return
	}
	s.read(w, r, name)
}

func (s *server) names() string {
	names := make([]string, len(s.drivers))
	for i, d := range s.drivers {
		names[i] = d.Name
	}
	return strings.Join(names, ", ")
}

func (s *server) read(w http.ResponseWriter, r *http.Request, name string) {
	d, ok := s.byName[name]
	if !ok {
		for _, known := range allDrivers {
			if known.name == name {
				fail(w, http.StatusNotFound, fmt.Sprintf("driver %q is not served here: start the server with %s set to serve it; this server serves: %s",
					name, known.env, s.names()))
				return
			}
		}
		all := make([]string, len(allDrivers))
		for i, k := range allDrivers {
			all[i] = k.name
		}
		fail(w, http.StatusNotFound, fmt.Sprintf("unknown driver %q; this server serves: %s (this contestant's drivers: %s)",
			name, s.names(), strings.Join(all, ", ")))
		return
	}
	a, b, err := parseIDs(r.URL.RawQuery)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	lo, hi := a, b
	if lo > hi {
		lo, hi = hi, lo
	}
	ctx, cancel := context.WithTimeout(r.Context(), fetchTimeout)
	defer cancel()
	found, err := d.Fetcher.Fetch(ctx, lo, hi)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			err = fmt.Errorf("no answer within %d ms (%w)", fetchTimeout.Milliseconds(), err)
		}
		fail(w, http.StatusServiceUnavailable, fmt.Sprintf("%s cannot read from %s: %v; retry when the database is back", d.Name, d.Database, err))
		return
	}
	pair, missing, ok := inAnswerOrder(found, lo, hi)
	if !ok {
		fail(w, http.StatusNotFound, fmt.Sprintf("no row with id %d in items (the data set has ids 1..=%d); ask for an id that exists", missing, rows))
		return
	}
	body, _ := json.Marshal(pair)
	writeJSON(w, http.StatusOK, body)
}

// open connects every driver whose database is given and checks that each
// reads rows 1 and 2 of the data set.
func open() ([]*Driver, error) {
	pg, my, lite, rd := os.Getenv("POSTGRES_URL"), os.Getenv("MYSQL_URL"), os.Getenv("SQLITE_PATH"), os.Getenv("REDIS_URL")
	if pg == "" && my == "" && lite == "" && rd == "" {
		return nil, errors.New("no database given: set POSTGRES_URL, MYSQL_URL, SQLITE_PATH and/or REDIS_URL")
	}
	sqlSize, liteSize := sqlPoolSize(), sqlitePoolSize()
	type spec struct {
		name, database, layer, location, seed string
		size                                  int
		open                                  func(context.Context, string, int) (Fetcher, error)
	}
	var specs []spec
	if pg != "" {
		where := redact(pg)
		specs = append(specs,
			spec{"pgx", "PostgreSQL", "pgx v5 native driver, pgxpool, statement prepared on each connection", where, pg, sqlSize, openPgx},
			spec{"lib-pq", "PostgreSQL", "database/sql + lib/pq, prepared *sql.Stmt, rows.Scan", where, pg, sqlSize, openLibPq},
			spec{"sqlx", "PostgreSQL", "jmoiron/sqlx over database/sql + lib/pq, prepared sqlx.Stmt, struct scan (Select)", where, pg, sqlSize, openSqlx})
	}
	if my != "" {
		specs = append(specs, spec{"go-mysql", "MySQL/MariaDB", "database/sql + go-sql-driver/mysql, prepared *sql.Stmt (server-side), rows.Scan", redact(my), my, sqlSize, openMysql})
	}
	if lite != "" {
		specs = append(specs, spec{"sqlite", "SQLite (embedded)", "database/sql + mattn/go-sqlite3, read-only connections, prepared *sql.Stmt", lite, "sqlite:" + lite, liteSize, openSqlite})
	}
	if rd != "" {
		specs = append(specs, spec{"go-redis", "Redis", "go-redis v9, pool, one pipeline of two HMGET item:<id> name price", redact(rd), rd, sqlSize, openRedis})
	}
	var drivers []*Driver
	for _, sp := range specs {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		arg := sp.seed
		if sp.name == "sqlite" {
			arg = lite
		}
		f, err := sp.open(ctx, arg, sp.size)
		if err == nil {
			var got []Item
			if got, err = f.Fetch(ctx, 1, 2); err == nil {
				if pair, _, ok := inAnswerOrder(got, 1, 2); !ok || pair[0].Name != "item-1" || pair[1].Name != "item-2" {
					err = fmt.Errorf("rows 1 and 2 are not the data set's (got %v)", got)
				}
			}
			if err != nil {
				f.Close()
				err = fmt.Errorf("%s reached %s but could not read rows 1 and 2 of the data set: %v; load it with `sb-db-read seed --store %s`",
					sp.name, sp.location, err, sp.seed)
			}
		} else {
			err = fmt.Errorf("%s cannot connect to %s at %s: %v", sp.name, sp.database, sp.location, err)
		}
		cancel()
		if err != nil {
			for _, d := range drivers {
				d.Fetcher.Close()
			}
			return nil, err
		}
		pool := connections(sp.size)
		if sp.name == "sqlite" {
			pool += " (read-only)"
		}
		drivers = append(drivers, &Driver{sp.name, sp.database, sp.layer, pool, sp.location, f})
	}
	return drivers, nil
}

// redact replaces a URL's password with ***.
func redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	authority, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	at := strings.LastIndexByte(authority, '@')
	if at < 0 {
		return raw
	}
	user, _, hasPassword := strings.Cut(authority[:at], ":")
	if !hasPassword {
		return raw
	}
	return scheme + "://" + user + ":***@" + authority[at+1:] + path
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("go-db: ")
	port := os.Getenv("PORT")
	if port == "" {
		log.Fatal("set PORT to the port to listen on")
	}
	bind := os.Getenv("BIND")
	if bind == "" {
		bind = "127.0.0.1"
	}
	drivers, err := open()
	if err != nil {
		log.Fatal(err)
	}
	s := &server{drivers: drivers, byName: map[string]*Driver{}}
	type entry struct {
		Name     string `json:"name"`
		Database string `json:"database"`
		Layer    string `json:"layer"`
		Pool     string `json:"pool"`
	}
	var list struct {
		Drivers []entry `json:"drivers"`
	}
	for _, d := range drivers {
		s.byName[d.Name] = d
		list.Drivers = append(list.Drivers, entry{d.Name, d.Database, d.Layer, d.Pool})
	}
	s.list, _ = json.Marshal(list)

	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(bind, port))
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("db-read (net/http) listening on http://%s", ln.Addr())
	for _, d := range drivers {
		log.Printf("  /db/%-9s %s at %s; %s; pool %s", d.Name, d.Database, d.Location, d.Layer, d.Pool)
	}
	log.Printf("  pool sizes: SQL and Redis pools 16 x %d core(s) (at most 30) = %d, SQLite %d", sqlitePoolSize(), sqlPoolSize(), sqlitePoolSize())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		log.Fatal(err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		log.Printf("shutdown: %v", err)
	}
	for _, d := range drivers {
		d.Fetcher.Close()
	}
	log.Print("stopped")
}
