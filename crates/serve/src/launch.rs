//! Starting a contestant from its arguments: the runtime its stack wants, the
//! store (opened, and emptied with `--reset`, before the port is bound, so the
//! first answer is already a correct one), the listening socket, and the line
//! on stdout that says where it listens:
//!
//! ```text
//! sb-event-log event-log (axum, sqlite:stackbench-events.db, count=query): listening on http://127.0.0.1:8080; Ctrl-C or SIGTERM stops
//! store: SQLite file stackbench-events.db (WAL, synchronous=FULL: ...)
//! ```
//!
//! Orchestrators and tests read the address from the first line (`http://`
//! up to `;`). `stackbench serve` and the slim binaries both start here.

use std::future::Future;
use std::io::{self, Write as _};
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::app::{Backend, Dummy, EventLog};
use crate::args::{DummyArgs, EventLogArgs, Listen, Stack};
use crate::server::{self, ServeError};
use crate::store::{self, StoreError};

/// Why a contestant could not start, or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] io::Error),
    #[error(transparent)]
    Serve(#[from] ServeError),
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("cannot write to stdout: {0}")]
    Stdout(#[source] io::Error),
}

/// Runs `dummy` until SIGTERM/SIGINT. `program` starts the announcement line.
pub fn run_dummy(program: &str, args: &DummyArgs) -> Result<(), LaunchError> {
    let title = format!("{program} dummy ({})", args.stack.name());
    run(args.stack, &args.listen, title, async { Ok((Arc::new(Dummy), None)) })
}

/// Runs `event-log` until SIGTERM/SIGINT.
pub fn run_event_log(program: &str, args: &EventLogArgs) -> Result<(), LaunchError> {
    let title = format!("{program} event-log ({}, {}, count={})", args.stack.name(), args.store, args.count);
    let (spec, mode, reset) = (args.store.clone(), args.count, args.reset);
    run(args.stack, &args.listen, title, async move {
        let store = store::open(&spec, mode).await?;
        if reset {
            store.reset().await?;
        }
        let note = format!("store: {}", store.describe());
        Ok((Arc::new(EventLog::new(Arc::from(store))), Some(note)))
    })
}

/// Threads a contestant uses: the cores this process may run on (so
/// `taskset -c 0` means one).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn run<B, F>(stack: Stack, listen: &Listen, title: String, make: F) -> Result<(), LaunchError>
where
    B: Backend,
    F: Future<Output = Result<(Arc<B>, Option<String>), LaunchError>>,
{
    let (bind, port) = (listen.bind, listen.port);
    match stack {
        Stack::Actix => actix_web::rt::System::new().block_on(async move {
            let (backend, note) = make.await?;
            let listener = announce(server::bind(bind, port).await?, &title, note.as_deref())?;
            let listener = listener.into_std().map_err(ServeError::Serve)?;
            Ok(crate::actix_stack::serve_actix(listener, backend, cores()).await?)
        }),
        Stack::Axum | Stack::Hyper => runtime()?.block_on(async move {
            let (backend, note) = make.await?;
            let listener = announce(server::bind(bind, port).await?, &title, note.as_deref())?;
            if stack == Stack::Axum {
                Ok(server::serve_axum(listener, crate::axum_stack::router(backend)).await?)
            } else {
                Ok(crate::hyper_stack::serve_hyper(listener, backend).await?)
            }
        }),
    }
}

/// tokio's multi-threaded runtime with one worker per core, or the
/// current-thread runtime on a single core (no hand-off between threads).
fn runtime() -> Result<tokio::runtime::Runtime, LaunchError> {
    let mut builder = if cores() == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(cores());
        b
    };
    builder.enable_all().build().map_err(LaunchError::Runtime)
}

/// Prints `<title>: listening on http://ADDR; ...` (and the store's note) on stdout.
fn announce(listener: TcpListener, title: &str, note: Option<&str>) -> Result<TcpListener, LaunchError> {
    let addr = listener.local_addr().map_err(ServeError::Serve)?;
    let mut out = io::stdout().lock();
    writeln!(out, "{title}: listening on http://{addr}; Ctrl-C or SIGTERM stops")
        .map_err(LaunchError::Stdout)?;
    if let Some(note) = note {
        writeln!(out, "{note}").map_err(LaunchError::Stdout)?;
    }
    out.flush().map_err(LaunchError::Stdout)?;
    Ok(listener)
}
