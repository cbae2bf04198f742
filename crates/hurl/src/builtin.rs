//! The built-in scenarios: scenario files that ship inside the binary
//! (`scenarios/builtin/`, docs/scenarios.md, "The built-in scenarios as files"),
//! compiled in with every file they name (bodies, rows, `bubble-sort`'s `.proto`) so
//! that an installed `stackbench` needs no repository. A built-in is nothing but its
//! file: `load`, `verify` and the orchestrator run it as they run a user's file.
//! `bubble-sort` has two files, its gRPC form and its Connect JSON form.
//!
//! What a built-in adds to a file is how it reads the target's path: the files'
//! `{{base_url}}` is the server's root, and `db-read`'s `driver` comes from the
//! path `/db/<driver>` ([`Builtin::variables`]).

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::scenario::Scenario;
use crate::shipped::{FILES, PathRule, Shipped, TABLE};

/// One of the built-in scenarios, by its place in [`Builtin::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Builtin(u8);

/// An unknown built-in's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scenario {0:?}; the built-in scenarios are event-log, dummy, db-read, bubble-sort")]
pub struct UnknownBuiltin(pub String);

/// A URL path a built-in cannot be sent to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error(
        "db-read goes through one driver: give its path in the URL, like http://127.0.0.1:8080/db/sqlite (got path {0:?})"
    )]
    Driver(String),
    #[error(
        "{name} is sent to the server's root: give the URL as http://host:port{} (got path {path:?}); \
         a service elsewhere is measured with a scenario file (docs/scenarios.md)",
        also.map(|a| format!(" or http://host:port{a}")).unwrap_or_default()
    )]
    NotRoot { name: &'static str, path: String, also: Option<&'static str> },
}

impl PathError {
    /// The same refusal worded for a plan, whose contestant gives its server's `path` rather
    /// than a URL.
    pub fn for_plan(&self) -> String {
        match self {
            PathError::Driver(path) => format!(
                "a db-read contestant needs `path = \"/db/<driver>\"` (e.g. \"/db/sqlite\"): the driver \
                 the load goes through (got {path:?})"
            ),
            PathError::NotRoot { name, path, also } => format!(
                "a {name} contestant is sent to its server's root: leave `path` out, or write \"/\"{} (got {path:?})",
                also.map(|a| format!(" or {a:?}")).unwrap_or_default()
            ),
        }
    }
}

impl Builtin {
    pub const EVENT_LOG: Builtin = Builtin(0);
    pub const DUMMY: Builtin = Builtin(1);
    pub const DB_READ: Builtin = Builtin(2);
    pub const BUBBLE_SORT: Builtin = Builtin(3);
    /// Every built-in, in the order the contract lists them.
    pub const ALL: [Builtin; 4] =
        [Builtin::EVENT_LOG, Builtin::DUMMY, Builtin::DB_READ, Builtin::BUBBLE_SORT];

    fn entry(self) -> &'static Shipped {
        &TABLE[usize::from(self.0)]
    }

    /// The name used on the command line and in plans.
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// Whether `text` is one of its files as shipped (`scenarios/builtin/`), which may be
    /// loaded from disk under its name: any other file named like it is refused.
    pub fn is_its_file(self, text: &str) -> bool {
        self.entry().is_its_file(text)
    }

    /// The built-in's file, loaded once per process (so that a cold start's readiness probe
    /// never waits for a parse); with `connect_json`, `bubble-sort`'s Connect JSON form (the
    /// flag means nothing to the others). A `driver` variable is left to [`Builtin::variables`].
    pub fn file(self, connect_json: bool) -> &'static Scenario {
        static LOADED: [OnceLock<Scenario>; 5] =
            [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let e = self.entry();
        let (slot, (file, text)) = match e.json_form {
            Some(form) if connect_json => (TABLE.len(), form),
            _ => (usize::from(self.0), (e.file, e.text)),
        };
        LOADED[slot].get_or_init(|| {
            let path = format!("scenarios/builtin/{file}");
            let loaded = Scenario::parse_embedded(&path, text, FILES, &["driver"]);
            loaded
                .unwrap_or_else(|e| panic!("the shipped built-in file does not load (a test holds it): {e}"))
        })
    }

    /// Whether it has a Connect JSON form (`--connect-json`).
    pub fn has_connect_json(self) -> bool {
        self.entry().json_form.is_some()
    }

    /// The file's variables for a server at URL path `path` (a plan's `path`, or the path of
    /// the URL given to `load` or `verify`): `db-read`'s driver from `/db/<driver>`. The
    /// others are sent to the server's root and take its path (`/`), or the contract's path
    /// for them (`/events`), as the same root.
    pub fn variables(self, path: &str) -> Result<Vec<(&'static str, String)>, PathError> {
        let trimmed = path.trim_end_matches('/');
        match self.entry().path {
            PathRule::Driver => match trimmed.strip_prefix("/db/") {
                Some(d) if !d.is_empty() && !d.contains(['/', '?']) => Ok(vec![("driver", d.to_owned())]),
                _ => Err(PathError::Driver(path.to_owned())),
            },
            PathRule::Root(also) if trimmed.is_empty() || trimmed == also.trim_end_matches('/') => {
                Ok(Vec::new())
            }
            PathRule::Root(also) => Err(PathError::NotRoot {
                name: self.name(),
                path: path.to_owned(),
                also: (also != "/").then_some(also),
            }),
        }
    }
}

