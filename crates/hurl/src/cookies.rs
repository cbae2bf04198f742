//! A user's cookie jar, kept as Hurl keeps one (libcurl's cookie engine): each
//! `Set-Cookie` of an answer stored by the rules of RFC 6265 (section 5.3: its
//! `Domain`, `Path`, `Expires` and `Max-Age`, `Secure`, `HttpOnly`), and the
//! cookies that match a request (domain, path, `Secure` over https only, not
//! expired) sent on it in one `Cookie` header, longest path first, then oldest.
//!
//! What is left out, and why: the public-suffix list (a `Domain=com` cookie is
//! stored like any other; the files run against servers the user names, never
//! the web at large) and `SameSite` (a browser's rule about which site started
//! a request, which has no meaning for a scripted client, as in curl).
//!
//! A jar costs nothing until an answer sets a cookie: it is a `Vec` that stays
//! empty, and a request to an empty jar writes nothing. Under load a server sets
//! the same cookie again and again: a `Set-Cookie` is read in place and compared
//! with the stored cookie before anything is copied, and the jar is kept in the
//! order the cookies are sent, so neither storing an unchanged cookie nor writing
//! the `Cookie` header allocates.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, NaiveDateTime, Utc};

use crate::bytes::same;

/// One stored cookie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cookie {
    pub name: String,
    pub value: String,
    /// Lower case, without a leading dot.
    pub domain: String,
    /// Sent only to `domain` itself (no `Domain` attribute was given).
    pub host_only: bool,
    pub path: String,
    pub secure: bool,
    pub http_only: bool,
    /// When it expires (seconds since the Unix epoch); `None`: at the end of the session.
    pub expires: Option<i64>,
}

/// A `Set-Cookie` as read, borrowing from the header (and the request's host).
#[derive(Debug)]
struct Parsed<'a> {
    name: &'a str,
    value: &'a str,
    domain: Cow<'a, str>,
    host_only: bool,
    path: &'a str,
    secure: bool,
    http_only: bool,
    expires: Option<i64>,
}

impl Parsed<'_> {
    fn to_cookie(&self) -> Cookie {
        Cookie {
            name: self.name.to_owned(),
            value: self.value.to_owned(),
            domain: self.domain.clone().into_owned(),
            host_only: self.host_only,
            path: self.path.to_owned(),
            secure: self.secure,
            http_only: self.http_only,
            expires: self.expires,
        }
    }

    /// Writes what may differ into `c`, the stored cookie of the same name, domain and path;
    /// an unchanged value is not copied (nor its buffer touched). Whether `c` changed.
    fn update(&self, c: &mut Cookie) -> bool {
        let same = c.value == self.value
            && (c.host_only, c.secure, c.http_only, c.expires)
                == (self.host_only, self.secure, self.http_only, self.expires);
        if c.value != self.value {
            self.value.clone_into(&mut c.value);
        }
        c.host_only = self.host_only;
        c.secure = self.secure;
        c.http_only = self.http_only;
        c.expires = self.expires;
        !same
    }
}

/// A user's cookies.
#[derive(Debug, Clone, Default)]
pub struct Jar {
    /// In the order they are sent: longer paths first, and among equal paths in the order
    /// they were first stored (an update keeps its place, as RFC 6265 keeps the creation
    /// time).
    cookies: Vec<Cookie>,
    /// The last store, when it left a session cookie (no `Expires`, no `Max-Age`) in the
    /// jar and nothing has changed the jar since: the same header, from the same host for
    /// the same path, would store the same cookie again, so it is not read at all.
    last: Last,
    /// Which cookies it holds: 0 when it holds none, otherwise a number no other content of
    /// any jar has had ([`STAMPS`]); a copy of the jar keeps it. [`Sent`] compares it.
    stamp: u64,
}

/// Where the jars' stamps come from: each change to a jar takes the next, so two jars with
/// the same stamp hold the same cookies (one was copied from the other, or both are empty).
static STAMPS: AtomicU64 = AtomicU64::new(1);

/// What [`Jar::store`] was last given, while `valid`.
#[derive(Debug, Clone, Default)]
struct Last {
    valid: bool,
    header: String,
    host: String,
    path: String,
}

impl Last {
    fn is(&self, header: &[u8], host: &str, path: &[u8]) -> bool {
        self.valid
            && same(self.header.as_bytes(), header)
            && same(self.host.as_bytes(), host.as_bytes())
            && same(self.path.as_bytes(), path)
    }

