//! The command line: every subcommand, its flags, and the help text with an
//! example for each.

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "stackbench",
    version,
    about = "Settle stack arguments with trustworthy load numbers.",
    long_about = "stackbench runs standard service contracts (event-log, dummy, db-read, bubble-sort) \
                  against contestants written in any language, and tells you which is faster, by how \
                  much, and how sure that is.",
    after_help = "Examples:\n  stackbench serve dummy --port 8080\n\nSee `stackbench <command> --help` for each command."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a Rust reference contestant (a server implementing one scenario).
    #[command(subcommand)]
    Serve(ServeCommand),
    /// Load a scenario's data set into a database (`seed db-read --store URL`).
    #[command(subcommand)]
    Seed(SeedCommand),
    /// Drive a server with load (closed or open model; HTTP/1.1, h2c, gRPC) and report latency.
    #[command(after_help = "Examples:\n  \
        stackbench load http://127.0.0.1:8080/ -c 100 -d 30s\n  \
        stackbench load http://127.0.0.1:8080/events --scenario dummy --rate 5000 -d 1m --json run.json\n  \
        stackbench load http://127.0.0.1:8080/ -c 100 --ramp-up 1s --warmup 30s -d 5m --threshold 'p99<50ms'\n  \
        stackbench load http://127.0.0.1:50051 --scenario bubble-sort -c 250 --think 100ms --no-keepalive\n  \
        stackbench load http://sut.example:8080/events --scenario dummy --rate 30000 -d 1m --shard 2/3 --start-at 2026-12-01T10:00:00Z --json -\n\n\
        Exit codes: 0 done, 1 bad input or target unreachable, 2 usage error, 70 stackbench itself failed (the numbers are not a result), 99 a --threshold failed, 130 interrupted.")]
    Load(Box<crate::load::LoadArgs>),
    /// Run a plan: start each contestant, verify it, load it, sample it, store every run.
    #[command(after_help = "Examples:\n  \
        stackbench run plans/three-kings.toml\n  \
        stackbench run plans/db-drivers.toml --only sqlx-postgres --only tokio-postgres --out results/pg\n  \
        stackbench run --resume results/2025-12-01T10-32-05Z\n\n\
        Every plan key: plans/example.toml and docs/plan.md. Ctrl-C saves the current run and stops.\n\
        Exit codes: 0 done, 1 error, 2 usage error, 3 done but a contestant was left out, 70 stackbench itself failed in a run (it is left out), 130 interrupted.")]
    Run(crate::run::RunArgs),
    /// The default benchmark: every scenario on the Rust contestants, no database needed (~3 min).
    #[command(after_help = "Examples:\n  stackbench bench\n  stackbench bench --full --out results/full\n\n\
        Runs plans/quick.toml (built in): rounds until every ratio is known to ±5% (at most 5 rounds and 4 minutes \
        of them; --precision, --max-repetitions and --max-time change that), then prints the comparison, \
        what stays undecided, and writes report.html into the result directory.")]
    Bench(crate::run::BenchArgs),
    /// Check a running server against its scenario's contract (good and bad inputs).
    #[command(after_help = "Examples:\n  stackbench verify http://127.0.0.1:8080 --scenario dummy\n  \
        stackbench verify http://127.0.0.1:8080/db/sqlite --scenario db-read\n  \
        stackbench verify http://127.0.0.1:50051 --scenario bubble-sort\n\n\
        Exit codes: 0 every rule holds, 1 a rule is broken (each is printed) or the server is unreachable, 2 usage error.")]
    Verify(crate::run::VerifyArgs),
    /// Re-render a result directory: terminal, Markdown, CSV, JSON or a self-contained HTML page.
    #[command(after_help = "Examples:\n  \
        stackbench report results/2025-12-01T10-32-05Z\n  \
        stackbench report results/2025-12-01T10-32-05Z --out report.html\n  \
        stackbench report results/2025-12-01T10-32-05Z --format md --reference flask\n\n\
        Throughput is the mean of the runs with its 95% bootstrap interval; contestants whose ratio's interval \
        includes 1 are statistically tied. The JSON schema: docs/report-json.md.")]
    Report(crate::report::ReportArgs),
    /// Put the records of a load's shards (`load --shard I/N`) together: exact percentiles, thresholds on the whole.
    #[command(after_help = "Examples:\n  \
        stackbench merge shard1.json shard2.json shard3.json --threshold 'p99<20ms' --json merged.json\n  \
        kubectl logs -l job-name=stackbench-load --tail=-1 | stackbench merge --hlog merged.hlog\n\n\
        Latency histograms are added bucket by bucket, so the merged percentiles are those of every request of every \
        shard. Exit codes: 0 done, 1 bad input, 2 usage error, 70 a shard's numbers are not a result, \
        99 a --threshold failed on the whole, 130 a shard was interrupted.")]
    Merge(crate::merge::MergeArgs),
    /// Print the Kubernetes manifests that run a load beyond one machine.
    #[command(subcommand)]
    K8s(crate::k8s::K8sCommand),
    /// Compare two result directories; exit code 4 when a contestant regressed beyond --max-regression.
    #[command(after_help = "Examples:\n  \
        stackbench compare results/main results/branch\n  \
        stackbench compare results/main results/branch --max-regression 3% --format md --out compare.md\n\n\
        A regression is a drop whose whole 95% interval lies beyond the threshold, or a contestant that no longer \
        runs. Exit codes: 0 no regression, 1 error, 2 usage error, 4 regression.")]
    Compare(crate::report::CompareArgs),
}

