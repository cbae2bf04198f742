//! `stackbench serve`: start a reference contestant and print where it listens.

use std::io::Write as _;

use anyhow::Context as _;
use stackbench_serve::{bubble, launch, server};

use crate::cli::{Listen, ServeCommand};

pub fn run(cmd: ServeCommand) -> anyhow::Result<()> {
    match cmd {
        // dummy and event-log choose the runtime their --stack wants (actix-web brings its own).
        ServeCommand::Dummy(args) => Ok(launch::run_dummy("stackbench serve", &args)?),
        ServeCommand::EventLog(args) => Ok(launch::run_event_log("stackbench serve", &args)?),
        // bubble-sort: a current-thread runtime when pinned to one CPU (bubble::runtime).
        ServeCommand::BubbleSort(args) => {
            let runtime = bubble::runtime().context("cannot start the async runtime")?;
            runtime.block_on(async {
                let listener = bind(&args.listen, "bubble-sort", "tonic").await?;
                let sort = args.sort.parse().map_err(anyhow::Error::msg)?;
                bubble::serve(listener, bubble::Options { rest: args.rest, sort }).await?;
                Ok(())
            })
        }
        ServeCommand::DbRead(args) => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            runtime.block_on(async {
                crate::seed::serve_db_read(args).await?;
                Ok(())
            })
        }
    }
}

/// Binds and announces `listening on http://ADDR` on stdout (the line
/// orchestrators and tests read to learn a port chosen with `--port 0`).
async fn bind(listen: &Listen, scenario: &str, stack: &str) -> anyhow::Result<tokio::net::TcpListener> {
    let listener = server::bind(listen.bind, listen.port).await?;
    let addr = listener.local_addr().context("cannot read the bound address")?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "stackbench serve {scenario} ({stack}): listening on http://{addr}; Ctrl-C or SIGTERM stops"
    )?;
    out.flush()?;
    Ok(listener)
}