    fn set(&mut self, header: &str, host: &str, path: &str) {
        header.clone_into(&mut self.header);
        host.clone_into(&mut self.host);
        path.clone_into(&mut self.path);
        self.valid = true;
    }
}

/// Two jars are equal when they hold the same cookies in the same order.
impl PartialEq for Jar {
    fn eq(&self, other: &Jar) -> bool {
        self.cookies == other.cookies
    }
}

impl Eq for Jar {}

/// Seconds since the Unix epoch, now (read on every request that sends or stores a cookie:
/// the clock's seconds, without a calendar date made and taken apart).
pub fn now() -> i64 {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_secs()).map_or(i64::MIN, |s| -s),
    }
}

impl Jar {
    pub fn is_empty(&self) -> bool {
        self.cookies.is_empty()
    }

    pub fn clear(&mut self) {
        self.cookies.clear();
        self.last.valid = false;
        self.stamp = 0;
    }

    /// Marks the cookies as changed: a new stamp.
    fn changed(&mut self) {
        self.stamp = if self.cookies.is_empty() { 0 } else { STAMPS.fetch_add(1, Ordering::Relaxed) };
    }

    /// The cookies, longest path first, then oldest.
    pub fn cookies(&self) -> &[Cookie] {
        &self.cookies
    }

    /// Stores the cookie of one `Set-Cookie` header value, received from `host` for a
    /// request to `path` (its path, without the query), at the time `now` gives (read only
    /// when the cookie expires). A header that is not a cookie (no `name=`), or whose
    /// `Domain` does not cover `host`, is ignored, as RFC 6265 says; one that has expired
    /// removes the cookie it names.
    pub fn store(&mut self, header: &str, host: &str, path: &str, now: impl Fn() -> i64) {
        if self.last.is(header.as_bytes(), host, path.as_bytes()) {
            return;
        }
        self.last.valid = false;
        let Some(c) = parse(header, host, path, &now) else { return };
        let same = |o: &Cookie| o.name == c.name && o.domain == *c.domain && o.path == c.path;
        let expired = c.expires.is_some_and(|t| t <= now());
        match self.cookies.iter().position(same) {
            Some(i) if expired => {
                self.cookies.remove(i);
                self.changed();
                return;
            }
            Some(i) => {
                if c.update(&mut self.cookies[i]) {
                    self.changed();
                }
            }
            None if expired => return,
            None => {
                // After every cookie whose path is as long or longer: the order they are sent.
                let at = self.cookies.iter().position(|o| o.path.len() < c.path.len());
                self.cookies.insert(at.unwrap_or(self.cookies.len()), c.to_cookie());
                self.changed();
            }
        }
        if c.expires.is_none() {
            self.last.set(header, host, path);
        }
    }

    /// [`Jar::store`] of a header's bytes as received, for a request whose path is `path`'s
    /// bytes as sent (`/` when they are empty or not UTF-8): the header stored last, from the
    /// same host for the same path, is passed over before either is read as text (the bytes
    /// of a `String`, it is text). Whether the header is text (a header that is not is not
    /// stored).
    pub fn store_at(&mut self, header: &[u8], host: &str, path: &[u8], now: impl Fn() -> i64) -> bool {
        if self.last.is(header, host, path) {
            return true;
        }
        let Ok(header) = std::str::from_utf8(header) else { return false };
        let path = std::str::from_utf8(path).ok().filter(|p| !p.is_empty()).unwrap_or("/");
        self.store(header, host, path, now);
        true
    }

    /// Writes the value of the `Cookie` header of a request to `host` and `path` (over TLS
    /// when `tls`) at the time `now` gives (read only when a cookie expires): `a=1; b=2`,
    /// appended to `out`; returns whether it wrote any.
    pub fn header(
        &self,
        host: &str,
        path: &str,
        tls: bool,
        now: impl Fn() -> i64,
        out: &mut Vec<u8>,
    ) -> bool {
        let mut any = false;
        // The jar is in the order cookies are sent: no list to make and sort.
        for c in self.cookies.iter().filter(|c| {
            (tls || !c.secure)
                && c.expires.is_none_or(|t| t > now())
                && domain_matches(host, &c.domain, c.host_only)
                && path_matches(path, &c.path)
        }) {
            if any {
                out.extend_from_slice(b"; ");
            }
            out.extend_from_slice(c.name.as_bytes());
            out.push(b'=');
            out.extend_from_slice(c.value.as_bytes());
            any = true;
        }
        any
    }
}

