package stackbench.vertx;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.concurrent.TimeUnit;

/**
 * The dummy and event-log scenarios (docs/scenarios.md) as one verticle: a
 * vertx-web Router with POST /events and GET /events/count. Without a store it
 * is dummy (validate, answer {"count": 1}); with one it is event-log (validate,
 * write, count, answer the count). Deployed once per event loop.
 */
final class EventVerticle extends VerticleBase {
    static final String ROUTES = "POST /events, GET /events/count";
    static final long MAX_BODY = 64 * 1024;
    private static final String COUNT_ONE = "{\"count\":1}";

    private final String bind;
    private final int port;
    private final String storeName; // null: dummy
    private EventStore store;
    private HttpServer server;

    EventVerticle(String bind, int port, String storeName) {
        this.bind = bind;
        this.port = port;
        this.storeName = storeName;
    }

    /** The describe() line of this instance's store, once started. */
    String describeStore() {
        return store == null ? null : store.describe();
    }

    @Override
    public Future<?> start() {
        Router router = Router.router(vertx);
        // A declared Content-Length over 64 KiB is refused before the body is
        // read, a longer chunked body once it passes 64 KiB: 413 either way.
        router.post("/events").handler(BodyHandler.create(false).setBodyLimit(MAX_BODY)).handler(this::post);
        router.route("/events").handler(ctx -> Http.methodNotAllowed(ctx, "POST"));
        router.route("/events/count").method(HttpMethod.GET).method(HttpMethod.HEAD).handler(this::count);
        router.route("/events/count").handler(ctx -> Http.methodNotAllowed(ctx, "GET, HEAD"));
        Http.errorHandlers(router, ROUTES);

        Future<Void> opened = Future.succeededFuture();
        if (storeName != null) {
            store = EventStore.fromEnv(vertx, storeName);
            opened = store.open();
        }
        server = vertx.createHttpServer(Http.serverOptions())
                .requestHandler(router);
        return opened.compose(ignored -> server.listen(port, bind));
    }

    @Override
    public Future<?> stop() {
        // Stop accepting, let the requests in flight finish (up to 4 s), then
        // close the store.
        Future<Void> closed = server == null ? Future.succeededFuture() : server.shutdown(4, TimeUnit.SECONDS);
        return closed.eventually(() -> store == null ? Future.succeededFuture() : store.close());
    }

    private void post(RoutingContext ctx) {
        if (!Http.isJson(ctx.request().headers())) {
            String ct = ctx.request().getHeader("Content-Type");
            Http.error(ctx, 400, ct == null
                    ? "the request has no Content-Type; send Content-Type: application/json"
                    : "Content-Type must be application/json, got \"" + ct + "\"");
            return;
        }
        Buffer body = ctx.body().buffer();
        Event event;
        try {
            event = Event.parse(body == null ? new byte[0] : body.getBytes());
        } catch (Event.BadEvent e) {
            Http.error(ctx, 400, e.getMessage());
            return;
        }
        if (store == null) {
            Http.json(ctx, 200, COUNT_ONE);
            return;
        }
        if (!event.hasTimestamp()) {
            event = new Event(event.type(), event.source(), event.value(), System.currentTimeMillis(), true);
        }
        store.append(event).onComplete(n -> Http.json(ctx, 200, "{\"count\":" + n + "}"), e -> storeFailed(ctx, e));
    }

    private void count(RoutingContext ctx) {
        if (store == null) {
            Http.json(ctx, 200, COUNT_ONE);
            return;
        }
        store.count().onComplete(n -> Http.json(ctx, 200, "{\"count\":" + n + "}"), e -> storeFailed(ctx, e));
    }

    private static void storeFailed(RoutingContext ctx, Throwable e) {
        if (e instanceof EventStore.Unstorable) {
            Http.error(ctx, 400, e.getMessage());
        } else {
            Http.error(ctx, 503, e.getMessage() + "; retry later");
        }
    }
}
