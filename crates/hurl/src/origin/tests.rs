use super::*;

fn scenario(text: &str) -> Scenario {
    let dir = std::path::Path::new("/nonexistent");
    let toml = format!("[[flow]]\nhurl = '''\n{text}'''\n");
    Scenario::parse("s.toml", &toml, dir, "s", &["host", "other"]).unwrap()
}

fn defined(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn routed(r: &Routes, url: &str) -> Result<String, String> {
    let mut u = url.as_bytes().to_vec();
    r.route(&mut u).map(|()| String::from_utf8(u).unwrap())
}

#[test]
fn origins_split_with_their_default_ports() {
    let o = |u: &str| split(u.as_bytes()).map(|(o, n)| (o.to_string(), n));
    assert_eq!(o("http://LocalHost/x"), Some(("http://localhost:80".into(), 16)));
    assert_eq!(o("https://h:8443?q"), Some(("https://h:8443".into(), 14)));
    assert_eq!(o("http://bob:pw@h:1/p"), Some(("http://h:1".into(), 17)));
    assert_eq!(o("http://[::1]:9/"), Some(("http://[::1]:9".into(), 14)));
    assert_eq!(o("ftp://h/x"), None);
    assert_eq!(o("/relative"), None);
    assert_eq!(o("http://h:0/"), None);
    assert_eq!(o("http:///x"), None);
}

/// Issue 45 #14: `{{base_url}}:18084/x` after `http://127.0.0.1:8080` was taken for the host
/// `127.0.0.1:8080` on port 18084; a URL that names no server is refused, saying why.
#[test]
fn a_url_whose_server_is_not_one_says_why() {
    for (url, why) in [
        ("http://127.0.0.1:8080:18084/x", "its port \"8080:18084\" is not a port (1–65535)"),
        ("http://127.0.0.1:8080.example.com/x", "its port \"8080.example.com\" is not a port"),
        ("http://h:+80/x", "its port \"+80\" is not a port"),
        ("http://h o/x", "its host \"h o\" is not a host name or an IP address"),
        ("http://[::1]x/", "\"x\" follows its IPv6 address"),
        ("http://[h::1]/", "[h::1] is not an IPv6 address"),
        ("gopher://h/", "its scheme \"gopher\" is not http or https"),
        ("h:1/x", "it has no scheme"),
    ] {
        let e = split_why(url.as_bytes()).unwrap_err();
        assert!(e.starts_with(why), "{url}: {e}");
    }
    let r = Routes::at(&scenario("GET {{base_url}}:18084/x\n"), "http://127.0.0.1:8080").unwrap_err();
    assert!(r.starts_with("s.toml:") && r.contains("is not a port"), "{r}");
    let r = Routes::at(&scenario("GET {{base_url}}/a\n"), "http://127.0.0.1:8080").unwrap();
    assert_eq!(r.locate(b"http://127.0.0.1:8080/a?b"), Ok(("", 21)));
    let e = r.locate(b"http://127.0.0.1:8081/a").unwrap_err();
    assert_eq!(e, "http://127.0.0.1:8081 is not one of the file's origins");
}

#[test]
fn a_file_runs_as_written_without_a_target() {
    let s = scenario("GET http://localhost:8000/a\nHTTP 200\nGET http://localhost:8000/b\nHTTP 200\n");
    let r = Routes::new(&s, &[], Aim::default()).unwrap();
    assert_eq!(routed(&r, "http://localhost:8000/a?x").unwrap(), "http://localhost:8000/a?x");
    assert!(routed(&r, "http://evil.example/a").unwrap_err().contains("not one of the file's origins"));
    assert!(r.notes.is_empty());
    assert_eq!(r.first().as_deref(), Some("http://localhost:8000"));
}

#[test]
fn the_first_origin_becomes_the_target_and_the_others_must_be_mapped() {
    let text = "GET http://localhost:8000/a\nHTTP 200\nGET http://auth:9000/token\nHTTP 200\n";
    let s = scenario(text);
    let aim = Aim { target: Some("http://127.0.0.1:8080/api/"), ..Aim::default() };
    let e = Routes::new(&s, &[], aim).unwrap_err();
    assert!(e.contains("s.toml:5:1: this request goes to http://auth:9000") && e.contains("--origin"), "{e}");
    let maps = defined(&[("http://auth:9000", "http://127.0.0.1:8081")]);
    let r = Routes::new(&s, &[], Aim { maps: &maps, ..aim }).unwrap();
    assert_eq!(routed(&r, "http://localhost:8000/a?q=1").unwrap(), "http://127.0.0.1:8080/api/a?q=1");
    assert_eq!(routed(&r, "http://auth:9000/token").unwrap(), "http://127.0.0.1:8081/token");
    assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
    // A redirect back to a file origin is moved; to the target's origin it stays; elsewhere, refused.
    assert_eq!(r.allows("http://localhost:8000/b").as_deref(), Some("http://127.0.0.1:8080/api/b"));
    assert_eq!(r.allows("http://127.0.0.1:8080/c").as_deref(), Some("http://127.0.0.1:8080/c"));
    assert_eq!(r.allows("http://third.party/"), None);
    assert_eq!(r.as_written("http://127.0.0.1:8080/api/b?x"), "http://localhost:8000/b?x");
    assert_eq!(r.as_written("http://127.0.0.1:8080/apix"), "http://127.0.0.1:8080/apix");
    let bad = defined(&[("http://nowhere:1", "http://127.0.0.1:1")]);
    let e = Routes::new(&s, &[], Aim { maps: &bad, ..aim }).unwrap_err();
    assert!(e.contains("sends no request to http://nowhere:1"), "{e}");
}

#[test]
fn base_url_or_the_named_variable_is_the_target() {
    let s = scenario("GET {{base_url}}/a\nHTTP 200\n");
    let aim = Aim { target: Some("http://127.0.0.1:8080"), ..Aim::default() };
    let r = Routes::new(&s, &[], aim).unwrap();
    assert_eq!(r.base_variable.as_deref(), Some("base_url"));
    assert!(r.notes.is_empty(), "the file's own convention goes unsaid: {:?}", r.notes);
    let s = scenario("GET {{host}}/a\nHTTP 200\nGET {{other}}/b\nHTTP 200\n");
    let given = defined(&[("host", "http://localhost:3000"), ("other", "http://127.0.0.1:8080")]);
    let r = Routes::new(&s, &given, Aim { base_variable: Some("host"), ..aim }).unwrap();
    assert_eq!(r.base_variable.as_deref(), Some("host"));
    assert_eq!(r.notes, ["{{host}} is the target, http://127.0.0.1:8080"]);
    // `other` says localhost:3000, which is not the target (only `host` was replaced).
    let given = defined(&[("host", "http://localhost:3000"), ("other", "http://localhost:3000")]);
    let e = Routes::new(&s, &given, Aim { base_variable: Some("host"), ..aim }).unwrap_err();
    assert!(e.contains("http://localhost:3000"), "{e}");
    let e = Routes::new(&s, &given, Aim { base_variable: Some("nope"), ..aim }).unwrap_err();
    assert!(e.contains("no request's URL uses {{nope}}"), "{e}");
}

#[test]
fn a_server_from_a_capture_or_a_draw_is_refused_where_it_is_written() {
    let s = scenario(
        "GET http://localhost:8000/next\nHTTP 200\n[Captures]\nnext: jsonpath \"$.url\"\nGET {{next}}/x\nHTTP 200\n",
    );
    let e = Routes::new(&s, &[], Aim::default()).unwrap_err();
    assert!(e.starts_with("s.toml:7:5: the server of this request comes from `{{next}}`"), "{e}");
    // A capture after the origin is only a path.
    let s = scenario(
        "GET http://localhost:8000/next\nHTTP 200\n[Captures]\nid: jsonpath \"$.id\"\nGET http://localhost:8000/{{id}}\nHTTP 200\n",
    );
    Routes::new(&s, &[], Aim::default()).unwrap();
    let s = scenario("GET http://localhost:{{newUuid}}/x\nHTTP 200\n");
    assert!(Routes::new(&s, &[], Aim::default()).is_err());
    let s = scenario("GET {{host}}x\nHTTP 200\n");
    let e = Routes::new(&s, &[], Aim::default()).unwrap_err();
    assert!(e.contains("comes from `{{host}}`"), "{e}");
}

/// `http://host:port{{captured_path}}` was refused up front, though the origin is written
/// whole: what follows it is checked when each URL is rendered ([`Routes::route`]).
#[test]
fn a_captured_path_right_after_a_written_origin_is_accepted_and_checked_when_sent() {
    let s = scenario(
        "GET http://localhost:8000/next\nHTTP 200\n[Captures]\np: jsonpath \"$.p\"\nGET http://localhost:8000{{p}}\nHTTP 200\n",
    );
    let r = Routes::new(&s, &[], Aim::default()).unwrap();
    let mut ok = b"http://localhost:8000/items/1".to_vec();
    r.route(&mut ok).unwrap();
    for elsewhere in
        ["http://localhost:8000@evil.test/x", "http://localhost:80001/x", "http://localhost:8000.evil.test/"]
    {
        let mut url = elsewhere.as_bytes().to_vec();
        assert!(r.route(&mut url).is_err(), "{elsewhere}");
    }
    // Without a written port (or with part of one) the origin is not known at load.
    // Nor when a variable wrote it (`{{base_url}}{{p}}`: its value is a place, not a port).
    for url in ["http://localhost:{{p}}/x", "http://local{{p}}", "{{p}}", "{{host}}{{p}}"] {
        let s = scenario(&format!(
            "GET http://localhost:8000/next\nHTTP 200\n[Captures]\np: jsonpath \"$.p\"\nGET {url}\nHTTP 200\n"
        ));
        let e = Routes::new(&s, &defined(&[("host", "http://localhost:8000")]), Aim::default()).unwrap_err();
        assert!(e.contains("comes from `{{p}}`"), "{url}: {e}");
    }
}

#[test]
fn base_url_without_a_target_needs_a_value() {
    let s = scenario("GET {{base_url}}/a\nHTTP 200\n");
    let e = Routes::new(&s, &[], Aim::default()).unwrap_err();
    assert!(e.contains("comes from `{{base_url}}`, which has no value: give the target URL"), "{e}");
    let r = Routes::new(&s, &defined(&[("base_url", "http://127.0.0.1:1")]), Aim::default()).unwrap();
    assert_eq!(r.first().as_deref(), Some("http://127.0.0.1:1"));
}

/// `written_at`, the load engine's check of each URL without splitting it, says only what
/// `split` says: where it finds an origin written plainly, `split` gives that origin and
/// length; and it finds every plainly written one (case, default ports, IPv6 brackets).
/// Every URL made of these parts, against every origin (211,200 pairs).
mod written_at {
    use super::*;

    const SCHEMES: &[&str] = &["http", "HTTP", "https", "hTtPs", "ftp", ""];
    const USERS: &[&str] = &["", "u@", "a:b@", "127.0.0.1:8080@"];
    const HOSTS: &[&str] = &[
        "localhost",
        "LocalHost",
        "127.0.0.1",
        "[::1]",
        "[::aBcD]",
        "::1",
        "h-1.example",
        "",
        "h o",
        "h%41",
    ];
    const PORTS: &[&str] =
        &["", ":", ":80", ":080", ":443", ":8080", ":65536", ":0", ":18621", ":+80", ":8080:1"];
    const TAILS: &[&str] = &["", "/", "/x?y", "?q", "#f", "@evil/", ".evil/", "0/", ":1/", "]/"];
    const ORIGINS: &[&str] = &[
        "http://localhost",
        "https://localhost",
        "http://localhost:8080",
        "http://127.0.0.1:18621",
        "https://[::1]:443",
        "http://[::abcd]",
        "http://h-1.example:443",
        "http://h%41",
    ];

    #[test]
    fn says_only_what_split_says() {
        let origins: Vec<Origin> = ORIGINS.iter().map(|o| split(o.as_bytes()).unwrap().0).collect();
        let mut found = 0;
        for scheme in SCHEMES {
            for user in USERS {
                for host in HOSTS {
                    for port in PORTS {
                        for tail in TAILS {
                            let url = format!("{scheme}://{user}{host}{port}{tail}");
                            let split = split(url.as_bytes());
                            for o in &origins {
                                if let Some(n) = o.written_at(url.as_bytes()) {
                                    assert_eq!(split, Some((o.clone(), n)), "{url}");
                                    found += 1;
                                } else {
                                    let plain = user.is_empty() && !port.starts_with(":0") && *port != ":";
                                    let same = split.as_ref().is_some_and(|(s, _)| s == o);
                                    assert!(!(plain && same), "{url} is {o}, written plainly");
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(found >= 100, "{found} found: the parts must write some origins plainly");
    }

    #[test]
    fn finds_the_plainly_written_origins() {
        let r = Routes::at(&scenario("GET {{base_url}}/a\n"), "http://127.0.0.1:8080").unwrap();
        assert_eq!(r.locate(b"HTTP://127.0.0.1:8080?b"), Ok(("", 21)));
        assert_eq!(r.locate(b"http://127.0.0.1:8080"), Ok(("", 21)));
        let moved = Routes::at(&scenario("GET http://app:80/a\n"), "http://127.0.0.1:8080/base").unwrap();
        assert_eq!(moved.locate(b"http://APP/x"), Ok(("/base", 10)));
        assert_eq!(moved.locate(b"http://app:80/x"), Ok(("/base", 13)));
        assert_eq!(moved.locate(b"http://127.0.0.1:8080/base/x"), Ok(("", 21)));
        // Written otherwise, split decides: credentials, a port of 080.
        assert_eq!(moved.locate(b"http://u@app:080/x"), Ok(("/base", 16)));
        assert!(moved.locate(b"http://app:8080/x").is_err());
    }
}
