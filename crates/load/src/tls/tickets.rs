//! A worker's session store ([`Tickets`]): room for a TLS 1.3 ticket per connection the worker
//! holds at once, so that with a new connection per request every handshake after a
//! connection's first resumes.
//!
//! rustls's own `ClientSessionMemoryCache` keeps 8 tickets per server, and a TLS 1.3 ticket
//! is used once. A worker with 100 connections that each open a new one per request takes up
//! to 100 tickets at a time: with 8 kept, the tickets of a burst of handshakes that finished
//! together pushed each other out, and four in ten handshakes were full ones, each checking
//! the certificate's chain and signatures again (the CPU a handshake per request costs the
//! generator, for work the server did not ask for). Here each server keeps as many tickets as
//! the worker has connections, plus the few a server sends beyond one per handshake; the
//! newest is used first (as rustls's) and the oldest dropped when full. The memory stays
//! bounded: a ticket is a few hundred bytes, per connection.

use std::collections::VecDeque;
use std::sync::Mutex;

use rustls::NamedGroup;
use rustls::client::{ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue};
use rustls::pki_types::ServerName;

/// Tickets kept beyond one per connection: a full TLS 1.3 handshake brings OpenSSL's two.
const SPARE: usize = 8;

/// Server names remembered; a load speaks to one, a scenario file's requests to a few.
const SERVERS: usize = 64;

/// The session store of one worker (one thread: the lock is never contended).
pub struct Tickets {
    per_server: usize,
    /// Looked up in order: a load speaks to one server, a scenario file to a few.
    servers: Mutex<Vec<(ServerName<'static>, Server)>>,
}

#[derive(Default)]
struct Server {
    kx_hint: Option<NamedGroup>,
    tls12: Option<Tls12ClientSessionValue>,
    /// Oldest first.
    tls13: VecDeque<Tls13ClientSessionValue>,
}

impl Tickets {
    /// A store for a worker that holds up to `connections` connections at once.
    pub fn new(connections: usize) -> Tickets {
        Tickets { per_server: connections.saturating_add(SPARE), servers: Mutex::new(Vec::new()) }
    }

    /// Runs `edit` on `name`'s entry, made when missing (forgetting the other servers when
    /// `SERVERS` are already kept: a load that speaks to that many resumes little anyway).
    fn edit(&self, name: ServerName<'static>, edit: impl FnOnce(&mut Server)) {
        let mut servers = self.servers.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let at = if let Some(at) = servers.iter().position(|(n, _)| *n == name) {
            at
        } else {
            if servers.len() >= SERVERS {
                servers.clear();
            }
            servers.push((name, Server::default()));
            servers.len() - 1
        };
        edit(&mut servers[at].1);
    }

    fn read<T>(&self, name: &ServerName<'_>, read: impl FnOnce(&mut Server) -> Option<T>) -> Option<T> {
        let mut servers = self.servers.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        servers.iter_mut().find(|(n, _)| n == name).and_then(|(_, s)| read(s))
    }
}

impl std::fmt::Debug for Tickets {
    // The tickets are secrets: only how many may be kept is shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tickets").field("per_server", &self.per_server).finish_non_exhaustive()
    }
}

impl ClientSessionStore for Tickets {
    fn set_kx_hint(&self, name: ServerName<'static>, group: NamedGroup) {
        self.edit(name, |s| s.kx_hint = Some(group));
    }

    fn kx_hint(&self, name: &ServerName<'_>) -> Option<NamedGroup> {
        self.read(name, |s| s.kx_hint)
    }

    fn set_tls12_session(&self, name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.edit(name, |s| s.tls12 = Some(value));
    }

    fn tls12_session(&self, name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.read(name, |s| s.tls12.clone())
    }

    fn remove_tls12_session(&self, name: &ServerName<'static>) {
        self.read(name, |s| s.tls12.take());
    }

    fn insert_tls13_ticket(&self, name: ServerName<'static>, value: Tls13ClientSessionValue) {
        let cap = self.per_server;
        self.edit(name, |s| {
            if s.tls13.len() >= cap {
                s.tls13.pop_front();
            }
            s.tls13.push_back(value);
        });
    }

    fn take_tls13_ticket(&self, name: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        self.read(name, |s| s.tls13.pop_back())
    }
}
