//! [`LoadOptions::plain_spec`]: the spec of a run that is not a search, checked in steps
//! (what is sent, for how long, when, on which threads), each refusing its first mistake in
//! flag order with one clear message.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::{
    DEFAULT_CONNECTIONS, DEFAULT_DURATION, DEFAULT_MAX_IN_FLIGHT, DEFAULT_TIMEOUT, LoadOptions, check_io,
    file, limits, parse_header, parse_target, read_body,
};
use crate::flow::FileSource;
use crate::io_mode::Io;
use crate::route::Route;
use crate::spec::{Bound, LoadSpec, ModelSpec, NewConnection, RequestSource, Target, Transport};
use crate::spec_error::{SpecError, conflict, invalid};
use crate::tls::TlsSpec;
use crate::values::{CheckEvery, Dur, StageSpec};

/// What a run sends, and to where.
struct Sent {
    target: Target,
    file: Option<Arc<FileSource>>,
    transport: Transport,
    route: Route,
    tls: Option<Arc<TlsSpec>>,
    new_connection: Option<NewConnection>,
    requests: RequestSource,
}

/// How long a run lasts.
struct Length {
    stages: Vec<StageSpec>,
    warmup: Duration,
    auto_warmup: bool,
    bound: Bound,
    timeout: Duration,
}

impl LoadOptions {
    /// The spec of a run that is not a search.
    pub(super) fn plain_spec(&self, url: &str) -> Result<LoadSpec, SpecError> {
        let Sent { target, file, transport, route, tls, new_connection, requests } = self.sent(url)?;
        let Length { mut stages, warmup, auto_warmup, bound, timeout } = self.length()?;
        let model = self.model(transport, &mut stages)?;
        let (threads, cpus) = self.threads(model)?;
        let check_every = match (&self.check_every, file.is_some()) {
            (_, false) => CheckEvery::Every(0),
            (Some(c), true) => *c,
            (None, true) => CheckEvery::Auto,
        };
        let io = self.io_mode(tls.is_some())?;
        let spec = LoadSpec {
            target,
            transport,
            model,
            stages,
            bound,
            warmup,
            auto_warmup,
            timeout,
            threads,
            cpus,
            new_connection,
            requests,
            check_every,
            thresholds: self.threshold.clone(),
            progress: false,
            hlog: None,
            search: None,
            shard: None,
            start_at: self.start_at.map(|t| t.0),
            io,
            route,
            tls,
            timer_slack: self.timer_slack()?,
        };
        match self.shard {
            Some(shard) => crate::shard::apply(spec, shard),
            None => Ok(spec),
        }
    }

