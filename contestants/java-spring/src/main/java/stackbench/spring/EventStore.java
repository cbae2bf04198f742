package stackbench.spring;

import java.util.regex.Pattern;

/**
 * Where event-log writes events and counts them (the original experiment's
 * steps 3 and 4). {@link #append} writes one event with the store's
 * acknowledged-write durability and returns the number of events after it;
 * {@link #count} returns that number without writing. One bean, chosen by
 * the profile ({@code influxdb} or {@code postgres}), shared by Tomcat's
 * request threads.
 */
interface EventStore {
    /** Bounds one store operation; past it the request gets a 503. */
    int TIMEOUT_MS = 5_000;

    /** A plain identifier: table and database names go into SQL and InfluxQL text. */
    Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,47}");

    /** Writes one event; throws {@link Unstorable} (400) or {@link Unavailable} (503). */
    long append(Event event);

    /** The number of events; throws {@link Unavailable} (503). */
    long count();

    /** One line for the startup log: where, and how durable an acknowledged write is. */
    String describe();

    /** A valid event this store cannot hold: 400, nothing written. */
    final class Unstorable extends RuntimeException {
        Unstorable(String message) {
            super(message, null, false, false);
        }
    }

    /** The store failed or did not answer: 503. */
    final class Unavailable extends RuntimeException {
        Unavailable(String message, Throwable cause) {
            super(message, cause, false, false);
        }
    }

    /** Connections per store: four per core this process may use, at least eight (the Rust reference's rule). */
    static int poolSize() {
        return Math.max(8, 4 * Runtime.getRuntime().availableProcessors());
    }
}
