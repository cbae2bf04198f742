//! [`LoadOptions`]: the options of a load run, as `stackbench load` flags
//! (clap) and as a plan's TOML table (serde, keys spelled like the long flags,
//! unknown keys refused), and their validation into a [`LoadSpec`] with one
//! clear message per mistake.

use std::time::Duration;

use serde::Deserialize;

use crate::spec::{LoadSpec, SearchSpec, Target};
pub use crate::spec_error::SpecError;
use crate::spec_error::{conflict, invalid};
pub use crate::target::parse_target;
use crate::threshold::Threshold;
use crate::values::{CheckEvery, CpuList, Dur, Percent, Shard, Stages, WallTime, WarmupArg};

mod build;
mod file;
mod settings;

/// Default measured duration when neither `-d` nor `-n` nor `--stages` is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);
/// Default `--timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default `--max-warmup`: the longest `--warmup auto` waits for steady state.
pub const DEFAULT_MAX_WARMUP: Duration = Duration::from_secs(30);
/// Default `-c`.
pub const DEFAULT_CONNECTIONS: usize = 10;
/// Default `--max-in-flight` of the open model.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 1000;

/// The upper bounds of every count and size, refused before anything starts
/// (a mistyped `-c 4294967295` must not run until the OOM killer comes).
pub mod limits {
    use std::time::Duration;

    /// `-c`: connections.
    pub const CONNECTIONS: usize = 100_000;
    /// `--streams` per connection.
    pub const STREAMS: usize = 1_000;
    /// Closed model: virtual users (connections × streams, or a stage's target).
    pub const USERS: usize = 100_000;
    /// `--rate` and an open-model stage's target, requests per second.
    pub const RATE: f64 = 10_000_000.0;
    /// `--max-in-flight`.
    pub const IN_FLIGHT: usize = 1_000_000;
    /// `-n`: requests.
    pub const REQUESTS: u64 = 1_000_000_000_000;
    /// `--threads`.
    pub const THREADS: usize = 1_024;
    /// `-d`, `--warmup`, `--ramp-up` and the stages together.
    pub const DURATION: Duration = Duration::from_hours(24);
    /// `--timeout` and `--think`.
    pub const WAIT: Duration = Duration::from_hours(1);
    /// `-b`: the request body.
    pub const BODY_BYTES: u64 = 64 * 1024 * 1024;
    /// `-H`: headers.
    pub const HEADERS: usize = 100;
    /// `--timer-slack`.
    pub const TIMER_SLACK: Duration = Duration::from_millis(100);
}

