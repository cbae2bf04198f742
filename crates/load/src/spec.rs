//! [`LoadSpec`]: a validated description of one load run, built from
//! [`crate::LoadOptions`] by [`crate::LoadOptions::to_spec`]. Everything in it
//! has been checked, so [`crate::run`] fails only on what cannot be known in
//! advance (the host does not resolve, threads cannot start).

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use bytes::Bytes;

pub use crate::io_mode::Io;
pub use crate::target::Target;
use crate::threshold::Threshold;
use crate::values::{CheckEvery, StageSpec};

/// A validated load run.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    pub target: Target,
    pub transport: Transport,
    pub model: ModelSpec,
    /// Stages (`--stages`, or the ramp-up of the closed model); empty = constant load.
    pub stages: Vec<StageSpec>,
    pub bound: Bound,
    /// Load before the measured phase (kept apart, in the record's `warmup`); with
    /// `auto_warmup`, the longest it may last.
    pub warmup: Duration,
    /// `--warmup auto`: the measured phase begins once the warm-up's per-second rate and
    /// median latency are steady (`crate::warmup`), at `warmup` at the latest.
    pub auto_warmup: bool,
    pub timeout: Duration,
    /// Generator worker threads (one current-thread runtime each).
    pub threads: usize,
    /// Pin worker `i` to `cpus[i % len]`; `None` leaves placement to the OS.
    pub cpus: Option<Vec<usize>>,
    /// When a connection is given up for a new one (`--new-connection`, `--no-keepalive`);
    /// `None`: kept alive (and for h2c/gRPC one connection for many requests).
    pub new_connection: Option<NewConnection>,
    pub requests: RequestSource,
    pub check_every: CheckEvery,
    pub thresholds: Vec<Threshold>,
    /// Print a live progress line on stderr once a second.
    pub progress: bool,
    /// Write an HdrHistogram interval log (one histogram per second) here.
    pub hlog: Option<PathBuf>,
    /// `--find-max`: this spec is the template of each step of a capacity search.
    pub search: Option<SearchSpec>,
    /// `--shard I/N`: this generator runs one slice of the load (`shard`).
    pub shard: Option<ShardSpec>,
    /// `--start-at`: wait for this wall-clock time before the warm-up begins.
    pub start_at: Option<std::time::SystemTime>,
    /// `--io`: epoll or io_uring.
    pub io: Io,
    /// `--timer-slack`: open model, how late a due request may start so that one
    /// wake-up starts all requests due in the same window (zero: each on time).
    pub timer_slack: Duration,
    /// `--resolve`, `--connect-to`: where the connections go, when not where the URL says.
    pub route: crate::route::Route,
    /// TLS, for an `https://` target.
    pub tls: Option<std::sync::Arc<crate::tls::TlsSpec>>,
}

/// The slice of a sharded load this generator runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardSpec {
    pub shard: crate::values::Shard,
    /// Closed model: the global number of this shard's first user (its users
    /// keep their numbers in the whole load, so ramps and stages start them
    /// in the same order as one generator would).
    pub first_user: usize,
}

/// A capacity search (`--find-max`, [`crate::findmax`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSpec {
    pub slo: Vec<crate::Threshold>,
    /// Measured time of each step (each settles for the spec's `warmup` first).
    pub step: Duration,
    pub max_rate: Option<f64>,
    /// The first rate; without it a closed-model probe of `probe_users` chooses it.
    pub start_rate: Option<f64>,
    /// Bisect until `(failing - passing) / passing` is at most this.
    pub precision: f64,
    pub probe_users: usize,
    /// `[passing, failing]` from an earlier search of the same target: bisect
    /// it at once, widened by twice the precision (a plan's later repetitions).
    pub bracket: Option<[f64; 2]>,
}

/// How requests are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Http1,
    /// HTTP/2: over cleartext TCP with prior knowledge (h2c), or over TLS agreed by ALPN.
    H2c,
    /// gRPC unary calls over HTTP/2.
    Grpc,
}