impl fmt::Display for Builtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Builtin {
    type Err = UnknownBuiltin;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Builtin::ALL.into_iter().find(|b| b.name() == s).ok_or_else(|| UnknownBuiltin(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Protocol;

    fn named(name: &str) -> Builtin {
        name.parse().unwrap()
    }

    #[test]
    fn names_round_trip_and_an_unknown_one_lists_them() {
        for b in Builtin::ALL {
            assert_eq!(b.name().parse::<Builtin>(), Ok(b));
            assert_eq!(b.to_string(), b.name());
        }
        assert!("bubble".parse::<Builtin>().unwrap_err().to_string().contains("bubble-sort"));
    }

    #[test]
    fn the_shipped_files_load_each_with_one_probe() {
        for (b, connect_json) in
            Builtin::ALL.into_iter().map(|b| (b, false)).chain([(named("bubble-sort"), true)])
        {
            let f = b.file(connect_json);
            assert_eq!(f.name, b.name());
            assert_eq!(f.verify.iter().filter(|c| c.probe).count(), 1, "{b}");
        }
        // The gRPC form carries its .proto's text: nothing is read from disk.
        let grpc = named("bubble-sort").file(false);
        assert_eq!(grpc.protocol, Protocol::Grpc);
        assert!(grpc.grpc.as_ref().unwrap().source.as_deref().unwrap().contains("service SortService"));
        assert_eq!(named("bubble-sort").file(true).protocol, Protocol::Http1);
        assert!(named("bubble-sort").has_connect_json() && !named("dummy").has_connect_json());
        assert!(std::ptr::eq(named("dummy").file(true), named("dummy").file(false)));
    }

    #[test]
    fn the_path_gives_db_reads_driver_and_is_the_root_for_the_others() {
        let db = named("db-read");
        assert_eq!(db.variables("/db/redis/").unwrap(), [("driver", "redis".to_owned())]);
        for bad in ["", "/", "/db", "/db/", "/other/x", "/db/a/b", "/db/a?x=1"] {
            assert_eq!(db.variables(bad), Err(PathError::Driver(bad.to_owned())), "{bad}");
        }
        for ok in ["", "/", "/events", "/events/"] {
            assert!(named("dummy").variables(ok).unwrap().is_empty(), "{ok}");
            assert!(named("event-log").variables(ok).unwrap().is_empty(), "{ok}");
        }
        let e = named("event-log").variables("/api/events").unwrap_err().to_string();
        assert!(
            e.contains("http://host:port or http://host:port/events") && e.contains("scenario file"),
            "{e}"
        );
        assert!(named("bubble-sort").variables("/").unwrap().is_empty());
        let e = named("bubble-sort").variables("/events").unwrap_err().to_string();
        assert!(e.contains("give the URL as http://host:port (got"), "{e}");
    }

    #[test]
    fn a_plan_is_told_which_path_to_write() {
        let e = named("db-read").variables("/").unwrap_err().for_plan();
        assert!(e.contains("`path = \"/db/<driver>\"`") && e.contains("(got \"/\")"), "{e}");
        let e = named("event-log").variables("/api").unwrap_err().for_plan();
        assert!(e.contains("leave `path` out, or write \"/\" or \"/events\" (got \"/api\")"), "{e}");
        let e = named("bubble-sort").variables("/events").unwrap_err().for_plan();
        assert!(e.contains("leave `path` out, or write \"/\" (got \"/events\")"), "{e}");
    }
}