/// The `Cookie` line a jar last wrote, written again without a look at the cookies while the
/// jar holds the same ones (its stamp), the request goes to the same host, path and
/// transport, and no cookie of the jar has reached its expiry since. Under load each request
/// of a user sends the line the one before sent: then this is all it costs.
#[derive(Debug, Clone, Default)]
pub struct Sent {
    /// The stamp of the jar the line was written from (`None`: no line yet); the fields
    /// below say for what request.
    stamp: Option<u64>,
    host: String,
    path: Vec<u8>,
    tls: bool,
    /// Whether a cookie of the jar has an expiry: then the line holds only for the times
    /// from the time it was written to the earliest expiry after it.
    expiring: bool,
    from: i64,
    until: i64,
    /// Whether the jar sent a cookie (the line is not empty).
    any: bool,
    line: Vec<u8>,
}

impl Sent {
    /// The value of the `Cookie` header `jar` sends on a request to `host` and `path` (over
    /// TLS when `tls`) at the time `now` gives, as [`Jar::header`] writes it; `None` when it
    /// sends none. `now` is read only when a cookie of the jar expires.
    pub fn line(
        &mut self,
        jar: &Jar,
        host: &str,
        path: &[u8],
        tls: bool,
        now: impl Fn() -> i64,
    ) -> Option<&[u8]> {
        let kept = self.stamp == Some(jar.stamp)
            && self.tls == tls
            && self.path == path
            && self.host == host
            && (!self.expiring || (self.from..self.until).contains(&now()));
        if !kept {
            self.write(jar, host, path, tls, now);
        }
        self.any.then_some(&self.line[..])
    }

    fn write(&mut self, jar: &Jar, host: &str, path: &[u8], tls: bool, now: impl Fn() -> i64) {
        let expiring = jar.cookies.iter().any(|c| c.expires.is_some());
        let at = if expiring { now() } else { i64::MIN };
        self.line.clear();
        self.any = jar.header(host, std::str::from_utf8(path).unwrap_or("/"), tls, || at, &mut self.line);
        // Which cookies have expired changes next at the earliest expiry still to come.
        let next = jar.cookies.iter().filter_map(|c| c.expires.filter(|&t| t > at)).min();
        (self.expiring, self.from, self.until) = (expiring, at, next.unwrap_or(i64::MAX));
        self.stamp = Some(jar.stamp);
        self.tls = tls;
        self.path.clear();
        self.path.extend_from_slice(path);
        host.clone_into(&mut self.host);
    }
}

/// A `Set-Cookie` value as a cookie for `host` and request `path` (RFC 6265, 5.2 and 5.3),
/// read in place.
fn parse<'a>(header: &'a str, host: &'a str, path: &'a str, now: &impl Fn() -> i64) -> Option<Parsed<'a>> {
    let (name, value, attrs) = name_value(header)?;
    if name.is_empty() {
        return None;
    }
    let mut c = Parsed {
        name,
        value,
        domain: lower(host),
        host_only: true,
        path: default_path(path),
        secure: false,
        http_only: false,
        expires: None,
    };
    let mut max_age = None;
    for attr in attrs.split(';') {
        let (key, val) = attr.split_once('=').map_or((attr.trim(), ""), |(k, v)| (k.trim(), v.trim()));
        let is = |name: &str| key.eq_ignore_ascii_case(name);
        if is("expires") {
            if let Some(t) = date(val) {
                c.expires = Some(t.timestamp());
            }
        } else if is("max-age") {
            if let Ok(n) = val.parse::<i64>() {
                max_age = Some(if n <= 0 { i64::MIN } else { now().saturating_add(n) });
            }
        } else if is("domain") && !val.is_empty() {
            let d = lower(val.trim_start_matches('.'));
            if !domain_matches(host, &d, false) {
                return None;
            }
            c.domain = d;
            c.host_only = false;
        } else if is("path") && val.starts_with('/') {
            c.path = val;
        } else if is("secure") {
            c.secure = true;
        } else if is("httponly") {
            c.http_only = true;
        }
    }
    if max_age.is_some() {
        c.expires = max_age;
    }
    Some(c)
}

