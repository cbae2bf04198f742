//! Where the requests go: a [`Target`] from a URL checked by [`parse_target`]
//! (`http://` or `https://`, a host, a port in 1–65535).

use crate::spec_error::SpecError;

/// Where the requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// As given.
    pub url: String,
    pub host: String,
    pub port: u16,
    /// `host:port` as it goes into `Host` / `:authority`.
    pub authority: String,
    /// Path and query of the URL (`/` when it has none).
    pub path: String,
    /// `https://`: the connections speak TLS.
    pub tls: bool,
}

/// Parses and checks the target URL.
pub fn parse_target(url: &str) -> Result<Target, SpecError> {
    let bad = |why: &str| SpecError::Url { url: url.to_owned(), why: why.to_owned() };
    let trimmed = url.trim();
    if !trimmed.contains("://") {
        return Err(bad("it has no scheme; write it like http://127.0.0.1:8080/path"));
    }
    let uri: http::Uri = trimmed.parse().map_err(|e: http::uri::InvalidUri| bad(&e.to_string()))?;
    let scheme = uri.scheme_str().unwrap_or_default().to_ascii_lowercase();
    let (tls, default_port) = match scheme.as_str() {
        "http" => (false, 80),
        "https" => (true, 443),
        _ => return Err(SpecError::Scheme { url: url.to_owned(), scheme }),
    };
    let authority = uri.authority().ok_or_else(|| bad("it has no host"))?;
    if authority.as_str().contains('@') {
        return Err(bad("user information (user@host) is not supported"));
    }
    let host = authority.host().trim_start_matches('[').trim_end_matches(']').to_owned();
    if host.is_empty() {
        return Err(bad("it has no host"));
    }
    // A port that is not a number in 1–65535 is refused, never taken as the default.
    // (`Authority::port` is `None` for a port that does not parse, so the text is read here.)
    let written = authority.as_str().rsplit_once(':').map(|(_, p)| p).filter(|p| !p.contains(']'));
    let port = match written {
        None => default_port,
        Some(p) => match p.parse::<u16>() {
            Ok(0) => return Err(bad("port 0 is not a port to connect to")),
            Ok(n) => n,
            Err(_) => return Err(bad(&format!("port {p:?} is not a port (1–65535)"))),
        },
    };
    // In origin form (RFC 9112 §3.2.1): `http://h:1?q` asks for `/?q`.
    let path = uri.path_and_query().map_or("/", http::uri::PathAndQuery::as_str);
    let path = if path.starts_with('/') { path.to_owned() } else { format!("/{path}") };
    let authority = if written.is_some() {
        authority.as_str().to_owned()
    } else {
        format!("{}:{default_port}", authority.host())
    };
    Ok(Target { url: trimmed.to_owned(), host, port, authority, path, tls })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_is_in_origin_form() {
        for (url, path) in [
            ("http://127.0.0.1:8080", "/"),
            ("http://127.0.0.1:8080/a/b?c=1", "/a/b?c=1"),
            ("http://127.0.0.1:8080?c=1", "/?c=1"),
            ("http://127.0.0.1:8080/a#top", "/a"),
        ] {
            assert_eq!(parse_target(url).unwrap().path, path, "{url}");
        }
        for url in ["http://127.0.0.1:8080:18084/x", "http://127.0.0.1:8080@host/x"] {
            assert!(parse_target(url).is_err(), "{url}");
        }
    }
}
