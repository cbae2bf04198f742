package stackbench.spring;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Profile;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * PostgreSQL through Spring's JdbcTemplate over Boot's HikariCP pool and the
 * PostgreSQL JDBC driver: one statement and one round trip per event,
 * {@code WITH ins AS (INSERT ...) SELECT COUNT(*) + 1 FROM t} (the parts of a
 * WITH see the snapshot taken before it, so COUNT(*) does not see the row
 * being inserted and + 1 adds it). The driver prepares the statement on the
 * server from its fifth use on each connection ({@code prepareThreshold=5},
 * its default). Durability is the server's: with synchronous_commit=on (the
 * default) the statement returns once its WAL record is fsynced.
 */
@Component
@Profile("postgres")
class PostgresEvents implements EventStore {
    private final JdbcTemplate jdbc;
    private final String appendSql;
    private final String countSql;
    private final String describe;

    PostgresEvents(JdbcTemplate jdbc, TransactionTemplate tx, @Value("${PG_TABLE:java_spring_events}") String table,
            @Value("${stackbench.database}") String url, @Value("${spring.datasource.hikari.maximum-pool-size}") int size) {
        if (!IDENTIFIER.matcher(table).matches()) {
            throw new IllegalArgumentException("PG_TABLE=" + table + " is not a plain table name ([A-Za-z_][A-Za-z0-9_]*)");
        }
        this.jdbc = jdbc;
        String label = "PostgreSQL at " + url;
        appendSql = "WITH ins AS (INSERT INTO " + table + " (kind, source, value, ts_ms) VALUES (?, ?, ?, ?)) "
                + "SELECT COUNT(*) + 1 FROM " + table;
        countSql = "SELECT COUNT(*) FROM " + table;
        // Processes creating the table at once take turns on an advisory
        // lock, in one transaction: CREATE TABLE IF NOT EXISTS alone does not
        // serialize them. (Created only when missing, so PostgreSQL sends no
        // "already exists" notice.)
        String ddl = "DO $$ BEGIN IF to_regclass('" + table + "') IS NULL THEN CREATE TABLE " + table + " ("
                + "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, kind TEXT NOT NULL, source TEXT NOT NULL, "
                + "value DOUBLE PRECISION NOT NULL, ts_ms BIGINT NOT NULL); END IF; END $$";
        String sync;
        try {
            tx.executeWithoutResult(status -> {
                jdbc.queryForObject("SELECT pg_advisory_xact_lock(8314034512975230025)::text", String.class);
                jdbc.execute(ddl);
            });
            sync = jdbc.queryForObject("SHOW synchronous_commit", String.class);
        } catch (DataAccessException e) {
            throw new IllegalStateException("cannot create table " + table + " in " + label + ": "
                    + e.getMostSpecificCause().getMessage() + " (is it running? check POSTGRES_URL)", e);
        }
        describe = label + ", table " + table + ", HikariCP " + size + " connections (synchronous_commit=" + sync + ")";
    }

    @Override
    public long append(Event ev) {
        try {
            Long n = jdbc.queryForObject(appendSql, Long.class, ev.type(), ev.source(), ev.value(), ev.timestampMs());
            return n == null ? 0 : n;
        } catch (DataAccessException e) {
            throw new Unavailable("PostgreSQL failed: " + e.getMostSpecificCause().getMessage(), e);
        }
    }

    @Override
    public long count() {
        try {
            Long n = jdbc.queryForObject(countSql, Long.class);
            return n == null ? 0 : n;
        } catch (DataAccessException e) {
            throw new Unavailable("PostgreSQL failed: " + e.getMostSpecificCause().getMessage(), e);
        }
    }

    @Override
    public String describe() {
        return describe;
    }
}
