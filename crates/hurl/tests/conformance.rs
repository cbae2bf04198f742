//! Hurl's semantics, feature by feature, each case a Hurl file run against a
//! real HTTP server over TCP (a small HTTP/1.1 server written for this test,
//! [`serve`]) and judged the way Hurl's documentation says Hurl judges it:
//! requests as curl encodes them (the server echoes what it received),
//! queries, filters, predicates, jsonpath's and xpath's results, `[Options]`, and the
//! eight verdicts of issue 46 that stackbench once judged otherwise.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use stackbench_hurl::{Answer, Entry, Kind, Request, StepOutcome, Vars, run_flow};

/// An answer read off the socket.
pub(crate) struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer for Reply {
    fn status(&self) -> u16 {
        self.status
    }
    fn header(&self, name: &str, nth: usize) -> Option<&str> {
        self.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name)).nth(nth).map(|(_, v)| v.as_str())
    }
    fn body(&self) -> &[u8] {
        &self.body
    }
    fn version(&self) -> Option<&str> {
        Some("1.1")
    }
}

/// The server's answer to one request: status, headers, body.
type Answered = (u16, Vec<(&'static str, String)>, Vec<u8>);

/// What the server received, echoed back as JSON.
fn echo(method: &str, target: &str, headers: &[(String, String)], body: &[u8]) -> Answered {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let headers: serde_json::Map<String, serde_json::Value> =
        headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.clone().into())).collect();
    let json = serde_json::json!({
        "method": method, "path": path, "query": query, "headers": headers,
        "body": String::from_utf8_lossy(body), "length": body.len(),
    });
    (200, vec![("Content-Type", "application/json".into())], json.to_string().into_bytes())
}

/// The routes of the test server.
fn route(
    method: &str,
    target: &str,
    headers: &[(String, String)],
    body: &[u8],
    calls: &AtomicU32,
) -> Answered {
    let json = |s: &str| (200, vec![("Content-Type", "application/json".into())], s.as_bytes().to_vec());
    match target.split('?').next().unwrap_or("") {
        "/store" => json(
            r#"{"store": {"book": [
                {"title": "Sayings", "price": 8.95, "category": "reference"},
                {"title": "Sword", "price": 12.99, "category": "fiction"},
                {"title": "Moby Dick", "price": 8.99, "category": "fiction", "isbn": "0-553"},
                {"title": "Rings", "price": 22.99, "category": "fiction", "isbn": "0-395"}]},
              "list": [[1, 2], [3]], "values": [1, 2, 3], "big": 1000000000000000000000,
              "s": "Hello", "f": 1.5, "n": 3, "t": true, "z": null, "o": {"a": 1},
              "date": "2026-01-31T12:00:00Z", "ip": "192.168.0.1", "ip6": "::1",
              "uuid": "67e55044-10b1-426f-9247-bb680e5fe0c8", "url": "https://h/p?id=7&q=a%20b",
              "b64": "aGVsbG8=", "enc": "a%20b", "html": "&lt;p&gt;", "csv": "a,b,c"}"#,
        ),
        "/cookies" => (
            200,
            vec![
                ("Set-Cookie", "a=1; Path=/; HttpOnly".into()),
                ("Set-Cookie", "b=2; Max-Age=60; Domain=localhost; Secure; SameSite=Lax; Expires=Wed, 13 Jan 2021 22:23:01 GMT".into()),
            ],
            Vec::new(),
        ),
        "/gzip" => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(br#"{"msg": "hello gzip"}"#).unwrap();
            let h = vec![("Content-Type", "application/json".into()), ("Content-Encoding", "gzip".into())];
            (200, h, gz.finish().unwrap())
        }
        "/login" => (200, vec![("Set-Cookie", "sid=s1; Path=/; HttpOnly".into())], Vec::new()),
        "/redirect" => (302, vec![("Location", "/echo?from=redirect".into())], Vec::new()),
        "/loop" => (302, vec![("Location", "/loop".into())], Vec::new()),
        // A documentation address (RFC 5737): never contacted, the redirect is refused.
        "/away" => (302, vec![("Location", "http://192.0.2.1/steal".into())], Vec::new()),
        "/latin1" => (200, vec![("Content-Type", "text/plain; charset=ISO-8859-1".into())], b"caf\xe9".to_vec()),
        p if p.starts_with("/xpath/") => xpath::page(p),
        "/bytes" => (200, vec![("Content-Type", "application/octet-stream".into())], vec![0, 1, 0xff]),
        "/flaky" => {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            if n < 3 { (503, Vec::new(), Vec::new()) } else { json(&format!("{{\"call\": {n}}}")) }
        }
        _ => echo(method, target, headers, body),
    }
}

