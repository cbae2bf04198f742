package stackbench.vertx;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.regex.Pattern;

/**
 * Where event-log writes events and counts them (the original experiment's
 * steps 3 and 4). {@link #append} writes one event with the store's
 * acknowledged-write durability and returns the number of events after it;
 * {@link #count} returns that number without writing. Each verticle instance
 * opens its own, with its share of the connections, on its own event loop.
 */
interface EventStore {
    /** Bounds one store operation; past it the request gets a 503. */
    long TIMEOUT_MS = 5_000;

    /** Bounds opening the store at start, while the JVM is still cold (a loaded machine is slow then). */
    long OPEN_TIMEOUT_MS = 15_000;

    /** A plain identifier: table and database names go into SQL and InfluxQL text. */
    Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,47}");

    /** Connects, creates the table or database when missing; fails with a message naming what to check. */
    Future<Void> open();

    Future<Long> append(Event event);

    Future<Long> count();

    /** One line for the startup log: where, and how durable an acknowledged write is. */
    String describe();

    Future<Void> close();

    /** A valid event this store cannot hold: 400, nothing written. */
    final class Unstorable extends RuntimeException {
        Unstorable(String message) {
            super(message, null, false, false);
        }
    }

    /** The store failed or did not answer: 503. */
    final class Unavailable extends RuntimeException {
        Unavailable(String message) {
            super(message, null, false, false);
        }
    }

    /** Connections per store: four per core this process may use, at least eight (the Rust reference's rule). */
    static int poolSize() {
        return Math.max(8, 4 * Runtime.getRuntime().availableProcessors());
    }

    /** The store named by run.sh's argument, configured from the environment. */
    static EventStore fromEnv(Vertx vertx, String store) {
        var env = System.getenv();
        return switch (store) {
            case "postgres" -> new PostgresEvents(vertx,
                    env.getOrDefault("POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/stackbench_test"),
                    env.getOrDefault("PG_TABLE", "java_vertx_events"));
            case "influxdb" -> new InfluxEvents(vertx,
                    env.getOrDefault("INFLUX_URL", "http://127.0.0.1:8086"),
                    env.getOrDefault("INFLUX_DB", "stackbench_java_vertx"));
            default -> throw new IllegalArgumentException("the store must be influxdb or postgres, got " + store);
        };
    }
}
