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
//! Orchestrators and tests read the address from the first line (`http://`,
//! or `https://` with `--tls-cert`, up to `;`). Every `sb-*` binary's `main`
//! parses its arguments ([`crate::args`]) and calls one function here.

use std::future::Future;
use std::io::{self, Write as _};
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::app::{Backend, Dummy, EventLog};
use crate::args::{BubbleSortArgs, DbReadArgs, DummyArgs, EventLogArgs, Listen, Stack, TlsFiles};
use crate::bubble;
use crate::db_read::seed::{SeedError, Store};
use crate::db_read::{self, SetupError};
use crate::server::{self, ServeError};
use crate::store::{self, StoreError};
use crate::tls::{self, TlsError};

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
    #[error(transparent)]
    DbRead(#[from] SetupError),
    #[error(transparent)]
    Seed(#[from] SeedError),
    #[error(transparent)]
    Tls(#[from] TlsError),
}

/// Runs `dummy` until SIGTERM/SIGINT. `program` starts the announcement line.
pub fn run_dummy(program: &str, args: &DummyArgs) -> Result<(), LaunchError> {
    let title = format!("{program} dummy ({})", args.stack.name());
    run(args.stack, &args.listen, &args.tls, title, async { Ok((Arc::new(Dummy), None)) })
}

/// Runs `event-log` until SIGTERM/SIGINT.
pub fn run_event_log(program: &str, args: &EventLogArgs) -> Result<(), LaunchError> {
    let title = format!("{program} event-log ({}, {}, count={})", args.stack.name(), args.store, args.count);
    let (spec, mode, reset) = (args.store.clone(), args.count, args.reset);
    run(args.stack, &args.listen, &args.tls, title, async move {
        let store = store::open(&spec, mode).await?;
        if reset {
            store.reset().await?;
        }
        let note = format!("store: {}", store.describe());
        Ok((Arc::new(EventLog::new(Arc::from(store))), Some(note)))
    })
}

/// Runs `bubble-sort` until SIGTERM/SIGINT: a current-thread runtime when
/// pinned to one CPU ([`bubble::runtime`]).
pub fn run_bubble_sort(program: &str, args: &BubbleSortArgs) -> Result<(), LaunchError> {
    let opts = bubble::Options { rest: args.rest, sort: args.sort };
    let title = format!("{program} bubble-sort (tonic, {} sort)", args.sort.name());
    let note = format!("speaks {}", bubble::protocols(opts));
    let runtime = bubble::runtime().map_err(LaunchError::Runtime)?;
    runtime.block_on(async {
        let listener = server::bind(args.listen.bind, args.listen.port).await?;
        let listener = announce(listener, "http", &title, Some(&note))?;
        Ok(bubble::serve(listener, opts).await?)
    })
}

/// Runs `db-read` until SIGTERM/SIGINT: connects (and with `--seed` seeds)
/// every given store, checks each driver against the data set, then serves.
pub fn run_db_read(program: &str, args: &DbReadArgs) -> Result<(), LaunchError> {
    let mut config = db_read::Config { pool: args.pool, seed: args.seed, ..db_read::Config::new() };
    for store in &args.stores {
        config.add(store.clone());
    }
    multi_thread()?.block_on(async {
        let mut out = io::stdout();
        let (bind, port) = (args.listen.bind, args.listen.port);
        Ok(db_read::serve(&config, bind, port, &format!("{program} db-read"), &mut out).await?)
    })
}

/// `sb-db-read seed --store URL`: loads the data set (idempotent) and prints what it did.
pub fn seed_db_read(store: &Store) -> Result<(), LaunchError> {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(LaunchError::Runtime)?;
    let report = runtime.block_on(db_read::seed::seed(store))?;
    writeln!(io::stdout(), "{report}").map_err(LaunchError::Stdout)
}

/// Threads a contestant uses: the cores this process may run on (so
/// `taskset -c 0` means one).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn run<B, F>(stack: Stack, listen: &Listen, tls: &TlsFiles, title: String, make: F) -> Result<(), LaunchError>
where
    B: Backend,
    F: Future<Output = Result<(Arc<B>, Option<String>), LaunchError>>,
{
    let (bind, port) = (listen.bind, listen.port);
    // Read before anything starts: a bad file stops the server before it binds.
    let config = match (stack, tls.pair()) {
        (_, None) => None,
        // actix-web adds http/1.1 itself (and h2 only with its `http2` feature, not built).
        (Stack::Actix, Some((cert, key))) => Some(tls::server_config(cert, key, &[])?),
        (Stack::Axum | Stack::Hyper, Some((cert, key))) => {
            Some(tls::server_config(cert, key, &tls::H2_AND_HTTP11)?)
        }
    };
    let scheme = if config.is_some() { "https" } else { "http" };
    match stack {
        Stack::Actix => actix_web::rt::System::new().block_on(async move {
            let (backend, note) = make.await?;
            let listener = announce(server::bind(bind, port).await?, scheme, &title, note.as_deref())?;
            let listener = listener.into_std().map_err(ServeError::Serve)?;
            Ok(crate::actix_stack::serve_actix(listener, config, backend, cores()).await?)
        }),
        Stack::Axum | Stack::Hyper => runtime()?.block_on(async move {
            let (backend, note) = make.await?;
            let listener = announce(server::bind(bind, port).await?, scheme, &title, note.as_deref())?;
            let accept = server::Accept::new(listener, config);
            if stack == Stack::Axum {
                Ok(server::serve_axum(accept, crate::axum_stack::router(backend)).await?)
            } else {
                Ok(crate::hyper_stack::serve_hyper(accept, backend).await?)
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

fn multi_thread() -> Result<tokio::runtime::Runtime, LaunchError> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(LaunchError::Runtime)
}

/// Prints `<title>: listening on http://ADDR; ...` (`https://` over TLS; and the store's
/// note) on stdout.
fn announce(
    listener: TcpListener,
    scheme: &str,
    title: &str,
    note: Option<&str>,
) -> Result<TcpListener, LaunchError> {
    let addr = listener.local_addr().map_err(ServeError::Serve)?;
    let mut out = io::stdout().lock();
    writeln!(out, "{title}: listening on {scheme}://{addr}; Ctrl-C or SIGTERM stops")
        .map_err(LaunchError::Stdout)?;
    if let Some(note) = note {
        writeln!(out, "{note}").map_err(LaunchError::Stdout)?;
    }
    out.flush().map_err(LaunchError::Stdout)?;
    Ok(listener)
}
