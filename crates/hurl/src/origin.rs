//! Where a scenario file's requests go. A file runs unchanged whatever its URLs
//! say (`http://localhost:8000/todos`, `{{host}}/todos`, `{{base_url}}/todos`):
//! each request's origin (scheme, host and port) is worked out when the file
//! loads, from the URL's literal text and the variables that keep one value for
//! the whole run (`--variable`, a constant of `[variables]`, the target). A
//! request whose origin would come from an answer (a capture), a data row, a
//! variable drawn per iteration or a generator is refused there, with its
//! `file:line:col`: no answer or data row may steer requests at another server.
//!
//! With a target (`verify URL`, `load URL`, a plan's contestant), the file's
//! base is replaced by the target: the variable the user names
//! (`--base-variable`), else `{{base_url}}` when the file uses it, else the
//! file's first origin. Its other origins go where `--origin FROM=URL` maps
//! them; one left unmapped is refused, named. [`Routes::route`] moves a rendered
//! URL to where its origin goes; [`Routes::allows`] says whether a redirect's
//! `Location` stays among the file's origins and where it then goes.

use std::fmt;

use crate::error::Pos;
use crate::model::HurlFile;
use crate::scenario::{Draw, Reset, Scenario};
use crate::template::{GENERATORS, Kind, Part, Template, Vars};

/// A URL's origin: its scheme, host (lower case) and port (the scheme's default when none is written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub tls: bool,
    pub host: String,
    pub port: u16,
}

impl Origin {
    /// The length of `url`'s `scheme://authority` when it is this origin written plainly:
    /// its scheme, its host (in any case; an IPv6 address in brackets) and `:port`, or no port
    /// where it is the scheme's default, followed by the end, `/`, `?` or `#`. Then
    /// [`split`] gives this origin and that length; `None` says nothing (the URL may still
    /// be this origin, written with credentials or a port of `080`): [`split`] decides.
    /// The load engine's check of every URL it sends, without allocating.
    pub fn written_at(&self, url: &[u8]) -> Option<usize> {
        let scheme: &[u8] = if self.tls { b"https://" } else { b"http://" };
        let mut at = strip_ascii_ci(url, 0, scheme)?;
        if self.host.contains(':') {
            at = strip_ascii_ci(url, at, b"[")?;
            at = strip_ascii_ci(url, at, self.host.as_bytes())?;
            at = strip_ascii_ci(url, at, b"]")?;
        } else {
            at = strip_ascii_ci(url, at, self.host.as_bytes())?;
        }
        if url.get(at) == Some(&b':') {
            let digits = url[at + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
            let port = &url[at + 1..at + 1 + digits];
            // Read as `u16` reads it (five digits at most), without its checks per digit: this
            // runs on each URL the load engine sends.
            if !(1..=5).contains(&digits) || port[0] == b'0' {
                return None;
            }
            if port.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0')) != u32::from(self.port) {
                return None;
            }
            at += 1 + digits;
        } else if self.port != if self.tls { 443 } else { 80 } {
            return None;
        }
        matches!(url.get(at), None | Some(b'/' | b'?' | b'#')).then_some(at)
    }
}

/// Where `want` ends in `text` when `text[at..]` begins with it, ASCII case aside.
fn strip_ascii_ci(text: &[u8], at: usize, want: &[u8]) -> Option<usize> {
    let end = at + want.len();
    text.get(at..end).filter(|t| t.eq_ignore_ascii_case(want)).map(|_| end)
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "https" } else { "http" };
        if self.host.contains(':') {
            write!(f, "{scheme}://[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{scheme}://{}:{}", self.host, self.port)
        }
    }
}

/// The origin of an absolute `http://` or `https://` URL and the length of its
/// `scheme://[userinfo@]authority` text; `None` for anything else (no scheme, another
/// scheme, no host, a host that is not one, a port that is not one): [`split_why`].
pub fn split(url: &[u8]) -> Option<(Origin, usize)> {
    split_why(url).ok()
}