/// Options of one load run. Every field is optional; [`LoadOptions::to_spec`]
/// applies the defaults and checks the combination.
#[derive(Debug, Clone, Default, PartialEq, clap::Args, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
#[allow(clippy::struct_excessive_bools)] // each is an on/off flag of the command line
pub struct LoadOptions {
    /// Closed model: connections, each carrying --streams virtual users (send, wait, think, repeat).
    /// Open model: connections opened at the start; given, also the most HTTP/1.1 uses (a due
    /// request waits for a free one). [default: 10, opening more as needed]
    #[arg(short = 'c', long, value_name = "N", help_heading = "Load model")]
    pub connections: Option<usize>,
    /// Measured duration, e.g. 30s, 5m. [default: 10s, or the stages' total]
    #[arg(short = 'd', long, value_name = "DUR", help_heading = "Load model")]
    pub duration: Option<Dur>,
    /// Measured request count instead of a duration.
    #[arg(short = 'n', long, value_name = "N", help_heading = "Load model")]
    pub requests: Option<u64>,
    /// Open model: requests per second, due on a fixed schedule whatever the answers do;
    /// latency counts from the intended send time (no coordinated omission).
    #[arg(long, value_name = "R", help_heading = "Load model")]
    pub rate: Option<f64>,
    /// Open model: most requests outstanding at once; a request due beyond it is counted `late`. [default: 1000]
    #[arg(long, value_name = "N", help_heading = "Load model")]
    pub max_in_flight: Option<usize>,
    /// Open model: start a due request up to this late so that one wake-up starts every
    /// request due in the same window (wake-ups fall on a grid of this step), e.g. 200us.
    /// The wait is part of each request's latency, not hidden. [default: 0, each on time]
    #[arg(long, value_name = "DUR", help_heading = "Load model")]
    pub timer_slack: Option<Dur>,
    /// Closed model: pause after each answer, e.g. 100ms.
    #[arg(long, value_name = "DUR", help_heading = "Load model")]
    pub think: Option<Dur>,
    /// Closed model: start the users linearly over this time.
    #[arg(long, value_name = "DUR", help_heading = "Load model")]
    pub ramp_up: Option<Dur>,
    /// Move the load linearly through DUR:TARGET steps (users, or req/s with --rate),
    /// e.g. 30s:100,2m:100,10s:0. They start with the warm-up.
    #[arg(long, value_name = "LIST", help_heading = "Load model")]
    pub stages: Option<Stages>,
    /// Run the same load first, kept apart from the measured window, e.g. 10s; `auto` ends it
    /// once its per-second rate and median latency stop drifting (a sliding-window slope
    /// test, docs/design.md "Steady state, checked"), at most --max-warmup.
    #[arg(long, value_name = "DUR|auto", help_heading = "Load model")]
    pub warmup: Option<WarmupArg>,
    /// With --warmup auto: the longest warm-up; a load not steady by then is measured anyway,
    /// and its record says it never became steady. [default: 30s]
    #[arg(long, value_name = "DUR", help_heading = "Load model")]
    pub max_warmup: Option<Dur>,
    /// A request without an answer after this long is an error `timeout`. [default: 10s]
    #[arg(long, value_name = "DUR", help_heading = "Load model")]
    pub timeout: Option<Dur>,

    /// HTTP/2 over cleartext with prior knowledge (h2c).
    #[arg(long, help_heading = "Transport")]
    pub http2: bool,
    /// gRPC unary calls over h2c (implied by --scenario bubble-sort).
    #[arg(long, help_heading = "Transport")]
    pub grpc: bool,
    /// h2c/gRPC, closed model: concurrent streams per connection. [default: 1]
    #[arg(long, value_name = "M", help_heading = "Transport")]
    pub streams: Option<usize>,
    /// A new connection for every request (HTTP/1.1 sends `Connection: close`); the same as
    /// --new-connection request.
    #[arg(long, help_heading = "Transport")]
    pub no_keepalive: bool,
    /// Give up connections for new ones: `request` (as --no-keepalive), or `iteration`: each
    /// iteration of a scenario file opens one, its requests share it, and its last HTTP/1.1
    /// request says `Connection: close` (k6's noVUConnectionReuse). [default: keep-alive]
    #[arg(long, value_name = "request|iteration", help_heading = "Transport")]
    pub new_connection: Option<crate::spec::NewConnection>,
    /// Connect to ADDR for HOST:PORT (curl's syntax; repeatable): Host, SNI and the
    /// certificate's name stay the URL's.
    #[arg(long, value_name = "HOST:PORT:ADDR", help_heading = "Transport")]
    pub resolve: Vec<String>,
    /// Connect to HOST2:PORT2 for HOST1:PORT1 (curl's syntax, any part may be empty;
    /// repeatable): Host, SNI and the certificate's name stay the URL's.
    #[arg(long, value_name = "HOST1:PORT1:HOST2:PORT2", help_heading = "Transport")]
    pub connect_to: Vec<String>,