/// Serves [`route`] on a free port of 127.0.0.1, one thread per connection; its base URL.
pub(crate) fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let calls = Arc::new(AtomicU32::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let calls = Arc::clone(&calls);
            std::thread::spawn(move || handle(stream, &calls));
        }
    });
    format!("http://{addr}")
}

fn handle(stream: TcpStream, calls: &AtomicU32) {
    let mut r = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if r.read_line(&mut line).is_err() {
        return;
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or("").to_owned(), parts.next().unwrap_or("/").to_owned());
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.trim_end().split_once(':') {
            headers.push((k.to_owned(), v.trim().to_owned()));
        }
    }
    let len = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse().unwrap_or(0));
    let mut body = vec![0; len];
    r.read_exact(&mut body).unwrap();
    let (status, extra, out) = route(&method, &target, &headers, &body, calls);
    let mut w = stream;
    let mut head = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n", out.len());
    for (k, v) in extra {
        let _ = std::fmt::Write::write_fmt(&mut head, format_args!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = w.write_all(head.as_bytes());
    let _ = w.write_all(&out);
}

/// Sends a rendered request over a fresh connection and reads the whole answer.
pub(crate) fn send(e: &Entry, req: &Request) -> Result<Reply, String> {
    let url = std::str::from_utf8(&req.url).map_err(|e| e.to_string())?;
    let rest = url.strip_prefix("http://").ok_or("not http")?;
    let (authority, path) = rest.find('/').map_or((rest, "/"), |i| (&rest[..i], &rest[i..]));
    let mut s = TcpStream::connect(authority).map_err(|e| e.to_string())?;
    let method = req.method.unwrap_or(&e.method);
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {authority}\r\n").into_bytes();
    head.extend_from_slice(&req.headers);
    head.extend_from_slice(
        format!("Content-Length: {}\r\nConnection: close\r\n\r\n", req.body.len()).as_bytes(),
    );
    head.extend_from_slice(&req.body);
    s.write_all(&head).map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or("no head")?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status =
        lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).ok_or("no status")?;
    let headers =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.to_owned(), v.trim().to_owned())).collect();
    Ok(Reply { status, headers, body: raw[split + 4..].to_vec() })
}

/// Runs `text` (a Hurl file whose URLs begin with `{{base_url}}`) against a fresh server;
/// the steps, each with its failures.
fn run(text: &str) -> Vec<StepOutcome> {
    run_with(text, &[])
}

fn run_with(text: &str, defined: &[(&str, &str)]) -> Vec<StepOutcome> {
    let base = serve();
    let names: Vec<&str> = defined.iter().map(|(k, _)| *k).collect();
    let f = stackbench_hurl::load("c.hurl", text, |n| n == "base_url" || names.contains(&n))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut vars = Vars::new(7);
    vars.set("base_url", &base, Kind::String);
    for (k, v) in defined {
        let (v, kind) = stackbench_hurl::cli_value(v);
        vars.set(k, &v, kind);
    }
    run_flow(&f, &[], &mut vars, &mut |e: &Entry, r: &Request| send(e, r))
}

/// The lines of the checks that failed (an error without a check is line 0).
pub(crate) fn failed(steps: &[StepOutcome]) -> Vec<u32> {
    let mut lines: Vec<u32> = steps.iter().flat_map(|s| s.failures.iter().map(|f| f.pos.line)).collect();
    lines.extend(steps.iter().filter(|s| s.error.is_some()).map(|_| 0));
    lines
}

/// Every check of `text` holds.
fn passes(text: &str) {
    let steps = run(text);
    assert_eq!(failed(&steps), Vec::<u32>::new(), "{text}\n{steps:#?}");
}

/// Exactly the checks on `lines` fail.
fn fails_at(text: &str, lines: &[u32]) {
    let steps = run(text);
    assert_eq!(failed(&steps), lines, "{text}\n{steps:#?}");
}

mod xpath;

mod issue_46 {
    //! The eight verdicts of issue 46, each judged as Hurl judges it.
    use super::*;