impl Transport {
    /// The name used in records (`http1`, `h2c`, `grpc`).
    pub const fn name(self) -> &'static str {
        match self {
            Transport::Http1 => "http1",
            Transport::H2c => "h2c",
            Transport::Grpc => "grpc",
        }
    }
}

/// When a connection is given up for a new one (`--new-connection`); without it, never
/// (keep-alive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "String")]
pub enum NewConnection {
    /// Every request opens one (as `--no-keepalive`).
    Request,
    /// Every iteration of a scenario file opens one, which its requests share (k6's
    /// `noVUConnectionReuse`).
    Iteration,
}

impl FromStr for NewConnection {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "request" => Ok(NewConnection::Request),
            "iteration" => Ok(NewConnection::Iteration),
            other => Err(format!("{other:?} is not when to open a connection; write request or iteration")),
        }
    }
}

impl TryFrom<String> for NewConnection {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl NewConnection {
    /// The name used in records (`request`, `iteration`).
    pub const fn name(self) -> &'static str {
        match self {
            NewConnection::Request => "request",
            NewConnection::Iteration => "iteration",
        }
    }
}

/// When requests are sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ModelSpec {
    /// `connections × streams` virtual users: send, wait for the answer, think, repeat.
    /// `streams` is 1 for HTTP/1.1. `ramp_up` (already one of the stages) is kept for the record.
    Closed { connections: usize, streams: usize, think: Duration, ramp_up: Duration },
    /// Requests due at `rate` per second (or the stages' rate); at most
    /// `max_in_flight` outstanding, beyond which a due request is counted late.
    /// `connections` are opened at the start. HTTP/1.1 opens more as needed, up
    /// to `max_connections`; beyond it a due request waits for a free connection
    /// (its latency, counted from the due time, includes the wait).
    Open { rate: f64, max_in_flight: usize, connections: usize, max_connections: usize },
}

/// What ends the measured phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    Duration(Duration),
    Requests(u64),
}

/// What is sent.
#[derive(Debug, Clone)]
pub enum RequestSource {
    /// `-m`, `-H`, `-b`: the same request every time.
    Fixed { method: http::Method, headers: Vec<(http::HeaderName, http::HeaderValue)>, body: Bytes },
    /// A scenario file (`--scenario-file`, or a built-in's, `--scenario`): each user or
    /// arrival runs iterations of its flows, every request written when it is sent
    /// ([`crate::flow`]).
    File(std::sync::Arc<crate::flow::FileSource>),
}

impl RequestSource {
    /// The scenario file, when the requests come from one.
    pub fn file(&self) -> Option<&crate::flow::FileSource> {
        match self {
            RequestSource::File(f) => Some(f),
            RequestSource::Fixed { .. } => None,
        }
    }
}

impl LoadSpec {
    /// HTTP/1.1 keep-alive, and for h2c/gRPC one connection for many requests; `false`: a new
    /// connection for every request (`--no-keepalive`).
    pub fn keepalive(&self) -> bool {
        self.new_connection != Some(NewConnection::Request)
    }

    /// `--new-connection iteration`: each iteration of a scenario file opens a connection of
    /// its own, keeps it alive for its requests and gives it up at its end; its last HTTP/1.1
    /// request says `Connection: close`.
    pub fn per_iteration(&self) -> bool {
        self.new_connection == Some(NewConnection::Iteration)
    }

    /// The closed model's total concurrency, or the open model's in-flight limit.
    pub fn concurrency(&self) -> usize {
        match self.model {
            ModelSpec::Closed { connections, streams, .. } => connections * streams,
            ModelSpec::Open { max_in_flight, .. } => max_in_flight,
        }
    }

    /// The measured duration, when the run is bounded by time.
    pub fn duration(&self) -> Option<Duration> {
        match self.bound {
            Bound::Duration(d) => Some(d),
            Bound::Requests(_) => None,
        }
    }
}