    /// https: trust the certificates of this PEM file instead of the system's roots.
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    pub cacert: Option<std::path::PathBuf>,
    /// https: do not check the server's certificate (its name, issuer and dates); the
    /// handshake's signatures are still verified.
    #[arg(short = 'k', long, help_heading = "TLS")]
    pub insecure: bool,
    /// https: a client certificate (PEM) for mutual TLS, with --key.
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    pub cert: Option<std::path::PathBuf>,
    /// https: the private key of --cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    pub key: Option<std::path::PathBuf>,
    /// https: offer no session resumption; every new connection makes a full handshake.
    #[arg(long, help_heading = "TLS")]
    pub no_resume: bool,
    /// https: the key-exchange groups to offer, in order of preference, e.g. X25519 or
    /// X25519MLKEM768,X25519 (also secp256r1, secp384r1, SECP256R1MLKEM768, MLKEM768,
    /// MLKEM1024). [default: rustls's, X25519MLKEM768, secp384r1, X25519, secp256r1]
    #[arg(long, value_name = "LIST", value_delimiter = ',', help_heading = "TLS")]
    pub tls_groups: Vec<String>,
    /// https: offer only this TLS version, 1.2 or 1.3. [default: both]
    #[arg(long, value_name = "1.2|1.3", help_heading = "TLS")]
    pub tls_version: Option<String>,

