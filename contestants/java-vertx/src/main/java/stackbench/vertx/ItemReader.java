package stackbench.vertx;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClientOptions;
import io.vertx.mysqlclient.MySQLBuilder;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnectOptions;
import io.vertx.sqlclient.Tuple;
import io.vertx.sqlclient.templates.SqlTemplate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One db-read driver: reads the rows of ids lo <= hi (possibly equal) in one
 * round trip; an id without a row is simply absent from the result.
 *
 * <p>Every driver has its own pools, one per verticle instance on its event
 * loop, together 16 connections per core this process may use, at most 30
 * (the Rust reference's rule). Each connection prepares the
 * query once and keeps it (the clients' prepared-statement cache), so a
 * request is one Bind/Execute round trip.
 */
abstract class ItemReader {
    /** Connect timeout of a new connection, and the deadline of one request's read (waiting for a connection included). */
    static final int CONNECT_MS = 1_000;
    static final int FETCH_MS = 1_500;
    /**
     * The deadline of the check at start, which opens the first connections
     * while the JVM is still cold: a loaded machine can take longer than a
     * request's deadline to get there.
     */
    static final int START_MS = 15_000;
    static final String SELECT_PG = "SELECT id, name, price FROM items WHERE id IN ($1, $2) ORDER BY id";
    static final String SELECT_MYSQL = "SELECT id, name, price FROM items WHERE id IN (?, ?) ORDER BY id";
    static final String SELECT_TEMPLATE = "SELECT id, name, price FROM items WHERE id IN (#{lo}, #{hi}) ORDER BY id";

    final Pool pool;

    ItemReader(Pool pool) {
        this.pool = pool;
    }

    /** One read of rows lo and hi, before the deadline is applied. */
    abstract Future<List<Item>> read(int lo, int hi);

    final Future<List<Item>> fetch(int lo, int hi) {
        return read(lo, hi).timeout(FETCH_MS, TimeUnit.MILLISECONDS);
    }

    /** Rows 1 and 2, for the check at start. */
    final Future<List<Item>> first() {
        return read(1, 2).timeout(START_MS, TimeUnit.MILLISECONDS);
    }

    final Future<Void> close() {
        return pool.close();
    }

    /** The connections of one driver, all event loops together. */
    static int poolSize() {
        return Math.min(30, 16 * Runtime.getRuntime().availableProcessors());
    }

    /** The connections of one driver on one event loop. */
    static int poolSizePerLoop() {
        int loops = Main.eventLoops();
        return Math.max(1, poolSize() / loops);
    }

    private static PoolOptions poolOptions() {
        return new PoolOptions().setMaxSize(poolSizePerLoop())
                .setConnectionTimeout(START_MS).setConnectionTimeoutUnit(TimeUnit.MILLISECONDS);
    }

    private static NetClientOptions net() {
        return new NetClientOptions().setConnectTimeout(CONNECT_MS);
    }

    private static <O extends SqlConnectOptions> O cached(O options) {
        options.setCachePreparedStatements(true);
        return options;
    }

    /** vertx-pg-client, the raw reactive driver: a prepared query, rows read by column name. */
    static ItemReader pg(Vertx vertx, String url) {
        Pool pool = PgBuilder.pool().with(poolOptions()).with(net())
                .connectingTo(cached(PgConnectOptions.fromUri(url))).using(vertx).build();
        return new Raw(pool, SELECT_PG);
    }

    /** vertx-mysql-client, the raw reactive driver (MySQL and MariaDB): a server-side prepared statement. */
    static ItemReader mysql(Vertx vertx, String url) {
        Pool pool = MySQLBuilder.pool().with(poolOptions()).with(net())
                .connectingTo(cached(MySQLConnectOptions.fromUri(url))).using(vertx).build();
        return new Raw(pool, SELECT_MYSQL);
    }

    /**
     * SQL Client Templates over vertx-pg-client: named parameters bound from
     * a map, rows mapped to {@link Item} by a RowMapper: the layer Vert.x
     * users write data access with (own pools, so its connections are its own).
     */
    static ItemReader pgTemplates(Vertx vertx, String url) {
        Pool pool = PgBuilder.pool().with(poolOptions()).with(net())
                .connectingTo(cached(PgConnectOptions.fromUri(url))).using(vertx).build();
        return new Templates(pool);
    }

    private static final class Raw extends ItemReader {
        private final String sql;

        Raw(Pool pool, String sql) {
            super(pool);
            this.sql = sql;
        }

        @Override
        Future<List<Item>> read(int lo, int hi) {
            return pool.preparedQuery(sql).execute(Tuple.of(lo, hi)).map(rows -> {
                List<Item> items = new ArrayList<>(2);
                rows.forEach(row -> items.add(Item.of(row)));
                return items;
            });
        }
    }

    private static final class Templates extends ItemReader {
        private final SqlTemplate<Map<String, Object>, RowSet<Item>> query;

        Templates(Pool pool) {
            super(pool);
            query = SqlTemplate.forQuery(pool, SELECT_TEMPLATE).mapTo(Item.FROM_ROW);
        }

        @Override
        Future<List<Item>> read(int lo, int hi) {
            return query.execute(Map.of("lo", lo, "hi", hi)).map(rows -> {
                List<Item> items = new ArrayList<>(2);
                rows.forEach(items::add);
                return items;
            });
        }
    }
}
