//! The built-in scenarios as files (`scenarios/builtin/`) catch the faults the
//! built-ins' Rust verification caught (the case lists of
//! `stackbench_contract::verify` they replaced): each file is run against an
//! in-memory server written for this test, right and with one fault at a
//! time (a store that ignores writes, an off-by-one count, a store that was
//! not emptied, a server that accepts bad events or writes the ones it
//! refuses, a 405 without `Allow`, errors that are not JSON, rows swapped,
//! wrong or single, ids not validated), and the cases that fail must be the
//! ones the Rust verification failed on the same server, which is what
//! [`EXPECTED`] holds (recorded by running both side by side before the Rust
//! lists were removed). The files' case lists, `bubble-sort`'s two forms with
//! them, are held to the contract's tables in docs/scenarios.md, and their load
//! flows to the under-load checks (`check.rs`). (`bubble-sort`'s faults:
//! `crates/run/src/verify/bubble_tests.rs`, through the gRPC encoding.)

use std::path::{Path, PathBuf};

use stackbench_contract::dbread;
use stackbench_contract::event::parse_event;
use stackbench_hurl::{
    Aimed, Answer, Builtin, Entry, Kind, Request, Routes, Scenario, Vars, VerifyLevel, run_flow,
    run_verification,
};

const BASE: &str = "http://fake.test";

fn builtin(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/builtin").join(name)
}

/// One way a server breaks the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// Every count is 1 (the `dummy` server run as an event log).
    IgnoresWrites,
    /// Every count is one more than the events stored.
    OffByOne,
    /// The store held 3 events when verification began.
    Dirty,
    /// Every POST /events is accepted and written, whatever its body.
    AcceptsBad,
    /// Refused events are written all the same (and still refused).
    WritesRefused,
    /// A 405 without an `Allow` header.
    NoAllow,
    /// Errors without a JSON body.
    PlainErrors,
    /// Answers as `text/plain`.
    TextPlain,
    /// db-read: rows in the order asked, not by id.
    Swapped,
    /// db-read: every price off by one.
    WrongPrice,
    /// db-read: one row when a == b.
    OneRowForSame,
    /// db-read: ids not validated (an id of 0 or above 2^31-1 gets 404).
    NoIdCheck,
}

struct Server {
    scenario: Builtin,
    fault: Fault,
    stored: u64,
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer for Reply {
    fn status(&self) -> u16 {
        self.status
    }
    fn header(&self, name: &str, nth: usize) -> Option<&str> {
        self.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name)).nth(nth).map(|(_, v)| v.as_str())
    }
    fn body(&self) -> &[u8] {
        self.body.as_bytes()
    }
}

impl Server {
    fn new(scenario: Builtin, fault: Fault) -> Server {
        Server { scenario, fault, stored: if fault == Fault::Dirty { 3 } else { 0 } }
    }

    fn reply(&self, status: u16, body: String) -> Reply {
        let json = if self.fault == Fault::TextPlain { "text/plain" } else { "application/json" };
        let body = if status >= 400 && self.fault == Fault::PlainErrors { "error".to_owned() } else { body };
        Reply { status, headers: vec![("Content-Type".into(), json.into())], body }
    }

    fn error(&self, status: u16, message: &str) -> Reply {
        self.reply(status, serde_json::json!({ "error": message }).to_string())
    }

    fn not_allowed(&self, allow: &str) -> Reply {
        let mut r = self.error(405, "method not allowed");
        if self.fault != Fault::NoAllow {
            r.headers.push(("Allow".into(), allow.into()));
        }
        r
    }

    fn count(&self) -> Reply {
        let n = match (self.scenario, self.fault) {
            (Builtin::DUMMY, _) | (_, Fault::IgnoresWrites) => 1,
            (_, Fault::OffByOne) => self.stored + 1,
            _ => self.stored,
        };
        self.reply(200, format!("{{\"count\":{n}}}"))
    }