    /// HTTP method. [default: GET, or POST with a body]
    #[arg(short = 'm', long, value_name = "METHOD", help_heading = "Request")]
    pub method: Option<String>,
    /// A request header, `Name: value`; repeat for more.
    #[arg(short = 'H', long = "header", value_name = "HEADER", help_heading = "Request")]
    pub header: Vec<String>,
    /// Request body: a string, or @FILE to read it from a file.
    #[arg(short = 'b', long, value_name = "BODY|@FILE", help_heading = "Request")]
    pub body: Option<String>,
    /// Send a built-in scenario's requests and check the answers (its file, compiled in:
    /// scenarios/builtin/NAME.toml). The URL names the server's root; db-read's ends /db/DRIVER.
    #[arg(long, value_name = "NAME", help_heading = "Request",
          value_parser = ["event-log", "dummy", "db-read", "bubble-sort"])]
    pub scenario: Option<String>,
    /// Send a scenario file's requests (a `.hurl` file, or a `.toml` scenario of flows):
    /// each user (or each arrival, with --rate) runs one flow's requests in order,
    /// captures feeding the requests after. docs/scenarios.md, "Write your own scenario".
    #[arg(long, value_name = "FILE", help_heading = "Request", conflicts_with = "scenario")]
    #[serde(skip)]
    pub scenario_file: Option<std::path::PathBuf>,
    /// A variable of the scenario file, NAME=VALUE (repeatable).
    #[arg(
        long = "variable",
        value_name = "NAME=VALUE",
        help_heading = "Request",
        requires = "scenario_file"
    )]
    #[serde(skip)]
    pub variable: Vec<String>,
    /// Scenario files: the directory every file a scenario names (bodies, flows, rows, its
    /// .proto) must be under; a path, `..` or link leading out of it is refused. A `.hurl`
    /// file's own names start there, as in Hurl. [default: the scenario file's own directory]
    #[arg(long, value_name = "DIR", help_heading = "Request", requires = "scenario_file")]
    #[serde(skip)]
    pub file_root: Option<std::path::PathBuf>,
    /// Scenario files: the most bytes the scenario file, and each file it names, may have.
    /// [default: 64MiB]
    #[arg(long, value_name = "SIZE", help_heading = "Request", requires = "scenario_file")]
    #[serde(skip)]
    pub max_file_size: Option<stackbench_record::ByteSize>,
    /// Scenario files and built-ins: the longest value a capture may take; a longer one fails
    /// its capture (`check`) and ends its iteration. [default: 1MiB]
    #[arg(long, value_name = "SIZE", help_heading = "Request")]
    #[serde(skip)]
    pub max_capture: Option<stackbench_record::ByteSize>,
    /// The scenario file's variable that stands for the target (its value becomes the URL);
    /// default: `base_url` when the file uses it, else the file's first origin is the target.
    #[arg(long, value_name = "NAME", help_heading = "Request", requires = "scenario_file")]
    #[serde(skip)]
    pub base_variable: Option<String>,
    /// Send the scenario file's requests to FROM (an origin it names, http://host:port) to URL
    /// instead (repeatable). Without a target URL, the file runs as written, less these.
    #[arg(long = "origin", value_name = "FROM=URL", help_heading = "Request", requires = "scenario_file")]
    #[serde(skip)]
    pub origin: Vec<String>,
    /// Keep each user's cookie jar across its iterations (default: emptied when each
    /// iteration begins, as k6 does); a scenario file can say `keep_cookies = true`.
    #[arg(long, help_heading = "Request", requires = "scenario_file")]
    #[serde(skip)]
    pub keep_cookies: bool,
    /// gRPC to any unary method: the .proto that declares it (compiled at start, no protoc
    /// needed; imports resolve from its directory). Goes with --call and --data.
    #[arg(long, value_name = "FILE", help_heading = "Request")]
    pub proto: Option<std::path::PathBuf>,
    /// With --proto: the method, package.Service/Method (e.g. sort.v1.SortService/BubbleSort).
    #[arg(long, value_name = "METHOD", help_heading = "Request")]
    pub call: Option<String>,
    /// With --proto: the request message as JSON (proto3 JSON mapping), or @FILE. [default: {}]
    #[arg(long, value_name = "JSON|@FILE", help_heading = "Request")]
    pub data: Option<String>,
    /// Seed of the scenario's drawn variables. [default: 1]
    #[arg(long, value_name = "N", help_heading = "Request")]
    pub seed: Option<u64>,
    /// Check every K-th answer against the scenario (0 = none); `auto` checks every answer
    /// while that costs under 5% of the generator's time. [default: auto]
    #[arg(long, value_name = "K|auto", help_heading = "Request")]
    pub check_every: Option<CheckEvery>,

    /// Generator worker threads. [default: one per CPU in --cpus, or per CPU available]
    #[arg(long, value_name = "N", help_heading = "Generator")]
    pub threads: Option<usize>,
    /// Pin the worker threads to these CPUs, e.g. 1 or 2-3.
    #[arg(long, value_name = "LIST", help_heading = "Generator")]
    pub cpus: Option<CpuList>,
    /// Run the I-th of N equal slices of this load, e.g. 2/3: shards on N generators together
    /// make the load one would (the open model's schedule interleaved, the users split); put
    /// their records together with `stackbench merge`.
    #[arg(long, value_name = "I/N", help_heading = "Generator")]
    pub shard: Option<Shard>,
    /// Wait until this wall-clock time to begin (RFC 3339, like 2026-12-01T10:00:05Z, or Unix
    /// milliseconds), so shards start together.
    #[arg(long, value_name = "TIME", help_heading = "Generator")]
    pub start_at: Option<WallTime>,
    /// How the sockets are driven: epoll (a send and a recv per request), io_uring (each
    /// round's requests of every connection in one syscall; no cheaper on the kernels
    /// measured, docs/benchmarks.md; refused where the kernel does not allow it), or auto
    /// (io_uring where it is allowed, else epoll; the summary says which ran). [default: epoll]
    #[arg(long, value_name = "epoll|io_uring|auto", help_heading = "Generator")]
    pub io: Option<crate::spec::Io>,

    /// Pass/fail criterion, e.g. 'p99<50ms', 'errors<1%', 'rps>1000'; repeat for more.
    /// A failed one makes the exit code 99.
    #[arg(long = "threshold", value_name = "EXPR", help_heading = "Output")]
    pub threshold: Vec<Threshold>,

    /// Find the highest rate the target sustains while every --slo holds: open-model steps,
    /// doubled from a low start until one breaks, bisected to --precision, the best confirmed
    /// by one more step. Exit code 99 when not even the lowest rate met the objectives.
    #[arg(long, help_heading = "Capacity search")]
    pub find_max: bool,
    /// An objective of the search, e.g. 'p99<10ms' or 'errors<0.1%'; repeat for more.
    #[arg(long = "slo", value_name = "EXPR", help_heading = "Capacity search")]
    pub slo: Vec<Threshold>,
    /// The measured time of each step (after a settle of --warmup, default 1s). [default: 5s]
    #[arg(long, value_name = "DUR", help_heading = "Capacity search")]
    pub step: Option<Dur>,
    /// The highest rate to try, req/s.
    #[arg(long, value_name = "R", help_heading = "Capacity search")]
    pub max_rate: Option<f64>,
    /// The first rate, req/s. [default: half of what a closed-model probe of -c users reaches]
    #[arg(long, value_name = "R", help_heading = "Capacity search")]
    pub start_rate: Option<f64>,
    /// Bisect until the bracket is this narrow, e.g. 5%. [default: 5%]
    #[arg(long, value_name = "P", help_heading = "Capacity search")]
    pub precision: Option<Percent>,
}

