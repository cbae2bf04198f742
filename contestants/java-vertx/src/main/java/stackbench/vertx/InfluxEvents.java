package stackbench.vertx;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.net.URI;
import java.util.concurrent.atomic.AtomicLong;

/**
 * InfluxDB 1.x, the original experiment's store, over its HTTP API with the
 * Vert.x WebClient: the event is one point in line protocol (measurement
 * {@code events}, tags {@code type} and {@code source}, field {@code value})
 * POSTed to /write, then InfluxQL {@code SELECT COUNT(value) FROM events} on
 * /query gives the count: the original experiment's algorithm.
 *
 * <p>Two details keep the count exact. InfluxDB keeps one point per
 * (measurement, tag set, timestamp): two events with the same type, source and
 * millisecond would overwrite each other, so each write adds a distinct
 * offset of 0..999,999 nanoseconds within its millisecond. And InfluxDB
 * stores nanoseconds in an int64: an event after 2262-04-11 gets a 400.
 *
 * <p>Durability: InfluxDB answers a write (204) once the point is in its WAL,
 * which it fsyncs first with the default wal-fsync-delay = "0s".
 */
final class InfluxEvents implements EventStore {
    /** The last millisecond InfluxDB can store with any offset. */
    static final long MAX_INFLUX_MS = (Long.MAX_VALUE - 1) / 1_000_000 - 1;
    private static final String COUNT = "SELECT COUNT(value) FROM events";
    /** Source of the distinct sub-millisecond offsets, seeded apart per process. */
    private static final AtomicLong SEQUENCE =
            new AtomicLong(ProcessHandle.current().pid() * 7919 ^ System.currentTimeMillis());

    private final Vertx vertx;
    private final String url;
    private final String db;
    private WebClient client;
    private String label;
    private int size;

    InfluxEvents(Vertx vertx, String url, String db) {
        this.vertx = vertx;
        this.url = url;
        this.db = db;
    }

    @Override
    public Future<Void> open() {
        if (!IDENTIFIER.matcher(db).matches()) {
            return Future.failedFuture("INFLUX_DB=" + db + " is not a plain database name ([A-Za-z_][A-Za-z0-9_]*)");
        }
        URI uri;
        try {
            uri = URI.create(url);
            if (uri.getHost() == null || !(uri.getScheme().equals("http") || uri.getScheme().equals("https"))) {
                throw new IllegalArgumentException("no http(s)://HOST");
            }
        } catch (RuntimeException e) {
            return Future.failedFuture("INFLUX_URL=" + url + " is not an InfluxDB URL (" + e.getMessage()
                    + "); write http://HOST:8086");
        }
        boolean tls = uri.getScheme().equals("https");
        int port = uri.getPort() > 0 ? uri.getPort() : tls ? 443 : 80;
        label = "InfluxDB at " + uri.getScheme() + "://" + uri.getHost() + ":" + port + "/" + db;
        // Each verticle instance has its own client on its own event loop:
        // the store's connections divided between them, kept alive.
        int instances = Main.eventLoops();
        size = Math.max(2, (EventStore.poolSize() + instances - 1) / instances);
        client = WebClient.create(vertx,
                new WebClientOptions().setDefaultHost(uri.getHost()).setDefaultPort(port).setSsl(tls)
                        .setKeepAlive(true).setConnectTimeout(2_000).setUserAgentEnabled(false),
                new PoolOptions().setHttp1MaxSize(size));
        return client.post("/query").addQueryParam("q", "CREATE DATABASE " + db)
                .timeout(OPEN_TIMEOUT_MS)
                .send()
                .compose(this::checkQuery)
                .<Void>mapEmpty()
                .recover(e -> Future.failedFuture("cannot create database " + db + " in " + label + ": "
                        + e.getMessage() + " (is it running? check INFLUX_URL)"));
    }

    @Override
    public Future<Long> append(Event ev) {
        if (ev.timestampMs() > MAX_INFLUX_MS) {
            return Future.failedFuture(new Unstorable("InfluxDB cannot store times after 2262-04-11: field "
                    + "`timestamp` must be at most " + MAX_INFLUX_MS + " with this store, got " + ev.timestampMs()));
        }
        long ns = ev.timestampMs() * 1_000_000 + Math.floorMod(SEQUENCE.incrementAndGet(), 1_000_000L);
        // Tags need no escaping: the event rules allow only [A-Za-z0-9_.:-].
        String line = "events,type=" + ev.type() + ",source=" + ev.source() + " value=" + ev.value() + " " + ns;
        return client.post("/write").addQueryParam("db", db).addQueryParam("precision", "ns")
                .timeout(TIMEOUT_MS)
                .sendBuffer(Buffer.buffer(line))
                .compose(resp -> resp.statusCode() == 204
                        ? count()
                        : Future.failedFuture(new Unavailable(label + " refused the write: HTTP "
                                + resp.statusCode() + " " + resp.bodyAsString())))
                .recover(this::unavailable);
    }

    @Override
    public Future<Long> count() {
        return client.get("/query").addQueryParam("db", db).addQueryParam("q", COUNT)
                .timeout(TIMEOUT_MS)
                .send()
                .compose(this::checkQuery)
                .map(InfluxEvents::countOf)
                .recover(this::unavailable);
    }

    /** A /query answer's JSON, or a failure with InfluxDB's error. */
    private Future<JsonObject> checkQuery(HttpResponse<Buffer> resp) {
        if (resp.statusCode() != 200) {
            return Future.failedFuture("HTTP " + resp.statusCode() + " " + resp.bodyAsString());
        }
        JsonObject body = resp.bodyAsJsonObject();
        JsonArray results = body.getJsonArray("results");
        String error = body.getString("error");
        if (error == null && results != null && !results.isEmpty()) {
            error = results.getJsonObject(0).getString("error");
        }
        return error != null ? Future.failedFuture(error) : Future.succeededFuture(body);
    }

    /** {"results":[{"series":[{"values":[[t, N]]}]}]}; no series when the measurement is empty. */
    static long countOf(JsonObject body) {
        JsonArray series = body.getJsonArray("results").getJsonObject(0).getJsonArray("series");
        if (series == null || series.isEmpty()) {
            return 0;
        }
        JsonArray values = series.getJsonObject(0).getJsonArray("values");
        return values == null || values.isEmpty() ? 0 : values.getJsonArray(0).getLong(1);
    }

    private <T> Future<T> unavailable(Throwable e) {
        if (e instanceof Unavailable) {
            return Future.failedFuture(e);
        }
        return Future.failedFuture(new Unavailable(label + " failed: " + e.getMessage()));
    }

    @Override
    public String describe() {
        return label + ", measurement events, " + size + " keep-alive connections per event loop"
                + " (an event is acknowledged once InfluxDB has it in its WAL)";
    }

    @Override
    public Future<Void> close() {
        if (client != null) {
            client.close();
        }
        return Future.succeededFuture();
    }
}
