//! How a worker opens its connections ([`Dial`]): a TCP connect to the run's address, then,
//! for an `https://` target, the TLS handshake; each timed and counted in the worker's
//! [`Opened`], which the worker hands over with its last second. A cleartext connection is a
//! [`Socket::Tcp`] as before, so the request path of a plain connection does not change.

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use stackbench_record::{
    Connections, ErrorKind, FirstRequests, Latency, TlsRecord, encode_histogram, new_histogram,
};
use tokio::net::TcpStream;

use crate::tally::FirstTally;
use crate::tls::{Connector, Negotiated, TlsSpec, TlsStream};

/// A connection, made.
#[derive(Debug)]
pub enum Socket {
    Tcp(TcpStream),
    Tls(Box<TlsStream>),
}

/// One worker's way to its target.
#[derive(Debug)]
pub struct Dial {
    addr: SocketAddr,
    tls: Option<Connector>,
    opened: RefCell<Opened>,
}

/// What a worker's connections cost: merged over the workers into the record's
/// `connections` (`crate::collect`).
#[derive(Debug, Default)]
pub struct Opened {
    /// TCP connects that succeeded, and their times (µs); the histogram is made at the first.
    pub count: u64,
    pub connect: Option<Histogram<u64>>,
    pub full: u64,
    pub resumed: u64,
    pub failed: u64,
    pub handshake: Option<Histogram<u64>>,
    /// What the first handshake agreed, then each other combination seen.
    pub negotiated: Vec<Negotiated>,
}

impl Opened {
    /// Adds another worker's.
    pub fn merge(&mut self, other: Opened) {
        self.count += other.count;
        self.full += other.full;
        self.resumed += other.resumed;
        self.failed += other.failed;
        for (mine, theirs) in [(&mut self.connect, other.connect), (&mut self.handshake, other.handshake)] {
            match (mine.as_mut(), theirs) {
                (Some(m), Some(t)) => m.add(&t).expect("same bounds"),
                (None, t) => *mine = t,
                (Some(_), None) => {}
            }
        }
        for n in other.negotiated {
            if !self.negotiated.contains(&n) {
                self.negotiated.push(n);
            }
        }
    }
}

fn add_time(h: &mut Option<Histogram<u64>>, took: Duration) {
    h.get_or_insert_with(new_histogram).saturating_record((took.as_micros() as u64).max(1));
}

