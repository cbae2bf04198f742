package stackbench.vertx;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClientOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Tuple;
import java.util.concurrent.TimeUnit;

/**
 * PostgreSQL through the Vert.x reactive PostgreSQL client (vertx-pg-client): one statement and
 * one round trip per event, {@code WITH ins AS (INSERT ...) SELECT COUNT(*) + 1
 * FROM t} (the parts of a WITH see the snapshot taken before it, so COUNT(*)
 * does not see the row being inserted and + 1 adds it). The statement is
 * prepared once per connection (the client's prepared-statement cache).
 * Durability is the server's: with synchronous_commit=on (the default) the
 * statement returns once its WAL record is fsynced.
 */
final class PostgresEvents implements EventStore {
    private final Vertx vertx;
    private final String url;
    private final String table;
    private Pool pool;
    private String label;
    private String describe;
    private String appendSql;
    private String countSql;
    private int size;

    PostgresEvents(Vertx vertx, String url, String table) {
        this.vertx = vertx;
        this.url = url;
        this.table = table;
    }

    @Override
    public Future<Void> open() {
        if (!IDENTIFIER.matcher(table).matches()) {
            return Future.failedFuture("PG_TABLE=" + table + " is not a plain table name ([A-Za-z_][A-Za-z0-9_]*)");
        }
        PgConnectOptions connect;
        try {
            connect = PgConnectOptions.fromUri(url);
        } catch (RuntimeException e) {
            return Future.failedFuture("POSTGRES_URL is not a PostgreSQL URL (" + e.getMessage()
                    + "); write postgres://USER@HOST:5432/DB");
        }
        connect.setCachePreparedStatements(true);
        label = "PostgreSQL at " + connect.getHost() + ":" + connect.getPort() + "/" + connect.getDatabase();
        // Each verticle instance has its own pool on its own event loop: the
        // store's connections divided between them.
        int instances = Main.eventLoops();
        size = Math.max(1, (EventStore.poolSize() + instances - 1) / instances);
        pool = PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(size).setConnectionTimeout((int) OPEN_TIMEOUT_MS)
                        .setConnectionTimeoutUnit(TimeUnit.MILLISECONDS))
                .with(new NetClientOptions().setConnectTimeout(2_000))
                .connectingTo(connect)
                .using(vertx)
                .build();
        appendSql = "WITH ins AS (INSERT INTO " + table + " (kind, source, value, ts_ms) VALUES ($1, $2, $3, $4)) "
                + "SELECT COUNT(*) + 1 FROM " + table;
        countSql = "SELECT COUNT(*) FROM " + table;
        // Processes (and verticle instances) creating the table at once take
        // turns on an advisory lock, in a transaction on a connection of its
        // own: CREATE TABLE IF NOT EXISTS alone does not serialize them.
        // (Created only when missing, so PostgreSQL sends no "already exists" notice.)
        String ddl = "DO $$ BEGIN IF to_regclass('" + table + "') IS NULL THEN CREATE TABLE " + table + " ("
                + "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, kind TEXT NOT NULL, source TEXT NOT NULL, "
                + "value DOUBLE PRECISION NOT NULL, ts_ms BIGINT NOT NULL); END IF; END $$";
        return pool.withTransaction(conn -> conn.query("SELECT pg_advisory_xact_lock(8314034512975230025)").execute()
                        .compose(locked -> conn.query(ddl).execute()))
                .timeout(OPEN_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                .compose(ignored -> pool.query("SHOW synchronous_commit").execute())
                .map(rows -> {
                    describe = label + ", table " + table + ", " + size
                            + " connections per event loop (synchronous_commit="
                            + rows.iterator().next().getString(0) + ")";
                    return (Void) null;
                })
                .recover(e -> Future.failedFuture("cannot create table " + table + " in " + label + ": "
                        + e.getMessage() + " (is it running? check POSTGRES_URL)"));
    }

    @Override
    public Future<Long> append(Event ev) {
        return pool.preparedQuery(appendSql)
                .execute(Tuple.of(ev.type(), ev.source(), ev.value(), ev.timestampMs()))
                .timeout(TIMEOUT_MS, TimeUnit.MILLISECONDS)
                .map(rows -> rows.iterator().next().getLong(0))
                .recover(this::unavailable);
    }

    @Override
    public Future<Long> count() {
        return pool.preparedQuery(countSql).execute()
                .timeout(TIMEOUT_MS, TimeUnit.MILLISECONDS)
                .map(rows -> rows.iterator().next().getLong(0))
                .recover(this::unavailable);
    }

    private <T> Future<T> unavailable(Throwable e) {
        return Future.failedFuture(new Unavailable(label + " failed: " + e.getMessage()));
    }

    @Override
    public String describe() {
        return describe;
    }

    @Override
    public Future<Void> close() {
        return pool == null ? Future.succeededFuture() : pool.close();
    }
}