/// A `Set-Cookie` value's name and value (before its first `;`, split at the first `=`,
/// trimmed), and what follows the `;` (its attributes); `None` without a `=`. One pass over
/// the bytes: the `cookie` query reads it on every answer.
pub(crate) fn name_value(header: &str) -> Option<(&str, &str, &str)> {
    let (eq, end) = split(header.as_bytes())?;
    let attrs = header.get(end + 1..).unwrap_or("");
    Some((trim(&header[..eq]), trim(&header[eq + 1..end]), attrs))
}

/// [`name_value`]'s name and value of a header received as bytes, when it is ASCII: then it
/// is text, and its bytes split as the text does, without the check a `&str` costs. `None`
/// when it is not ASCII, or has no `=`.
pub(crate) fn name_value_ascii(header: &[u8]) -> Option<(&[u8], &[u8])> {
    if !header.is_ascii() {
        return None;
    }
    let (eq, end) = split(header)?;
    Some((trim_ascii(&header[..eq]), trim_ascii(&header[eq + 1..end])))
}

/// Where a `Set-Cookie` value's first `=` and its first `;` (or its end) are, the `=` before
/// the `;`; `None` without one. Eight bytes at a time: in each word, the lowest byte that is
/// a `=` (or a `;`) is the lowest high bit of the classic zero-byte test (higher ones may be
/// false; the subtractions borrow only upwards from a byte that is one).
#[inline]
fn split(header: &[u8]) -> Option<(usize, usize)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let first = |w: u64, c: u8| {
        let v = w ^ (u64::from(c) * ONES);
        let m = v.wrapping_sub(ONES) & !v & (0x80 * ONES);
        (m != 0).then(|| m.trailing_zeros() as usize / 8)
    };
    let mut eq = None;
    let mut at = 0;
    while let Some(w) = header.get(at..at + 8) {
        let w = u64::from_le_bytes(w.try_into().expect("eight bytes"));
        let semi = first(w, b';');
        if eq.is_none() {
            eq = first(w, b'=').filter(|&e| semi.is_none_or(|s| e < s)).map(|e| at + e);
        }
        if let Some(s) = semi {
            return Some((eq?, at + s));
        }
        at += 8;
    }
    for (i, &b) in header.iter().enumerate().skip(at) {
        match b {
            b'=' if eq.is_none() => eq = Some(i),
            b';' => return Some((eq?, i)),
            _ => {}
        }
    }
    Some((eq?, header.len()))
}

/// `s.trim()`, without looking for white space when `s` begins and ends with a printable
/// ASCII byte that is not a space (a cookie's name and value nearly always do).
#[inline]
fn trim(s: &str) -> &str {
    match s.as_bytes() {
        [first, .., last] if first.is_ascii_graphic() && last.is_ascii_graphic() => s,
        [one] if one.is_ascii_graphic() => s,
        _ => s.trim(),
    }
}

