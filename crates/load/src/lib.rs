//! The load engine of stackbench: `stackbench load` and the orchestrator's
//! measured runs.
//!
//! The split follows "schedule × transport × recorder" (docs/design.md has the reasons):
//! - *when* a request is due: `schedule` (closed model with think time,
//!   ramp-up and stages; open model at a rate, latency from the intended send
//!   time so a stalled server cannot hide, the coordinated-omission correction
//!   of Gil Tene's HdrHistogram/wrk2);
//! - *how* it is sent: `transport` over `http1` or `h2c` (and gRPC on it);
//! - *what is kept*: `recorder` (an HdrHistogram per worker thread and
//!   second, merged losslessly by `collect`) and `hlog`.
//!
//! `worker` is the one loop that joins them, [`run`] starts the
//! threads and builds the [`RunRecord`], `summary` renders it. Beyond one
//! machine, `shard` cuts a load into slices for several generators and
//! [`merge`] puts their records back together exactly.
//!
//! ```no_run
//! use stackbench_load::{LoadOptions, Stop, run, summary_text};
//! let opts = LoadOptions { connections: Some(100), ..LoadOptions::default() };
//! let spec = opts.to_spec("http://127.0.0.1:8080/").unwrap();
//! let record = run(&spec, &Stop::new()).unwrap();
//! print!("{}", summary_text(&record, false));
//! ```

mod budget;
mod collect;
mod dial;
mod engine;
mod fault;
mod findmax;
mod flow;
#[doc(hidden)]
pub mod fuzzing;
mod grpc_call;
mod h2c;
mod hlog;
mod http1;
mod io_mode;
mod load_error;
pub mod merge;
mod options;
mod recorder;
mod route;
mod schedule;
mod shard;
mod spec;
mod spec_error;
mod stop;
mod summary;
mod sys;
mod tally;
mod target;
mod threshold;
mod tls;
mod tls_probe;
mod transport;
mod uring;
mod values;
mod warmup;
mod wire;
mod worker;

pub use engine::live_workers;
pub use load_error::LoadError;
pub use options::{DEFAULT_MAX_WARMUP, LoadOptions, SpecError, parse_target};
pub use spec::{Bound, Io, LoadSpec, ModelSpec, NewConnection, RequestSource, Target, Transport};
pub use stackbench_record::RunRecord;
pub use stop::Stop;
pub use summary::{summary_text, timeline_csv};
pub use threshold::Threshold;
pub use values::{CheckEvery, CpuList, Dur, Percent, Shard, StageSpec, Stages, WallTime, WarmupArg};

// What the orchestrator, the CLI and the probes use beyond a plain run; the
// modules themselves stay private to the crate.
pub use dial::{OpenError, Socket, open_once};
pub use fault::describe as describe_panic;
pub use findmax::{run as find_max, sentence as search_sentence};
pub use flow::{Calls as GrpcCalls, for_each_field as h2_fields};
pub use h2c::{grpc_frame, grpc_message};
pub use http1::Http1Conn;
pub use route::Route;
pub use shard::apply as apply_shard;
pub use summary::step_line;
pub use tls::{Alpn, Connector as TlsConnector, TlsFlags, TlsSpec};
pub use uring::available as io_uring_available;
pub use wire::http1_request;
pub use wire::{Wire, is_tls_record};

/// Runs the load `spec` describes until its end or until `stop` is set: one
/// measured run, or a capacity search when the spec asks for one
/// (`--find-max`; [`find_max`] also reports each step as it ends).
pub fn run(spec: &LoadSpec, stop: &Stop) -> Result<RunRecord, LoadError> {
    if spec.search.is_some() { findmax::run(spec, stop, &mut |_| {}) } else { engine::run(spec, stop) }
}
