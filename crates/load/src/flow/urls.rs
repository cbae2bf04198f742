//! Where a scenario file's requests go under load. The file's origins are
//! routed when it loads ([`stackbench_hurl::Routes`]: its base to the
//! target, the others where `--origin` maps them); a run drives one server, so
//! every request must end up at the run's own (another is refused, named, with
//! what to write). Each entry's URL is then the path its origin was moved to,
//! followed by what the URL says after its origin: worked out once here for the
//! compiled request (its leading text that keeps one value for the run), or
//! taken from each rendered URL.

use std::ops::Range;

use stackbench_hurl::{Origin, Routes, Scenario, Vars, constant_vars, split_origin, static_url};

/// How the engine writes one entry's URL.
#[derive(Debug, Clone)]
pub(super) struct EntryUrl {
    /// For the compiled request: its path before its first varying part, and that part's
    /// index; `None` when the URL holds credentials (the rendered request takes them out) or
    /// a fragment (not sent).
    pub(super) compiled: Option<(Box<[u8]>, usize)>,
}

/// The run's variables that keep one value (for the URLs' fixed text): `defined`, the
/// target's variable, the scenario's constants.
pub(super) fn constants(s: &Scenario, defined: &[(String, String)], base: Option<&(String, String)>) -> Vars {
    let mut vars = constant_vars(s, defined);
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
            let (o, len) = split_origin(fixed.text.as_bytes())
                .ok_or_else(|| format!("{}:{}: not an absolute URL", flow.hurl.file, e.pos))?;
            let (dest, _) =
                routes.prefix(&o).ok_or_else(|| format!("{}:{}: {o} has no route", flow.hurl.file, e.pos))?;
            // Credentials leave the URL as it is rendered; a fragment is not sent. A URL whose
            // varying part follows its origin (`http://h:1{{path}}`) is rendered and its origin
            // checked at each request (`path_into`).
            let rest = &fixed.text[len..];
            let after_origin = rest.is_empty() && fixed.parts < e.url.parts.len();
            let compiles = !fixed.text[..len].contains('@') && !rest.contains('#') && !after_origin;
            let mut path = Vec::with_capacity(dest.len() + rest.len() + 1);
            origin_form(dest.as_bytes(), rest.as_bytes(), &mut path);
            urls.push(EntryUrl { compiled: compiles.then(|| (path.into_boxed_slice(), fixed.parts)) });
        }
        all.push(urls);
    }
    Ok((server, all))
}

/// The path of a rendered `url` where its origin goes ([`Routes::locate`], the check `verify`
/// makes of every URL it sends to: `Err` says why a URL is none of the file's origins), into
/// `out` (cleared first).
pub(super) fn path_into(routes: &Routes, url: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let (dest, len) = routes.locate(url)?;
    out.clear();
    origin_form(dest.as_bytes(), &url[len..], out);
    Ok(())
}