#[derive(Debug, Subcommand)]
pub enum ServeCommand {
    /// The `event-log` scenario (the three-kings experiment): store each event, answer the count of all events.
    #[command(
        after_help = "Examples:\n  stackbench serve event-log --port 8080 --reset        # ./stackbench-events.db\n  \
        stackbench serve event-log --store postgres://postgres@127.0.0.1:5432/bench --count counter --stack actix\n  \
        curl -s -H 'Content-Type: application/json' -d '{\"type\":\"page_view\"}' http://127.0.0.1:8080/events\n  \
        {\"count\":1}\n\nThe second line printed at start says how durable an acknowledged event is on that store."
    )]
    EventLog(stackbench_serve::args::EventLogArgs),
    /// The `dummy` scenario: validate an event, answer {"count":1}, no store.
    #[command(after_help = "Example:\n  stackbench serve dummy --stack hyper --port 8080 &\n  \
        curl -s -H 'Content-Type: application/json' -d '{\"type\":\"page_view\"}' http://127.0.0.1:8080/events\n  \
        {\"count\":1}")]
    Dummy(stackbench_serve::args::DummyArgs),
    /// The `bubble-sort` scenario: gRPC sort.v1.SortService/BubbleSort over h2c (tonic).
    #[command(after_help = "Example:\n  stackbench serve bubble-sort --port 50051 --rest &\n  \
        curl -s -H 'Content-Type: application/json' -d '{\"data\":[3,1,2]}' \
        http://127.0.0.1:50051/sort.v1.SortService/BubbleSort\n  \
        {\"data\":[1,2,3]}\n\nMore than 10000 numbers: INVALID_ARGUMENT. gRPC messages over 4 MiB: RESOURCE_EXHAUSTED.")]
    BubbleSort(BubbleSortArgs),
    /// The `db-read` scenario: GET /db/{driver}?a=&b= selects two rows through one named driver.
    #[command(after_help = DB_READ_HELP)]
    DbRead(DbReadArgs),
}

const DB_READ_HELP: &str = "Drivers: tokio-postgres, sqlx-postgres, sea-orm-postgres (--postgres);     mysql-async, sqlx-mysql, sea-orm-mysql (--mysql); redis (--redis); sqlite (--sqlite).     Without any database flag it serves sqlite on a file it seeds itself.\n\n\
    Examples:\n  stackbench serve db-read --port 8080 &\n  \
    curl -s 'http://127.0.0.1:8080/db/sqlite?a=1&b=2'\n  \
    [{\"id\":1,\"name\":\"item-1\",\"price\":7919},{\"id\":2,\"name\":\"item-2\",\"price\":5838}]\n\n  \
    stackbench seed db-read --store postgres://postgres@127.0.0.1/bench\n  \
    stackbench serve db-read --postgres postgres://postgres@127.0.0.1/bench --redis redis://127.0.0.1/0";

/// `serve db-read` options.
#[derive(Debug, Clone, Args)]
pub struct DbReadArgs {
    #[command(flatten)]
    pub listen: Listen,
    /// A database to serve, as `seed db-read` takes it: postgres://…, mysql://…, redis://…,
    /// sqlite:PATH; repeat for more. (--postgres, --mysql, --redis, --sqlite do the same.)
    #[arg(long = "store", value_name = "URL")]
    pub stores: Vec<String>,
    /// PostgreSQL URL: serves tokio-postgres, sqlx-postgres and sea-orm-postgres.
    #[arg(long, value_name = "URL")]
    pub postgres: Option<String>,
    /// MySQL/MariaDB URL: serves mysql-async, sqlx-mysql and sea-orm-mysql.
    #[arg(long, value_name = "URL")]
    pub mysql: Option<String>,
    /// Redis URL: serves redis.
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,
    /// SQLite file: serves sqlite (seeded if the file does not exist).
    #[arg(long, value_name = "PATH")]
    pub sqlite: Option<std::path::PathBuf>,
    /// Load the data set into every given database first (idempotent, like `seed db-read`).
    #[arg(long)]
    pub seed: bool,
    /// Connections per pool (default: from the cores; printed at start).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub pool: Option<u32>,
}

#[derive(Debug, Subcommand)]
pub enum SeedCommand {
    /// Load the db-read data set (table items, ids 1..=10000; Redis hashes item:<id>).
    /// Idempotent: a store that already holds it is left unchanged.
    #[command(
        after_help = "Examples:\n  stackbench seed db-read --store postgres://postgres@127.0.0.1:5432/bench\n  \
        stackbench seed db-read --store mysql://root@127.0.0.1:3306/bench\n  \
        stackbench seed db-read --store redis://127.0.0.1:6379/0\n  \
        stackbench seed db-read --store sqlite:/tmp/items.sqlite3"
    )]
    DbRead {
        /// postgres://…, mysql://…, redis://…, sqlite:PATH, or `sqlite` for the file `serve db-read` uses.
        #[arg(long, value_name = "URL", default_value = "sqlite")]
        store: String,
    },
}

/// `serve bubble-sort` options.
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
    #[arg(long, value_name = "KIND", default_value = "fast", value_parser = ["fast", "textbook"])]
    pub sort: String,
}

/// Where a server listens (one definition for `stackbench serve` and the slim binaries).
pub use stackbench_serve::args::Listen;