    /// The contract's answer to `method target` (path and query) with `content_type` and `body`.
    fn handle(&mut self, method: &str, target: &str, content_type: Option<&str>, body: &[u8]) -> Reply {
        let (path, query) = target.split_once('?').map_or((target, None), |(p, q)| (p, Some(q)));
        match (self.scenario, path) {
            (Builtin::DB_READ, "/db") if method == "GET" => self.reply(200, "[\"sqlite\"]".into()),
            (Builtin::DB_READ, "/db/sqlite") if method != "GET" => self.not_allowed("GET"),
            (Builtin::DB_READ, "/db/sqlite") => self.rows(query),
            (Builtin::DB_READ, p) if p.starts_with("/db/") => {
                self.error(404, "no such driver; the drivers: sqlite")
            }
            (Builtin::DB_READ, _) => self.error(404, "no route"),
            (_, "/events/count") if method == "GET" => self.count(),
            (_, "/events/count") => self.not_allowed("GET"),
            (_, "/events") if method != "POST" => self.not_allowed("POST"),
            (_, "/events") => self.event(content_type, body),
            _ => self.error(404, "no route"),
        }
    }

    fn event(&mut self, content_type: Option<&str>, body: &[u8]) -> Reply {
        if self.fault == Fault::AcceptsBad {
            self.stored += 1;
            return self.count();
        }
        let refused = if body.len() > stackbench_contract::contract::MAX_BODY_BYTES {
            Some((413, "too large".to_owned()))
        } else if !content_type
            .is_some_and(|t| stackbench_contract::contract::is_json_content_type(t.as_bytes()))
        {
            Some((400, "Content-Type must be application/json".to_owned()))
        } else {
            parse_event(body).err().map(|e| (400, e.to_string()))
        };
        if let Some((status, why)) = refused {
            if self.fault == Fault::WritesRefused {
                self.stored += 1;
            }
            return self.error(status, &why);
        }
        self.stored += 1;
        self.count()
    }

    fn rows(&self, query: Option<&str>) -> Reply {
        let (a, b) = match dbread::parse_ids(query) {
            Ok(ids) => ids,
            Err(_) if self.fault == Fault::NoIdCheck => return self.error(404, "no such row"),
            Err(e) => return self.error(400, &e.to_string()),
        };
        if dbread::missing_id(a, b).is_some() {
            return self.error(404, "no such row");
        }
        let ids = match self.fault {
            Fault::Swapped => vec![a, b],
            Fault::OneRowForSame if a == b => vec![a],
            _ => dbread::answer_ids(a, b).to_vec(),
        };
        let rows: Vec<_> = ids
            .iter()
            .map(|&id| {
                let price = dbread::price(id) + u32::from(self.fault == Fault::WrongPrice);
                serde_json::json!({"id": id, "name": format!("item-{id}"), "price": price})
            })
            .collect();
        self.reply(200, serde_json::Value::from(rows).to_string())
    }

    /// A request of a scenario file, as this server sees it.
    fn file_request(&mut self, e: &Entry, req: &Request) -> Result<Reply, String> {
        let url = std::str::from_utf8(&req.url).unwrap();
        let target = url.strip_prefix(BASE).ok_or_else(|| format!("not this server: {url}"))?;
        let headers = std::str::from_utf8(&req.headers).unwrap();
        let content_type = headers
            .split("\r\n")
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.trim());
        Ok(self.handle(&e.method, target, content_type, &req.body))
    }
}

/// A built-in's file from disk; its root is the repository (bubble-sort's `.proto` is
/// `../../proto/`).
fn load(file: &str) -> Scenario {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let limits = stackbench_hurl::FileLimits { file_root: Some(repo), ..Default::default() };
    Scenario::load_with(&builtin(file), &[], &limits).unwrap_or_else(|e| panic!("{e}"))
}

/// The cases that fail under the file's verification, in order, with their levels; and
/// whether the verification passed.
fn file_failures(
    file: &str,
    scenario: Builtin,
    fault: Fault,
    clean: bool,
) -> (Vec<(String, VerifyLevel)>, bool) {
    let s = load(file);
    let mut server = Server::new(scenario, fault);
    let v = run_verification(
        &s,
        Aimed { target: Some(BASE), routes: &Routes::at(&s, BASE).unwrap() },
        &[],
        1,
        clean,
        &mut |e, r| server.file_request(e, r),
        &mut |_| Err("no command here".into()),
    );
    let failed = v.cases.iter().filter(|c| !c.passed()).map(|c| (c.name.clone(), c.level)).collect();
    (failed, v.passed())
}