/// As [`split`], saying what is wrong with a URL that has no origin: the check of a URL's
/// server that `verify` and the load engine share (`{{base_url}}:8081/x` and
/// `{{base_url}}.example.com/x` are refused here, as a URL that names no server).
pub fn split_why(url: &[u8]) -> Result<(Origin, usize), String> {
    let sep = url.windows(3).position(|w| w == b"://").ok_or("it has no scheme, like http://")?;
    let tls = match &url[..sep] {
        s if s.eq_ignore_ascii_case(b"http") => false,
        s if s.eq_ignore_ascii_case(b"https") => true,
        s => return Err(format!("its scheme {:?} is not http or https", String::from_utf8_lossy(s))),
    };
    let start = sep + 3;
    let end =
        url[start..].iter().position(|b| matches!(b, b'/' | b'?' | b'#')).map_or(url.len(), |n| start + n);
    let authority = std::str::from_utf8(&url[start..end]).map_err(|_| "its host is not UTF-8")?;
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = match hostport.strip_prefix('[') {
        Some(v6) => {
            let (host, rest) = v6.split_once(']').ok_or("its IPv6 address has no closing `]`")?;
            if !host.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.') {
                return Err(format!("[{host}] is not an IPv6 address"));
            }
            match rest.strip_prefix(':') {
                Some(p) => (host, Some(p)),
                None if rest.is_empty() => (host, None),
                None => return Err(format!("{rest:?} follows its IPv6 address")),
            }
        }
        None => match hostport.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        },
    };
    let port = match port {
        None | Some("") => {
            if tls {
                443
            } else {
                80
            }
        }
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|n| *n != 0 && p.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| format!("its port {p:?} is not a port (1–65535)"))?,
    };
    if host.is_empty() {
        return Err("it has no host".into());
    }
    // A host name, an IPv4 address or a registered name (RFC 3986 §3.2.2), nothing else.
    let name = |b: u8| b.is_ascii_alphanumeric() || b"-._~%!$&'()*+,;=".contains(&b);
    if !hostport.starts_with('[') && !host.bytes().all(name) {
        return Err(format!("its host {host:?} is not a host name or an IP address"));
    }
    Ok((Origin { tls, host: host.to_ascii_lowercase(), port }, end))
}

/// Where the requests of a file go, and what the user is told once about it.
#[derive(Debug, Clone, Default)]
pub struct Routes {
    /// Each origin the file's requests are written to, where it was first met, and the URL
    /// (origin and path, no trailing `/`) its requests go to instead, when moved.
    origins: Vec<(Origin, String, Option<Dest>)>,
    /// Each origin as the file first writes it (`http://localhost:8000`), by `origins`.
    written: Vec<String>,
    /// What the output says once: which origin goes where.
    pub notes: Vec<String>,
    /// The variable set to the target's URL, when one is.
    pub base_variable: Option<String>,
}

/// A URL requests are moved to.
#[derive(Debug, Clone)]
struct Dest {
    url: String,
    origin: Origin,
    /// Bytes of `url` before its path.
    len: usize,
}

/// How the file's origins are to be routed: the target, the variable that stands for
/// it, and the user's `--origin FROM=URL` maps.
#[derive(Debug, Clone, Copy, Default)]
pub struct Aim<'a> {
    pub target: Option<&'a str>,
    pub base_variable: Option<&'a str>,
    pub maps: &'a [(String, String)],
}

/// The user's `--origin FROM=URL` arguments as pairs; the error (to follow `--origin: `) says
/// how to write one.
pub fn parse_maps(args: &[String]) -> Result<Vec<(String, String)>, String> {
    args.iter()
        .map(|m| match m.split_once('=') {
            Some((from, to)) if !from.is_empty() && !to.is_empty() => Ok((from.to_owned(), to.to_owned())),
            _ => Err(format!("{m:?}: write FROM=URL, like http://localhost:8000=http://127.0.0.1:8080")),
        })
        .collect()
}

/// Every file of requests of a scenario, in order: its flows, cases, reset and setup.
pub fn files(s: &Scenario) -> Vec<&HurlFile> {
    let reset = match &s.reset {
        Some(Reset::Hurl(h)) => Some(h),
        _ => None,
    };
    let flows = s.flows.iter().map(|f| &f.hurl);
    flows.chain(s.verify.iter().map(|v| &v.hurl)).chain(reset).chain(s.setup.as_ref()).collect()
}

/// Whether any request of `files` writes `{{name}}` in its URL.
fn url_uses(files: &[&HurlFile], name: &str) -> bool {
    files.iter().flat_map(|f| &f.entries).any(|e| e.url.vars().iter().any(|(n, _)| *n == name))
}

