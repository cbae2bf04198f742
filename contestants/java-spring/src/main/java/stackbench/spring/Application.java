package stackbench.spring;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The stackbench Spring Boot contestant: {@code dummy}, {@code event-log
 * influxdb|postgres} or {@code db-read}, chosen by the arguments (run.sh
 * passes them on). The scenario becomes the active Spring profiles, which
 * pick the controllers, the store and the auto-configuration
 * ({@code application-*.properties}); the store URLs of the other
 * contestants ({@code POSTGRES_URL=postgres://...}, {@code MYSQL_URL=mysql://...})
 * become {@code spring.datasource.*}.
 *
 * <p>Environment: PORT (required), BIND (default 127.0.0.1), TLS_CERT and
 * TLS_KEY (PEM files, both or neither: HTTPS, {@link #tls}) and the stores'
 * settings (see README.md). SIGTERM stops Tomcat gracefully: it stops
 * accepting, lets the requests in flight finish (up to 4 s), then the pools close.
 */
@SpringBootApplication
public class Application {
    static final String USAGE = "usage: java -jar java-spring.jar dummy | event-log influxdb|postgres | db-read";

    public static void main(String[] args) {
        String scenario = args.length > 0 ? args[0] : "";
        String port = System.getenv("PORT");
        if (port == null || !port.matches("[0-9]{1,5}")) {
            fail(port == null || port.isEmpty() ? "set PORT to the port to listen on" : "PORT=" + port + " is not a port number");
        }
        Map<String, Object> props = new HashMap<>();
        String[] profiles;
        String what;
        var env = System.getenv();
        switch (scenario) {
            case "dummy" -> {
                profiles = new String[] {"dummy"};
                what = "dummy";
            }
            case "event-log" -> {
                String store = args.length > 1 ? args[1] : "";
                if (!store.equals("influxdb") && !store.equals("postgres")) {
                    fail("the event-log store must be influxdb or postgres, got \"" + store + "\"; " + USAGE);
                }
                if (store.equals("postgres")) {
                    props.putAll(jdbc("POSTGRES_URL",
                            env.getOrDefault("POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/stackbench_test")));
                    props.put("spring.datasource.hikari.maximum-pool-size", EventStore.poolSize());
                }
                profiles = new String[] {"event-log", store};
                what = "event-log on " + store;
            }
            case "db-read" -> {
                String pg = env.get("POSTGRES_URL");
                String my = env.get("MYSQL_URL");
                boolean hasPg = pg != null && !pg.isEmpty();
                boolean hasMy = my != null && !my.isEmpty();
                if (hasPg == hasMy) {
                    fail(hasPg ? "db-read serves one database per process: set POSTGRES_URL or MYSQL_URL, not both"
                            : "no database given: set POSTGRES_URL or MYSQL_URL");
                }
                props.putAll(jdbc(hasPg ? "POSTGRES_URL" : "MYSQL_URL", hasPg ? pg : my));
                // 16 connections per core this process may use, at most 30 (the Rust reference's rule).
                props.put("spring.datasource.hikari.maximum-pool-size",
                        Math.min(30, 16 * Runtime.getRuntime().availableProcessors()));
                profiles = new String[] {"db-read", hasPg ? "db-postgres" : "db-mariadb"};
                what = "db-read";
            }
            default -> {
                fail("unknown scenario \"" + scenario + "\"; " + USAGE);
                return;
            }
        }

        props.putAll(tls(env.get("TLS_CERT"), env.get("TLS_KEY")));
        SpringApplication app = new SpringApplication(Application.class);
        app.setAdditionalProfiles(profiles);
        app.setDefaultProperties(props);
        ConfigurableApplicationContext ctx;
        try {
            ctx = app.run();
        } catch (RuntimeException e) {
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            System.err.println("java-spring: could not start " + what + ": " + root.getMessage());
            System.exit(1);
            return;
        }

        Runtime rt = Runtime.getRuntime();
        String gcs = ManagementFactory.getGarbageCollectorMXBeans().stream()
                .map(GarbageCollectorMXBean::getName).collect(Collectors.joining(", "));
        var e = ctx.getEnvironment();
        System.err.printf("java-spring: %s (Spring Boot %s, Spring MVC on Tomcat) on %s://%s:%s; "
                        + "up to %s Tomcat threads; Java %s, %d CPU(s), max heap %d MiB, GC %s%n",
                what, SpringBootVersion.getVersion(), props.containsKey("server.ssl.certificate") ? "https" : "http",
                e.getProperty("server.address"), e.getProperty("local.server.port"),
                e.getProperty("server.tomcat.threads.max", "200"), Runtime.version(), rt.availableProcessors(),
                rt.maxMemory() >> 20, gcs);
        ctx.getBeanProvider(EventStore.class).ifAvailable(s -> System.err.println("java-spring:   " + s.describe()));
        ctx.getBeanProvider(DbReadController.class).ifAvailable(c -> c.describe().lines()
                .forEach(line -> System.err.println("java-spring:   " + line)));
    }

    /**
     * HTTPS as Spring Boot documents it for PEM files: {@code server.ssl.certificate} and
     * {@code server.ssl.certificate-private-key}, served by Tomcat on the JDK's TLS (JSSE).
     * Nothing without the two files; one without the other stops the start.
     */
    static Map<String, Object> tls(String cert, String key) {
        boolean hasCert = cert != null && !cert.isEmpty();
        boolean hasKey = key != null && !key.isEmpty();
        if (hasCert != hasKey) {
            fail("set both TLS_CERT and TLS_KEY (PEM files) to serve HTTPS, or neither");
        }
        if (!hasCert) {
            return Map.of();
        }
        return Map.of("server.ssl.enabled", true, "server.ssl.certificate", "file:" + cert,
                "server.ssl.certificate-private-key", "file:" + key);
    }

    /**
     * {@code spring.datasource.*} from a {@code postgres://USER[:PASSWORD]@HOST[:PORT]/DB}
     * or {@code mysql://...} URL, the form every contestant here takes, and
     * {@code stackbench.database} (the URL without its password) for messages.
     */
    static Map<String, Object> jdbc(String variable, String url) {
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException ex) {
            fail(variable + " is not a URL (" + ex.getMessage() + ")");
            return Map.of();
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme();
        String jdbcScheme = switch (scheme) {
            case "postgres", "postgresql" -> "postgresql";
            case "mysql", "mariadb" -> "mariadb";
            default -> null;
        };
        String db = uri.getPath() == null ? "" : uri.getPath().replaceFirst("^/", "");
        if (jdbcScheme == null || uri.getHost() == null || db.isEmpty()) {
            fail(variable + "=" + url + " is not a database URL; write postgres://USER@HOST:5432/DB or mysql://USER:PASSWORD@HOST:3306/DB");
        }
        int port = uri.getPort() > 0 ? uri.getPort() : jdbcScheme.equals("postgresql") ? 5432 : 3306;
        Map<String, Object> props = new HashMap<>();
        props.put("spring.datasource.url", "jdbc:" + jdbcScheme + "://" + uri.getHost() + ":" + port + "/" + db
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery()));
        props.put("stackbench.database", redact(url));
        String info = uri.getUserInfo();
        if (info != null) {
            int colon = info.indexOf(':');
            props.put("spring.datasource.username", colon < 0 ? info : info.substring(0, colon));
            if (colon >= 0) {
                props.put("spring.datasource.password", info.substring(colon + 1));
            }
        }
        return props;
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

    static void fail(String message) {
        System.err.println("java-spring: " + message);
        System.exit(2);
    }
}
