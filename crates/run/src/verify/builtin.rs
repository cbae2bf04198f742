//! The built-in scenarios `dummy`, `event-log` and `db-read` verified by their
//! scenario files (`scenarios/builtin/`, docs/scenarios.md, "The built-in
//! scenarios as files"), compiled into the binary so that an installed
//! `stackbench` needs no repository. `bubble-sort`, with its Connect JSON
//! form, keeps the cases of `stackbench_scenarios::verify`.

use std::sync::OnceLock;

use stackbench_hurl::scenario::Scenario as File;
use stackbench_scenarios::Scenario;
use stackbench_scenarios::verify::CasesError;

const DUMMY: &str = include_str!("../../../../scenarios/builtin/dummy.toml");
const EVENT_LOG: &str = include_str!("../../../../scenarios/builtin/event-log.toml");
const DB_READ: &str = include_str!("../../../../scenarios/builtin/db-read.toml");
/// The files the built-in files name (event-log's and dummy's body over 64 KiB).
const FILES: &[(&str, &str)] =
    &[("over-64-kib.json", include_str!("../../../../scenarios/builtin/over-64-kib.json"))];

/// The scenario file of built-in `s`, loaded once per process (so that a cold start's
/// readiness probe never waits for a parse); `None` for `bubble-sort`. Its `driver` is
/// given by [`variables`], not by the file.
pub fn file(s: Scenario) -> Option<&'static File> {
    static LOADED: [OnceLock<File>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let (i, name, text) = match s {
        Scenario::Dummy => (0, "dummy.toml", DUMMY),
        Scenario::EventLog => (1, "event-log.toml", EVENT_LOG),
        Scenario::DbRead => (2, "db-read.toml", DB_READ),
        Scenario::BubbleSort => return None,
    };
    Some(LOADED[i].get_or_init(|| {
        let path = format!("scenarios/builtin/{name}");
        let loaded = File::parse_embedded(&path, text, FILES, &["driver"]);
        loaded.unwrap_or_else(|e| panic!("the shipped built-in file does not load (a test holds it): {e}"))
    }))
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
        for s in [Scenario::Dummy, Scenario::EventLog, Scenario::DbRead] {
            let f = file(s).unwrap();
            assert_eq!(f.name, s.name());
            assert!(f.verify.iter().any(|c| c.probe), "{s}");
        }
        assert!(file(Scenario::BubbleSort).is_none());
        assert_eq!(variables(Scenario::DbRead, "/db/redis/").unwrap(), [("driver", "redis".to_owned())]);
        for bad in ["", "/", "/db", "/db/", "/other/x", "/db/a/b"] {
            assert!(variables(Scenario::DbRead, bad).is_err(), "{bad}");
        }
        assert!(variables(Scenario::Dummy, "/").unwrap().is_empty());
    }
}