/// The cases (numbered from 1) the Rust verification failed, by file, fault and whether the
/// store was known to be emptied before verification.
const EXPECTED: &[(&str, Fault, bool, &[usize])] = &[
    ("dummy.toml", Fault::None, true, &[]),
    ("dummy.toml", Fault::None, false, &[]),
    (
        "dummy.toml",
        Fault::AcceptsBad,
        true,
        &[6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
    ),
    (
        "dummy.toml",
        Fault::AcceptsBad,
        false,
        &[6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
    ),
    ("dummy.toml", Fault::NoAllow, true, &[25]),
    ("dummy.toml", Fault::NoAllow, false, &[25]),
    (
        "dummy.toml",
        Fault::PlainErrors,
        true,
        &[6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25],
    ),
    (
        "dummy.toml",
        Fault::PlainErrors,
        false,
        &[6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25],
    ),
    (
        "dummy.toml",
        Fault::TextPlain,
        true,
        &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25],
    ),
    (
        "dummy.toml",
        Fault::TextPlain,
        false,
        &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25],
    ),
    ("event-log.toml", Fault::None, true, &[]),
    ("event-log.toml", Fault::None, false, &[]),
    ("event-log.toml", Fault::IgnoresWrites, true, &[1, 3, 4, 5, 6, 27, 29]),
    ("event-log.toml", Fault::IgnoresWrites, false, &[2, 3, 4, 5, 6, 27, 29]),
    ("event-log.toml", Fault::OffByOne, true, &[1, 2, 3, 4, 5, 6, 27]),
    ("event-log.toml", Fault::OffByOne, false, &[]),
    ("event-log.toml", Fault::Dirty, true, &[1, 2, 3, 4, 5, 6, 27]),
    ("event-log.toml", Fault::Dirty, false, &[]),
    (
        "event-log.toml",
        Fault::AcceptsBad,
        true,
        &[7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 27],
    ),
    (
        "event-log.toml",
        Fault::AcceptsBad,
        false,
        &[7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 27],
    ),
    ("event-log.toml", Fault::WritesRefused, true, &[27]),
    ("event-log.toml", Fault::WritesRefused, false, &[27]),
    ("event-log.toml", Fault::NoAllow, true, &[26]),
    ("event-log.toml", Fault::NoAllow, false, &[26]),
    (
        "event-log.toml",
        Fault::PlainErrors,
        true,
        &[7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26],
    ),
    (
        "event-log.toml",
        Fault::PlainErrors,
        false,
        &[7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26],
    ),
    (
        "event-log.toml",
        Fault::TextPlain,
        true,
        &[
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
            27, 28, 29,
        ],
    ),
    (
        "event-log.toml",
        Fault::TextPlain,
        false,
        &[
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
            27, 28, 29,
        ],
    ),
    ("db-read.toml", Fault::None, true, &[]),
    ("db-read.toml", Fault::None, false, &[]),
    ("db-read.toml", Fault::Swapped, true, &[2, 3]),
    ("db-read.toml", Fault::Swapped, false, &[2, 3]),
    ("db-read.toml", Fault::WrongPrice, true, &[1, 2, 3, 4, 5]),
    ("db-read.toml", Fault::WrongPrice, false, &[1, 2, 3, 4, 5]),
    ("db-read.toml", Fault::OneRowForSame, true, &[5]),
    ("db-read.toml", Fault::OneRowForSame, false, &[5]),
    ("db-read.toml", Fault::NoIdCheck, true, &[7, 8, 9, 10]),
    ("db-read.toml", Fault::NoIdCheck, false, &[7, 8, 9, 10]),
    ("db-read.toml", Fault::NoAllow, true, &[14]),
    ("db-read.toml", Fault::NoAllow, false, &[14]),
    ("db-read.toml", Fault::TextPlain, true, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]),
    ("db-read.toml", Fault::TextPlain, false, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]),
    ("db-read.toml", Fault::PlainErrors, true, &[7, 8, 9, 10, 11, 12, 13, 14]),
    ("db-read.toml", Fault::PlainErrors, false, &[7, 8, 9, 10, 11, 12, 13, 14]),
];

