//! Pool sizes, chosen from the cores this process may run on.
//!
//! - SQL pools (PostgreSQL, MySQL/MariaDB): 16 connections per core, at most
//!   30. A MySQL connection runs one statement at a time (the protocol cannot
//!   pipeline), so with 100 concurrent clients the MariaDB drivers need many:
//!   on the 2-core benchmark machine, contestant pinned to one core, pools of
//!   3, 5, 8 and 16 gave mysql-async a median of 9.7k, 11.7k, 20.2k and 27.9k
//!   requests/s and sqlx-mysql 5.2k, 5.2k, 7.1k and 10.8k; tokio-postgres,
//!   which pipelines on a connection, was flat (9.4k..8.3k, within the noise).
//!   The cap of 30 keeps the three pools of one database (raw driver, sqlx,
//!   SeaORM) under PostgreSQL's default `max_connections` of 100.
//! - Redis: one multiplexed connection per core. redis-rs pipelines every
//!   concurrent request on a connection, so one per core is enough to keep the
//!   single-threaded server fed.
//! - SQLite: one read-only connection per core; each read runs on the blocking
//!   pool holding one of them, so at most `cores` reads run at once.
//!
//! `cores` is `std::thread::available_parallelism`, which honours the CPU
//! affinity mask: a contestant pinned with `taskset -c 0` counts one core.

/// Connections per pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSizes {
    /// The cores the sizes were computed from.
    pub cores: u32,
    pub sql: u32,
    pub redis: u32,
    pub sqlite: u32,
}

impl PoolSizes {
    /// From a core count.
    pub fn for_cores(cores: u32) -> Self {
        let cores = cores.max(1);
        PoolSizes { cores, sql: (16 * cores).min(30), redis: cores, sqlite: cores }
    }

    /// The same size for every pool (`--pool N`).
    pub fn all(n: u32) -> Self {
        let n = n.max(1);
        PoolSizes { cores: cores(), sql: n, redis: n, sqlite: n }
    }

    /// One line saying how the sizes were chosen.
    pub fn explain(&self, overridden: bool) -> String {
        if overridden {
            format!("{} connections per pool (--pool)", self.sql)
        } else {
            format!(
                "from {} core(s) this process may use: SQL pools 16 x cores (at most 30) = {}, Redis {} \
                 connection(s), SQLite {} connection(s); --pool N overrides",
                self.cores, self.sql, self.redis, self.sqlite
            )
        }
    }
}

/// The cores this process may run on.
pub fn cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// The default sizes for this process.
pub fn pool_sizes() -> PoolSizes {
    PoolSizes::for_cores(cores())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_cores() {
        assert_eq!(PoolSizes::for_cores(1), PoolSizes { cores: 1, sql: 16, redis: 1, sqlite: 1 });
        assert_eq!(PoolSizes::for_cores(8).sql, 30);
        assert_eq!(PoolSizes::for_cores(0).sql, 16);
        assert_eq!(PoolSizes::all(0).sql, 1);
        assert!(pool_sizes().explain(false).contains("16 x cores (at most 30)"));
        assert!(PoolSizes::all(4).explain(true).contains("4 connections"));
    }
}