    /// 1: a header line under `HTTP 200` holds when one value of a repeated header is it.
    #[test]
    fn a_repeated_header_passes_when_one_value_matches() {
        passes("GET {{base_url}}/cookies\nHTTP 200\nSet-Cookie: a=1; Path=/; HttpOnly\n");
        fails_at("GET {{base_url}}/cookies\nHTTP 200\nSet-Cookie: c=3\n", &[3]);
    }

    /// 2: a jsonpath's single result is the value itself; several are a list.
    #[test]
    fn jsonpath_unwraps_a_single_result() {
        passes(
            "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$..book\" count == 4\n\
             jsonpath \"$..book[2].title\" == \"Moby Dick\"\njsonpath \"$.list[*][0]\" count == 2\n\
             jsonpath \"$.list[1][*]\" == 3\njsonpath \"$.store.book[*].isbn\" count == 2\n",
        );
    }

    /// 3: an integer beyond 64 bits is an integer.
    #[test]
    fn a_big_integer_is_an_integer() {
        passes(
            "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.big\" isInteger\njsonpath \"$.big\" == 1000000000000000000000\njsonpath \"$.big\" > 999999999999999999999\n",
        );
        fails_at("GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.big\" isFloat\n", &[4]);
    }

    /// 4: a body in another charset is decoded before it is read.
    #[test]
    fn a_latin1_body_is_decoded() {
        passes("GET {{base_url}}/latin1\nHTTP 200\n[Asserts]\nbody == \"café\"\nbytes count == 4\n");
    }

    /// 5: a gzip answer is decoded by its Content-Encoding.
    #[test]
    fn a_gzip_body_is_decoded() {
        passes(
            "GET {{base_url}}/gzip\nAccept-Encoding: gzip\nHTTP 200\n[Asserts]\njsonpath \"$.msg\" == \"hello gzip\"\nbody contains \"gzip\"\n",
        );
    }

    /// 6: `contains` on a list compares members; on a number it does not apply and fails
    /// negated too.
    #[test]
    fn a_type_mismatch_fails_even_negated() {
        passes(
            "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.values\" contains 2\njsonpath \"$.values\" not contains \"Hello\"\n",
        );
        fails_at(
            "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.n\" not contains \"x\"\njsonpath \"$.n\" not startsWith \"x\"\n",
            &[4, 5],
        );
    }
}

mod requests {
    //! Requests as Hurl sends them through curl.
    use super::*;

    #[test]
    fn query_params_are_escaped_as_curl_escapes_them() {
        passes(
            "GET {{base_url}}/echo?x=1\n[Query]\na: b c\nn: é&=/\nHTTP 200\n[Asserts]\njsonpath \"$.query\" == \"x=1&a=b%20c&n=%C3%A9%26%3D%2F\"\n",
        );
    }

    #[test]
    fn forms_are_urlencoded() {
        passes(
            "POST {{base_url}}/echo\n[Form]\nuser: ann lee\npass: a+b\nHTTP 200\n[Asserts]\njsonpath \"$.body\" == \"user=ann%20lee&pass=a%2Bb\"\njsonpath \"$.headers['content-type']\" == \"application/x-www-form-urlencoded\"\n",
        );
    }

    #[test]
    fn multipart_is_curl_s() {
        let steps = run(
            "POST {{base_url}}/echo\n[Multipart]\nfield: v1\nHTTP 200\n[Asserts]\njsonpath \"$.headers['content-type']\" startsWith \"multipart/form-data; boundary=\"\njsonpath \"$.body\" contains \"Content-Disposition: form-data; name=\\\"field\\\"\\r\\n\\r\\nv1\\r\\n\"\n",
        );
        assert_eq!(failed(&steps), Vec::<u32>::new(), "{steps:#?}");
    }

    #[test]
    fn cookies_basic_auth_and_url_credentials() {
        passes(
            "GET {{base_url}}/echo\n[Cookies]\na: 1\nb: 2\n[BasicAuth]\nbob: secret\nHTTP 200\n[Asserts]\njsonpath \"$.headers.cookie\" == \"a=1; b=2\"\njsonpath \"$.headers.authorization\" == \"Basic Ym9iOnNlY3JldA==\"\n",
        );
        // Credentials in the URL: sent as Basic authentication, taken out of the URL.
        let (user, host) = ("ann:p%40ss@", "{{base_url}}");
        let text = format!(
            "GET {host}/echo\nHTTP 200\n[Asserts]\njsonpath \"$.headers.authorization\" == \"Basic YW5uOnBAc3M=\"\n"
        );
        let base = serve();
        let f = stackbench_hurl::load("c.hurl", &text, |n| n == "base_url").unwrap();
        let mut vars = Vars::new(1);
        vars.set("base_url", &base.replacen("http://", &format!("http://{user}"), 1), Kind::String);
        let steps = run_flow(&f, &[], &mut vars, &mut |e: &Entry, r: &Request| send(e, r));
        assert_eq!(failed(&steps), Vec::<u32>::new(), "{steps:#?}");
    }

