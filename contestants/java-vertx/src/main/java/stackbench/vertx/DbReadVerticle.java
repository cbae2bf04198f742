package stackbench.vertx;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.stream.Collectors;

/**
 * The db-read scenario (docs/scenarios.md) as one verticle: GET
 * /db/{driver}?a=&b= reads rows a and b of the table items through one named
 * driver in one round trip and answers them ordered by id; GET /db lists the
 * drivers served. Exactly the drivers whose database is given are served:
 *
 * <pre>
 *   vertx-pg            PostgreSQL     vertx-pg-client, prepared query      POSTGRES_URL
 *   vertx-pg-templates  PostgreSQL     SQL Client Templates over it         POSTGRES_URL
 *   vertx-mysql         MySQL/MariaDB  vertx-mysql-client, prepared query   MYSQL_URL
 * </pre>
 */
final class DbReadVerticle extends VerticleBase {
    static final String ROUTES = "GET /db, GET /db/{driver}?a=<id>&b=<id>";
    static final String ALLOW = "GET, HEAD";

    /** One driver this contestant has: its name, its database, its layer, the variable that enables it. */
    record Known(String name, String database, String layer, String env,
                 BiFunction<Vertx, String, ItemReader> open) {}

    static final List<Known> ALL = List.of(
            new Known("vertx-pg", "PostgreSQL", "vertx-pg-client (reactive, raw), prepared query cached per connection",
                    "POSTGRES_URL", ItemReader::pg),
            new Known("vertx-pg-templates", "PostgreSQL",
                    "SQL Client Templates (named parameters, RowMapper to a record) over vertx-pg-client",
                    "POSTGRES_URL", ItemReader::pgTemplates),
            new Known("vertx-mysql", "MySQL/MariaDB",
                    "vertx-mysql-client (reactive, raw), server-side prepared statement cached per connection",
                    "MYSQL_URL", ItemReader::mysql));

    /** The databases given, read once in main. */
    record Config(Map<String, String> urls, String error) {
        static Config fromEnv() {
            Map<String, String> urls = new LinkedHashMap<>();
            for (Known k : ALL) {
                String v = System.getenv(k.env());
                if (v != null && !v.isEmpty()) {
                    urls.put(k.name(), v);
                }
            }
            return new Config(urls, urls.isEmpty() ? "no database given: set POSTGRES_URL and/or MYSQL_URL" : null);
        }
    }

    private record Served(Known known, ItemReader reader, String where) {}

    private final String bind;
    private final int port;
    private final Config config;
    private final Map<String, Served> served = new LinkedHashMap<>();
    private String list;
    private HttpServer server;

    DbReadVerticle(String bind, int port, Config config) {
        this.bind = bind;
        this.port = port;
        this.config = config;
    }

    String describeDrivers() {
        return served.values().stream()
                .map(s -> String.format("/db/%-19s %s at %s; %s; %d connections per event loop", s.known.name(),
                        s.known.database(), s.where, s.known.layer(), ItemReader.poolSizePerLoop()))
                .collect(Collectors.joining("\n"));
    }

    @Override
    public Future<?> start() {
        Router router = Router.router(vertx);
        router.route("/db").method(HttpMethod.GET).method(HttpMethod.HEAD)
                .handler(ctx -> Http.json(ctx, 200, list));
        router.route("/db").handler(ctx -> Http.methodNotAllowed(ctx, ALLOW));
        router.route("/db/:driver").method(HttpMethod.GET).method(HttpMethod.HEAD).handler(this::read);
        router.route("/db/:driver").handler(ctx -> Http.methodNotAllowed(ctx, ALLOW));
        Http.errorHandlers(router, ROUTES);

        // Open every driver whose database is given and check that it reads
        // rows 1 and 2 of the data set, one after the other.
        Future<Void> opened = Future.succeededFuture();
        JsonArray drivers = new JsonArray();
        for (Known k : ALL) {
            String url = config.urls().get(k.name());
            if (url == null) {
                continue;
            }
            opened = opened.compose(ignored -> open(k, url)).map(s -> {
                served.put(k.name(), s);
                drivers.add(new JsonObject().put("name", k.name()).put("database", k.database())
                        .put("layer", k.layer()).put("pool", ItemReader.poolSizePerLoop() + " connections per event loop, "
                                + Main.eventLoops() + " event loop(s)"));
                return null;
            });
        }
        server = vertx.createHttpServer(Http.serverOptions())
                .requestHandler(router);
        return opened.compose(ignored -> {
            list = new JsonObject().put("drivers", drivers).encode();
            return server.listen(port, bind);
        });
    }