impl Routes {
    /// Works out where the requests of `s` go, with the variables `defined` outside it, as
    /// `aim` says. The error says what to fix, at `file:line:col` or naming the flag.
    pub fn new(s: &Scenario, defined: &[(String, String)], aim: Aim<'_>) -> Result<Routes, String> {
        let all = files(s);
        let mut routes = Routes::default();
        let base = match (aim.target, aim.base_variable) {
            (_, Some(name)) => {
                if !url_uses(&all, name) {
                    return Err(format!(
                        "--base-variable {name}: no request's URL uses {{{{{name}}}}}; name the variable that begins the file's URLs"
                    ));
                }
                if aim.target.is_none() {
                    return Err(format!("--base-variable {name} needs a target URL, whose value it takes"));
                }
                if captured(s, name) {
                    return Err(format!(
                        "--base-variable {name}: a capture of the file sets {{{{{name}}}}}; the target never comes from an answer"
                    ));
                }
                Some(name)
            }
            (Some(_), None) if url_uses(&all, "base_url") => Some("base_url"),
            _ => None,
        };
        routes.base_variable = base.filter(|_| aim.target.is_some()).map(str::to_owned);
        let mut vars = constants(s, defined);
        if let (Some(name), Some(t)) = (&routes.base_variable, aim.target) {
            vars.set(name, t.trim_end_matches('/'), Kind::String);
        }
        for file in &all {
            for e in &file.entries {
                let url = static_url(&e.url, &mut vars)
                    .map_err(|(pos, what)| format!("{}:{pos}: {}", file.file, unknown_server(s, &what)))?;
                let (origin, len) = split_why(url.text.as_bytes()).map_err(|why| {
                    format!(
                        "{}:{}: {:?} is not an absolute http:// or https:// URL ({why}); write the server in it (or {{{{base_url}}}} for the target)",
                        file.file, e.pos, url.text
                    )
                })?;
                if !routes.origins.iter().any(|(o, _, _)| *o == origin) {
                    let text = &url.text[..len];
                    let (scheme, rest) = text.split_once("://").unwrap_or(("http", text));
                    let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
                    routes.written.push(format!("{scheme}://{host}"));
                    routes.origins.push((origin, format!("{}:{}", file.file, e.pos), None));
                }
            }
        }
        routes.aim(aim)?;
        Ok(routes)
    }

    /// The routes of `s` to `target`, without other variables or maps.
    pub fn at(s: &Scenario, target: &str) -> Result<Routes, String> {
        Routes::new(s, &[], Aim { target: Some(target), ..Aim::default() })
    }

    /// Moves the file's origins as `aim` says (see the module's header).
    fn aim(&mut self, aim: Aim<'_>) -> Result<(), String> {
        let dest = |url: &str| -> Result<Dest, String> {
            let url = url.trim_end_matches('/').to_owned();
            let (origin, len) = split(url.as_bytes())
                .ok_or_else(|| format!("{url:?} is not a URL; write it like http://127.0.0.1:8080"))?;
            Ok(Dest { url, origin, len })
        };
        let target = aim.target.map(dest).transpose()?;
        for (from, to) in aim.maps {
            let (origin, _) = split(from.as_bytes()).ok_or_else(|| {
                format!("--origin {from}={to}: {from:?} is not an origin like http://localhost:8000")
            })?;
            let d = dest(to).map_err(|why| format!("--origin {from}={to}: {why}"))?;
            let Some(entry) = self.origins.iter_mut().find(|(o, _, _)| *o == origin) else {
                let known: Vec<String> = self.origins.iter().map(|(o, _, _)| o.to_string()).collect();
                return Err(format!(
                    "--origin {from}={to}: the file sends no request to {origin}; its origins are {}",
                    known.join(", ")
                ));
            };
            self.notes.push(format!("requests the file sends to {origin} go to {} (--origin)", d.url));
            entry.2 = Some(d);
        }
        let Some(target) = target else { return Ok(()) };
        if self.base_variable.is_none()
            && let Some(first) = self.origins.first_mut()
            && first.2.is_none()
        {
            self.notes
                .push(format!("requests the file sends to {} go to {} (the target)", first.0, target.url));
            first.2 = Some(target.clone());
        }
        // `{{base_url}}` is the target by the file's own convention: nothing to say.
        if let Some(name) = self.base_variable.as_ref().filter(|n| *n != "base_url") {
            self.notes.push(format!("{{{{{name}}}}} is the target, {}", target.url));
        }
        let stray = self.origins.iter().find(|(o, _, d)| d.is_none() && *o != target.origin);
        if let Some((origin, at, _)) = stray {
            return Err(format!(
                "{at}: this request goes to {origin}, which is not the target's origin: map it with --origin {origin}=URL"
            ));
        }
        Ok(())
    }

    /// Moves a rendered `url` to where its origin goes. `Err` when its origin is none of the
    /// file's (it came from somewhere the file does not say).
    pub fn route(&self, url: &mut Vec<u8>) -> Result<(), String> {
        if let (Some(d), len) = self.find(url)? {
            url.splice(..len, d.url.bytes());
        }
        Ok(())
    }