/// Every case of every file against the right server and each faulty one: the cases that
/// fail are the expected ones, and the verification passes exactly when none is core.
#[test]
fn each_fault_fails_the_cases_the_builtin_verification_failed() {
    for &(file, fault, clean, want) in EXPECTED {
        let scenario = match file {
            "dummy.toml" => Builtin::DUMMY,
            "event-log.toml" => Builtin::EVENT_LOG,
            _ => Builtin::DB_READ,
        };
        let s = load(file);
        let (failed, passed) = file_failures(file, scenario, fault, clean);
        let numbers: Vec<usize> = failed
            .iter()
            .map(|(name, _)| s.verify.iter().position(|c| c.name == *name).unwrap() + 1)
            .collect();
        assert_eq!(numbers, want, "{file}, {fault:?}, store emptied: {clean}: {failed:?}");
        assert_eq!(passed, failed.iter().all(|(_, l)| *l == VerifyLevel::Hardening), "{file}, {fault:?}");
    }
}

#[test]
fn the_count_and_row_rules_fail_by_name() {
    let (failed, _) = file_failures("event-log.toml", Builtin::EVENT_LOG, Fault::OffByOne, true);
    assert_eq!(failed[0].0, "GET /events/count answers 200 {\"count\": N} (0 on a clean store)");
    assert!(failed.iter().any(|(r, _)| r == "K sequential writes on a clean store give K"));
    let (failed, _) = file_failures("event-log.toml", Builtin::EVENT_LOG, Fault::WritesRefused, true);
    assert_eq!(
        failed,
        [("a refused event is not written (the count is unchanged)".to_owned(), VerifyLevel::Hardening)]
    );
    let (failed, _) = file_failures("db-read.toml", Builtin::DB_READ, Fault::Swapped, false);
    assert_eq!(failed[0].0, "rows come back ordered by id whatever the order asked");
}

/// docs/scenarios.md lists every case of each file with its level, in order (the tables of
/// "Verification"): a case added, renamed or moved to another level fails here until the
/// contract document says so too.
#[test]
fn the_contract_document_lists_every_case_with_its_level() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md")).unwrap();
    for (file, name) in [
        ("dummy.toml", "dummy"),
        ("event-log.toml", "event-log"),
        ("db-read.toml", "db-read"),
        ("bubble-sort.toml", "bubble-sort"),
        ("bubble-sort-connect-json.toml", "bubble-sort"),
    ] {
        let heading = format!("### `{name}`");
        let (_, rest) = doc.split_once(&heading).unwrap_or_else(|| panic!("no section {heading}"));
        let section = rest.split("\n### ").next().unwrap_or(rest);
        let rows: Vec<&str> =
            section.lines().filter(|l| l.starts_with("| core |") || l.starts_with("| hardening |")).collect();
        let s = load(file);
        let cases: Vec<String> = s
            .verify
            .iter()
            .map(|c| {
                let level = if c.level == VerifyLevel::Core { "core" } else { "hardening" };
                format!("| {level} | {} |", c.name.replace('|', "\\|"))
            })
            .collect();
        assert_eq!(rows, cases, "{file}: docs/scenarios.md's table of {name}");
        assert_eq!(s.verify.iter().filter(|c| c.probe).count(), 1, "{file} names its readiness probe");
    }
}

