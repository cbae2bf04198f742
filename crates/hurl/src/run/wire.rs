//! What happens to a rendered request between the file and the transport, as
//! Hurl does it through curl, for `verify`, the reset, the setup and the
//! readiness probe: its URL moved to where its origin goes ([`Routes`]), the
//! user's cookie jar's cookies added and the answer's `Set-Cookie`s stored
//! ([`Jar`]), and, when the entry asks (`location`), each redirect followed
//! as curl follows one: a `POST` answered 301, 302 or 303 becomes a `GET`
//! without its body (any method but `HEAD` on a 303), `Authorization` is
//! dropped on the way to another host unless `location-trusted`, at most
//! `max-redirs` hops. A `Location` outside the file's origins is not followed:
//! the exchange fails, saying where it pointed (a server must never steer
//! requests at another one).

use crate::cookies::{self, Jar};
use crate::eval::{Answer, Redirect, Request, RunOptions};
use crate::model::Entry;
use crate::origin::{Routes, split};

use super::Send;

/// A user's session: where its requests go and its cookies.
#[derive(Debug, Clone, Default)]
pub struct Wire<'r> {
    /// `None`: every URL goes where it says (tests and built-ins, whose URLs are the target's).
    pub routes: Option<&'r Routes>,
    pub jar: Jar,
}

/// An answer reached by following redirects: the last one, what led to it and its URL.
#[derive(Debug)]
pub struct Followed<A> {
    pub last: A,
    pub redirects: Vec<Redirect>,
    /// The URL of the last request, as the file would write it.
    pub url: String,
}

impl<A: Answer> Answer for Followed<A> {
    fn status(&self) -> u16 {
        self.last.status()
    }
    fn header(&self, name: &str, nth: usize) -> Option<&str> {
        self.last.header(name, nth)
    }
    fn header_first(&self, name: &str) -> (Option<&str>, bool) {
        self.last.header_first(name)
    }
    fn first_set_cookie(&self) -> (Option<&[u8]>, bool) {
        self.last.first_set_cookie()
    }
    fn body(&self) -> &[u8] {
        self.last.body()
    }
    fn version(&self) -> Option<&str> {
        self.last.version()
    }
    fn url(&self) -> Option<&str> {
        Some(&self.url)
    }
    fn ip(&self) -> Option<std::net::IpAddr> {
        self.last.ip()
    }
    fn duration(&self) -> Option<std::time::Duration> {
        self.last.duration()
    }
    fn redirects(&self) -> &[Redirect] {
        &self.redirects
    }
}

/// Whether `status` is a redirect curl follows.
pub fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// The method a redirect answered `status` leads to, from `method` (curl's rule).
pub fn redirected_method(method: &str, status: u16) -> Option<&'static str> {
    match (status, method) {
        (303, m) if m != "HEAD" && m != "GET" => Some("GET"),
        (301 | 302, "POST") => Some("GET"),
        _ => None,
    }
}

/// `location` read against `base` (an absolute URL): an absolute URL, or `None`.
pub fn resolve(base: &str, location: &str) -> Option<String> {
    url::Url::parse(base).ok()?.join(location.trim()).ok().map(String::from)
}

impl Wire<'_> {
    /// Sends `req` (rendered from `e`) with the session's routes and cookies, following its
    /// redirects as `o` says. `Err` when no answer can be had: the URL is none of the file's
    /// origins, the transport failed, too many redirects, or one leaving the file's origins.
    pub fn exchange<A: Answer>(
        &mut self,
        e: &Entry,
        req: &mut Request,
        o: &RunOptions,
        send: Send<'_, A>,
    ) -> Result<Followed<A>, String> {
        if let Some(r) = self.routes {
            r.route(&mut req.url)?;
        }
        let written = (req.headers.clone(), req.cookies_at);
        let mut redirects = Vec::new();
        // Where the entry's own request went: curl sends `Authorization` nowhere else.
        let mut first = None;
        loop {
            let url = String::from_utf8_lossy(&req.url).into_owned();
            let (origin, len) =
                split(url.as_bytes()).ok_or_else(|| format!("{url:?} is not an http:// URL"))?;
            let path = &url[len..];
            let first = &*first.get_or_insert_with(|| origin.clone());
            let now = cookies::now();
            add_cookies(&self.jar, req, &origin.host, path, origin.tls);
            let answer = send(e, req)?;
            for v in (0..).map_while(|i| answer.header("set-cookie", i)) {
                self.jar.store(v, &origin.host, if path.is_empty() { "/" } else { path }, || now);
            }
            let status = answer.status();
            let location = answer.header("location", 0).filter(|_| o.location && is_redirect(status));
            let Some(location) = location else {
                let url = self.routes.map_or_else(|| url.clone(), |r| r.as_written(&url));
                return Ok(Followed { last: answer, redirects, url });
            };
            if o.max_redirs.is_some_and(|m| redirects.len() as u64 >= m) {
                return Err(too_many(redirects.len(), o.max_redirs.unwrap_or_default()));
            }
            let hop = (status, location);
            redirects.push(redirect(
                self.routes,
                req,
                (&e.method, &written.0, written.1),
                (&url, first),
                hop,
                o.location_trusted,
            )?);
            drop(answer);
        }
    }
}