    /// Where a rendered `url` goes, as [`Routes::route`] checks it (the one check `verify`
    /// and the load engine make): the path its origin is moved to (empty when it is not
    /// moved), and the length of the URL's `scheme://authority`, after which its own path
    /// follows.
    pub fn locate(&self, url: &[u8]) -> Result<(&str, usize), String> {
        let (d, len) = self.find(url)?;
        Ok((d.map_or("", |d| &d.url[d.len..]), len))
    }

    /// Where `url`'s origin is moved (`None`: it stays) and the length of its
    /// `scheme://authority`; `Err` when it is not an absolute URL or its origin is none of the
    /// file's.
    fn find(&self, url: &[u8]) -> Result<(Option<&Dest>, usize), String> {
        // A URL that writes one of the origins plainly, as nearly every one does, is found
        // without splitting it (which allocates its host): the first origin it writes is
        // the one the split would find first.
        if let Some(found) = self.origins.iter().find_map(|(o, _, d)| Some((d.as_ref(), o.written_at(url)?)))
        {
            return Ok(found);
        }
        // The destinations the file's origins are moved to (the others were just tried), read
        // in place: `destinations` collects to leave out repeats, which this does not need.
        if let Some(len) = self.origins.iter().find_map(|(_, _, d)| d.as_ref()?.origin.written_at(url)) {
            return Ok((None, len));
        }
        let (origin, len) = match split_why(url) {
            Ok(split) => split,
            Err(why) => {
                let text = String::from_utf8_lossy(url);
                return Err(format!("{text:?} is not an absolute http:// or https:// URL: {why}"));
            }
        };
        match self.origins.iter().find(|(o, _, _)| *o == origin) {
            Some((_, _, d)) => Ok((d.as_ref(), len)),
            None if self.destinations().any(|d| *d == origin) => Ok((None, len)),
            None => Err(format!("{origin} is not one of the file's origins")),
        }
    }

    /// Where a redirect to `url` (absolute) goes: `url` itself when its origin is one the
    /// requests go to, moved when it is one of the file's own origins; `None` when it leaves
    /// them (a server must not steer requests at another one).
    pub fn allows(&self, url: &str) -> Option<String> {
        let mut moved = url.as_bytes().to_vec();
        let (origin, _) = split(&moved)?;
        if self.destinations().any(|d| *d == origin) {
            return Some(url.to_owned());
        }
        self.route(&mut moved).ok()?;
        String::from_utf8(moved).ok()
    }

    /// `url` (where a request went) as the file would write it: the start of a URL its
    /// origin was moved to put back to that origin as the file writes it.
    pub fn as_written(&self, url: &str) -> String {
        for ((_, _, d), written) in self.origins.iter().zip(&self.written) {
            if let Some(d) = d
                && let Some(rest) = url.strip_prefix(&d.url)
                && (rest.is_empty() || rest.starts_with(['/', '?', '#']))
            {
                return format!("{written}{rest}");
            }
        }
        url.to_owned()
    }

    /// The origins requests go to, each once, in the order the file first names them.
    pub fn destinations(&self) -> impl Iterator<Item = &Origin> {
        let mut seen: Vec<&Origin> = Vec::new();
        self.origins.iter().map(|(o, _, d)| d.as_ref().map_or(o, |d| &d.origin)).filter(move |o| {
            let new = !seen.contains(o);
            if new {
                seen.push(o);
            }
            new
        })
    }

    /// The URL the first of the file's origins goes to (origin and path): what a load
    /// without a target aims at.
    pub fn first(&self) -> Option<String> {
        let (o, _, d) = self.origins.first()?;
        Some(d.as_ref().map_or_else(|| o.to_string(), |d| d.url.clone()))
    }

    /// The path a request to `origin` gets before its own (the moved-to URL's), and the
    /// origin it goes to.
    pub fn prefix(&self, origin: &Origin) -> Option<(&str, &Origin)> {
        let (o, _, d) = self.origins.iter().find(|(o, _, _)| o == origin)?;
        Some(d.as_ref().map_or(("", o), |d| (&d.url[d.len..], &d.origin)))
    }

    /// Each origin of the file that goes elsewhere than `to`, with where it is first named.
    pub fn elsewhere<'r>(&'r self, to: &'r Origin) -> impl Iterator<Item = (&'r Origin, &'r str)> {
        self.origins.iter().filter_map(move |(o, at, d)| {
            let dest = d.as_ref().map_or(o, |d| &d.origin);
            (dest != to).then_some((dest, at.as_str()))
        })
    }
}

