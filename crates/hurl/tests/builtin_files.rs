//! The built-in scenarios as files (`scenarios/builtin/`) catch the faults the
//! built-ins' own verification catches (`stackbench_scenarios::verify`): both
//! are run against one in-memory server written for this test, right and with
//! one fault at a time (a store that ignores writes, an off-by-one count, a
//! store that was not emptied, a server that accepts bad events, a 405 without
//! `Allow`, rows swapped or wrong, ...), and the rules that fail, with their
//! levels and in their order, must be the same. The files' case lists are also
//! held to the built-ins' (words, levels, what each enforces, order), and their load flows to the
//! under-load checks (`check.rs`).

use std::path::{Path, PathBuf};

use stackbench_hurl::model::Entry;
use stackbench_hurl::run::{run_flow, verify};
use stackbench_hurl::scenario::{Level, Scenario};
use stackbench_hurl::{Answer, Kind, Request, Vars};
use stackbench_scenarios::Scenario as Builtin;
use stackbench_scenarios::dbread;
use stackbench_scenarios::event::parse_event;
use stackbench_scenarios::verify::{self as rust, Judge, Observed, VerifyOptions};

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
            (Builtin::Dummy, _) | (_, Fault::IgnoresWrites) => 1,
            (_, Fault::OffByOne) => self.stored + 1,
            _ => self.stored,
        };
        self.reply(200, format!("{{\"count\":{n}}}"))
    }

    /// The contract's answer to `method target` (path and query) with `content_type` and `body`.
    fn handle(&mut self, method: &str, target: &str, content_type: Option<&str>, body: &[u8]) -> Reply {
        let (path, query) = target.split_once('?').map_or((target, None), |(p, q)| (p, Some(q)));
        match (self.scenario, path) {
            (Builtin::DbRead, "/db") if method == "GET" => self.reply(200, "[\"sqlite\"]".into()),
            (Builtin::DbRead, "/db/sqlite") if method != "GET" => self.not_allowed("GET"),
            (Builtin::DbRead, "/db/sqlite") => self.rows(query),
            (Builtin::DbRead, p) if p.starts_with("/db/") => {
                self.error(404, "no such driver; the drivers: sqlite")
            }
            (Builtin::DbRead, _) => self.error(404, "no route"),
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
        let refused = if body.len() > stackbench_scenarios::contract::MAX_BODY_BYTES {
            Some((413, "too large".to_owned()))
        } else if !content_type
            .is_some_and(|t| stackbench_scenarios::contract::is_json_content_type(t.as_bytes()))
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

/// The rules that fail under the built-in's verification, in order, with their levels.
fn rust_failures(scenario: Builtin, fault: Fault, clean: bool) -> Vec<(String, Level)> {
    let opts = VerifyOptions { base_path: "/db/sqlite".into(), clean_store: clean, connect_json: false };
    let mut server = Server::new(scenario, fault);
    let mut judge = Judge::new(clean);
    let mut failed = Vec::new();
    for case in rust::cases(scenario, &opts).unwrap() {
        let r = &case.request;
        let reply = server.handle(r.method, &r.path, r.content_type, &r.body);
        let seen = Observed {
            status: reply.status,
            content_type: reply.header("content-type", 0).map(str::as_bytes),
            header: rust::wanted_header(&case.outcome).and_then(|h| reply.header(h, 0)).map(str::as_bytes),
            grpc_status: None,
            body: reply.body.as_bytes(),
        };
        if judge.judge(&case.outcome, &seen).is_err() {
            failed.push((case.rule.to_owned(), level(case.level)));
        }
    }
    failed
}

fn level(l: rust::Level) -> Level {
    match l {
        rust::Level::Core => Level::Core,
        rust::Level::Hardening => Level::Hardening,
    }
}

fn load(file: &str) -> Scenario {
    Scenario::load(&builtin(file), &[]).unwrap_or_else(|e| panic!("{e}"))
}

/// The cases that fail under the file's verification, in order, with their levels; and
/// whether the verification passed.
fn file_failures(file: &str, scenario: Builtin, fault: Fault, clean: bool) -> (Vec<(String, Level)>, bool) {
    let s = load(file);
    let mut server = Server::new(scenario, fault);
    let v = verify(&s, BASE, &[], 1, clean, &mut |e, r| server.file_request(e, r), &mut |_| {
        Err("no command here".into())
    });
    let failed = v.cases.iter().filter(|c| !c.passed()).map(|c| (c.name.clone(), c.level)).collect();
    (failed, v.passed())
}

fn same_faults_caught(file: &str, scenario: Builtin, fault: Fault, clean: bool) -> Vec<(String, Level)> {
    let want = rust_failures(scenario, fault, clean);
    let (got, passed) = file_failures(file, scenario, fault, clean);
    assert_eq!(got, want, "{file}, {fault:?}, clean store: {clean}");
    assert_eq!(passed, want.iter().all(|(_, l)| *l == Level::Hardening), "{file}, {fault:?}");
    got
}

#[test]
fn the_files_say_the_builtins_rules_in_their_words_levels_and_order() {
    let opts = VerifyOptions { base_path: "/db/sqlite".into(), ..VerifyOptions::default() };
    for (file, scenario) in [
        ("dummy.toml", Builtin::Dummy),
        ("event-log.toml", Builtin::EventLog),
        ("db-read.toml", Builtin::DbRead),
    ] {
        let rules: Vec<(String, Level, String)> = rust::cases(scenario, &opts)
            .unwrap()
            .iter()
            .map(|c| (c.rule.to_owned(), level(c.level), c.enforces.to_owned()))
            .collect();
        let s = load(file);
        let cases: Vec<(String, Level, String)> =
            s.verify.iter().map(|c| (c.name.clone(), c.level, c.enforces.clone())).collect();
        assert_eq!(cases, rules, "{file}");
        assert_eq!(s.verify.iter().filter(|c| c.probe).count(), 1, "{file} names its readiness probe");
    }
}

#[test]
fn a_right_server_passes_every_case() {
    for clean in [true, false] {
        assert_eq!(same_faults_caught("dummy.toml", Builtin::Dummy, Fault::None, clean), []);
        assert_eq!(same_faults_caught("event-log.toml", Builtin::EventLog, Fault::None, clean), []);
        assert_eq!(same_faults_caught("db-read.toml", Builtin::DbRead, Fault::None, clean), []);
    }
}

#[test]
fn event_log_count_faults_are_caught_as_the_builtin_catches_them() {
    for fault in [Fault::IgnoresWrites, Fault::OffByOne, Fault::Dirty] {
        let clean = same_faults_caught("event-log.toml", Builtin::EventLog, fault, true);
        assert_eq!(
            clean[0].0, "GET /events/count answers 200 {\"count\": N} (0 on a clean store)",
            "{fault:?}"
        );
        assert!(clean.iter().any(|(r, _)| r == "K sequential writes on a clean store give K"), "{fault:?}");
        // Not known to be clean: judged from the count read.
        let dirty = same_faults_caught("event-log.toml", Builtin::EventLog, fault, false);
        if fault == Fault::IgnoresWrites {
            assert!(
                dirty
                    .iter()
                    .any(|(r, l)| r == "the next write counts exactly once more" && *l == Level::Core)
            );
        } else {
            assert_eq!(dirty, [], "{fault:?} is only wrong against a store known to be empty");
        }
    }
}

#[test]
fn refusals_and_details_are_caught_as_the_builtin_catches_them() {
    for (file, scenario) in [("dummy.toml", Builtin::Dummy), ("event-log.toml", Builtin::EventLog)] {
        let lenient = same_faults_caught(file, scenario, Fault::AcceptsBad, true);
        assert!(lenient.iter().all(|(_, l)| *l == Level::Hardening), "{lenient:?}");
        assert!(lenient.iter().any(|(r, _)| r == "a body over 64 KiB gets 413"), "{lenient:?}");
        let no_allow = same_faults_caught(file, scenario, Fault::NoAllow, true);
        assert_eq!(
            no_allow,
            [("a known path with a wrong method gets 405 with an Allow header".to_owned(), Level::Hardening)]
        );
        assert!(same_faults_caught(file, scenario, Fault::PlainErrors, true).len() >= 20);
        let text = same_faults_caught(file, scenario, Fault::TextPlain, true);
        assert!(text.iter().any(|(_, l)| *l == Level::Core));
    }
    let written = same_faults_caught("event-log.toml", Builtin::EventLog, Fault::WritesRefused, true);
    assert_eq!(
        written,
        [("a refused event is not written (the count is unchanged)".to_owned(), Level::Hardening)]
    );
}

#[test]
fn db_read_faults_are_caught_as_the_builtin_catches_them() {
    let swapped = same_faults_caught("db-read.toml", Builtin::DbRead, Fault::Swapped, false);
    assert_eq!(swapped.len(), 2, "{swapped:?}");
    assert_eq!(swapped[0].0, "rows come back ordered by id whatever the order asked");
    assert!(same_faults_caught("db-read.toml", Builtin::DbRead, Fault::WrongPrice, false).len() == 5);
    assert_eq!(
        same_faults_caught("db-read.toml", Builtin::DbRead, Fault::OneRowForSame, false),
        [("the same id twice gives that row twice".to_owned(), Level::Core)]
    );
    let ids = same_faults_caught("db-read.toml", Builtin::DbRead, Fault::NoIdCheck, false);
    assert!(ids.len() == 4 && ids.iter().all(|(_, l)| *l == Level::Hardening), "{ids:?}");
    assert!(!same_faults_caught("db-read.toml", Builtin::DbRead, Fault::NoAllow, false).is_empty());
    assert!(!same_faults_caught("db-read.toml", Builtin::DbRead, Fault::TextPlain, false).is_empty());
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
    assert_eq!(iterate("dummy.toml", Builtin::Dummy, Fault::None, 200), 0);
    assert_eq!(iterate("event-log.toml", Builtin::EventLog, Fault::None, 200), 0);
    assert_eq!(iterate("db-read.toml", Builtin::DbRead, Fault::None, 200), 0);
    assert_eq!(iterate("dummy.toml", Builtin::Dummy, Fault::TextPlain, 20), 20);
    // Swapped rows are wrong whenever the first id drawn is the larger.
    let swapped = iterate("db-read.toml", Builtin::DbRead, Fault::Swapped, 200);
    assert!((60..140).contains(&swapped), "{swapped}");
    assert_eq!(iterate("db-read.toml", Builtin::DbRead, Fault::WrongPrice, 50), 50);
    // The built-in under-load check of event-log is a count of at least 1: an off-by-one
    // count passes it, as it passes the file's.
    assert_eq!(iterate("event-log.toml", Builtin::EventLog, Fault::OffByOne, 20), 0);
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