    #[test]
    fn headers_defaults_and_implied_content_types() {
        passes(
            "GET {{base_url}}/echo\nX-Empty;\nX-Also:\n{{name}}: v\n[Options]\nvariable: name=X-Templated\nHTTP 200\n[Asserts]\njsonpath \"$.headers.accept\" == \"*/*\"\njsonpath \"$.headers['x-empty']\" == \"\"\njsonpath \"$.headers['x-templated']\" == \"v\"\n",
        );
        passes(
            "POST {{base_url}}/echo\n<a><b/></a>\nHTTP 200\n[Asserts]\njsonpath \"$.headers['content-type']\" == \"application/xml\"\njsonpath \"$.body\" == \"<a><b/></a>\"\n",
        );
        passes(
            "POST {{base_url}}/echo\n```graphql\n{ hero { name } }\n```\nHTTP 200\n[Asserts]\njsonpath \"$.body\" == \"{\\\"query\\\":\\\"{ hero { name } }\\\"}\"\njsonpath \"$.headers['content-type']\" == \"application/json\"\n",
        );
        // Its variables are sent without the whitespace between their tokens, as Hurl sends them.
        passes(
            "POST {{base_url}}/echo\n[Options]\nvariable: id=a b\n```graphql\nquery P($id: ID!) { p(id: $id) }\n\nvariables {\n  \"id\": \"{{id}}\",\n  \"n\": [1, 2],\n  \"s\": \"x \\\" y\"\n}\n```\nHTTP 200\n[Asserts]\njsonpath \"$.body\" == \"{\\\"query\\\":\\\"query P($id: ID!) { p(id: $id) }\\\",\\\"variables\\\":{\\\"id\\\":\\\"a b\\\",\\\"n\\\":[1,2],\\\"s\\\":\\\"x \\\\\\\" y\\\"}}\"\n",
        );
        passes(
            "POST {{base_url}}/echo\nhex,68656c6c6f;\nHTTP 200\n[Asserts]\njsonpath \"$.body\" == \"hello\"\njsonpath \"$.headers['content-type']\" not exists\n",
        );
        passes(
            "POST {{base_url}}/echo\nbase64,aGVsbG8=;\nHTTP 200\n[Asserts]\njsonpath \"$.body\" == \"hello\"\n",
        );
        passes(
            "POST {{base_url}}/echo\n\"just a string\"\nHTTP 200\n[Asserts]\njsonpath \"$.body\" == \"\\\"just a string\\\"\"\n",
        );
    }
}

mod queries {
    //! Every query Hurl has that plain HTTP answers.
    use super::*;

    #[test]
    fn status_version_header_body_bytes_and_hashes() {
        passes(
            "GET {{base_url}}/bytes\nHTTP/1.1 200\n[Asserts]\nstatus == 200\nversion == \"1.1\"\n\
             header \"Content-Type\" == \"application/octet-stream\"\nbytes == hex,0001ff;\n\
             rawbytes count == 3\nsha256 == hex,26a66b061e8f48f39927c312f25293959729eee95978e2892d49d3512a5cc092;\n\
             md5 count == 16\nbytes startsWith hex,00;\n",
        );
    }

    #[test]
    fn cookies_and_their_attributes() {
        passes(
            "GET {{base_url}}/cookies\nHTTP 200\n[Asserts]\ncookie \"a\" == \"1\"\ncookie \"a[Path]\" == \"/\"\n\
             cookie \"a[HttpOnly]\" exists\ncookie \"a[Secure]\" not exists\ncookie \"b[Max-Age]\" == 60\n\
             cookie \"b[Domain]\" == \"localhost\"\ncookie \"b[SameSite]\" == \"Lax\"\n\
             cookie \"b[Expires]\" format \"%Y\" == \"2021\"\ncookie \"none\" not exists\n",
        );
    }