    /// What is sent: the target (the URL, or a scenario file's first origin when there is
    /// none), the transport, TLS and routes, and the requests (a file's, a gRPC call, or one
    /// fixed request).
    fn sent(&self, url: &str) -> Result<Sent, SpecError> {
        // Without a URL, a scenario file runs as written: at the server of its first origin.
        let as_written = url.trim().is_empty();
        let url = if as_written { file::written_target(self)? } else { url.to_owned() };
        let mut target = parse_target(&url)?;
        let call = self.dynamic_call(&target)?;
        if let Some(call) = &call {
            target.path.clone_from(&call.path);
        }
        let file = file::from_options(self, &target, as_written)?;
        // A file's own TLS and route options (alike on every request) apply to the whole run.
        let reach = file.as_ref().map(|f| f.reach.clone()).unwrap_or_default();
        let route =
            Route::new(&self.resolve, &self.connect_to)?.with_first(&reach.resolve, &reach.connect_to)?;
        let transport = match (self.grpc || call.is_some(), self.http2) {
            (true, _) => Transport::Grpc,
            (false, true) => Transport::H2c,
            (false, false) => Transport::Http1,
        };
        // A scenario says its protocol (its file's; `--http2` may carry a built-in's HTTP/1.1).
        let transport = file.as_ref().map_or(transport, |f| file::transport(f));
        let tls = self.tls(&target, transport, &reach)?;
        let new_connection = self.reuse(file.is_some())?;
        if transport == Transport::Grpc && file.is_none() && call.is_none() {
            return Err(invalid(
                "--grpc",
                "needs --scenario bubble-sort (the built-in gRPC service), or --proto FILE --call pkg.Service/Method",
            ));
        }
        if self.header.len() > limits::HEADERS {
            return Err(invalid(
                "-H/--header",
                format!("at most {} headers, got {}", limits::HEADERS, self.header.len()),
            ));
        }
        let mut headers = self.header.iter().map(|h| parse_header(h)).collect::<Result<Vec<_>, _>>()?;
        let requests = if let Some(file) = file.clone() {
            RequestSource::File(file)
        } else if let Some(call) = call {
            headers.push((http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/grpc")));
            RequestSource::Fixed { method: http::Method::POST, headers, body: call.message }
        } else {
            self.fixed_request(headers)?
        };
        Ok(Sent { target, file, transport, route, tls, new_connection, requests })
    }

    /// The one request of a run without a scenario: `-m`, `-H` (`headers`) and `-b`.
    fn fixed_request(
        &self,
        headers: Vec<(http::HeaderName, http::HeaderValue)>,
    ) -> Result<RequestSource, SpecError> {
        if matches!(self.check_every, Some(CheckEvery::Every(k)) if k > 0) {
            return Err(invalid(
                "--check-every",
                "needs --scenario or --scenario-file (there is nothing to check against)",
            ));
        }
        let body = match self.body.as_deref() {
            None => Bytes::new(),
            Some(b) => match b.strip_prefix('@') {
                Some(path) => Bytes::from(read_body(path)?),
                None => Bytes::from(b.to_owned()),
            },
        };
        let method = match self.method.as_deref() {
            Some(m) => http::Method::from_bytes(m.trim().to_ascii_uppercase().as_bytes())
                .map_err(|_| invalid("-m/--method", format!("{m:?} is not an HTTP method")))?,
            None if body.is_empty() => http::Method::GET,
            None => http::Method::POST,
        };
        Ok(RequestSource::Fixed { method, headers, body })
    }

    /// How long: the stages, the warm-up, the measured window's bound (a time or a count), the
    /// timeout, each within its limit.
    fn length(&self) -> Result<Length, SpecError> {
        let stages = self.stages.as_ref().map(|s| s.0.clone()).unwrap_or_default();
        let stage_total: Duration = stages.iter().map(|s| s.duration).sum();
        let (warmup, auto_warmup) = self.warmup()?;
        let bound = match (self.duration, self.requests) {
            (Some(_), Some(_)) => {
                return Err(conflict("-d/--duration", "-n/--requests", "bound the run by time or by count"));
            }
            (Some(d), None) if d.0.is_zero() => {
                return Err(invalid("-d/--duration", "must be longer than 0s"));
            }
            (Some(d), None) => Bound::Duration(d.0),
            (None, Some(0)) => return Err(invalid("-n/--requests", "must be at least 1")),
            (None, Some(n)) if n > limits::REQUESTS => {
                return Err(invalid("-n/--requests", format!("at most {}, got {n}", limits::REQUESTS)));
            }
            (None, Some(n)) => Bound::Requests(n),
            (None, None) if stages.is_empty() => Bound::Duration(DEFAULT_DURATION),
            (None, None) if stage_total <= warmup => {
                return Err(invalid(
                    "--stages",
                    format!(
                        "the stages last {}, no longer than the warm-up ({}): nothing would be measured",
                        Dur(stage_total),
                        Dur(warmup)
                    ),
                ));
            }
            (None, None) => Bound::Duration(stage_total.saturating_sub(warmup)),
        };
        let timeout = self.timeout.map_or(DEFAULT_TIMEOUT, |d| d.0);
        if timeout.is_zero() {
            return Err(invalid("--timeout", "must be longer than 0s"));
        }
        for (flag, d, max) in [
            ("-d/--duration", self.duration.map(|d| d.0), limits::DURATION),
            ("--warmup", Some(warmup), limits::DURATION),
            ("--ramp-up", self.ramp_up.map(|d| d.0), limits::DURATION),
            ("--stages", Some(stage_total), limits::DURATION),
            ("--timeout", Some(timeout), limits::WAIT),
            ("--think", self.think.map(|d| d.0), limits::WAIT),
        ] {
            if let Some(d) = d.filter(|d| *d > max) {
                let hours = max.as_secs() / 3600;
                return Err(invalid(flag, format!("at most {hours}h, got {}s", d.as_secs())));
            }
        }
        Ok(Length { stages, warmup, auto_warmup, bound, timeout })
    }

    /// When requests are sent over `transport`: the open model at a rate, or the closed
    /// model's users (a closed ramp-up becomes a first stage of `stages`).
    fn model(&self, transport: Transport, stages: &mut Vec<StageSpec>) -> Result<ModelSpec, SpecError> {
        let multiplexed = transport != Transport::Http1;
        let streams = self.streams.unwrap_or(1);
        if streams == 0 {
            return Err(invalid("--streams", "must be at least 1"));
        }
        if streams > limits::STREAMS {
            return Err(invalid("--streams", format!("at most {}, got {streams}", limits::STREAMS)));
        }
        if let Some(c) = self.connections.filter(|&c| c > limits::CONNECTIONS) {
            return Err(invalid("-c/--connections", format!("at most {}, got {c}", limits::CONNECTIONS)));
        }
        if streams > 1 && !multiplexed {
            return Err(invalid(
                "--streams",
                "needs --http2 or --grpc (HTTP/1.1 carries one request at a time per connection)",
            ));
        }
        if self.connections == Some(0) {
            return Err(invalid("-c/--connections", "must be at least 1"));
        }
        match self.rate {
            Some(rate) => self.open_model(rate, (multiplexed, streams), stages),
            None => self.closed_model(streams, stages),
        }
    }

    /// The open model at `rate` (and the stages' rates) over connections that carry several
    /// requests at once or not (`multiplexed`), `streams` as asked.
    fn open_model(
        &self,
        rate: f64,
        (multiplexed, streams): (bool, usize),
        stages: &[StageSpec],
    ) -> Result<ModelSpec, SpecError> {
        if rate > limits::RATE {
            return Err(invalid(
                "--rate",
                format!("at most {} requests per second, got {rate}", limits::RATE),
            ));
        }
        if let Some(s) = stages.iter().find(|s| s.target > limits::RATE) {
            return Err(invalid(
                "--stages",
                format!("a stage's rate is at most {} requests per second, got {}", limits::RATE, s.target),
            ));
        }
        if !rate.is_finite() || rate < 0.0 || (rate == 0.0 && stages.is_empty()) {
            return Err(invalid(
                "--rate",
                format!("{rate} is not a rate; give requests per second greater than 0 (like --rate 1000)"),
            ));
        }
        if self.think.is_some() {
            return Err(conflict("--think", "--rate", "think time belongs to the closed model"));
        }
        if self.ramp_up.is_some() {
            return Err(conflict("--ramp-up", "--rate", "ramp the open model with --stages 10s:RATE,..."));
        }
        if streams > 1 {
            return Err(conflict(
                "--streams",
                "--rate",
                "the open model multiplexes every due request; use -c and --max-in-flight",
            ));
        }
        let max_in_flight = self.max_in_flight.unwrap_or(DEFAULT_MAX_IN_FLIGHT);
        if max_in_flight == 0 {
            return Err(invalid("--max-in-flight", "must be at least 1"));
        }
        if max_in_flight > limits::IN_FLIGHT {
            return Err(invalid(
                "--max-in-flight",
                format!("at most {}, got {max_in_flight}", limits::IN_FLIGHT),
            ));
        }
        let peak = stages.iter().map(|s| s.target).fold(rate, f64::max);
        if peak <= 0.0 {
            return Err(invalid("--stages", "every stage has a rate of 0: nothing would be sent"));
        }
        let connections = self.connections.unwrap_or(if multiplexed { 1 } else { DEFAULT_CONNECTIONS });
        // An explicit -c caps HTTP/1.1 connections (wrk2's fixed set); without it they grow
        // with demand up to the in-flight limit (k6's arrival-rate executors).
        let max_connections = self.connections.unwrap_or(max_in_flight).min(max_in_flight);
        Ok(ModelSpec::Open {
            rate,
            max_in_flight,
            connections: connections.min(max_in_flight),
            max_connections,
        })
    }

    /// The closed model: `-c` connections of `streams` users each, or as many as the
    /// stages' peak needs; a ramp-up becomes a first stage.
    fn closed_model(&self, streams: usize, stages: &mut Vec<StageSpec>) -> Result<ModelSpec, SpecError> {
        if self.max_in_flight.is_some() {
            return Err(invalid("--max-in-flight", "applies to the open model; add --rate"));
        }
        let think = self.think.map_or(Duration::ZERO, |d| d.0);
        let connections = if stages.is_empty() {
            let c = self.connections.unwrap_or(DEFAULT_CONNECTIONS);
            if let Some(r) = self.ramp_up.filter(|r| !r.0.is_zero()) {
                stages.push(StageSpec { duration: r.0, target: (c * streams) as f64 });
            }
            c
        } else {
            if self.ramp_up.is_some() {
                return Err(conflict("--ramp-up", "--stages", "a ramp-up is a first stage: 1s:100,..."));
            }
            if self.connections.is_some() {
                return Err(conflict(
                    "-c/--connections",
                    "--stages",
                    "in the closed model the stages' targets are the users",
                ));
            }
            let peak = stages.iter().map(|s| s.target).fold(0.0, f64::max).ceil();
            if peak > limits::USERS as f64 {
                return Err(invalid(
                    "--stages",
                    format!("a stage's target is at most {} users, got {peak}", limits::USERS),
                ));
            }
            let peak = peak as usize;
            if peak == 0 {
                return Err(invalid("--stages", "every stage has 0 users: nothing would be sent"));
            }
            peak.div_ceil(streams)
        };
        if connections * streams > limits::USERS {
            return Err(invalid(
                if self.stages.is_some() { "--stages" } else { "--streams" },
                format!(
                    "at most {} virtual users (connections × streams), got {}",
                    limits::USERS,
                    connections * streams
                ),
            ));
        }
        Ok(ModelSpec::Closed {
            connections,
            streams,
            think,
            ramp_up: self.ramp_up.map_or(Duration::ZERO, |d| d.0),
        })
    }

    /// The generator's threads and the CPUs they are pinned to; a closed model has no more
    /// threads than connections.
    fn threads(&self, model: ModelSpec) -> Result<(usize, Option<Vec<usize>>), SpecError> {
        let cpus = self.cpus.as_ref().map(|c| c.0.clone());
        if cpus.as_ref().is_some_and(Vec::is_empty) {
            return Err(invalid("--cpus", "the list is empty"));
        }
        let mut threads = match (self.threads, &cpus) {
            (Some(0), _) => return Err(invalid("--threads", "must be at least 1")),
            (Some(t), _) if t > limits::THREADS => {
                return Err(invalid("--threads", format!("at most {}, got {t}", limits::THREADS)));
            }
            (Some(t), _) => t,
            (None, Some(c)) => c.len(),
            (None, None) => std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        };
        if let ModelSpec::Closed { connections, .. } = model {
            threads = threads.min(connections);
        }
        Ok((threads, cpus))
    }

    /// `--io`, resolved; a TLS run (`tls`) runs on epoll (docs/design.md, "TLS in the load
    /// engine").
    fn io_mode(&self, tls: bool) -> Result<Io, SpecError> {
        Ok(match check_io(self.io.unwrap_or_default())? {
            Io::Uring if tls && self.io == Some(Io::Auto) => Io::Epoll,
            Io::Uring if tls => {
                return Err(invalid(
                    "--io",
                    "io_uring does not carry TLS: https:// runs on epoll (--io epoll or auto; docs/design.md, \"TLS in the load engine\")",
                ));
            }
            io => io,
        })
    }
}
