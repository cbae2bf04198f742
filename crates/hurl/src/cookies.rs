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
    /// In line (`always`: the inliner left it a call): under load, every answer that sets a
    /// cookie asks it first.
    #[expect(clippy::inline_always, reason = "three short comparisons, asked on every answer")]
    #[inline(always)]
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

    /// Which cookies it holds: two jars of the same stamp hold the same cookies (0: none).
    pub fn stamp(&self) -> u64 {
        self.stamp
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
    /// stored). In line (`always`: the inliner left it a call): the load engine asks it on
    /// every answer that sets a cookie.
    #[expect(clippy::inline_always, reason = "a comparison with the header stored last, on every answer")]
    #[inline(always)]
    pub fn store_at(&mut self, header: &[u8], host: &str, path: &[u8], now: impl Fn() -> i64) -> bool {
        if self.last.is(header, host, path) {
            return true;
        }
        self.store_new(header, host, path, now)
    }

    /// [`Jar::store_at`] of a header other than the one stored last: out of line, so that the
    /// usual call (the same header again) is a comparison in its caller.
    #[inline(never)]
    fn store_new(&mut self, header: &[u8], host: &str, path: &[u8], now: impl Fn() -> i64) -> bool {
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
/// of a user sends the line the one before sent: then this is all it costs. It is kept as
/// HTTP/1.1 writes it, `Cookie: ` and CRLF around the value, so that a request copies it once.
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
    /// `Cookie: `, the value, CRLF.
    line: Vec<u8>,
    /// The number `line` was given when written ([`WRITES`]; 0: never).
    number: u64,
}

/// Where the numbers of [`Sent`]'s lines come from: each line written takes the next, so that
/// two lines of the same number, from any [`Sent`], are the same line.
static WRITES: AtomicU64 = AtomicU64::new(1);

/// A `Cookie` line as [`Sent::line`] gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentLine<'s> {
    /// `Cookie: `, the value, CRLF.
    pub text: &'s [u8],
    /// Never 0: a line given with the number of one given before is that line (a caller that
    /// keeps a copy need not compare them).
    pub number: u64,
    /// No cookie of the jar expires: the line holds for the same jar (its stamp,
    /// [`Jar::stamp`]), host, path and transport at any time.
    pub lasting: bool,
}

/// What comes before the value in [`Sent`]'s line.
const COOKIE: &[u8] = b"Cookie: ";

impl Sent {
    /// The `Cookie` header `jar` sends on a request to `host` and `path` (over TLS when
    /// `tls`) at the time `now` gives, as HTTP/1.1 writes it: `Cookie: `, the value
    /// [`Jar::header`] writes, CRLF; `None` when it sends none. `now` is read only when a
    /// cookie of the jar expires; with it, its number and whether it lasts ([`SentLine`]).
    pub fn line(
        &mut self,
        jar: &Jar,
        host: &str,
        path: &[u8],
        tls: bool,
        now: impl Fn() -> i64,
    ) -> Option<SentLine<'_>> {
        let kept = self.stamp == Some(jar.stamp)
            && self.tls == tls
            && same(&self.path, path)
            && same(self.host.as_bytes(), host.as_bytes())
            && (!self.expiring || (self.from..self.until).contains(&now()));
        if !kept {
            self.write(jar, host, path, tls, now);
        }
        self.any.then_some(SentLine { text: &self.line[..], number: self.number, lasting: !self.expiring })
    }

    fn write(&mut self, jar: &Jar, host: &str, path: &[u8], tls: bool, now: impl Fn() -> i64) {
        let expiring = jar.cookies.iter().any(|c| c.expires.is_some());
        let at = if expiring { now() } else { i64::MIN };
        self.line.clear();
        self.line.extend_from_slice(COOKIE);
        self.any = jar.header(host, std::str::from_utf8(path).unwrap_or("/"), tls, || at, &mut self.line);
        self.line.extend_from_slice(b"\r\n");
        // Which cookies have expired changes next at the earliest expiry still to come.
        let next = jar.cookies.iter().filter_map(|c| c.expires.filter(|&t| t > at)).min();
        (self.expiring, self.from, self.until) = (expiring, at, next.unwrap_or(i64::MAX));
        self.stamp = Some(jar.stamp);
        self.tls = tls;
        self.path.clear();
        self.path.extend_from_slice(path);
        host.clone_into(&mut self.host);
        self.number = WRITES.fetch_add(1, Ordering::Relaxed);
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
    if !crate::bytes::ascii(header) {
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
mod tests;
