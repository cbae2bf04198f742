package stackbench.spring;

import jakarta.servlet.http.HttpServletRequest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.stream.Collectors;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Profile;
import org.springframework.core.env.Environment;
import org.springframework.core.env.Profiles;
import org.springframework.dao.DataAccessException;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * The db-read scenario (docs/scenarios.md): GET /db/{driver}?a=&b= reads rows
 * a and b of the table items through one named driver in one round trip and
 * answers them ordered by id; GET /db lists the drivers served. One database
 * per process (Boot's one DataSource, a HikariCP pool), two drivers over it:
 *
 * <pre>
 *   jdbc-pg / jdbc-mariadb   JdbcTemplate over the JDBC driver (the raw driver)
 *   jpa-pg  / jpa-mariadb    Spring Data JPA repository over Hibernate (the layer)
 * </pre>
 */
@RestController
@Profile("db-read")
class DbReadController {
    static final String ROUTES = "GET /db, GET /db/{driver}?a=<id>&b=<id>";
    static final String SELECT = "SELECT id, name, price FROM items WHERE id IN (?, ?) ORDER BY id";

    /** One driver: its name, its layer, how it reads rows lo and hi. */
    record Driver(String name, String layer, BiFunction<Integer, Integer, List<Item>> read) {}

    private final Map<String, Driver> drivers = new LinkedHashMap<>();
    private final String database;
    private final String where;
    private final int poolSize;
    private final Map<String, Object> list;

    DbReadController(JdbcTemplate jdbc, ItemRepository items, Environment env,
            @Value("${stackbench.database}") String url,
            @Value("${spring.datasource.hikari.maximum-pool-size}") int poolSize) {
        boolean pg = env.acceptsProfiles(Profiles.of("db-postgres"));
        String suffix = pg ? "pg" : "mariadb";
        database = pg ? "PostgreSQL" : "MySQL/MariaDB";
        where = url;
        this.poolSize = poolSize;
        add(new Driver("jdbc-" + suffix, "JdbcTemplate over the " + (pg ? "PostgreSQL" : "MariaDB Connector/J")
                + " JDBC driver (raw SQL, RowMapper), HikariCP",
                (lo, hi) -> jdbc.query(SELECT, (rs, n) -> new Item(rs.getInt(1), rs.getString(2), rs.getInt(3)), lo, hi)));
        add(new Driver("jpa-" + suffix, "Spring Data JPA repository, Hibernate "
                + org.hibernate.Version.getVersionString() + " (JPQL, entity Item), HikariCP", items::findPair));
        list = Map.of("drivers", drivers.values().stream().map(d -> Map.of("name", d.name(), "database", database,
                "layer", d.layer(), "pool", poolSize + " connections (one HikariCP pool for both drivers)")).toList());
    }

    /** Checks at start, before Tomcat listens, that the driver reads rows 1 and 2 of the data set. */
    private void add(Driver d) {
        List<Item> found;
        try {
            found = d.read().apply(1, 2);
        } catch (DataAccessException e) {
            throw new IllegalStateException(d.name() + " cannot read from " + database + " at " + where + ": "
                    + e.getMostSpecificCause().getMessage() + "; is it running and seeded? load the data set with "
                    + "`sb-db-read seed --store " + where + "`", e);
        }
        if (found.size() != 2 || !found.get(0).getName().equals("item-1") || !found.get(1).getName().equals("item-2")) {
            throw new IllegalStateException(d.name() + " reached " + where + " but rows 1 and 2 are not the data set's (got "
                    + found + "); load it with `sb-db-read seed --store " + where + "`");
        }
        drivers.put(d.name(), d);
    }

    String describe() {
        return drivers.values().stream()
                .map(d -> String.format("/db/%-13s %s at %s; %s; %d connections", d.name(), database, where, d.layer(),
                        poolSize))
                .collect(Collectors.joining("\n"));
    }

    @GetMapping("/db")
    Map<String, Object> list() {
        return list;
    }

    @GetMapping("/db/{driver}")
    List<Item> read(@PathVariable String driver, HttpServletRequest req) {
        Driver d = drivers.get(driver);
        if (d == null) {
            throw new ApiException(HttpStatus.NOT_FOUND, "unknown driver \"" + driver + "\"; this server serves: "
                    + String.join(", ", drivers.keySet()) + " (this contestant's drivers: jdbc-pg, jpa-pg, jdbc-mariadb, "
                    + "jpa-mariadb, one database per process)");
        }
        Ids ids;
        try {
            ids = Ids.parse(req.getQueryString());
        } catch (Ids.BadIds e) {
            throw new ApiException(HttpStatus.BAD_REQUEST, e.getMessage());
        }
        int lo = ids.lo();
        int hi = ids.hi();
        List<Item> found;
        try {
            found = d.read().apply(lo, hi);
        } catch (DataAccessException e) {
            throw new ApiException(HttpStatus.SERVICE_UNAVAILABLE, driver + " cannot read from " + database + ": "
                    + e.getMostSpecificCause().getMessage() + "; retry when the database is back");
        }
        Item first = find(found, lo);
        Item second = find(found, hi);
        if (first == null || second == null) {
            throw new ApiException(HttpStatus.NOT_FOUND, "no row with id " + (first == null ? lo : hi)
                    + " in items (the data set has ids 1..=" + Ids.ROWS + "); ask for an id that exists");
        }
        return List.of(first, second);
    }

    private static Item find(List<Item> found, int id) {
        for (Item it : found) {
            if (it.getId() == id) {
                return it;
            }
        }
        return null;
    }
}
