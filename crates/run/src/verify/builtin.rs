//! The built-in scenarios verified by their scenario files (`scenarios/builtin/`,
//! docs/scenarios.md, "The built-in scenarios as files"), compiled into the binary
//! with every file they name (bodies, rows, `bubble-sort`'s `.proto`) so that an
//! installed `stackbench` needs no repository. `bubble-sort` has two: its gRPC form
//! and its Connect JSON form (`--connect-json`).

use std::sync::OnceLock;

use stackbench_hurl::scenario::Scenario as File;
use stackbench_scenarios::Scenario;

use super::CasesError;

const DUMMY: &str = include_str!("../../../../scenarios/builtin/dummy.toml");
const EVENT_LOG: &str = include_str!("../../../../scenarios/builtin/event-log.toml");
const DB_READ: &str = include_str!("../../../../scenarios/builtin/db-read.toml");
const BUBBLE_SORT: &str = include_str!("../../../../scenarios/builtin/bubble-sort.toml");
const BUBBLE_SORT_JSON: &str = include_str!("../../../../scenarios/builtin/bubble-sort-connect-json.toml");
/// The files the built-in files name, by the names they use: event-log's and dummy's body
/// over 64 KiB; bubble-sort's data (the experiment's 1000 numbers and them sorted, the
/// 10,001 numbers of the cap) and the `.proto` its gRPC form is compiled with.
const FILES: &[(&str, &str)] = &[
    ("over-64-kib.json", include_str!("../../../../scenarios/builtin/over-64-kib.json")),
    ("bubble-1000.jsonl", include_str!("../../../../scenarios/builtin/bubble-1000.jsonl")),
    ("bubble-10001.json", include_str!("../../../../scenarios/builtin/bubble-10001.json")),
    ("../../proto/sort/v1/sort.proto", include_str!("../../../../proto/sort/v1/sort.proto")),
];

/// The scenario file of built-in `s`, loaded once per process (so that a cold start's
/// readiness probe never waits for a parse); for `bubble-sort` with `connect_json`, its
/// Connect JSON form (the flag means nothing to the others). Its `driver` is given by
/// [`variables`], not by the file.
pub fn file(s: Scenario, connect_json: bool) -> &'static File {
    static LOADED: [OnceLock<File>; 5] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let (i, name, text) = match s {
        Scenario::Dummy => (0, "dummy.toml", DUMMY),
        Scenario::EventLog => (1, "event-log.toml", EVENT_LOG),
        Scenario::DbRead => (2, "db-read.toml", DB_READ),
        Scenario::BubbleSort if connect_json => (4, "bubble-sort-connect-json.toml", BUBBLE_SORT_JSON),
        Scenario::BubbleSort => (3, "bubble-sort.toml", BUBBLE_SORT),
    };
    LOADED[i].get_or_init(|| {
        let path = format!("scenarios/builtin/{name}");
        let loaded = File::parse_embedded(&path, text, FILES, &["driver"]);
        loaded.unwrap_or_else(|e| panic!("the shipped built-in file does not load (a test holds it): {e}"))
    })
}

/// The file's variables for a contestant at path `base_path` (what a plan's `path`, or the
/// URL given to `stackbench verify`, holds): `db-read`'s driver from `/db/<driver>`. The
/// files' `{{base_url}}` is the server's root.
pub fn variables(s: Scenario, base_path: &str) -> Result<Vec<(&'static str, String)>, CasesError> {
    if s != Scenario::DbRead {
        return Ok(Vec::new());
    }
    let base = base_path.trim_end_matches('/');
    match base.strip_prefix("/db/") {
        Some(d) if !d.is_empty() && !d.contains(['/', '?']) => Ok(vec![("driver", d.to_owned())]),
        _ => Err(CasesError::DbReadPath(base_path.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_files_load_and_db_read_needs_its_driver() {
        for (s, connect_json) in [
            (Scenario::Dummy, false),
            (Scenario::EventLog, false),
            (Scenario::DbRead, false),
            (Scenario::BubbleSort, false),
            (Scenario::BubbleSort, true),
        ] {
            let f = file(s, connect_json);
            assert_eq!(f.name, s.name());
            assert_eq!(f.verify.iter().filter(|c| c.probe).count(), 1, "{s}");
        }
        // The gRPC form carries its .proto's text: nothing is read from disk.
        let grpc = file(Scenario::BubbleSort, false).grpc.as_ref().unwrap();
        assert!(grpc.source.as_deref().unwrap().contains("service SortService"));
        assert!(file(Scenario::BubbleSort, true).grpc.is_none());
        assert!(std::ptr::eq(file(Scenario::Dummy, true), file(Scenario::Dummy, false)));
        assert_eq!(variables(Scenario::DbRead, "/db/redis/").unwrap(), [("driver", "redis".to_owned())]);
        for bad in ["", "/", "/db", "/db/", "/other/x", "/db/a/b"] {
            assert!(variables(Scenario::DbRead, bad).is_err(), "{bad}");
        }
        assert!(variables(Scenario::Dummy, "/").unwrap().is_empty());
    }
}