impl Dial {
    pub fn new(addr: SocketAddr, tls: Option<Connector>) -> Rc<Dial> {
        Rc::new(Dial { addr, tls, opened: RefCell::default() })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Opens a connection: the connect, then the handshake of an `https://` target, with
    /// `shaking` set while the handshake is under way (a caller that gives up on the open
    /// tells a stalled handshake from a connect that never finished by it). Returns the
    /// socket and how long the two took together.
    pub async fn open(&self, shaking: &Cell<bool>) -> Result<(Socket, Duration), ErrorKind> {
        let began = Instant::now();
        let tcp = connect(self.addr).await?;
        let connected = began.elapsed();
        {
            let mut opened = self.opened.borrow_mut();
            opened.count += 1;
            add_time(&mut opened.connect, connected);
        }
        let Some(tls) = &self.tls else { return Ok((Socket::Tcp(tcp), connected)) };
        shaking.set(true);
        let done = tls.handshake(tcp).await;
        shaking.set(false);
        let mut opened = self.opened.borrow_mut();
        match done {
            Ok((stream, shake)) => {
                if shake.resumed {
                    opened.resumed += 1;
                } else {
                    opened.full += 1;
                }
                add_time(&mut opened.handshake, shake.took);
                if !opened.negotiated.contains(&shake.negotiated) {
                    opened.negotiated.push(shake.negotiated);
                }
                Ok((Socket::Tls(Box::new(stream)), began.elapsed()))
            }
            Err(failed) => {
                opened.failed += 1;
                Err(failed.kind)
            }
        }
    }

    /// Counts a handshake given up on (its connection's caller's deadline passed).
    pub fn stalled(&self) {
        self.opened.borrow_mut().failed += 1;
    }

    /// What the connections opened so far cost; the worker's tally starts again.
    pub fn take(&self) -> Opened {
        std::mem::take(&mut *self.opened.borrow_mut())
    }
}

/// Connects with `TCP_NODELAY`; any failure is an error of kind `connect`.
pub async fn connect(addr: SocketAddr) -> Result<TcpStream, ErrorKind> {
    let s = TcpStream::connect(addr).await.map_err(|_| ErrorKind::Connect)?;
    s.set_nodelay(true).map_err(|_| ErrorKind::Connect)?;
    Ok(s)
}

/// The record's `connections`: what the run's connections cost (`opened`, every worker's),
/// the measured requests that opened one (`first`), and what TLS agreed; `None` when the
/// run opened none.
pub fn record(
    opened: Option<&Opened>,
    first: Option<&FirstTally>,
    tls: Option<&TlsSpec>,
) -> Option<Connections> {
    let o = opened.filter(|o| o.count > 0)?;
    let empty = new_histogram();
    let summary = |h: Option<&Histogram<u64>>| {
        let h = h.unwrap_or(&empty);
        (Latency::from_histogram(h), encode_histogram(h))
    };
    let (connect, connect_histogram) = summary(o.connect.as_ref());
    let tls = tls.map(|spec| {
        let (handshake, handshake_histogram) = summary(o.handshake.as_ref());
        let first = o.negotiated.first();
        let describe = |n: &Negotiated| {
            let mut s = format!("{} {}", n.version_name(), n.suite_name());
            if let Some(g) = n.group_name() {
                s.push(' ');
                s.push_str(&g);
            }
            s
        };
        let main = first.map(describe);
        let mut others: Vec<String> = Vec::new();
        for n in o.negotiated.iter().skip(1) {
            let d = describe(n);
            if Some(&d) != main.as_ref() && !others.contains(&d) {
                others.push(d);
            }
        }
        TlsRecord {
            version: first.map_or_else(|| "none".to_owned(), Negotiated::version_name),
            cipher_suite: first.map_or_else(|| "none".to_owned(), Negotiated::suite_name),
            key_exchange_group: first.and_then(Negotiated::group_name),
            alpn: first.and_then(|n| n.alpn).map(str::to_owned),
            others,
            verified_by: spec.verified_by.clone(),
            resumption: spec.resume,
            full: o.full,
            resumed: o.resumed,
            failed: o.failed,
            handshake,
            handshake_histogram,
        }
    });
    let first_requests = first.map(|f| FirstRequests {
        requests: f.requests,
        with_setup: Latency::from_histogram(&f.with),
        without_setup: Latency::from_histogram(&f.without),
        with_setup_histogram: encode_histogram(&f.with),
        without_setup_histogram: encode_histogram(&f.without),
    });
    Some(Connections { opened: o.count, connect, connect_histogram, tls, first_requests })
}

/// Why a connection outside a load was not made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    #[error("connection refused")]
    Refused,
    #[error("{0}")]
    Other(String),
}

/// One connection outside a load (`stackbench verify`, the orchestrator's probes): to where
/// `route` sends `target`'s host and port, with its TLS handshake made for an `https://`
/// target (`tls`, offering `alpn`). Returns the socket and the address it reached.
pub async fn open_once(
    target: &crate::Target,
    route: &crate::route::Route,
    tls: &crate::tls::TlsFlags,
    alpn: crate::tls::Alpn,
) -> Result<(Socket, SocketAddr), OpenError> {
    let addr = route
        .address(&target.host, target.port)
        .map_err(|why| OpenError::Other(format!("cannot resolve {}: {why}", target.host)))?;
    let tcp = TcpStream::connect(addr).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::ConnectionRefused {
            OpenError::Refused
        } else {
            OpenError::Other(format!("cannot connect to {addr}: {e}"))
        }
    })?;
    let _ = tcp.set_nodelay(true);
    if !target.tls {
        return Ok((Socket::Tcp(tcp), addr));
    }
    let spec = TlsSpec::new(&target.host, tls, alpn).map_err(|e| OpenError::Other(e.to_string()))?;
    let (stream, _) = spec.connector(1, true).handshake(tcp).await.map_err(|f| OpenError::Other(f.why))?;
    Ok((Socket::Tls(Box::new(stream)), addr))
}
