//! The command lines of the Rust reference contestants, one definition each:
//! `sb-dummy`, `sb-event-log`, `sb-bubble-sort` and `sb-db-read` (with its
//! `seed` subcommand). Every binary spells `--port`, `--bind` and `--store`
//! the same way, with clap's usage errors (exit code 2).

use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::bubble::SortKind;
use crate::db_read::seed::Store;
use crate::store::{CountMode, DEFAULT_STORE, StoreSpec};

/// Where a server listens.
#[derive(Debug, Clone, Args)]
pub struct Listen {
    /// TCP port to listen on; 0 picks a free one (printed at start).
    #[arg(long, short, env = "PORT", default_value_t = 8080)]
    pub port: u16,
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
}

/// Serving HTTPS instead of cleartext HTTP: both files, or neither.
#[derive(Debug, Clone, Default, Args)]
pub struct TlsFiles {
    /// Serve HTTPS with this certificate chain (PEM, the server's certificate first);
    /// needs --tls-key. TLS 1.3 and 1.2 on rustls (aws-lc-rs), ALPN h2 and http/1.1.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

impl TlsFiles {
    /// The certificate and key, when HTTPS is asked for.
    pub fn pair(&self) -> Option<(&std::path::Path, &std::path::Path)> {
        Some((self.tls_cert.as_deref()?, self.tls_key.as_deref()?))
    }
}

/// The HTTP stack a contestant runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Stack {
    /// axum 0.8 on hyper and tokio (multi-threaded runtime; current-thread on one core).
    #[default]
    Axum,
    /// actix-web 4, one single-threaded worker per core.
    Actix,
    /// bare hyper 1 with a hand-written router, tokio runtime as for axum.
    Hyper,
}

impl Stack {
    pub const fn name(self) -> &'static str {
        match self {
            Stack::Axum => "axum",
            Stack::Actix => "actix",
            Stack::Hyper => "hyper",
        }
    }
}

/// `dummy`: the event API's parsing and validation, no store.
#[derive(Debug, Clone, Args)]
pub struct DummyArgs {
    #[command(flatten)]
    pub listen: Listen,
    /// HTTP stack.
    #[arg(long, value_enum, default_value_t)]
    pub stack: Stack,
    #[command(flatten)]
    pub tls: TlsFiles,
}

/// `event-log`: write each event to a store, answer the count of all events.
#[derive(Debug, Clone, Args)]
pub struct EventLogArgs {
    #[command(flatten)]
    pub listen: Listen,
    /// HTTP stack.
    #[arg(long, value_enum, default_value_t)]
    pub stack: Stack,
    #[command(flatten)]
    pub tls: TlsFiles,
    /// Where events are written. The default is an embedded SQLite file in the
    /// working directory (no server needed). Also: sqlite:PATH[?sync=normal],
    /// postgres://USER@HOST:5432/DB, mysql://USER@HOST:3306/DB (MariaDB too),
    /// redis://HOST:6379/0, influxdb://HOST:8086/DB. SQL stores take
    /// ?table=NAME (default stackbench_events) and ?pool=N; Redis ?key=NAME;
    /// InfluxDB ?measurement=NAME (default events).
    #[arg(long, default_value = DEFAULT_STORE, value_parser = StoreSpec::parse, verbatim_doc_comment)]
    pub store: StoreSpec,
    /// How the count is obtained: `query` counts all events after each write
    /// (the original experiment's algorithm; its cost grows with the store), `counter` keeps
    /// an exact count updated atomically with each write (O(1)).
    #[arg(long, value_enum, default_value_t)]
    pub count: CountMode,
    /// Empty the store on start (the original experiment's "clean empty state"). No HTTP
    /// endpoint deletes data.
    #[arg(long)]
    pub reset: bool,
}

const DUMMY_EXAMPLE: &str = "Examples:\n  sb-dummy --stack hyper --port 8080 &\n  \
    curl -s -H 'Content-Type: application/json' -d '{\"type\":\"page_view\"}' http://127.0.0.1:8080/events\n  \
    {\"count\":1}\n\n  \
    sb-dummy --stack actix --port 8443 --tls-cert cert.pem --tls-key key.pem &\n  \
    curl -s --cacert cert.pem -H 'Content-Type: application/json' -d '{\"type\":\"a\"}' https://localhost:8443/events";

const EVENT_LOG_EXAMPLE: &str = "Examples:\n  sb-event-log --port 8080 --reset      # ./stackbench-events.db\n  \
    sb-event-log --store postgres://postgres@127.0.0.1:5432/bench --count counter --stack actix\n  \
    curl -s -H 'Content-Type: application/json' -d '{\"type\":\"page_view\"}' http://127.0.0.1:8080/events\n  \
    {\"count\":1}";

