//! A worker's session store ([`Tickets`]): room for a TLS 1.3 ticket per connection the worker
//! holds at once, when its connections are opened again and again, so that with a new
//! connection per request every handshake after a connection's first resumes.
//!
//! rustls's own `ClientSessionMemoryCache` keeps 8 tickets per server, and a TLS 1.3 ticket
//! is used once. A worker with 100 connections that each open a new one per request takes up
//! to 100 tickets at a time: with 8 kept, the tickets of a burst of handshakes that finished
//! together pushed each other out, and four in ten handshakes were full ones, each checking
//! the certificate's chain and signatures again (the CPU a handshake per request costs the
//! generator, for work the server did not ask for). Here each server keeps as many tickets as
//! the worker has connections, plus the few a server sends beyond one per handshake; the
//! newest is used first (as rustls's) and the oldest dropped when full.
//!
//! A ticket costs about a KiB: rustls keeps a copy of the server's certificate chain with each
//! (a few KiB for a chain with intermediates). Connections kept alive make one handshake each
//! and seldom another, so the store starts at the 8 spare ones and grows by one for each
//! handshake beyond the worker's first `connections` (a connection opened again: a server that
//! closes after some requests, or after each), up to one per connection: 10,000 keep-alive
//! connections hold 8 tickets, not 10,000.
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
    /// The connections the worker holds at once.
    connections: usize,
    /// Handshakes that need no room kept: the first `connections` when they are kept alive.
    first: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Handshakes begun (each asks for a ticket once).
    handshakes: usize,
    /// Looked up in order: a load speaks to one server, a scenario file to a few.
    servers: Vec<(ServerName<'static>, Server)>,
}

impl State {
    /// The most tickets kept per server now.
    fn room(&self, t: &Tickets) -> usize {
        SPARE + t.connections.min(self.handshakes.saturating_sub(t.first))
    }
}

#[derive(Default)]
struct Server {
    kx_hint: Option<NamedGroup>,
    tls12: Option<Tls12ClientSessionValue>,
    /// Oldest first.
    tls13: VecDeque<Tls13ClientSessionValue>,
}

impl Tickets {
    /// A store for a worker that holds up to `connections` connections at once, kept alive
    /// (`kept_alive`: each makes one handshake, unless the server closes it) or each opened
    /// for a request or an iteration.
    pub fn new(connections: usize, kept_alive: bool) -> Tickets {
        let first = if kept_alive { connections } else { 0 };
        Tickets { connections, first, state: Mutex::new(State::default()) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `edit` on `name`'s entry, made when missing (forgetting the other servers when
    /// `SERVERS` are already kept: a load that speaks to that many resumes little anyway).
    fn edit(&self, name: ServerName<'static>, edit: impl FnOnce(&mut Server, usize)) {
        let mut state = self.state();
        let room = state.room(self);
        let servers = &mut state.servers;
        let at = if let Some(at) = servers.iter().position(|(n, _)| *n == name) {
            at
        } else {
            if servers.len() >= SERVERS {
                servers.clear();
            }
            servers.push((name, Server::default()));
            servers.len() - 1
        };
        edit(&mut servers[at].1, room);
    }

    fn read<T>(&self, name: &ServerName<'_>, read: impl FnOnce(&mut Server) -> Option<T>) -> Option<T> {
        self.state().servers.iter_mut().find(|(n, _)| n == name).and_then(|(_, s)| read(s))
    }

    /// The most tickets kept per server now.
    fn room(&self) -> usize {
        self.state().room(self)
    }
}

impl std::fmt::Debug for Tickets {
    // The tickets are secrets: only how many may be kept is shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tickets").field("room", &self.room()).finish_non_exhaustive()
    }
}

impl ClientSessionStore for Tickets {
    fn set_kx_hint(&self, name: ServerName<'static>, group: NamedGroup) {
        self.edit(name, |s, _| s.kx_hint = Some(group));
    }

    fn kx_hint(&self, name: &ServerName<'_>) -> Option<NamedGroup> {
        self.read(name, |s| s.kx_hint)
    }

    fn set_tls12_session(&self, name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.edit(name, |s, _| s.tls12 = Some(value));
    }

    fn tls12_session(&self, name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.read(name, |s| s.tls12.clone())
    }

    fn remove_tls12_session(&self, name: &ServerName<'static>) {
        self.read(name, |s| s.tls12.take());
    }

    fn insert_tls13_ticket(&self, name: ServerName<'static>, value: Tls13ClientSessionValue) {
        self.edit(name, |s, room| {
            while s.tls13.len() >= room {
                s.tls13.pop_front();
            }
            s.tls13.push_back(value);
        });
    }

    /// rustls asks once per handshake, as it writes the ClientHello: the count of handshakes.
    fn take_tls13_ticket(&self, name: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        let mut state = self.state();
        state.handshakes = state.handshakes.saturating_add(1);
        state.servers.iter_mut().find(|(n, _)| n == name).and_then(|(_, s)| s.tls13.pop_back())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handshakes(t: &Tickets, n: usize) {
        let name = ServerName::try_from("localhost").unwrap();
        for _ in 0..n {
            assert!(t.take_tls13_ticket(&name).is_none(), "no ticket was given");
        }
    }

    #[test]
    fn connections_kept_alive_keep_the_spare_tickets_until_they_are_opened_again() {
        let t = Tickets::new(10_000, true);
        handshakes(&t, 10_000);
        assert_eq!(t.room(), SPARE, "10,000 first handshakes");
        handshakes(&t, 5);
        assert_eq!(t.room(), SPARE + 5, "5 connections opened again");
        handshakes(&t, 20_000);
        assert_eq!(t.room(), SPARE + 10_000, "at most one per connection");
    }

    #[test]
    fn connections_opened_per_request_keep_a_ticket_each_from_the_first() {
        let t = Tickets::new(100, false);
        assert_eq!(t.room(), SPARE);
        handshakes(&t, 40);
        assert_eq!(t.room(), SPARE + 40);
        handshakes(&t, 1_000);
        assert_eq!(t.room(), SPARE + 100);
    }
}