/// Appends the request target in origin form (RFC 9112 §3.2.1) of `rest` (what follows a
/// URL's origin) moved under `dest`: a `/` where neither begins with one (`http://h:1?q`
/// is `/?q`), without the fragment, which is not sent.
fn origin_form(dest: &[u8], rest: &[u8], out: &mut Vec<u8>) {
    let rest = rest.iter().position(|&b| b == b'#').map_or(rest, |n| &rest[..n]);
    if dest.is_empty() && !rest.starts_with(b"/") {
        out.push(b'/');
    }
    out.extend_from_slice(dest);
    out.extend_from_slice(rest);
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
        for (dest, rest, want) in [
            ("/api", "/todos?q", "/api/todos?q"),
            ("", "", "/"),
            ("", "?q=1", "/?q=1"),
            ("/api", "?q=1", "/api?q=1"),
            ("", "/a#top", "/a"),
        ] {
            out.clear();
            origin_form(dest.as_bytes(), rest.as_bytes(), &mut out);
            assert_eq!(String::from_utf8_lossy(&out), want, "{dest} {rest}");
        }
    }

    /// Issue 45 #14: `load` sent `GET :18084/x` and `GET @host/x` (what followed
    /// `{{base_url}}` after a target without a path) where `verify` refused them. Both now
    /// check a URL's server alike ([`stackbench_hurl::split_origin`], [`Routes::locate`]).
    #[test]
    fn a_url_whose_server_is_not_one_is_refused_at_load() {
        use crate::flow::tests::source_at;
        for (after, why) in [
            (":18084/x", "its port \"9:18084\" is not a port"),
            (".example.com/x", "its port \"9.example.com\" is not a port"),
            ("@host/x", "goes to http://host:80, which is not the target's origin"),
        ] {
            let e = source_at(&format!("GET {{{{base_url}}}}{after}\nHTTP *\n"), "http://127.0.0.1:9")
                .unwrap_err();
            assert!(e.contains("t.hurl:1:1:") && e.contains(why), "{after}: {e}");
        }
    }

    /// A URL with a query and no path asked for `?q=1` (not a request target); a fragment
    /// was sent. The request target is in origin form, compiled or rendered.
    #[test]
    fn a_request_target_is_in_origin_form() {
        use crate::flow::IterState;
        use crate::flow::tests::{source_at, target};
        use crate::spec::Io;
        let src =
            source_at("GET {{base_url}}?q=1\nHTTP *\nGET {{base_url}}/a#top\nHTTP *\n", "http://127.0.0.1:9")
                .unwrap();
        let mut st = IterState::new(&src, &target("http://127.0.0.1:9"), true, Io::Epoll, 0);
        st.begin(&src, 0);
        let flow = &src.scenario.flows[0].hurl;
        for (i, line) in [(0, "GET /?q=1 HTTP/1.1\r\n"), (1, "GET /a HTTP/1.1\r\n")] {
            for entry in [&flow.entries[i], &flow.entries[i].clone()] {
                let wire = String::from_utf8(st.wire(&src, (0, i), entry).unwrap().to_vec()).unwrap();
                assert!(wire.starts_with(line), "{wire}");
            }
        }
    }

    /// `http://host:port{{path}}` with a captured path: sent where the origin goes, the
    /// path rendered at each request; a value that would change the server is not sent.
    #[test]
    fn a_captured_path_after_a_written_origin_is_rendered_and_checked() {
        use crate::flow::tests::{source_at, target};
        use crate::flow::{IterState, Unsent};
        use crate::spec::Io;
        let text = "GET http://localhost:8000/next\nHTTP *\n[Captures]\np: header \"X-P\"\n\
                    GET http://localhost:8000{{p}}\nHTTP *\n";
        let src = source_at(text, "http://127.0.0.1:9").unwrap();
        let mut st = IterState::new(&src, &target("http://127.0.0.1:9"), true, Io::Epoll, 0);
        st.begin(&src, 0);
        let entry = &src.scenario.flows[0].hurl.entries[1];
        st.vars.set("p", "/items/1?x=1", stackbench_hurl::Kind::String);
        let wire = String::from_utf8(st.wire(&src, (0, 1), entry).unwrap().to_vec()).unwrap();
        assert!(wire.starts_with("GET /items/1?x=1 HTTP/1.1\r\n"), "{wire}");
        for elsewhere in ["@evil.test/x", "0/x", ".evil.test/"] {
            st.vars.set("p", elsewhere, stackbench_hurl::Kind::String);
            let e = st.wire(&src, (0, 1), entry).unwrap_err();
            assert!(matches!(e, Unsent::Url(_) | Unsent::Value(_)), "{elsewhere}: {e:?}");
        }
    }

    /// A variable that names a request's server and that a capture sets too: the compiled
    /// request kept the value it had at load, and `verify` refused the captured one. A server
    /// never comes from an answer: refused at load, as `verify` refuses it; a rendered URL
    /// whose origin is none of the file's is not sent ([`path_into`]).
    #[test]
    fn a_server_a_capture_can_change_is_refused() {
        use crate::flow::FileSource;
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        let path = dir.join("t.hurl");
        let text = "GET {{host}}/a\nHTTP *\n[Captures]\nhost: header \"X-Next\"\nGET {{host}}/b\nHTTP *\n";
        std::fs::write(&path, text).unwrap();
        let aim = stackbench_hurl::Aim { target: Some("http://127.0.0.1:9"), ..Default::default() };
        let limits = stackbench_hurl::FileLimits::default();
        let src = FileSource::load(&path, &["host=http://127.0.0.1:9".into()], 1, &limits, aim);
        let e = src.unwrap_err();
        assert!(
            e.contains("t.hurl:1:5: the server of this request comes from `{{host}}`")
                && e.contains("a capture"),
            "{e}"
        );
        let routes = stackbench_hurl::Routes::default();
        let mut out = Vec::new();
        let e = path_into(&routes, b"http://elsewhere:1/b", &mut out).unwrap_err();
        assert_eq!(e, "http://elsewhere:1 is not one of the file's origins");
    }
}