/// [`trim`] of ASCII bytes: what `str::trim` takes off ASCII text (its white space, which
/// holds the vertical tab that `u8::is_ascii_whitespace` leaves out).
#[inline]
fn trim_ascii(s: &[u8]) -> &[u8] {
    let space = |b: &u8| matches!(b, b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r' | b' ');
    match s {
        // Past the space, no ASCII byte is white space.
        [first, .., last] if *first > b' ' && *last > b' ' => s,
        [one] if *one > b' ' => s,
        _ => {
            let start = s.iter().position(|b| !space(b)).unwrap_or(s.len());
            let end = s.iter().rposition(|b| !space(b)).map_or(start, |e| e + 1);
            &s[start..end]
        }
    }
}

/// `s` in lower case, copied only when it has an upper-case letter.
fn lower(s: &str) -> Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

/// RFC 6265 5.1.4: the directory of the request's path (`/a/b` → `/a`; `/a` → `/`).
fn default_path(path: &str) -> &str {
    let path = without_query(path);
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// RFC 6265 5.1.3: `host` is `domain`, or (not host-only, and `host` a name, not an IP
/// address) ends with `.domain`.
fn domain_matches(host: &str, domain: &str, host_only: bool) -> bool {
    // The same bytes first: a cookie's domain is usually the host it came from, as written.
    if host == domain || host.eq_ignore_ascii_case(domain) {
        return true;
    }
    if host_only || host.parse::<std::net::IpAddr>().is_ok() {
        return false;
    }
    host.len() > domain.len()
        && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
        && host[host.len() - domain.len()..].eq_ignore_ascii_case(domain)
}

/// A request's path without its query or fragment (a byte search: every request that sends
/// a cookie asks).
fn without_query(path: &str) -> &str {
    path.bytes().position(|b| b == b'?' || b == b'#').map_or(path, |i| &path[..i])
}

/// RFC 6265 5.1.4: the request's path is the cookie's, or under it.
fn path_matches(request: &str, cookie: &str) -> bool {
    let request = without_query(request);
    let request = if request.is_empty() { "/" } else { request };
    request == cookie
        || (request.starts_with(cookie)
            && (cookie.ends_with('/') || request.as_bytes().get(cookie.len()) == Some(&b'/')))
}

/// A cookie's `Expires`: RFC 1123 (`Wed, 13 Jan 2021 22:23:01 GMT`), or with dashes
/// (`Wed, 13-Jan-2021 22:23:01 GMT`), as servers write them.
pub fn date(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc2822(s)
        .map(|d| d.with_timezone(&Utc))
        .ok()
        .or_else(|| NaiveDateTime::parse_from_str(s, "%a, %d-%b-%Y %H:%M:%S GMT").ok().map(|d| d.and_utc()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000;

    fn sent(jar: &Jar, host: &str, path: &str, tls: bool) -> String {
        let mut out = Vec::new();
        jar.header(host, path, tls, || NOW, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_session_cookie_goes_back_to_its_host_and_path() {
        let mut jar = Jar::default();
        jar.store("sid=abc; Path=/; HttpOnly", "127.0.0.1", "/login", || NOW);
        jar.store("pref=x", "127.0.0.1", "/app/settings", || NOW);
        assert_eq!(sent(&jar, "127.0.0.1", "/app/settings?x=1", false), "pref=x; sid=abc");
        assert_eq!(sent(&jar, "127.0.0.1", "/other", false), "sid=abc");
        assert_eq!(sent(&jar, "127.0.0.2", "/", false), "");
        assert_eq!(
            sent(&jar, "127.0.0.1", "/application", false),
            "sid=abc",
            "/app does not cover /application"
        );
    }

    #[test]
    fn domains_cover_their_subdomains_and_refuse_others() {
        let mut jar = Jar::default();
        jar.store("a=1; Domain=.example.test", "api.example.test", "/", || NOW);
        jar.store("b=2; Domain=other.test", "api.example.test", "/", || NOW);
        jar.store("c=3", "api.example.test", "/", || NOW);
        assert_eq!(sent(&jar, "www.example.test", "/", false), "a=1");
        assert_eq!(sent(&jar, "api.example.test", "/", false), "a=1; c=3");
        assert_eq!(jar.cookies().len(), 2, "a Domain that does not cover the host is ignored");
        let mut jar = Jar::default();
        jar.store("d=4; Domain=localhost", "localhost", "/", || NOW);
        assert_eq!(sent(&jar, "localhost", "/x", false), "d=4");
    }

    #[test]
    fn expiry_secure_and_replacement() {
        let mut jar = Jar::default();
        jar.store("t=1; Max-Age=60", "h", "/", || NOW);
        jar.store("s=1; Secure", "h", "/", || NOW);
        jar.store("old=1; Expires=Wed, 13 Jan 2021 22:23:01 GMT", "h", "/", || NOW);
        assert_eq!(sent(&jar, "h", "/", false), "t=1");
        assert_eq!(sent(&jar, "h", "/", true), "t=1; s=1");
        let mut later = Vec::new();
        jar.header("h", "/", false, || NOW + 61, &mut later);
        assert!(later.is_empty(), "expired after its Max-Age");
        jar.store("t=2", "h", "/", || NOW);
        assert_eq!(sent(&jar, "h", "/", false), "t=2", "replaced in place");
        jar.store("t=; Max-Age=0", "h", "/", || NOW);
        assert_eq!(sent(&jar, "h", "/", false), "", "deleted");
        jar.store("novalue", "h", "/", || NOW);
        jar.store("=x", "h", "/", || NOW);
        assert_eq!(jar.cookies().len(), 1, "only s=1 is left");
    }

    #[test]
    fn names_and_values_split_as_the_header_splits() {
        for h in
            ["a=1", " a = 1 ; Path=/", "a=b=c; x", "a;b=1", "=1", "a=", "a=1;", "novalue", "", "é = ü ;;"]
        {
            let mut parts = h.split(';');
            let first = parts.next().and_then(|p| p.split_once('='));
            let expected = first.map(|(n, v)| (n.trim(), v.trim(), h.split_once(';').map_or("", |(_, a)| a)));
            assert_eq!(name_value(h), expected, "{h:?}");
        }
    }

    #[test]
    fn default_paths_and_dates() {
        assert_eq!(default_path("/a/b/c?q=/x"), "/a/b");
        assert_eq!(default_path("/a"), "/");
        assert_eq!(default_path(""), "/");
        assert!(date("Wed, 13 Jan 2021 22:23:01 GMT").is_some());
        assert!(date("Wed, 13-Jan-2021 22:23:01 GMT").is_some());
        assert!(date("soon").is_none());
    }

    /// The jar as first written: cookies in the order they were first stored, sorted by
    /// path when a request is written. [`Jar`] keeps them sorted instead.
    #[derive(Default)]
    struct Reference(Vec<Cookie>);

    impl Reference {
        fn store(&mut self, header: &str, host: &str, path: &str, now: i64) {
            let Some(c) = parse(header, host, path, &|| now).map(|p| p.to_cookie()) else { return };
            let same = |o: &Cookie| o.name == c.name && o.domain == c.domain && o.path == c.path;
            let expired = c.expires.is_some_and(|t| t <= now);
            match self.0.iter().position(same) {
                Some(i) if expired => {
                    self.0.remove(i);
                }
                Some(i) => self.0[i] = c,
                None if expired => {}
                None => self.0.push(c),
            }
        }

        fn header(&self, host: &str, path: &str, tls: bool, now: i64) -> String {
            let mut sent: Vec<&Cookie> = (self.0.iter())
                .filter(|c| {
                    (tls || !c.secure)
                        && c.expires.is_none_or(|t| t > now)
                        && domain_matches(host, &c.domain, c.host_only)
                        && path_matches(path, &c.path)
                })
                .collect();
            sent.sort_by_key(|c| std::cmp::Reverse(c.path.len()));
            let pairs: Vec<String> = sent.iter().map(|c| format!("{}={}", c.name, c.value)).collect();
            pairs.join("; ")
        }
    }

    fn arb_set_cookie() -> impl proptest::strategy::Strategy<Value = (String, &'static str, &'static str)> {
        use proptest::prelude::*;
        let attrs = proptest::sample::subsequence(
            vec![
                "; Path=/",
                "; Path=/a",
                "; path=/a/b",
                "; Domain=example.test",
                "; DOMAIN=.Api.Example.Test",
                "; Secure",
                "; HttpOnly",
                "; Max-Age=0",
                "; Max-Age=60",
                "; Expires=Wed, 13 Jan 2021 22:23:01 GMT",
            ],
            0..4,
        );
        let host = prop_oneof![Just("api.example.test"), Just("API.example.test"), Just("127.0.0.1")];
        let path = prop_oneof![Just("/"), Just("/a/b/c"), Just("/a"), Just("/a/b?q=/x")];
        ("[abc]", "[xyz]{0,2}", attrs, host, path)
            .prop_map(|(n, v, a, host, path)| (format!("{n}={v}{}", a.concat()), host, path))
    }

    proptest::proptest! {
        /// Kept in the order cookies are sent, updated in place, the jar sends what the jar
        /// that sorts each request's cookies sends.
        #[test]
        fn the_sorted_jar_sends_what_sorting_each_request_sends(
            sets in proptest::collection::vec(arb_set_cookie(), 0..12),
            tls in proptest::bool::ANY,
        ) {
            let (mut jar, mut reference) = (Jar::default(), Reference::default());
            for (header, host, path) in &sets {
                jar.store(header, host, path, || NOW);
                reference.store(header, host, path, NOW);
                for (host, path) in [("api.example.test", "/a/b/c"), ("www.example.test", "/"), ("127.0.0.1", "/a")] {
                    proptest::prop_assert_eq!(sent(&jar, host, path, tls), reference.header(host, path, tls, NOW));
                }
            }
            let mut stored = reference.0.clone();
            stored.sort_by_key(|c| std::cmp::Reverse(c.path.len()));
            proptest::prop_assert_eq!(jar.cookies(), &stored[..]);
        }

        /// The trim that skips the look for white space trims as `str::trim` does.
        #[test]
        fn the_quick_trim_is_strs(s in "[ a=\t\u{a0}\u{3000}\u{e9}\x0b\x0c~;]{0,5}") {
            proptest::prop_assert_eq!(super::trim(&s), s.trim());
        }

        /// An ASCII header's name and value read from its bytes are the text's; a header that
        /// is not ASCII is not read so.
        #[test]
        fn ascii_names_and_values_split_as_the_text_splits(
            s in "[ a=\t\n\r\x0b\x0c\x1f~;\u{e9}\u{3000}]{0,12}",
        ) {
            let text = name_value(&s).map(|(n, v, _)| (n.as_bytes(), v.as_bytes()));
            let bytes = name_value_ascii(s.as_bytes());
            proptest::prop_assert_eq!(bytes, text.filter(|_| s.is_ascii()));
        }

        /// The word-wise split finds the `=` and the `;` that a byte-by-byte look finds, on
        /// any bytes.
        #[test]
        fn the_split_is_the_byte_by_bytes(
            s in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just(b'='),
                    proptest::strategy::Just(b';'),
                    proptest::strategy::Just(b'a'),
                    proptest::prelude::any::<u8>(),
                ],
                0..30,
            ),
        ) {
            let end = s.iter().position(|&b| b == b';').unwrap_or(s.len());
            let eq = s[..end].iter().position(|&b| b == b'=');
            proptest::prop_assert_eq!(split(&s), eq.map(|e| (e, end)));
        }
    }

    #[test]
    fn now_is_the_calendar_clocks_second() {
        let (before, n, after) = (Utc::now().timestamp(), now(), Utc::now().timestamp());
        assert!((before..=after).contains(&n), "{before} <= {n} <= {after}");
    }

    #[test]
    fn an_unchanged_cookie_keeps_its_buffer() {
        let mut jar = Jar::default();
        jar.store("sid=abc; Path=/; HttpOnly", "h", "/login", || NOW);
        let at = jar.cookies()[0].value.as_ptr();
        jar.store("sid=abc; Path=/; HttpOnly", "h", "/login", || NOW);
        assert_eq!(jar.cookies()[0].value.as_ptr(), at, "not copied again");
        jar.store("sid=abd; Path=/", "h", "/", || NOW);
        assert_eq!((jar.cookies()[0].value.as_str(), jar.cookies()[0].http_only), ("abd", false));
        // The header stored last, deleted by another, then sent again: stored again.
        jar.store("sid=; Path=/; Max-Age=0", "h", "/", || NOW);
        assert!(jar.is_empty());
        jar.store("sid=abd; Path=/", "h", "/", || NOW);
        assert_eq!(sent(&jar, "h", "/", false), "sid=abd");
        jar.clear();
        jar.store("sid=abd; Path=/", "h", "/", || NOW);
        assert_eq!(sent(&jar, "h", "/", false), "sid=abd", "stored again after a clear");
        // A cookie with a lifetime is read each time: its expiry moves with the clock.
        jar.store("t=1; Max-Age=10", "h", "/", || NOW);
        jar.store("t=1; Max-Age=10", "h", "/", || NOW + 5);
        let mut out = Vec::new();
        jar.header("h", "/", false, || NOW + 12, &mut out);
        assert_eq!(out, b"sid=abd; t=1", "expires at NOW + 15");
    }

    #[test]
    fn a_header_that_is_not_text_is_not_stored() {
        let mut jar = Jar::default();
        assert!(!jar.store_at(b"sid=\xff; Path=/", "h", b"/", || NOW));
        assert!(jar.is_empty());
        assert!(jar.store_at(b"sid=abc; Path=/", "h", b"/", || NOW));
        assert!(jar.store_at(b"sid=abc; Path=/", "h", b"/", || NOW), "passed over, and text");
        assert_eq!(sent(&jar, "h", "/", false), "sid=abc");
    }

    #[test]
    fn the_clock_is_read_only_for_cookies_that_expire() {
        let mut jar = Jar::default();
        let never = || -> i64 { panic!("the clock was read") };
        jar.store("sid=abc; Path=/", "h", "/", never);
        jar.store("sid=abc; Path=/", "h", "/", never);
        jar.store("b=1; Path=/; HttpOnly", "h", "/", never);
        jar.header("h", "/", false, never, &mut Vec::new());
    }

    proptest::proptest! {
        /// Storing by the path's bytes stores what storing by the path read as text does (the
        /// last header passed over only when it would store the same cookie again).
        #[test]
        fn storing_at_a_paths_bytes_is_storing_at_its_text(
            sets in proptest::collection::vec(
                (arb_set_cookie(), proptest::sample::select(vec![&b""[..], b"/", b"/a/b", b"/a/\xff"])),
                0..16,
            ),
        ) {
            let (mut bytes, mut text) = (Jar::default(), Jar::default());
            for ((header, host, _), path) in &sets {
                bytes.store_at(header.as_bytes(), host, path, || NOW);
                let path = std::str::from_utf8(path).ok().filter(|p| !p.is_empty()).unwrap_or("/");
                text.store(header, host, path, || NOW);
                proptest::prop_assert_eq!(bytes.cookies(), text.cookies());
            }
        }
    }

    #[test]
    fn a_kept_line_ends_when_a_cookie_in_it_expires() {
        let (mut jar, mut kept) = (Jar::default(), Sent::default());
        jar.store("a=1; Max-Age=60", "h", "/", || NOW);
        jar.store("b=2", "h", "/", || NOW);
        assert_eq!(kept.line(&jar, "h", b"/", false, || NOW), Some(&b"a=1; b=2"[..]));
        assert_eq!(kept.line(&jar, "h", b"/", false, || NOW + 59), Some(&b"a=1; b=2"[..]));
        assert_eq!(kept.line(&jar, "h", b"/", false, || NOW + 60), Some(&b"b=2"[..]));
        // A clock set back: the line is written again.
        assert_eq!(kept.line(&jar, "h", b"/", false, || NOW), Some(&b"a=1; b=2"[..]));
        jar.clear();
        assert_eq!(kept.line(&jar, "h", b"/", false, || NOW), None);
    }

    /// What a user does between two requests, for the property below.
    #[derive(Debug, Clone)]
    enum Step {
        Store(String, &'static str, &'static str),
        Clear,
        /// The other jar becomes a copy of this one.
        Copy,
        /// The requests go from the other jar.
        Swap,
        Wait(i64),
        Send(&'static str, &'static [u8], bool),
    }

    fn arb_step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        let host = prop_oneof![Just("api.example.test"), Just("127.0.0.1")];
        let path: BoxedStrategy<&'static [u8]> =
            prop_oneof![Just(&b"/"[..]), Just(&b"/a/b"[..]), Just(&b"/a?x=/b"[..]), Just(&b"/\xff"[..])]
                .boxed();
        prop_oneof![
            3 => arb_set_cookie().prop_map(|(h, host, path)| Step::Store(h, host, path)),
            1 => Just(Step::Clear),
            1 => Just(Step::Copy),
            1 => Just(Step::Swap),
            3 => (0i64..90).prop_map(Step::Wait),
            6 => (host, path, proptest::bool::ANY).prop_map(|(h, p, t)| Step::Send(h, p, t)),
        ]
    }

    proptest::proptest! {
        /// The line [`Sent`] keeps is the one the jar writes afresh, whatever changed between
        /// two requests: the jar, which jar, the host, path or transport, or the time (a
        /// `Max-Age=60` cookie expires while the line is kept).
        #[test]
        fn the_kept_line_is_the_one_the_jar_writes(steps in proptest::collection::vec(arb_step(), 0..60)) {
            let (mut jars, mut at, mut t) = ([Jar::default(), Jar::default()], 0, NOW);
            let mut kept = Sent::default();
            for step in steps {
                match step {
                    Step::Store(h, host, path) => jars[at].store(&h, host, path, || t),
                    Step::Clear => jars[at].clear(),
                    Step::Copy => {
                        let [a, b] = &mut jars;
                        if at == 0 { b.clone_from(a) } else { a.clone_from(b) }
                    }
                    Step::Swap => at = 1 - at,
                    Step::Wait(s) => t += s,
                    Step::Send(host, path, tls) => {
                        let mut fresh = Vec::new();
                        let text = std::str::from_utf8(path).unwrap_or("/");
                        let any = jars[at].header(host, text, tls, || t, &mut fresh);
                        let line = kept.line(&jars[at], host, path, tls, || t);
                        proptest::prop_assert_eq!(line, any.then_some(&fresh[..]));
                    }
                }
            }
        }
    }
}
