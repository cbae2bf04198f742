//! The command line: every subcommand, its flags, and the help text with an
//! example for each.

use crate::exit;
use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "stackbench",
    version,
    about = "Settle stack arguments with trustworthy load numbers.",
    long_about = "stackbench runs standard service contracts (event-log, dummy, db-read, bubble-sort) \
                  against contestants written in any language, and tells you which is faster, by how \
                  much, and how sure that is. The Rust reference contestants are binaries of their own \
                  (sb-dummy, sb-event-log, sb-bubble-sort, sb-db-read: `cargo build --release -p \
                  stackbench-serve`).",
    after_help = "Examples:\n  stackbench bench\n  stackbench load http://127.0.0.1:8080/ -c 100 -d 30s\n\n\
                  See `stackbench <command> --help` for each command."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Drive a server with load (closed or open model; HTTP/1.1, h2c, gRPC) and report latency.
    #[command(after_help = exit::after_help("load", "Examples:\n  \
        stackbench load http://127.0.0.1:8080/ -c 100 -d 30s\n  \
        stackbench load http://127.0.0.1:8080/events --scenario dummy --rate 5000 -d 1m --json run.json\n  \
        stackbench load http://127.0.0.1:8080/ -c 100 --ramp-up 1s --warmup 30s -d 5m --threshold 'p99<50ms'\n  \
        stackbench load http://127.0.0.1:50051 --scenario bubble-sort -c 250 --think 100ms --no-keepalive\n  \
        stackbench load http://sut.example:8080/events --scenario dummy --rate 30000 -d 1m --shard 2/3 --start-at 2026-12-01T10:00:00Z --json -"))]
    Load(Box<crate::load::LoadArgs>),
    /// Run a plan: start each contestant, verify it, load it, sample it, store every run.
    #[command(after_help = exit::after_help("run", "Examples:\n  \
        stackbench run plans/three-kings.toml\n  \
        stackbench run plans/db-drivers.toml --only sqlx-postgres --only tokio-postgres --out results/pg\n  \
        stackbench run --resume results/2025-12-01T10-32-05Z\n\n\
        Every plan key: plans/example.toml and docs/plan.md. Ctrl-C saves the current run and stops."))]
    Run(crate::run::RunArgs),
    /// The default benchmark: every scenario on the Rust contestants and `dummy` in each other language the machine has; no database needed (~5 min once packages are installed).
    #[command(after_help = exit::after_help("bench", "Examples:\n  stackbench bench\n  stackbench bench --unbudgeted\n  \
        stackbench bench --full --out results/full\n\n\
        Runs plans/quick.toml (built in): each contestant under a CPU budget of a third of a core, reserved through a \
        cgroup, so every rate is the server's, each run beside a fresh dummy-hyper whose rate in the same seconds \
        the report reads it against, so the shared machine's speed cancels out (--unbudgeted: each gets its whole \
        core, alone; where no cgroup can be used the report says \"unbudgeted\"); rounds until every ratio is known to ±5% (3 rounds of everyone, then rounds of \
        the pairs still open while 5 minutes from the start last; --precision, --max-repetitions and --max-time \
        change that), then prints the comparison, \
        what stays undecided, and writes report.html into the result directory."))]
    Bench(crate::run::BenchArgs),
    /// Check a running server against its scenario's contract (good and bad inputs).
    #[command(after_help = exit::after_help("verify", "Examples:\n  stackbench verify http://127.0.0.1:8080 --scenario dummy\n  \
        stackbench verify http://127.0.0.1:8080/db/sqlite --scenario db-read\n  \
        stackbench verify http://127.0.0.1:50051 --scenario bubble-sort"))]
    Verify(crate::run::VerifyArgs),
    /// Re-render a result directory: terminal, Markdown, CSV, JSON or a self-contained HTML page.
    #[command(after_help = exit::after_help("report", "Examples:\n  \
        stackbench report results/2025-12-01T10-32-05Z\n  \
        stackbench report results/2025-12-01T10-32-05Z --out report.html\n  \
        stackbench report results/2025-12-01T10-32-05Z --format md --reference flask\n\n\
        Throughput is the mean of the runs with its 95% bootstrap interval; contestants whose ratio's interval \
        includes 1 are statistically tied. The JSON schema: docs/report-json.md."))]
    Report(crate::report::ReportArgs),
    /// Put the records of a load's shards (`load --shard I/N`) together: exact percentiles, thresholds on the whole.
    #[command(after_help = exit::after_help("merge", "Examples:\n  \
        stackbench merge shard1.json shard2.json shard3.json --threshold 'p99<20ms' --json merged.json\n  \
        kubectl logs -l job-name=stackbench-load --tail=-1 | stackbench merge --hlog merged.hlog\n\n\
        Latency histograms are added bucket by bucket, so the merged percentiles are those of every request of every \
        shard; a --threshold is judged on the whole, and a shard whose numbers are not a result makes the merge none."))]
    Merge(crate::merge::MergeArgs),
    /// Print the Kubernetes manifests that run a load beyond one machine.
    #[command(subcommand)]
    K8s(crate::k8s::K8sCommand),
    /// Run a load as shards on a Docker swarm (or print the commands that do), then merge them.
    #[command(subcommand)]
    Swarm(crate::swarm::SwarmCommand),
    /// Compare two result directories; exit code 4 when a contestant regressed beyond --max-regression.
    #[command(after_help = exit::after_help("compare", "Examples:\n  \
        stackbench compare results/main results/branch\n  \
        stackbench compare results/main results/branch --max-regression 3% --format md --out compare.md\n\n\
        A regression is a drop whose whole 95% interval lies beyond the threshold, or a contestant that no longer \
        runs."))]
    Compare(crate::report::CompareArgs),
}