    #[test]
    fn regex_variable_and_captures() {
        passes(
            "GET {{base_url}}/store\nHTTP 200\n[Captures]\ntitle: jsonpath \"$..book[0].title\"\n\
             word: regex /\"s\": \"(\\w+)\"/\n[Asserts]\nvariable \"title\" == \"Sayings\"\nvariable \"word\" == \"Hello\"\n\
             regex \"no (group)\" not exists\n",
        );
    }
}

mod filters {
    //! Filters on the values they take, and on the ones they refuse.
    use super::*;

    #[test]
    fn collections() {
        passes(
            "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.values\" nth 1 == 2\njsonpath \"$.values\" nth -1 == 3\n\
             jsonpath \"$.values\" first == 1\njsonpath \"$.values\" last == 3\njsonpath \"$.csv\" split \",\" count == 3\n\
             jsonpath \"$.o\" isObject\njsonpath \"$.values\" isList\n",
        );
        fails_at(
            "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.s\" count == 5\njsonpath \"$.values\" nth 5 == 1\n",
            &[4, 5],
        );
    }

    #[test]
    fn text() {
        passes(
            "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.s\" replace \"l\" \"L\" == \"HeLLo\"\n\
             jsonpath \"$.s\" replaceRegex /l+/ \"_\" == \"He_o\"\njsonpath \"$.s\" regex /H(e)/ == \"e\"\n\
             jsonpath \"$.enc\" urlDecode == \"a b\"\njsonpath \"$.s\" urlEncode == \"Hello\"\n\
             jsonpath \"$.html\" htmlUnescape == \"<p>\"\njsonpath \"$.s\" htmlEscape == \"Hello\"\n\
             jsonpath \"$.url\" urlQueryParam \"q\" == \"a b\"\njsonpath \"$.n\" toString == \"3\"\n",
        );
    }

    #[test]
    fn numbers_dates_and_bytes() {
        fails_at("GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.s\" toInt == 1\n", &[4]);
        passes(
            "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.f\" toInt == 1\njsonpath \"$.n\" toFloat == 3.0\n\
             jsonpath \"$.date\" toDate \"%Y-%m-%dT%H:%M:%SZ\" format \"%d/%m/%Y\" == \"31/01/2026\"\n\
             jsonpath \"$.date\" toDate \"%Y-%m-%dT%H:%M:%SZ\" isDate\n\
             jsonpath \"$.date\" toDate \"%Y-%m-%dT%H:%M:%SZ\" daysBeforeNow > 0\n\
             jsonpath \"$.b64\" base64Decode utf8Decode == \"hello\"\njsonpath \"$.b64\" base64Decode toHex == \"68656c6c6f\"\n\
             jsonpath \"$.s\" utf8Encode base64Encode == \"SGVsbG8=\"\nbytes decode \"utf-8\" contains \"Hello\"\n",
        );
    }

    #[test]
    fn jsonpath_filter_and_templates_in_filters() {
        passes(
            "GET {{base_url}}/store\nHTTP 200\n[Captures]\nsep: jsonpath \"$.csv\" regex /(,)/\n[Asserts]\n\
             body jsonpath \"$.n\" == 3\njsonpath \"$.csv\" split \"{{sep}}\" nth 2 == \"c\"\n",
        );
    }
}

mod predicates {
    //! Predicates and the values they compare with.
    use super::*;

    #[test]
    fn kinds() {
        passes(
            "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.n\" isNumber\njsonpath \"$.f\" isNumber\n\
             jsonpath \"$.f\" isFloat\njsonpath \"$.t\" isBoolean\njsonpath \"$.z\" == null\njsonpath \"$.o\" isCollection\n\
             jsonpath \"$.date\" isIsoDate\njsonpath \"$.ip\" isIpv4\njsonpath \"$.ip6\" isIpv6\njsonpath \"$.uuid\" isUuid\n\
             jsonpath \"$.s\" isString\njsonpath \"$.values\" not isEmpty\n",
        );
    }

    #[test]
    fn nothing_found_fails_but_negated() {
        passes(
            "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.nope\" not exists\njsonpath \"$.nope\" not == 1\n",
        );
        fails_at(
            "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.nope\" == null\njsonpath \"$.nope\" not exists\n",
            &[4],
        );
    }