/// The load flows check what `check.rs` checks under load: `dummy` a count of exactly 1,
/// `event-log` a count of at least 1, `db-read` the two rows of the ids drawn.
#[test]
fn the_load_flows_check_the_answers_as_the_builtins_do() {
    let iterate = |file: &str, scenario: Builtin, fault: Fault, n: u64| -> usize {
        let s = load(file);
        let mut server = Server::new(scenario, fault);
        let mut failed = 0;
        for i in 0..n {
            let mut vars = Vars::new(7 + i);
            vars.set("base_url", BASE, Kind::String);
            s.draw(i, &mut vars);
            let flow = s.pick_flow(&mut vars);
            let steps =
                run_flow(&flow.hurl, &flow.request_names, &mut vars, &mut |e, r| server.file_request(e, r));
            assert_eq!(steps[0].name, flow.request_names[0]);
            failed += usize::from(steps.iter().any(|s| !s.failures.is_empty() || s.error.is_some()));
        }
        failed
    };
    assert_eq!(iterate("dummy.toml", Builtin::DUMMY, Fault::None, 200), 0);
    assert_eq!(iterate("event-log.toml", Builtin::EVENT_LOG, Fault::None, 200), 0);
    assert_eq!(iterate("db-read.toml", Builtin::DB_READ, Fault::None, 200), 0);
    assert_eq!(iterate("dummy.toml", Builtin::DUMMY, Fault::TextPlain, 20), 20);
    // Swapped rows are wrong whenever the first id drawn is the larger.
    let swapped = iterate("db-read.toml", Builtin::DB_READ, Fault::Swapped, 200);
    assert!((60..140).contains(&swapped), "{swapped}");
    assert_eq!(iterate("db-read.toml", Builtin::DB_READ, Fault::WrongPrice, 50), 50);
    // The built-in under-load check of event-log is a count of at least 1: an off-by-one
    // count passes it, as it passes the file's.
    assert_eq!(iterate("event-log.toml", Builtin::EVENT_LOG, Fault::OffByOne, 20), 0);
}

/// Each request of the load flows is a valid request of the contract.
#[test]
fn the_load_requests_are_valid() {
    let s = load("event-log.toml");
    let mut vars = Vars::new(3);
    vars.set("base_url", BASE, Kind::String);
    for i in 0..100 {
        s.draw(i, &mut vars);
        let mut req = Request::default();
        s.flows[0].hurl.entries[0].render(&mut vars, &mut req).unwrap();
        parse_event(&req.body).unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(&req.body)));
    }
    let s = load("db-read.toml");
    for i in 0..100 {
        s.draw(i, &mut vars);
        let mut req = Request::default();
        s.flows[0].hurl.entries[0].render(&mut vars, &mut req).unwrap();
        let url = String::from_utf8(req.url).unwrap();
        let query = url.strip_prefix("http://fake.test/db/sqlite?").unwrap();
        let (a, b) = dbread::parse_ids(Some(query)).unwrap();
        let lo = vars.get("lo").unwrap().text.parse::<u32>().unwrap();
        let hi_price = vars.get("hi_price").unwrap().text.parse::<u32>().unwrap();
        assert_eq!((lo, hi_price), (a.min(b), dbread::price(a.max(b))));
    }
}

/// bubble-sort's data is the experiment's: the rows' `seed` is data/bubble-1000.json in its
/// order (what the built-in's load generator sends), `sorted` the same numbers sorted; the
/// cap's body holds one number more than the cap. Both forms read the same files.
#[test]
fn the_bubble_sort_data_is_the_experiments() {
    use stackbench_contract::bubble::{MAX_LEN, SEED, SEED_SORTED};
    for file in ["bubble-sort.toml", "bubble-sort-connect-json.toml"] {
        let s = load(file);
        let rows = &s.rows[0];
        assert_eq!(
            (rows.columns.as_slice(), rows.values.len()),
            (&["seed".to_owned(), "sorted".to_owned()][..], 1)
        );
        let list = |k: usize| -> Vec<i32> { serde_json::from_str(&rows.values[0][k].0).unwrap() };
        assert_eq!((list(0), list(1)), (SEED.clone(), SEED_SORTED.clone()), "{file}");
    }
    let cap: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(builtin("bubble-10001.json")).unwrap()).unwrap();
    assert_eq!(cap["data"].as_array().unwrap().len(), MAX_LEN + 1);
}