/// io_uring only where this process can use it (checked once); `auto` resolved to the one
/// that will run.
fn check_io(io: crate::spec::Io) -> Result<crate::spec::Io, SpecError> {
    use crate::spec::Io;
    static AVAILABLE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let available = || AVAILABLE.get_or_init(crate::uring::available);
    match io {
        Io::Uring => match available() {
            Ok(()) => Ok(Io::Uring),
            Err(why) => Err(invalid("--io", format!("io_uring: {why}; use --io epoll or --io auto"))),
        },
        Io::Auto => Ok(if available().is_ok() { Io::Uring } else { Io::Epoll }),
        Io::Epoll => Ok(Io::Epoll),
    }
}

impl LoadOptions {
    /// The `--proto`/`--call`/`--data` call, checked against the other options.
    fn dynamic_call(&self, target: &Target) -> Result<Option<crate::grpc_call::Call>, SpecError> {
        let Some(proto) = &self.proto else {
            if self.call.is_some() {
                return Err(invalid("--call", "needs --proto FILE, the .proto that declares the method"));
            }
            if self.data.is_some() {
                return Err(invalid(
                    "--data",
                    "needs --proto FILE and --call; for a plain HTTP body use -b/--body",
                ));
            }
            return Ok(None);
        };
        let Some(call) = &self.call else {
            return Err(invalid("--proto", "needs --call package.Service/Method"));
        };
        if self.scenario.is_some() {
            return Err(conflict("--proto", "--scenario", "the scenario builds its own requests"));
        }
        if self.method.is_some() || self.body.is_some() {
            return Err(conflict("--proto", "-m/-b", "a gRPC call is a POST of the --data message"));
        }
        if self.http2 {
            return Err(conflict("--proto", "--http2", "--proto calls gRPC, which already runs over h2c"));
        }
        if target.path != "/" {
            return Err(invalid(
                "--call",
                format!(
                    "sets the path; give the URL without one (http://{}, not …{})",
                    target.authority, target.path
                ),
            ));
        }
        Ok(Some(crate::grpc_call::prepare(proto, call, self.data.as_deref())?))
    }
}