    private Future<Served> open(Known k, String url) {
        String where = redact(url);
        ItemReader reader;
        try {
            reader = k.open().apply(vertx, url);
        } catch (RuntimeException e) {
            return Future.failedFuture(k.env() + " is not a " + k.database() + " URL (" + e.getMessage() + ")");
        }
        return reader.first()
                .recover(e -> Future.failedFuture(k.name() + " cannot read from " + k.database() + " at " + where
                        + ": " + e.getMessage() + "; is it running and seeded? load the data set with "
                        + "`sb-db-read seed --store " + where + "`"))
                .compose(found -> {
                    Item[] pair = Item.inAnswerOrder(found, 1, 2);
                    if (pair == null || !pair[0].name().equals("item-1") || !pair[1].name().equals("item-2")) {
                        return Future.failedFuture(k.name() + " reached " + where
                                + " but rows 1 and 2 are not the data set's (got " + found
                                + "); load it with `sb-db-read seed --store " + where + "`");
                    }
                    return Future.succeededFuture(new Served(k, reader, where));
                });
    }

    @Override
    public Future<?> stop() {
        Future<Void> closed = server == null ? Future.succeededFuture() : server.shutdown(4, TimeUnit.SECONDS);
        return closed.eventually(() -> {
            List<Future<Void>> all = new ArrayList<>();
            served.values().forEach(s -> all.add(s.reader.close()));
            return Future.join(all);
        });
    }

    private void read(RoutingContext ctx) {
        String name = ctx.pathParam("driver");
        Served s = served.get(name);
        if (s == null) {
            unknownDriver(ctx, name);
            return;
        }
        Ids ids;
        try {
            ids = Ids.parse(ctx.request().query());
        } catch (Ids.BadIds e) {
            Http.error(ctx, 400, e.getMessage());
            return;
        }
        int lo = ids.lo();
        int hi = ids.hi();
        s.reader.fetch(lo, hi).onComplete(found -> {
            Item[] pair = Item.inAnswerOrder(found, lo, hi);
            if (pair == null) {
                Http.error(ctx, 404, "no row with id " + Item.missing(found, lo, hi) + " in items (the data set has ids 1..="
                        + Ids.ROWS + "); ask for an id that exists");
                return;
            }
            Http.json(ctx, 200, new JsonArray().add(pair[0].toJson()).add(pair[1].toJson()).encode());
        }, e -> Http.error(ctx, 503, name + " cannot read from " + s.known.database() + ": "
                + (e instanceof TimeoutException
                        ? "no answer within " + ItemReader.FETCH_MS + " ms (" + e.getMessage() + ")"
                        : e.getMessage())
                + "; retry when the database is back"));
    }

    private void unknownDriver(RoutingContext ctx, String name) {
        String servedNames = String.join(", ", served.keySet());
        for (Known k : ALL) {
            if (k.name().equals(name)) {
                Http.error(ctx, 404, "driver \"" + name + "\" is not served here: start the server with " + k.env()
                        + " set to serve it; this server serves: " + servedNames);
                return;
            }
        }
        Http.error(ctx, 404, "unknown driver \"" + name + "\"; this server serves: " + servedNames
                + " (this contestant's drivers: " + ALL.stream().map(Known::name).collect(Collectors.joining(", ")) + ")");
    }

    /** The URL with its password replaced by ***. */
    static String redact(String url) {
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');
        if (scheme < 0 || at < scheme) {
            return url;
        }
        int colon = url.indexOf(':', scheme + 3);
        return colon < 0 || colon > at ? url : url.substring(0, colon) + ":***" + url.substring(at);
    }
}
