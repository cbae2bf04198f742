//! Where a scenario file's requests go under load. The file's origins are
//! routed when it loads ([`stackbench_hurl::origin::Routes`]: its base to the
//! target, the others where `--origin` maps them); a run drives one server, so
//! every request must end up at the run's own (another is refused, named, with
//! what to write). Each entry's URL is then the path its origin was moved to,
//! followed by what the URL says after its origin: worked out once here for the
//! compiled request (its leading text that keeps one value for the run), or
//! taken from each rendered URL.

use std::ops::Range;

use stackbench_hurl::Vars;
use stackbench_hurl::origin::{self, Origin, Routes, split, static_url};
use stackbench_hurl::scenario::Scenario;

/// How the engine writes one entry's URL.
#[derive(Debug, Clone)]
pub(super) struct EntryUrl {
    /// The path of where its origin goes, before a rendered URL's own path.
    pub(super) dest: Box<[u8]>,
    /// For the compiled request: its path before its first varying part, and that part's
    /// index; `None` when the URL holds credentials (the rendered request takes them out).
    pub(super) compiled: Option<(Box<[u8]>, usize)>,
}

/// The run's variables that keep one value (for the URLs' fixed text): `defined`, the
/// target's variable, the scenario's constants.
pub(super) fn constants(s: &Scenario, defined: &[(String, String)], base: Option<&(String, String)>) -> Vars {
    let mut vars = origin::constants(s, defined);
    if let Some((name, value)) = base {
        vars.set(name, value, stackbench_hurl::Kind::String);
    }
    vars
}

/// Checks that every request of the flows goes to one server, and works out each entry's URL.
/// The error names the request and what to write.
pub(super) fn entry_urls(
    s: &Scenario,
    routes: &Routes,
    vars: &mut Vars,
) -> Result<(Origin, Vec<Vec<EntryUrl>>), String> {
    let server = routes.destinations().next().cloned().ok_or("the file has no request")?;
    if let Some((other, at)) = routes.elsewhere(&server).next() {
        return Err(format!(
            "{at}: this request goes to {other}, and the run's other requests to {server}: a load drives one \
             server; map the file's origins to one with --origin FROM=URL (`stackbench verify` follows them all)"
        ));
    }
    let mut all = Vec::with_capacity(s.flows.len());
    for flow in &s.flows {
        let mut urls = Vec::with_capacity(flow.hurl.entries.len());
        for e in &flow.hurl.entries {
            let fixed = static_url(&e.url, vars).map_err(|(pos, what)| {
                format!("{}:{pos}: the server of this request comes from {what}", flow.hurl.file)
            })?;
            let (o, len) = split(fixed.text.as_bytes())
                .ok_or_else(|| format!("{}:{}: not an absolute URL", flow.hurl.file, e.pos))?;
            let (dest, _) =
                routes.prefix(&o).ok_or_else(|| format!("{}:{}: {o} has no route", flow.hurl.file, e.pos))?;
            let credentials = fixed.text[..len].contains('@');
            let mut path = dest.as_bytes().to_vec();
            path.extend_from_slice(&fixed.text.as_bytes()[len..]);
            urls.push(EntryUrl {
                dest: dest.as_bytes().into(),
                compiled: (!credentials).then(|| (path.into_boxed_slice(), fixed.parts)),
            });
        }
        all.push(urls);
    }
    Ok((server, all))
}

/// The path of a rendered `url` where its origin goes: `dest`, then what follows the URL's
/// origin, into `out` (cleared first).
pub(super) fn path_into(dest: &[u8], url: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(dest);
    let len = split(url).map_or(url.len(), |(_, n)| n);
    out.extend_from_slice(&url[len..]);
}

/// Where the request target lies in an HTTP/1.1 request's first line (`GET /a?b HTTP/1.1`).
pub(crate) fn request_path(request: &[u8]) -> Range<usize> {
    let start = request.iter().position(|&b| b == b' ').map_or(0, |n| n + 1);
    let end = request[start..].iter().position(|&b| b == b' ').map_or(start, |n| start + n);
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_come_from_the_request_line_and_the_route() {
        let r = b"POST /api/todos?x=1 HTTP/1.1\r\nHost: h\r\n";
        assert_eq!(&r[request_path(r)], b"/api/todos?x=1");
        let mut out = Vec::new();
        path_into(b"/api", b"http://localhost:8000/todos?q", &mut out);
        assert_eq!(out, b"/api/todos?q");
        path_into(b"", b"http://h:1", &mut out);
        assert_eq!(out, b"");
    }
}
