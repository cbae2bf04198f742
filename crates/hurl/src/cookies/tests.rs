//! The cookie jar's rules, and its fast paths held to the plain ones.

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
    assert_eq!(sent(&jar, "127.0.0.1", "/application", false), "sid=abc", "/app does not cover /application");
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
    for h in ["a=1", " a = 1 ; Path=/", "a=b=c; x", "a;b=1", "=1", "a=", "a=1;", "novalue", "", "é = ü ;;"]
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

/// [`Sent::line`]'s line alone.
fn line<'s>(
    kept: &'s mut Sent,
    jar: &Jar,
    host: &str,
    path: &[u8],
    tls: bool,
    now: impl Fn() -> i64,
) -> Option<&'s [u8]> {
    kept.line(jar, host, path, tls, now).map(|l| l.text)
}

#[test]
fn a_kept_line_ends_when_a_cookie_in_it_expires() {
    let (mut jar, mut kept) = (Jar::default(), Sent::default());
    jar.store("a=1; Max-Age=60", "h", "/", || NOW);
    jar.store("b=2", "h", "/", || NOW);
    assert_eq!(line(&mut kept, &jar, "h", b"/", false, || NOW), Some(&b"Cookie: a=1; b=2\r\n"[..]));
    assert_eq!(line(&mut kept, &jar, "h", b"/", false, || NOW + 59), Some(&b"Cookie: a=1; b=2\r\n"[..]));
    assert_eq!(line(&mut kept, &jar, "h", b"/", false, || NOW + 60), Some(&b"Cookie: b=2\r\n"[..]));
    // A clock set back: the line is written again.
    assert_eq!(line(&mut kept, &jar, "h", b"/", false, || NOW), Some(&b"Cookie: a=1; b=2\r\n"[..]));
    jar.clear();
    assert_eq!(line(&mut kept, &jar, "h", b"/", false, || NOW), None);
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
        prop_oneof![Just(&b"/"[..]), Just(&b"/a/b"[..]), Just(&b"/a?x=/b"[..]), Just(&b"/\xff"[..])].boxed();
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
        // Each number given with a line, and the line.
        let mut numbered: std::collections::HashMap<u64, Vec<u8>> = std::collections::HashMap::new();
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
                    let numbered_line = kept.line(&jars[at], host, path, tls, || t);
                    if let Some(l) = numbered_line {
                        // A number given again comes with the same line.
                        let first = numbered.entry(l.number).or_insert_with(|| l.text.to_vec());
                        proptest::prop_assert_eq!(&first[..], l.text);
                        // A line that lasts is one of a jar without an expiry.
                        let expiry = jars[at].cookies().iter().any(|c| c.expires.is_some());
                        proptest::prop_assert_eq!(l.lasting, !expiry);
                    }
                    let line = numbered_line.map(|l| l.text);
                    let value = line.map(|l| &l[COOKIE.len()..l.len() - 2]);
                    proptest::prop_assert_eq!(value, any.then_some(&fresh[..]));
                    proptest::prop_assert!(line.is_none_or(|l| l.starts_with(COOKIE) && l.ends_with(b"\r\n")));
                }
            }
        }
    }
}
