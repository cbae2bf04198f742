// Command go-gin is the stackbench `dummy` and `event-log` contestant on Gin
// (docs/scenarios.md): POST /events parses and validates an event, writes it
// to the store and answers the count of all events; GET /events/count answers
// the count. The original experiment's Go stack was Gin on InfluxDB.
//
//	go-gin -scenario dummy
//	go-gin -scenario event-log -store influxdb|postgres|sqlite
//
// Environment: PORT (required), BIND (default 127.0.0.1); INFLUX_URL,
// INFLUX_DB; POSTGRES_URL, PG_TABLE; EVENTS_DB (the SQLite file); TLS_CERT and
// TLS_KEY (PEM files, both or neither): serve HTTPS with Go's crypto/tls.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
)

const maxBody = 64 << 10

var routes = "POST /events, GET /events/count"

// allow is the Allow header of each known path, for 405 answers.
var allow = map[string]string{"/events": "POST", "/events/count": "GET, HEAD"}

type countBody struct {
	Count int64 `json:"count"`
}

type errorBody struct {
	Error string `json:"error"`
}

// fail answers {"error": msg}. PureJSON: messages quote rules like
// "0 <= t < 2^53", which c.JSON would write as \u003c.
func fail(c *gin.Context, status int, msg string) {
	c.Abort()
	c.PureJSON(status, errorBody{msg})
}

func tooLarge(c *gin.Context) {
	fail(c, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes (64 KiB); send a smaller body", maxBody))
}

// readEvent applies the contract's checks in order: body size (413, body not
// read), Content-Type (400), then the event rules (400).
func readEvent(c *gin.Context) (Event, bool) {
	if c.Request.ContentLength > maxBody {
		tooLarge(c)
		return Event{}, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			tooLarge(c)
		} else {
			fail(c, http.StatusBadRequest, "could not read the request body: "+err.Error())
		}
		return Event{}, false
	}
	ct, ok := c.Request.Header["Content-Type"]
	if !ok || len(ct) == 0 {
		fail(c, http.StatusBadRequest, "the request has no Content-Type; send Content-Type: application/json")
		return Event{}, false
	}
	if !isJSONContentType(ct[0]) {
		fail(c, http.StatusBadRequest, fmt.Sprintf("Content-Type must be application/json, got %q", ct[0]))
		return Event{}, false
	}
	ev, err := ParseEvent(body)
	if err != nil {
		fail(c, http.StatusBadRequest, err.Error())
		return Event{}, false
	}
	return ev, true
}

func newRouter(store Store) *gin.Engine {
	r := gin.New()
	r.Use(gin.Recovery())
	r.RedirectTrailingSlash = false // /events/ is an unknown path: 404, not a redirect
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.NoRoute(func(c *gin.Context) {
		fail(c, http.StatusNotFound, fmt.Sprintf("no route for %s %s; this server answers %s", c.Request.Method, c.Request.URL.Path, routes))
	})
	r.NoMethod(func(c *gin.Context) {
		path := c.Request.URL.Path
		c.Header("Allow", allow[path])
		fail(c, http.StatusMethodNotAllowed, fmt.Sprintf("%s does not accept %s; allowed: %s", path, c.Request.Method, allow[path]))
	})

	if store == nil { // dummy: the same parsing and validation, no store
		r.POST("/events", func(c *gin.Context) {
			if _, ok := readEvent(c); ok {
				c.JSON(http.StatusOK, countBody{1})
			}
		})
		count := func(c *gin.Context) { c.JSON(http.StatusOK, countBody{1}) }
		r.GET("/events/count", count)
		r.HEAD("/events/count", count)
		return r
	}

	r.POST("/events", func(c *gin.Context) {
		ev, ok := readEvent(c)
		if !ok {
			return
		}
		if !ev.HasTimestamp {
			ev.TimestampMs = nowMs()
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), storeTimeout)
		defer cancel()
		n, err := store.Append(ctx, ev)
		switch {
		case err == nil:
			c.JSON(http.StatusOK, countBody{n})
		case isUnstorable(err):
			fail(c, http.StatusBadRequest, err.Error())
		default:
			fail(c, http.StatusServiceUnavailable, err.Error()+"; retry later")
		}
	})
	count := func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), storeTimeout)
		defer cancel()
		n, err := store.Count(ctx)
		if err != nil {
			fail(c, http.StatusServiceUnavailable, err.Error()+"; retry later")
			return
		}
		c.JSON(http.StatusOK, countBody{n})
	}
	r.GET("/events/count", count)
	r.HEAD("/events/count", count)
	return r
}

func getenv(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func openStore(kind string) (Store, error) {
	switch kind {
	case "influxdb":
		return openInflux(getenv("INFLUX_URL", "http://127.0.0.1:8086"), getenv("INFLUX_DB", "stackbench_go_gin"))
	case "postgres":
		return openPostgres(getenv("POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/stackbench_test"), getenv("PG_TABLE", "go_gin_events"))
	case "sqlite":
		return openSqlite(getenv("EVENTS_DB", "events.db"))
	}
	return nil, fmt.Errorf("-store must be influxdb, postgres or sqlite, got %q", kind)
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("go-gin: ")
	scenario := flag.String("scenario", "dummy", "dummy or event-log")
	storeKind := flag.String("store", "sqlite", "event-log's store: influxdb, postgres or sqlite")
	flag.Parse()
	port := os.Getenv("PORT")
	if port == "" {
		log.Fatal("set PORT to the port to listen on")
	}
	addr := net.JoinHostPort(getenv("BIND", "127.0.0.1"), port)
	certFile, keyFile := os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY")
	if (certFile == "") != (keyFile == "") {
		log.Fatal("set both TLS_CERT and TLS_KEY (PEM files) to serve HTTPS, or neither")
	}

	var store Store
	what := "dummy (no store)"
	switch *scenario {
	case "dummy":
	case "event-log":
		var err error
		if store, err = openStore(*storeKind); err != nil {
			log.Fatal(err)
		}
		defer store.Close()
		what = "event-log on " + store.Describe()
	default:
		log.Fatalf("-scenario must be dummy or event-log, got %q", *scenario)
	}

	gin.SetMode(gin.ReleaseMode)
	srv := &http.Server{
		Handler:           newRouter(store),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	scheme := "http"
	serve := func() error { return srv.Serve(ln) }
	if certFile != "" {
		// What gin's RunTLS and http.ListenAndServeTLS do: crypto/tls with its
		// defaults (TLS 1.2 and 1.3, X25519MLKEM768 first; h2 and http/1.1 by ALPN).
		// The pair is loaded first, so a bad file stops the server before it says it listens.
		if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
			log.Fatalf("TLS_CERT %s and TLS_KEY %s: %v", certFile, keyFile, err)
		}
		scheme = "https"
		serve = func() error { return srv.ServeTLS(ln, certFile, keyFile) }
	}
	log.Printf("%s, listening on %s://%s", what, scheme, ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- serve() }()
	select {
	case err := <-served:
		log.Fatal(err)
	case <-ctx.Done():
	}
	// Finish the requests in flight, then close the store.
	shutdown, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		log.Printf("shutdown: %v", err)
	}
	log.Print("stopped")
}