/// Why a redirect past `max-redirs` is not followed, `followed` of them followed.
pub fn too_many(followed: usize, max_redirs: u64) -> String {
    format!("too many redirects: {followed} followed, and max-redirs is {max_redirs}")
}

/// Where a redirect leads ([`hop_target`]): the URL it goes to (routed), the URL as the file
/// would write it, and whether it leaves the origin where the entry's own request went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HopTarget {
    pub url: String,
    pub as_written: String,
    pub other_host: bool,
}

/// Where a redirect from `url`, on the way from `first` (where the entry's own request went),
/// with `location` leads: moved to where the routes send it (`None`: anywhere). `Err` when
/// the `Location` is not a URL or leaves the file's origins (a server must not steer requests
/// at another one). The same three always give the same target: the load engine keeps it.
pub fn hop_target(
    routes: Option<&Routes>,
    url: &str,
    first: &crate::origin::Origin,
    location: &str,
) -> Result<HopTarget, String> {
    let next =
        resolve(url, location).ok_or_else(|| format!("the redirect's Location {location:?} is not a URL"))?;
    let allowed = match routes {
        Some(r) => r.allows(&next),
        None => Some(next.clone()),
    };
    let Some(moved) = allowed else {
        return Err(format!(
            "the redirect to {next} leaves the file's origins and is not followed: a server must not steer requests at another one"
        ));
    };
    let as_written = routes.map_or_else(|| next.clone(), |r| r.as_written(&moved));
    let other_host = split(moved.as_bytes()).is_none_or(|(o, _)| o != *first);
    Ok(HopTarget { url: moved, as_written, other_host })
}

/// Makes `req` the request a redirect leads to, as curl does: `req` was sent to `url`, on
/// the way from `first` (where the entry's own request went), for an entry of method `method`, whose headers the file
/// wrote as `written` (its `[Cookies]` value at `written_at`), and answered `status` with `location`. Its URL moves to where the
/// routes send the `Location` (`None`: anywhere), a `POST` answered 301, 302 or 303 becomes
/// a `GET` without its body (any method but `HEAD` on a 303), and `Authorization` is
/// sent to no origin but `first` unless `trusted`; the jar's cookies are left to be
/// added anew. Returns the hop as the file would write it; `Err` when the `Location` is
/// not a URL or leaves the file's origins (a server must not steer requests at another
/// one).
pub fn redirect(
    routes: Option<&Routes>,
    req: &mut Request,
    written: (&str, &[u8], Option<usize>),
    (url, first): (&str, &crate::origin::Origin),
    (status, location): (u16, &str),
    trusted: bool,
) -> Result<Redirect, String> {
    let target = hop_target(routes, url, first, location)?;
    Ok(redirect_to(req, written, status, &target, trusted))
}

/// [`redirect`] once its target is known: `req` made the request to `target` for an entry of
/// method `method` whose headers the file wrote as `written` (its `[Cookies]` value at
/// `written_at`), answered `status`. Returns the hop as the file would write it.
pub fn redirect_to(
    req: &mut Request,
    (method, written, written_at): (&str, &[u8], Option<usize>),
    status: u16,
    target: &HopTarget,
    trusted: bool,
) -> Redirect {
    if let Some(m) = redirected_method(req.method.unwrap_or(method), status) {
        req.method = Some(m);
        req.body.clear();
    }
    req.url.clear();
    req.url.extend_from_slice(target.url.as_bytes());
    // What the file wrote, less what this hop drops; the jar's cookies are added anew.
    req.headers.clear();
    req.headers.extend_from_slice(written);
    req.cookies_at = written_at;
    let drop_auth = target.other_host && !trusted;
    let bodiless = req.method.is_some();
    remove_lines(&mut req.headers, &mut req.cookies_at, |name| {
        (drop_auth && name.eq_ignore_ascii_case(b"authorization"))
            || (bodiless
                && (name.eq_ignore_ascii_case(b"content-type")
                    || name.eq_ignore_ascii_case(b"content-length")))
    });
    Redirect { status, location: target.as_written.clone() }
}