/// The variables that keep one value for the whole run: `defined` (the command line) over
/// the constants of `[variables]`, less those a capture or a data row sets (an answer or a
/// row may change them during the run, so they cannot say where a request goes).
pub fn constants(s: &Scenario, defined: &[(String, String)]) -> Vars {
    let mut vars = Vars::new(0);
    let set: std::collections::HashSet<&str> =
        (files(s).into_iter().flat_map(HurlFile::captures).map(|c| &*c.name))
            .chain(s.rows.iter().flat_map(|r| r.columns.iter().map(String::as_str)))
            .collect();
    let fixed = |name: &str| !set.contains(name);
    for v in s.variables.iter().filter(|v| fixed(&v.name)) {
        if let Draw::Const(text, kind) = &v.draw {
            vars.set(&v.name, text, *kind);
        }
    }
    for (k, v) in defined.iter().filter(|(k, _)| fixed(k)) {
        let (v, kind) = crate::template::cli_value(v);
        vars.set(k, &v, kind);
    }
    vars
}

/// Whether a capture of any of the scenario's files sets `name`.
fn captured(s: &Scenario, name: &str) -> bool {
    files(s).iter().flat_map(|f| f.captures()).any(|c| &*c.name == name)
}

/// A URL's leading text that keeps one value for the run, and how many of its parts it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticUrl {
    pub text: String,
    pub parts: usize,
}

/// The leading parts of `url` whose value is known when the file loads (literals, and
/// variables `vars` holds), rendered; `Err` (where, the placeholder) when they end before
/// the URL's origin does.
pub fn static_url(url: &Template, vars: &mut Vars) -> Result<StaticUrl, (Pos, String)> {
    let mut text = Vec::new();
    let mut parts = 0;
    let mut stop = None;
    for p in &url.parts {
        match p {
            Part::Lit(l) => text.extend_from_slice(l.as_bytes()),
            Part::Var { name, .. } if !GENERATORS.contains(&&**name) && vars.get(name).is_some() => {
                text.extend_from_slice(vars.get(name).map_or(&b""[..], |v| v.text.as_bytes()));
            }
            Part::Var { name, pos, .. } => {
                stop = Some((*pos, format!("`{{{{{name}}}}}`")));
                break;
            }
            Part::Expr { expr, pos, .. } => {
                stop = Some((*pos, format!("`{{{{{}}}}}`", expr.source)));
                break;
            }
            Part::Bytes(b) => text.extend_from_slice(b),
        }
        parts += 1;
    }
    let text = String::from_utf8_lossy(&text).into_owned();
    // The origin is whole once something follows it (a path, a query); one that is not an
    // origin at all is refused as such by the caller, not taken for a varying one.
    let whole = text.find("://").is_some_and(|s| text[s + 3..].contains(['/', '?', '#']));
    // `http://host:port{{path}}`: an origin whose host and port are written in the file
    // (not a variable's value) ends where its port does. What follows cannot move the
    // request elsewhere unseen: each rendered URL's origin is checked again before it is sent
    // ([`Routes::locate`], [`Routes::route`]).
    let literal = url.parts[..parts].iter().all(|p| matches!(p, Part::Lit(_)));
    let whole = whole || stop.is_some() && literal && written_port(&text);
    match stop {
        Some(why) if !whole => Err(why),
        _ => Ok(StaticUrl { text, parts }),
    }
}

/// Whether `text` is a whole origin that ends with its port (`http://host:8000`).
fn written_port(text: &str) -> bool {
    let port = text.rsplit_once(':').map_or("", |(_, p)| p);
    !port.is_empty()
        && port.bytes().all(|b| b.is_ascii_digit())
        && split_why(text.as_bytes()).is_ok_and(|(_, len)| len == text.len())
}

/// Why the server of a request is not known when the file loads: `what` (a placeholder)
/// is a capture, a data column, a drawn variable, a generator, or has no value at all.
fn unknown_server(s: &Scenario, what: &str) -> String {
    let name = what.trim_start_matches("`{{").trim_end_matches("}}`");
    let from_answer = captured(s, name);
    let drawn = s.variables.iter().any(|v| v.name == name && !matches!(v.draw, Draw::Const(..)))
        || s.rows.iter().any(|r| r.columns.iter().any(|c| c == name))
        || GENERATORS.contains(&name);
    if !from_answer && !drawn && !name.contains(' ') {
        return format!(
            "the server of this request comes from {what}, which has no value: give the target URL \
             (`stackbench verify URL ...`), or --variable {name}=URL"
        );
    }
    format!(
        "the server of this request comes from {what}, whose value is not known when the file loads \
         (a capture, a data row, a drawn variable or a generator): a request's origin must be written \
         in the file or given for the whole run, so that no answer or data row can steer requests at another server"
    )
}

#[cfg(test)]
mod tests;
