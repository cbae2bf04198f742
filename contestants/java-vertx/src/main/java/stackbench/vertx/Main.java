package stackbench.vertx;

import io.vertx.core.Deployable;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The stackbench Vert.x contestant: {@code dummy}, {@code event-log influxdb|postgres}
 * or {@code db-read}, chosen by the arguments (run.sh passes them on).
 *
 * <p>One event loop per core this process may use, and one instance of the
 * scenario's verticle per event loop, each with its own Router and HttpServer
 * on the same port (Vert.x balances the connections between them). The JVM
 * counts cores from the CPU affinity mask and the cgroup quota
 * ({@code availableProcessors}); EVENT_LOOPS overrides.
 *
 * <p>Environment: PORT (required), BIND (default 127.0.0.1), EVENT_LOOPS,
 * TLS_CERT and TLS_KEY (PEM files, both or neither: HTTPS, {@link Http#serverOptions}),
 * and the stores' settings (see README.md). SIGTERM undeploys the verticles: each
 * stops accepting, finishes its requests in flight (up to 4 s) and closes its
 * store.
 */
public final class Main {
    private Main() {}

    /** The event loop count, and so the verticle instance count. */
    static int eventLoops() {
        String v = System.getenv("EVENT_LOOPS");
        if (v != null && !v.isEmpty()) {
            try {
                int n = Integer.parseInt(v);
                if (n >= 1) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // refused below
            }
            fail("EVENT_LOOPS=" + v + " is not a positive integer");
        }
        return Runtime.getRuntime().availableProcessors();
    }

    public static void main(String[] args) {
        String usage = "usage: java -jar java-vertx.jar dummy | event-log influxdb|postgres | db-read";
        String scenario = args.length > 0 ? args[0] : "";
        String port = System.getenv("PORT");
        if (port == null || port.isEmpty()) {
            fail("set PORT to the port to listen on");
        }
        int portNumber = 0;
        try {
            portNumber = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            fail("PORT=" + port + " is not a port number");
        }
        String bind = System.getenv().getOrDefault("BIND", "127.0.0.1");
        if ((Http.TLS_CERT == null) != (Http.TLS_KEY == null)) {
            fail("set both TLS_CERT and TLS_KEY (PEM files) to serve HTTPS, or neither");
        }
        int loops = eventLoops();
        final int listen = portNumber;
        Supplier<? extends Deployable> verticle;
        String what;
        switch (scenario) {
            case "dummy" -> {
                verticle = () -> new EventVerticle(bind, listen, null);
                what = "dummy";
            }
            case "event-log" -> {
                String store = args.length > 1 ? args[1] : "";
                if (!store.equals("influxdb") && !store.equals("postgres")) {
                    fail("the event-log store must be influxdb or postgres, got \"" + store + "\"; " + usage);
                }
                verticle = () -> new EventVerticle(bind, listen, store);
                what = "event-log on " + store;
            }
            case "db-read" -> {
                DbReadVerticle.Config config = DbReadVerticle.Config.fromEnv();
                if (config.error() != null) {
                    fail(config.error());
                }
                verticle = () -> new DbReadVerticle(bind, listen, config);
                what = "db-read";
            }
            default -> {
                fail("unknown scenario \"" + scenario + "\"; " + usage);
                return;
            }
        }

        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(loops));
        Starts starts = new Starts();
        Future<String> deployed = vertx.deployVerticle(() -> starts.add(verticle.get()),
                new DeploymentOptions().setInstances(loops));
        try {
            deployed.await(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            Throwable cause = deployed.failed() ? deployed.cause() : e;
            System.err.println("java-vertx: could not start " + what + ": " + cause.getMessage());
            vertx.close();
            System.exit(1);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                vertx.close().await(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                System.err.println("java-vertx: stopping took too long: " + e);
            }
            System.err.println("java-vertx: stopped");
        }, "shutdown"));

        Runtime rt = Runtime.getRuntime();
        String gcs = ManagementFactory.getGarbageCollectorMXBeans().stream()
                .map(GarbageCollectorMXBean::getName).collect(Collectors.joining(", "));
        System.err.printf("java-vertx: %s (Vert.x %s) on %s://%s:%d; %d event loop(s), %d verticle instance(s); "
                        + "Java %s, %d CPU(s), max heap %d MiB, GC %s%n",
                what, vertxVersion(), Http.TLS_CERT == null ? "http" : "https", bind, portNumber, loops, loops,
                Runtime.version(), rt.availableProcessors(), rt.maxMemory() >> 20, gcs);
        starts.describe().forEach(line -> System.err.println("java-vertx:   " + line));
    }

    /** The verticle instances deployed, for the startup log. */
    private static final class Starts {
        private final List<Deployable> all = new CopyOnWriteArrayList<>();

        Deployable add(Deployable d) {
            all.add(d);
            return d;
        }

        List<String> describe() {
            if (all.isEmpty()) {
                return List.of();
            }
            Deployable first = all.get(0);
            String line = first instanceof EventVerticle ev ? ev.describeStore()
                    : first instanceof DbReadVerticle db ? db.describeDrivers() : null;
            return line == null ? List.of() : List.of(line.split("\n"));
        }
    }

    /** Vert.x's version, from the pom.properties the fat jar keeps (its manifests are merged away). */
    static String vertxVersion() {
        try (var in = Vertx.class.getResourceAsStream("/META-INF/maven/io.vertx/vertx-core/pom.properties")) {
            var props = new Properties();
            if (in != null) {
                props.load(in);
            }
            return props.getProperty("version", "unknown");
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }

    static void fail(String message) {
        System.err.println("java-vertx: " + message);
        System.exit(2);
    }
}