impl LoadOptions {
    /// Applies the defaults and checks the options against `url`.
    pub fn to_spec(&self, url: &str) -> Result<LoadSpec, SpecError> {
        if !self.find_max {
            for (flag, set) in [
                ("--slo", !self.slo.is_empty()),
                ("--step", self.step.is_some()),
                ("--max-rate", self.max_rate.is_some()),
                ("--start-rate", self.start_rate.is_some()),
                ("--precision", self.precision.is_some()),
            ] {
                if set {
                    return Err(invalid(flag, "belongs to the capacity search; add --find-max"));
                }
            }
            return self.plain_spec(url);
        }
        if self.slo.is_empty() {
            return Err(invalid("--find-max", "needs at least one objective, like --slo 'p99<10ms'"));
        }
        for (flag, set, why) in [
            ("--rate", self.rate.is_some(), "the search chooses the rates"),
            ("-d/--duration", self.duration.is_some(), "each step lasts --step"),
            ("-n/--requests", self.requests.is_some(), "each step lasts --step"),
            ("--stages", self.stages.is_some(), "the search chooses the rates"),
            ("--think", self.think.is_some(), "the search runs the open model"),
            ("--ramp-up", self.ramp_up.is_some(), "the search runs the open model"),
            ("--warmup auto", self.warmup == Some(WarmupArg::Auto), "each step settles for a fixed --warmup"),
        ] {
            if set {
                return Err(SpecError::Conflict { a: "--find-max", b: flag, why });
            }
        }
        let step = self.step.map_or(Duration::from_secs(5), |d| d.0);
        if step < Duration::from_millis(200) || step > limits::DURATION {
            return Err(invalid("--step", "must be from 200ms to 24h"));
        }
        for (flag, r) in [("--max-rate", self.max_rate), ("--start-rate", self.start_rate)] {
            if let Some(r) = r.filter(|r| !(r.is_finite() && *r >= 1.0 && *r <= limits::RATE)) {
                return Err(invalid(flag, format!("{r} is not a rate from 1 to {} req/s", limits::RATE)));
            }
        }
        if let (Some(s), Some(m)) = (self.start_rate, self.max_rate)
            && s > m
        {
            return Err(invalid("--start-rate", format!("{s} is above --max-rate {m}")));
        }
        // Each step is an open-model run at its rate; the first is checked here.
        let one_step = LoadOptions {
            find_max: false,
            slo: Vec::new(),
            step: None,
            max_rate: None,
            start_rate: None,
            precision: None,
            rate: Some(self.start_rate.unwrap_or(1.0)),
            duration: Some(Dur(step)),
            warmup: Some(self.warmup.unwrap_or(WarmupArg::Fixed(Dur(Duration::from_secs(1))))),
            ..self.clone()
        };
        let mut spec = one_step.plain_spec(url)?;
        spec.search = Some(SearchSpec {
            slo: self.slo.clone(),
            step,
            max_rate: self.max_rate,
            start_rate: self.start_rate,
            precision: self.precision.map_or(0.05, |p| p.0),
            probe_users: self.connections.unwrap_or(64),
            bracket: None,
        });
        Ok(spec)
    }
}

/// The body of `-b @FILE`, refused past [`limits::BODY_BYTES`]: by its size before it is
/// read, and by what is read (at most one byte past the cap), since a device or a pipe
/// (`/dev/zero`, `<(yes)`) has no size to go by.
fn read_body(path: &str) -> Result<Vec<u8>, SpecError> {
    use std::io::Read as _;
    let fail = |why: String| SpecError::BodyFile { path: path.to_owned(), why };
    let len = std::fs::metadata(path).map_err(|e| fail(e.to_string()))?.len();
    if len > limits::BODY_BYTES {
        return Err(fail(format!("it has {len} bytes; a body is at most {} bytes", limits::BODY_BYTES)));
    }
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let mut body = Vec::new();
    file.take(limits::BODY_BYTES + 1).read_to_end(&mut body).map_err(|e| fail(e.to_string()))?;
    if body.len() as u64 > limits::BODY_BYTES {
        return Err(fail(format!(
            "it holds more than {} bytes, the most a body may have",
            limits::BODY_BYTES
        )));
    }
    Ok(body)
}

/// `Name: value` into a header pair; the framing headers are the engine's.
fn parse_header(h: &str) -> Result<(http::HeaderName, http::HeaderValue), SpecError> {
    let (name, value) =
        h.split_once(':').ok_or_else(|| invalid("-H/--header", format!("{h:?} is not `Name: value`")))?;
    let name = http::HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| invalid("-H/--header", format!("{:?} is not a header name", name.trim())))?;
    if matches!(name.as_str(), "content-length" | "transfer-encoding" | "connection" | "host") {
        return Err(invalid(
            "-H/--header",
            format!("{name} is set by the engine (from the URL, the body and --no-keepalive)"),
        ));
    }
    let value = http::HeaderValue::from_str(value.trim()).map_err(|_| {
        invalid("-H/--header", format!("the value of {name} has characters a header cannot carry"))
    })?;
    Ok((name, value))
}

#[cfg(test)]
mod tests;
