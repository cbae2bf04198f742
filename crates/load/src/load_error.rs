//! [`LoadError`]: why a run could not be done at all (failed requests are data, counted in
//! the record, never an error).

use std::net::SocketAddr;

/// Why a run could not be done at all (failed requests are data, not errors).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot resolve {host}: {why}")]
    Resolve { host: String, why: String },
    #[error("cannot connect to {addr} ({url}): {why}; is the server running?")]
    Unreachable { url: String, addr: SocketAddr, why: String },
    #[error("cannot start worker thread {index}: {why}")]
    Thread { index: usize, why: String },
    #[error(
        "cannot pin a worker thread to CPU {cpu}: {why} (check --cpus against the CPUs this machine has)"
    )]
    Pin { cpu: usize, why: String },
    #[error(
        "--cpus names CPU {cpu}, which this process cannot run on (it may use CPUs {available}); \
         name CPUs from that list"
    )]
    NoSuchCpu { cpu: usize, available: String },
    #[error(
        "{connections} connections need about {need} file descriptors, but this process may open \
         {soft} (hard limit {hard}); raise the limit (`ulimit -n {need}`, and the hard limit in \
         /etc/security/limits.conf or the service's LimitNOFILE) or ask for fewer connections"
    )]
    FileLimit { connections: usize, need: u64, soft: u64, hard: u64 },
    #[error("cannot write the interval log {path}: {why}")]
    Hlog { path: String, why: String },
    #[error("TLS with {url} ({addr}) failed before any load: {why}")]
    Tls { url: String, addr: SocketAddr, why: String },
}