/// `sb-dummy`: the slim `dummy` contestant.
#[derive(Debug, Parser)]
#[command(name = "sb-dummy", version, about = "The stackbench `dummy` contestant: validate an event, answer {\"count\":1}, no store.", after_help = DUMMY_EXAMPLE)]
pub struct DummyCli {
    #[command(flatten)]
    pub args: DummyArgs,
}

/// `sb-event-log`: the slim `event-log` contestant.
#[derive(Debug, Parser)]
#[command(name = "sb-event-log", version, about = "The stackbench `event-log` contestant: store each event, answer the count of all events.", after_help = EVENT_LOG_EXAMPLE)]
pub struct EventLogCli {
    #[command(flatten)]
    pub args: EventLogArgs,
}

/// `bubble-sort`: gRPC `sort.v1.SortService/BubbleSort` over h2c (tonic).
#[derive(Debug, Clone, Args)]
pub struct BubbleSortArgs {
    #[command(flatten)]
    pub listen: Listen,
    /// Also answer the Connect JSON form on the same port:
    /// POST /sort.v1.SortService/BubbleSort with {"data": [...]}.
    #[arg(long)]
    pub rest: bool,
    /// Which bubble sort: fast (tuned passes, about 2x the textbook loop) or textbook (the nested
    /// loop the experiment's servers run, to compare stacks rather than sort tuning).
    #[arg(long, value_name = "fast|textbook", default_value = "fast", value_parser = clap::value_parser!(SortKind))]
    pub sort: SortKind,
}

/// `db-read`: `GET /db/{driver}?a=&b=` selects two rows through one named driver.
#[derive(Debug, Clone, Args)]
pub struct DbReadArgs {
    #[command(flatten)]
    pub listen: Listen,
    /// A database to serve: postgres://… (tokio-postgres, sqlx-postgres, sea-orm-postgres),
    /// mysql://… (mysql-async, sqlx-mysql, sea-orm-mysql), redis://… (redis), sqlite:PATH
    /// (sqlite); repeat for more. Without any, serves sqlite on a file it seeds itself.
    #[arg(long = "store", value_name = "URL", value_parser = clap::value_parser!(Store))]
    pub stores: Vec<Store>,
    /// Load the data set into every given database first (idempotent, like `sb-db-read seed`).
    #[arg(long)]
    pub seed: bool,
    /// Connections per pool (default: from the cores; printed at start).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub pool: Option<u32>,
}

/// `sb-db-read seed`: load the data set and exit.
#[derive(Debug, Subcommand)]
pub enum DbReadCommand {
    /// Load the db-read data set (table items, ids 1..=10000; Redis hashes item:<id>).
    /// Idempotent: a store that already holds it is left unchanged.
    #[command(after_help = SEED_EXAMPLE)]
    Seed {
        /// postgres://…, mysql://…, redis://…, sqlite:PATH, or `sqlite` for the file
        /// `sb-db-read` serves by default.
        #[arg(long, value_name = "URL", default_value = "sqlite", value_parser = clap::value_parser!(Store))]
        store: Store,
    },
}

const BUBBLE_SORT_EXAMPLE: &str = "Example:\n  sb-bubble-sort --port 50051 --rest &\n  \
    curl -s -H 'Content-Type: application/json' -d '{\"data\":[3,1,2]}' \
    http://127.0.0.1:50051/sort.v1.SortService/BubbleSort\n  \
    {\"data\":[1,2,3]}\n\nMore than 10000 numbers: INVALID_ARGUMENT. gRPC messages over 4 MiB: RESOURCE_EXHAUSTED.";

const DB_READ_EXAMPLE: &str = "Examples:\n  sb-db-read --port 8080 &\n  \
    curl -s 'http://127.0.0.1:8080/db/sqlite?a=1&b=2'\n  \
    [{\"id\":1,\"name\":\"item-1\",\"price\":7919},{\"id\":2,\"name\":\"item-2\",\"price\":5838}]\n\n  \
    sb-db-read seed --store postgres://postgres@127.0.0.1/bench\n  \
    sb-db-read --store postgres://postgres@127.0.0.1/bench --store redis://127.0.0.1/0";

const SEED_EXAMPLE: &str = "Examples:\n  sb-db-read seed --store postgres://postgres@127.0.0.1:5432/bench\n  \
    sb-db-read seed --store mysql://root@127.0.0.1:3306/bench\n  \
    sb-db-read seed --store redis://127.0.0.1:6379/0\n  \
    sb-db-read seed --store sqlite:/tmp/items.sqlite3";