    #[test]
    fn numbers_compare_by_value_and_strings_as_text() {
        passes(
            "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.n\" == 3.0\njsonpath \"$.f\" > 1\njsonpath \"$.s\" > \"Ha\"\njsonpath \"$.s\" matches \"^H\\\\w+$\"\n",
        );
        fails_at(
            "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.n\" == \"3\"\njsonpath \"$.s\" > 3\n",
            &[4, 5],
        );
    }

    /// A ```` ```graphql ```` string compared with stands for the body Hurl would send with
    /// it, `{"query":...}` (Hurl's multilines.hurl compared it so; it was refused).
    #[test]
    fn a_graphql_string_is_the_body_it_would_send() {
        let query = "{\n  hero {\n    name\n  }\n}\n";
        passes(&format!(
            "POST {{{{base_url}}}}/echo\n```graphql\n{query}```\nHTTP 200\n[Asserts]\n\
             jsonpath \"$.body\" == ```graphql\n{query}```\n\
             jsonpath \"$.body\" == \"{{\\\"query\\\":\\\"{{\\\\n  hero {{\\\\n    name\\\\n  }}\\\\n}}\\\"}}\"\n"
        ));
        fails_at(
            &format!(
                "POST {{{{base_url}}}}/echo\n```graphql\n{query}```\nHTTP 200\n[Asserts]\njsonpath \"$.body\" == ```graphql\n{{ villain }}\n```\n"
            ),
            &[11],
        );
    }
}

mod errors {
    //! A request without an answer: which one, said as a failed check is.
    use super::*;

    /// Hurl names the request whose server could not be reached (`file:line:col`); stackbench
    /// said only why.
    #[test]
    fn a_request_without_answer_is_named_at_its_line() {
        let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let steps = run(&format!("GET {{{{base_url}}}}/echo\nHTTP 200\n\nGET http://{closed}/x\nHTTP 200\n"));
        assert_eq!(failed(&steps), [0], "{steps:#?}");
        let why = steps[1].error.as_deref().unwrap();
        assert!(why.starts_with("c.hurl:4:1: "), "{why}");
    }
}

mod jsonpath {
    //! RFC 9535 as Hurl 8 evaluates it.
    use super::*;

    #[test]
    fn filters_slices_and_unions() {
        passes(
            "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.store.book[?(@.price < 10)].title\" count == 2\n\
             jsonpath \"$.store.book[?@.isbn && @.price > 20].title\" == \"Rings\"\n\
             jsonpath \"$.store.book[1:3].title\" nth 0 == \"Sword\"\njsonpath \"$.store.book[-1:].title\" == \"Rings\"\n\
             jsonpath \"$.store.book[0,3].price\" count == 2\n",
        );
        let text = "GET {{base_url}}/store\nHTTP 200\n[Asserts]\njsonpath \"$.store.book[?(@.category == '{{cat}}')]\" count == 3\n";
        let steps = run_with(text, &[("cat", "fiction")]);
        assert_eq!(failed(&steps), Vec::<u32>::new(), "{steps:#?}");
    }
}

mod options {
    //! `[Options]` that act on how an entry is run.
    use super::*;

    #[test]
    fn variable_skip_repeat_and_retry() {
        passes(
            "GET {{base_url}}/echo?v={{v}}\n[Options]\nvariable: v=42\nHTTP 200\n[Asserts]\njsonpath \"$.query\" == \"v=42\"\n",
        );
        passes("GET {{base_url}}/nowhere\n[Options]\nskip: true\nHTTP 500\n");
        let steps = run("GET {{base_url}}/echo\n[Options]\nrepeat: 3\nHTTP 200\n");
        assert_eq!(steps.len(), 3);
        passes(
            "GET {{base_url}}/flaky\n[Options]\nretry: 5\nretry-interval: 10ms\nHTTP 200\n[Asserts]\njsonpath \"$.call\" == 3\n",
        );
        fails_at("GET {{base_url}}/flaky\n[Options]\nretry: 1\nretry-interval: 1\nHTTP 200\n", &[5]);
    }

    #[test]
    fn header_user_and_compressed() {
        passes(
            "GET {{base_url}}/echo\n[Options]\nheader: X-Opt: 1\nuser: bob:pw\ncompressed: true\nHTTP 200\n[Asserts]\njsonpath \"$.headers['x-opt']\" == \"1\"\njsonpath \"$.headers.authorization\" == \"Basic Ym9iOnB3\"\njsonpath \"$.headers['accept-encoding']\" == \"gzip, deflate, br\"\n",
        );
    }
}
