//! [`Io`], how a worker's sockets are driven (`--io`): part of a [`crate::LoadSpec`], and
//! what a scenario file's requests are written into (lent for epoll, shared for io_uring).

use std::str::FromStr;

/// How a worker's sockets are driven (`--io`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(try_from = "String")]
pub enum Io {
    /// tokio's readiness reactor: a `send` and a `recv` per request.
    #[default]
    Epoll,
    /// A ring per worker (`uring`): every connection's requests of a round in one
    /// `io_uring_enter`. Measured no cheaper on Linux 6.18 (docs/benchmarks.md), so not the
    /// default.
    Uring,
    /// io_uring where this process can use it, else epoll: resolved to one of them before
    /// the run starts, so a record names the one that ran.
    Auto,
}

/// `--io`: `epoll` (the default), `io_uring` or `auto`.
impl FromStr for Io {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "epoll" => Ok(Io::Epoll),
            "io_uring" | "io-uring" | "uring" => Ok(Io::Uring),
            "auto" => Ok(Io::Auto),
            other => Err(format!("{other:?} is not an I/O mode; write epoll, io_uring or auto")),
        }
    }
}

impl TryFrom<String> for Io {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl Io {
    /// The name used in records and summaries (`epoll`, `io_uring`).
    pub const fn name(self) -> &'static str {
        match self {
            Io::Epoll => "epoll",
            Io::Uring => "io_uring",
            Io::Auto => "auto",
        }
    }
}