/// `sb-bubble-sort`: the `bubble-sort` contestant.
#[derive(Debug, Parser)]
#[command(name = "sb-bubble-sort", version, about = "The stackbench `bubble-sort` contestant: gRPC sort.v1.SortService/BubbleSort over h2c (tonic).", after_help = BUBBLE_SORT_EXAMPLE)]
pub struct BubbleSortCli {
    #[command(flatten)]
    pub args: BubbleSortArgs,
}

/// `sb-db-read`: the `db-read` contestant, and `sb-db-read seed`.
#[derive(Debug, Parser)]
#[command(
    name = "sb-db-read",
    version,
    about = "The stackbench `db-read` contestant: GET /db/{driver}?a=&b= selects two rows through one named driver.",
    after_help = DB_READ_EXAMPLE,
    args_conflicts_with_subcommands = true
)]
pub struct DbReadCli {
    #[command(subcommand)]
    pub command: Option<DbReadCommand>,
    #[command(flatten)]
    pub args: DbReadArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    #[test]
    fn the_clis_are_well_formed() {
        DummyCli::command().debug_assert();
        EventLogCli::command().debug_assert();
        BubbleSortCli::command().debug_assert();
        DbReadCli::command().debug_assert();
    }

    #[test]
    fn bubble_sort_flags_and_env() {
        let cli = BubbleSortCli::try_parse_from(["x"]).unwrap();
        assert_eq!((cli.args.rest, cli.args.sort, cli.args.listen.port), (false, SortKind::Fast, 8080));
        let cli =
            BubbleSortCli::try_parse_from(["x", "--rest", "--sort", "textbook", "--bind=0.0.0.0", "-p", "0"])
                .unwrap();
        assert_eq!((cli.args.rest, cli.args.sort, cli.args.listen.port), (true, SortKind::Textbook, 0));
        assert_eq!(cli.args.listen.bind, IpAddr::from([0, 0, 0, 0]));
        let err = BubbleSortCli::try_parse_from(["x", "--sort", "quick"]).unwrap_err().to_string();
        assert!(err.contains("textbook or fast"), "{err}");
        let err = BubbleSortCli::try_parse_from(["x", "--bind", "localhost"]).unwrap_err().to_string();
        assert!(err.contains("--bind"), "{err}");
    }

    #[test]
    fn db_read_serves_stores_or_seeds_one() {
        let cli = DbReadCli::try_parse_from([
            "x",
            "--store",
            "postgres://p@h/db",
            "--store",
            "redis://h/0",
            "--pool",
            "2",
            "--seed",
        ])
        .unwrap();
        assert!(cli.command.is_none() && cli.args.seed);
        assert_eq!(cli.args.pool, Some(2));
        assert_eq!(
            cli.args.stores,
            [Store::Postgres("postgres://p@h/db".into()), Store::Redis("redis://h/0".into())]
        );
        let cli = DbReadCli::try_parse_from(["x", "seed", "--store", "sqlite:/tmp/i.db"]).unwrap();
        assert!(
            matches!(cli.command, Some(DbReadCommand::Seed { store: Store::Sqlite(p) }) if p.ends_with("i.db"))
        );
        let err = DbReadCli::try_parse_from(["x", "--store", "mongodb://h/db"]).unwrap_err().to_string();
        assert!(err.contains("postgres://") && err.contains("sqlite:PATH"), "{err}");
        let err = DbReadCli::try_parse_from(["x", "--pool", "0"]).unwrap_err().to_string();
        assert!(err.contains("--pool"), "{err}");
        for gone in ["--postgres", "--mysql", "--redis", "--sqlite"] {
            assert!(DbReadCli::try_parse_from(["x", gone, "u"]).is_err(), "{gone} is still accepted");
        }
    }

    #[test]
    fn defaults_and_errors() {
        let cli = EventLogCli::try_parse_from(["sb-event-log"]).unwrap();
        assert_eq!(cli.args.store.to_string(), "sqlite:stackbench-events.db");
        assert_eq!((cli.args.stack, cli.args.count, cli.args.reset), (Stack::Axum, CountMode::Query, false));
        let cli = EventLogCli::try_parse_from([
            "x", "--stack", "actix", "--count", "counter", "--reset", "-p", "0",
        ])
        .unwrap();
        assert_eq!(
            (cli.args.stack, cli.args.count, cli.args.listen.port),
            (Stack::Actix, CountMode::Counter, 0)
        );
        let err = EventLogCli::try_parse_from(["x", "--store", "mongodb://h/db"]).unwrap_err().to_string();
        assert!(err.contains("postgres://"), "{err}");
        let err = DummyCli::try_parse_from(["x", "--stack", "rocket"]).unwrap_err().to_string();
        assert!(err.contains("axum") && err.contains("hyper"), "{err}");
    }
}
