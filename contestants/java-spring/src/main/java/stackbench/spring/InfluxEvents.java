package stackbench.spring;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.util.Timeout;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.client.HttpComponentsClientHttpRequestFactory;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

/**
 * InfluxDB 1.x, the original experiment's store, over its HTTP API with
 * Spring's RestClient on a pooled Apache HttpClient 5: the event is one point
 * in line protocol (measurement {@code events}, tags {@code type} and
 * {@code source}, field {@code value}) POSTed to /write, then InfluxQL
 * {@code SELECT COUNT(value) FROM events} on /query gives the count: the
 * original experiment's algorithm.
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
@Component
@Profile("influxdb")
class InfluxEvents implements EventStore {
    /** The last millisecond InfluxDB can store with any offset. */
    static final long MAX_INFLUX_MS = (Long.MAX_VALUE - 1) / 1_000_000 - 1;
    private static final String COUNT = "SELECT COUNT(value) FROM events";
    /** Source of the distinct sub-millisecond offsets, seeded apart per process. */
    private static final AtomicLong SEQUENCE =
            new AtomicLong(ProcessHandle.current().pid() * 7919 ^ System.currentTimeMillis());

    private final RestClient client;
    private final String db;
    private final String label;
    private final int size;

    InfluxEvents(RestClient.Builder builder, @Value("${INFLUX_URL:http://127.0.0.1:8086}") String url,
            @Value("${INFLUX_DB:stackbench_java_spring}") String db) {
        if (!IDENTIFIER.matcher(db).matches()) {
            throw new IllegalArgumentException("INFLUX_DB=" + db + " is not a plain database name ([A-Za-z_][A-Za-z0-9_]*)");
        }
        URI uri;
        try {
            uri = URI.create(url);
            if (uri.getHost() == null || !(uri.getScheme().equals("http") || uri.getScheme().equals("https"))) {
                throw new IllegalArgumentException("no http(s)://HOST");
            }
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("INFLUX_URL=" + url + " is not an InfluxDB URL (" + e.getMessage()
                    + "); write http://HOST:8086", e);
        }
        this.db = db;
        int port = uri.getPort() > 0 ? uri.getPort() : uri.getScheme().equals("https") ? 443 : 80;
        label = "InfluxDB at " + uri.getScheme() + "://" + uri.getHost() + ":" + port + "/" + db;
        // One pool of keep-alive connections, shared by Tomcat's threads: a
        // request waits for a free one (up to 5 s) rather than opening more.
        size = EventStore.poolSize();
        var connections = PoolingHttpClientConnectionManagerBuilder.create()
                .setMaxConnTotal(size).setMaxConnPerRoute(size)
                .setDefaultConnectionConfig(ConnectionConfig.custom().setConnectTimeout(Timeout.ofSeconds(2)).build())
                .build();
        var http = HttpClients.custom().setConnectionManager(connections)
                .setDefaultRequestConfig(RequestConfig.custom()
                        .setConnectionRequestTimeout(Timeout.ofMilliseconds(TIMEOUT_MS))
                        .setResponseTimeout(Timeout.ofMilliseconds(TIMEOUT_MS)).build())
                .disableAutomaticRetries()
                .build();
        client = builder.baseUrl(url).requestFactory(new HttpComponentsClientHttpRequestFactory(http)).build();
        try {
            query("POST", "CREATE DATABASE " + db, false);
        } catch (RuntimeException e) {
            throw new IllegalStateException("cannot create database " + db + " in " + label + ": " + e.getMessage()
                    + " (is it running? check INFLUX_URL)", e);
        }
    }

    @Override
    public long append(Event ev) {
        if (ev.timestampMs() > MAX_INFLUX_MS) {
            throw new Unstorable("InfluxDB cannot store times after 2262-04-11: field `timestamp` must be at most "
                    + MAX_INFLUX_MS + " with this store, got " + ev.timestampMs());
        }
        long ns = ev.timestampMs() * 1_000_000 + Math.floorMod(SEQUENCE.incrementAndGet(), 1_000_000L);
        // Tags need no escaping: the event rules allow only [A-Za-z0-9_.:-].
        String line = "events,type=" + ev.type() + ",source=" + ev.source() + " value=" + ev.value() + " " + ns;
        try {
            HttpStatusCode status = client.post().uri("/write?db={db}&precision=ns", db)
                    .contentType(MediaType.TEXT_PLAIN).body(line)
                    .exchange((req, resp) -> resp.getStatusCode(), true);
            if (status.value() != 204) {
                throw new Unavailable(label + " refused the write: HTTP " + status.value(), null);
            }
        } catch (RestClientException e) {
            throw new Unavailable(label + " failed: " + e.getMessage(), e);
        }
        return count();
    }

    @Override
    public long count() {
        try {
            return countOf(query("GET", COUNT, true));
        } catch (RestClientException | IllegalStateException e) {
            throw new Unavailable(label + " failed: " + e.getMessage(), e);
        }
    }

    /** Runs InfluxQL on /query; InfluxDB's own error becomes an IllegalStateException. */
    private JsonNode query(String method, String q, boolean inDb) {
        var spec = method.equals("POST") ? client.post() : client.get();
        JsonNode body = (inDb ? spec.uri("/query?db={db}&q={q}", db, q) : spec.uri("/query?q={q}", q))
                .retrieve().body(JsonNode.class);
        if (body == null) {
            throw new IllegalStateException("an empty answer to " + q);
        }
        String error = body.path("error").asText(null);
        if (error == null) {
            error = body.path("results").path(0).path("error").asText(null);
        }
        if (error != null) {
            throw new IllegalStateException(error);
        }
        return body;
    }

    /** {"results":[{"series":[{"values":[[t, N]]}]}]}; no series when the measurement is empty. */
    static long countOf(JsonNode body) {
        JsonNode n = body.path("results").path(0).path("series").path(0).path("values").path(0).path(1);
        return n.isMissingNode() ? 0 : n.asLong();
    }

    @Override
    public String describe() {
        return label + ", measurement events, RestClient on Apache HttpClient 5, " + size
                + " keep-alive connections (an event is acknowledged once InfluxDB has it in its WAL)";
    }
}
