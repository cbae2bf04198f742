//! The command-line arguments of the `event-log` and `dummy` contestants, shared
//! by `stackbench serve` and the slim binaries (`sb-event-log`, `sb-dummy`):
//! one definition, so both spell every flag, default and help line the same.

use std::net::IpAddr;

use clap::{Args, Parser, ValueEnum};

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
}

/// `event-log`: write each event to a store, answer the count of all events.
#[derive(Debug, Clone, Args)]
pub struct EventLogArgs {
    #[command(flatten)]
    pub listen: Listen,
    /// HTTP stack.
    #[arg(long, value_enum, default_value_t)]
    pub stack: Stack,
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

const DUMMY_EXAMPLE: &str = "Example:\n  sb-dummy --stack hyper --port 8080 &\n  \
    curl -s -H 'Content-Type: application/json' -d '{\"type\":\"page_view\"}' http://127.0.0.1:8080/events\n  \
    {\"count\":1}";

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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    #[test]
    fn the_clis_are_well_formed() {
        DummyCli::command().debug_assert();
        EventLogCli::command().debug_assert();
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
