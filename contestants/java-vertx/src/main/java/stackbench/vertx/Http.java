package stackbench.vertx;

import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.concurrent.TimeUnit;

/** The answers every route shares: JSON bodies, JSON errors, 404 and 405; the server's options. */
final class Http {
    private Http() {}

    /** The PEM certificate and key of HTTPS (TLS_CERT, TLS_KEY), or null for cleartext HTTP. */
    static final String TLS_CERT = nonEmpty(System.getenv("TLS_CERT"));
    static final String TLS_KEY = nonEmpty(System.getenv("TLS_KEY"));

    private static String nonEmpty(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    /**
     * Every verticle's server options: keep-alive connections idle for at most 120 s;
     * with TLS_CERT and TLS_KEY, HTTPS as Vert.x documents it ({@code setSsl(true)} and a
     * {@code PemKeyCertOptions}), on the JDK's TLS (JSSE), Vert.x's default engine.
     */
    static HttpServerOptions serverOptions() {
        HttpServerOptions options = new HttpServerOptions().setIdleTimeout(120).setIdleTimeoutUnit(TimeUnit.SECONDS);
        if (TLS_CERT != null) {
            options.setSsl(true).setKeyCertOptions(new PemKeyCertOptions().setCertPath(TLS_CERT).setKeyPath(TLS_KEY));
        }
        return options;
    }

    static final CharSequence JSON = HttpHeaders.createOptimized("application/json");

    /** Answers {@code status} with a JSON body. */
    static void json(RoutingContext ctx, int status, String body) {
        ctx.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, JSON).end(body);
    }

    /** Answers {@code status} with {"error": message}. */
    static void error(RoutingContext ctx, int status, String message) {
        json(ctx, status, new JsonObject().put("error", message).encode());
    }

    /** A route that answers 405 with Allow for every method its path does not take. */
    static void methodNotAllowed(RoutingContext ctx, String allow) {
        ctx.response().putHeader(HttpHeaders.ALLOW, allow);
        error(ctx, 405, ctx.request().path() + " does not accept " + ctx.request().method() + "; allowed: " + allow);
    }

    /**
     * JSON answers for what the router itself refuses: an unknown path (404),
     * a body over the cap (413, from BodyHandler) and a handler that failed (500).
     */
    static void errorHandlers(Router router, String routes) {
        router.errorHandler(404, ctx -> error(ctx, 404,
                "no route for " + ctx.request().method() + " " + ctx.request().path() + "; this server answers " + routes));
        router.errorHandler(413, ctx -> error(ctx, 413,
                "the request body is larger than 65536 bytes (64 KiB); send a smaller body"));
        router.errorHandler(500, ctx -> error(ctx, 500,
                "the server failed on this request: " + ctx.failure() + "; report it with the request that caused it"));
    }

    /** application/json, any case, optionally with parameters. */
    static boolean isJson(MultiMap headers) {
        String v = headers.get(HttpHeaders.CONTENT_TYPE);
        if (v == null) {
            return false;
        }
        int semi = v.indexOf(';');
        return (semi < 0 ? v : v.substring(0, semi)).trim().equalsIgnoreCase("application/json");
    }
}
