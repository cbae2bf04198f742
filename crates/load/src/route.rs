//! Where the connections go when it is not where the URL's host resolves: `--resolve
//! HOST:PORT:ADDR` and `--connect-to HOST1:PORT1:HOST2:PORT2`, in curl's syntax (Hurl's
//! options take the same). The URL is unchanged, so `Host`, `:authority`, SNI and the name
//! the certificate is checked for stay the URL's; only the address connected to moves.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs as _};

use crate::spec_error::{SpecError, invalid};

/// The `--resolve` and `--connect-to` rules of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Route {
    resolve: Vec<Resolve>,
    connect_to: Vec<ConnectTo>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Resolve {
    /// `None`: `*`, any host.
    host: Option<String>,
    port: u16,
    addr: IpAddr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct ConnectTo {
    /// `None` (left empty): any.
    from_host: Option<String>,
    from_port: Option<u16>,
    /// `None` (left empty): the URL's.
    to_host: Option<String>,
    to_port: Option<u16>,
}

impl Route {
    /// Parses the rules, each as curl writes it.
    pub fn new(resolve: &[String], connect_to: &[String]) -> Result<Route, SpecError> {
        Ok(Route {
            resolve: resolve.iter().map(|r| parse_resolve(r)).collect::<Result<_, _>>()?,
            connect_to: connect_to.iter().map(|c| parse_connect_to(c)).collect::<Result<_, _>>()?,
        })
    }

    /// These rules with `resolve` and `connect_to` before them (one request's own, which win
    /// where both match: a Hurl file's `[Options]`).
    pub fn with_first(&self, resolve: &[String], connect_to: &[String]) -> Result<Route, SpecError> {
        let mut r = Route::new(resolve, connect_to)?;
        r.resolve.extend(self.resolve.iter().cloned());
        r.connect_to.extend(self.connect_to.iter().cloned());
        Ok(r)
    }

    pub fn is_empty(&self) -> bool {
        self.resolve.is_empty() && self.connect_to.is_empty()
    }

    /// The address a connection to `host:port` goes to: the first `--connect-to` that matches
    /// moves the host and port, then a `--resolve` for the (new) host and port gives the
    /// address, else the system resolves it.
    pub fn address(&self, host: &str, port: u16) -> Result<SocketAddr, String> {
        let (mut host, mut port) = (host.to_owned(), port);
        if let Some(rule) = self.connect_to.iter().find(|r| {
            r.from_host.as_deref().is_none_or(|h| h.eq_ignore_ascii_case(&host))
                && r.from_port.is_none_or(|p| p == port)
        }) {
            if let Some(h) = &rule.to_host {
                host.clone_from(h);
            }
            port = rule.to_port.unwrap_or(port);
        }
        let fixed = self
            .resolve
            .iter()
            .find(|r| r.port == port && r.host.as_deref().is_none_or(|h| h.eq_ignore_ascii_case(&host)));
        if let Some(r) = fixed {
            return Ok(SocketAddr::new(r.addr, port));
        }
        if let Ok(ip) = host.parse::<IpAddr>() {
            return Ok(SocketAddr::new(ip, port));
        }
        (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|e| e.to_string())?
            .next()
            .ok_or_else(|| format!("{host} has no address"))
    }
}

/// `HOST:PORT:ADDR[,ADDR...]` (the first address is used; `HOST` may be `*`).
fn parse_resolve(text: &str) -> Result<Resolve, SpecError> {
    let bad = |why: &str| {
        invalid("--resolve", format!("{text:?}: {why}; write HOST:PORT:ADDR, like example.com:443:127.0.0.1"))
    };
    let (host, rest) = split_host(text.trim().trim_start_matches('+')).ok_or_else(|| bad("no HOST:"))?;
    let (port, addrs) = rest.split_once(':').ok_or_else(|| bad("no :ADDR"))?;
    let port = port.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(|| bad("PORT is not a port"))?;
    let first = addrs.split(',').next().unwrap_or_default();
    let addr = first
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .map_err(|_| bad("ADDR is not an IP address"))?;
    if host.is_empty() {
        return Err(bad("HOST is empty"));
    }
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Ok(Resolve { host: (host != "*").then(|| host.to_owned()), port, addr })
}

/// `HOST1:PORT1:HOST2:PORT2`, any part left empty.
fn parse_connect_to(text: &str) -> Result<ConnectTo, SpecError> {
    let bad = |why: &str| {
        invalid(
            "--connect-to",
            format!(
                "{text:?}: {why}; write HOST1:PORT1:HOST2:PORT2 (any part may be empty), like example.com:443:127.0.0.1:8443"
            ),
        )
    };
    let (from_host, rest) = split_host(text.trim()).ok_or_else(|| bad("it has fewer than four parts"))?;
    let (from_port, rest) = rest.split_once(':').ok_or_else(|| bad("it has fewer than four parts"))?;
    let (to_host, to_port) = split_host(rest).ok_or_else(|| bad("it has fewer than four parts"))?;
    let port = |p: &str| -> Result<Option<u16>, SpecError> {
        if p.is_empty() {
            return Ok(None);
        }
        p.parse::<u16>().ok().filter(|&p| p > 0).map(Some).ok_or_else(|| bad(&format!("{p:?} is not a port")))
    };
    let host = |h: &str| (!h.is_empty()).then(|| h.trim_start_matches('[').trim_end_matches(']').to_owned());
    Ok(ConnectTo {
        from_host: host(from_host),
        from_port: port(from_port)?,
        to_host: host(to_host),
        to_port: port(to_port)?,
    })
}

/// Splits `host:rest`, a host in brackets (`[::1]:rest`) kept whole.
fn split_host(s: &str) -> Option<(&str, &str)> {
    if s.starts_with('[') {
        let end = s.find(']')?;
        let rest = s[end + 1..].strip_prefix(':')?;
        return Some((&s[..=end], rest));
    }
    s.split_once(':')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(resolve: &[&str], connect_to: &[&str]) -> Route {
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        Route::new(&s(resolve), &s(connect_to)).unwrap()
    }

    #[test]
    fn resolve_fixes_the_address_of_a_host_and_port() {
        let r = route(&["example.test:443:127.0.0.1", "*:8443:[::1]"], &[]);
        assert_eq!(r.address("example.test", 443).unwrap(), "127.0.0.1:443".parse().unwrap());
        assert_eq!(r.address("EXAMPLE.test", 443).unwrap(), "127.0.0.1:443".parse().unwrap());
        assert_eq!(r.address("other.test", 8443).unwrap(), "[::1]:8443".parse().unwrap());
        assert_eq!(r.address("127.0.0.2", 80).unwrap(), "127.0.0.2:80".parse().unwrap());
    }

    #[test]
    fn connect_to_moves_the_host_and_port() {
        let r =
            route(&["backend.test:9000:127.0.0.1"], &["example.test:443:backend.test:9000", "::127.0.0.1:"]);
        assert_eq!(r.address("example.test", 443).unwrap(), "127.0.0.1:9000".parse().unwrap());
        // The second rule: any host and port goes to 127.0.0.1, the port kept.
        assert_eq!(r.address("else.test", 8080).unwrap(), "127.0.0.1:8080".parse().unwrap());
    }

    #[test]
    fn a_requests_own_rules_come_first() {
        let run = route(&["example.test:80:127.0.0.2", "other.test:80:127.0.0.3"], &[]);
        let r = run.with_first(&["example.test:80:127.0.0.4".into()], &[]).unwrap();
        assert_eq!(r.address("example.test", 80).unwrap(), "127.0.0.4:80".parse().unwrap());
        assert_eq!(r.address("other.test", 80).unwrap(), "127.0.0.3:80".parse().unwrap());
        assert_eq!(run.address("example.test", 80).unwrap(), "127.0.0.2:80".parse().unwrap());
    }

    #[test]
    fn bad_rules_say_how_to_write_them() {
        let e = Route::new(&["example.test:443".into()], &[]).unwrap_err().to_string();
        assert!(e.contains("--resolve") && e.contains("HOST:PORT:ADDR"), "{e}");
        let e = Route::new(&["h:x:127.0.0.1".into()], &[]).unwrap_err().to_string();
        assert!(e.contains("not a port"), "{e}");
        let e = Route::new(&["h:1:nope".into()], &[]).unwrap_err().to_string();
        assert!(e.contains("not an IP address"), "{e}");
        let e = Route::new(&[], &["a:1:b".into()]).unwrap_err().to_string();
        assert!(e.contains("--connect-to") && e.contains("four parts"), "{e}");
        let e = Route::new(&[], &["a:1:b:x".into()]).unwrap_err().to_string();
        assert!(e.contains("not a port"), "{e}");
    }
}
