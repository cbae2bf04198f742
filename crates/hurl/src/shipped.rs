//! The built-in scenarios' files as shipped (`scenarios/builtin/`), compiled in with every
//! file they name: their names, their texts and how each reads the target's path. The
//! scenario loader asks here whether a file is named like a built-in (and is not its file);
//! [`crate::builtin`] loads them.

/// How a built-in reads the path of the URL it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathRule {
    /// The server's root, or the contract's path for the first request (`/events`).
    Root(&'static str),
    /// `/db/<driver>`: the `driver` variable.
    Driver,
}

/// One built-in's file as shipped, and how it reads the target's path.
pub(crate) struct Shipped {
    pub(crate) name: &'static str,
    pub(crate) file: &'static str,
    pub(crate) text: &'static str,
    /// The Connect JSON form, for `bubble-sort`.
    pub(crate) json_form: Option<(&'static str, &'static str)>,
    pub(crate) path: PathRule,
}

pub(crate) const TABLE: [Shipped; 4] = [
    Shipped {
        name: "event-log",
        file: "event-log.toml",
        text: include_str!("../../../scenarios/builtin/event-log.toml"),
        json_form: None,
        path: PathRule::Root("/events"),
    },
    Shipped {
        name: "dummy",
        file: "dummy.toml",
        text: include_str!("../../../scenarios/builtin/dummy.toml"),
        json_form: None,
        path: PathRule::Root("/events"),
    },
    Shipped {
        name: "db-read",
        file: "db-read.toml",
        text: include_str!("../../../scenarios/builtin/db-read.toml"),
        json_form: None,
        path: PathRule::Driver,
    },
    Shipped {
        name: "bubble-sort",
        file: "bubble-sort.toml",
        text: include_str!("../../../scenarios/builtin/bubble-sort.toml"),
        json_form: Some((
            "bubble-sort-connect-json.toml",
            include_str!("../../../scenarios/builtin/bubble-sort-connect-json.toml"),
        )),
        path: PathRule::Root("/"),
    },
];

/// The files the built-in files name, by the names they use: event-log's and dummy's body
/// over 64 KiB; bubble-sort's data (the experiment's 1000 numbers and them sorted, the
/// 10,001 numbers of the cap) and the `.proto` its gRPC form is compiled with.
pub(crate) const FILES: &[(&str, &str)] = &[
    ("over-64-kib.json", include_str!("../../../scenarios/builtin/over-64-kib.json")),
    ("bubble-1000.jsonl", include_str!("../../../scenarios/builtin/bubble-1000.jsonl")),
    ("bubble-10001.json", include_str!("../../../scenarios/builtin/bubble-10001.json")),
    ("../../proto/sort/v1/sort.proto", include_str!("../../../proto/sort/v1/sort.proto")),
];

/// The shipped built-in named `name`, if one is.
pub(crate) fn named(name: &str) -> Option<&'static Shipped> {
    TABLE.iter().find(|s| s.name == name)
}

impl Shipped {
    /// Whether `text` is one of its files as shipped, which may be loaded from disk under its
    /// name: any other file named like it is refused.
    pub(crate) fn is_its_file(&self, text: &str) -> bool {
        text == self.text || self.json_form.is_some_and(|(_, t)| t == text)
    }
}