/// Puts `jar`'s cookies for `host` and `path` (over TLS when `tls`) in the request: in the
/// `Cookie` line of `[Cookies]` (before its own, as curl sends them), else in a line of
/// their own. Written in the request's own headers, without a buffer of its own (the load
/// engine's h2c path calls it per request).
pub fn add_cookies(jar: &Jar, req: &mut Request, host: &str, path: &str, tls: bool) {
    if jar.is_empty() {
        return;
    }
    let h = &mut req.headers;
    let start = h.len();
    if let Some(at) = req.cookies_at {
        // Written at the end, then turned into place before the `[Cookies]` line's own.
        if !jar.header(host, path, tls, cookies::now, h) {
            return;
        }
        h.extend_from_slice(b"; ");
        let len = h.len() - start;
        h[at..].rotate_right(len);
    } else {
        h.extend_from_slice(b"Cookie: ");
        if !jar.header(host, path, tls, cookies::now, h) {
            h.truncate(start);
            return;
        }
        h.extend_from_slice(b"\r\n");
    }
}

/// Removes the header lines whose name `drop` says, keeping `cookies_at` on its line. In
/// place: the lines kept move down over those dropped (a hop under load calls it).
fn remove_lines(headers: &mut Vec<u8>, cookies_at: &mut Option<usize>, drop: impl Fn(&[u8]) -> bool) {
    let (mut read, mut write) = (0, 0);
    while read < headers.len() {
        let len = headers[read..].iter().position(|&b| b == b'\n').map_or(headers.len() - read, |n| n + 1);
        let line = &headers[read..read + len];
        let name = line.split(|&b| b == b':').next().unwrap_or(line);
        if !drop(name.trim_ascii()) {
            if let Some(c) = cookies_at.as_mut()
                && (read..read + len).contains(c)
            {
                *c = write + (*c - read);
            }
            headers.copy_within(read..read + len, write);
            write += len;
        }
        read += len;
    }
    headers.truncate(write);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curl_changes_the_method_as_it_does() {
        assert_eq!(redirected_method("POST", 302), Some("GET"));
        assert_eq!(redirected_method("POST", 307), None);
        assert_eq!(redirected_method("PUT", 303), Some("GET"));
        assert_eq!(redirected_method("HEAD", 303), None);
        assert_eq!(redirected_method("PUT", 301), None);
    }

    #[test]
    fn locations_resolve_against_the_request() {
        let r = |l| resolve("http://h:1/a/b?q=1", l);
        assert_eq!(r("/x").as_deref(), Some("http://h:1/x"));
        assert_eq!(r("c").as_deref(), Some("http://h:1/a/c"));
        assert_eq!(r("../d").as_deref(), Some("http://h:1/d"));
        assert_eq!(r("http://other:2/e").as_deref(), Some("http://other:2/e"));
        assert_eq!(r("//other/f").as_deref(), Some("http://other/f"));
    }

    /// The jar's cookies go in a line of their own, or before `[Cookies]`' own in its line;
    /// none for a jar without a cookie for the request.
    #[test]
    fn the_jars_cookies_join_the_request() {
        let mut jar = Jar::default();
        jar.store("a=1", "h", "/", || 0);
        jar.store("b=2; Path=/x", "h", "/", || 0);
        let req = |headers: &[u8], cookies_at| Request {
            headers: headers.to_vec(),
            cookies_at,
            ..Request::default()
        };
        let mut r = req(b"X: y\r\n", None);
        add_cookies(&jar, &mut r, "h", "/x/1", false);
        assert_eq!(r.headers, b"X: y\r\nCookie: b=2; a=1\r\n");
        let mut r = req(b"X: y\r\nCookie: c=3\r\nZ: w\r\n", Some(14));
        add_cookies(&jar, &mut r, "h", "/", false);
        assert_eq!(r.headers, b"X: y\r\nCookie: a=1; c=3\r\nZ: w\r\n");
        let mut r = req(b"X: y\r\n", None);
        add_cookies(&jar, &mut r, "other", "/", false);
        assert_eq!(r.headers, b"X: y\r\n");
        add_cookies(&Jar::default(), &mut r, "h", "/", false);
        assert_eq!(r.headers, b"X: y\r\n");
    }

    #[test]
    fn lines_go_and_the_cookie_place_follows() {
        let mut h = b"Authorization: x\r\nCookie: a=1\r\nContent-Type: t\r\n".to_vec();
        let mut at = Some(26);
        remove_lines(&mut h, &mut at, |n| n.eq_ignore_ascii_case(b"authorization"));
        assert_eq!(h, b"Cookie: a=1\r\nContent-Type: t\r\n");
        assert_eq!(at, Some(8));
        // Lines dropped between and after those kept, the last without its end.
        let mut h = b"A: 1\r\nContent-Type: t\r\nCookie: a=1\r\ncontent-length: 2\r\nB: 2".to_vec();
        let mut at = Some(31);
        remove_lines(&mut h, &mut at, |n| n.eq_ignore_ascii_case(b"content-type") || n == b"content-length");
        assert_eq!(h, b"A: 1\r\nCookie: a=1\r\nB: 2");
        assert_eq!((at, &h[at.unwrap()..at.unwrap() + 3]), (Some(14), &b"a=1"[..]));
        let mut h = b"X: 1\r\n".to_vec();
        remove_lines(&mut h, &mut None, |_| true);
        assert!(h.is_empty());
    }

    #[test]
    fn each_hop_starts_from_what_the_file_wrote() {
        let written = b"Authorization: x\r\nCookie: a=1\r\nContent-Type: t\r\n".to_vec();
        let mut req = Request {
            url: b"http://h:1/a".to_vec(),
            headers: written.clone(),
            body: b"b".to_vec(),
            cookies_at: Some(26),
            ..Request::default()
        };
        let origin = |u: &str| split(u.as_bytes()).unwrap().0;
        // The jar's cookies went in before the first hop; a 302 to the same origin turns the POST
        // into a GET without its body and Content-Type, Authorization kept.
        add_cookies_line(&mut req, b"j=2");
        let hop = redirect(
            None,
            &mut req,
            ("POST", &written, Some(26)),
            ("http://h:1/a", &origin("http://h:1/a")),
            (302, "/b"),
            false,
        );
        assert_eq!(hop.unwrap().location, "http://h:1/b");
        assert_eq!((req.method, req.body.len()), (Some("GET"), 0));
        assert_eq!(req.headers, b"Authorization: x\r\nCookie: a=1\r\n");
        assert_eq!(req.cookies_at, Some(26));
        // A second hop, to another origin: Authorization dropped, the cookie place still right.
        let h = origin("http://h:1/a");
        let hop = redirect(
            None,
            &mut req,
            ("POST", &written, Some(26)),
            ("http://h:1/b", &h),
            (307, "http://o:2/c"),
            false,
        );
        assert_eq!(hop.unwrap().location, "http://o:2/c");
        assert_eq!(req.headers, b"Cookie: a=1\r\n");
        assert_eq!(&req.headers[req.cookies_at.unwrap()..], b"a=1\r\n");
        assert_eq!(req.method, Some("GET"), "a 307 keeps the method it was sent with");
        // On along the other origin: still no Authorization; back to the first, it goes again.
        redirect(None, &mut req, ("POST", &written, Some(26)), ("http://o:2/c", &h), (302, "/d"), false)
            .unwrap();
        assert_eq!(req.headers, b"Cookie: a=1\r\n");
        redirect(
            None,
            &mut req,
            ("POST", &written, Some(26)),
            ("http://o:2/d", &h),
            (302, "http://h:1/e"),
            false,
        )
        .unwrap();
        assert_eq!(req.headers, b"Authorization: x\r\nCookie: a=1\r\n");
        assert_eq!(&req.headers[req.cookies_at.unwrap()..], b"a=1\r\n");
    }

    /// Puts `line` where the jar's cookies go, as [`add_cookies`] does.
    fn add_cookies_line(req: &mut Request, line: &[u8]) {
        let at = req.cookies_at.unwrap();
        req.headers.splice(at..at, [line, b"; "].concat());
    }
}
