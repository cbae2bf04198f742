//! Files that several contestants carry as copies of one another, held identical.
//!
//! Each contestant builds on its own, from its own directory, the way its language's users
//! build (`pip install`, `mvn package`, `npm ci`, `mix release`, a Docker build with the
//! directory as its context), so a file it shares with another is copied, not referred to
//! outside it. This test keeps the copies in step: a change to one is a change to all, and a
//! new copy elsewhere must join its set here. The contestant's own name in a file (a Java
//! package, an Elixir application module) is the one difference allowed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One shared file: its copies (under `contestants/`), each with the name of its own
/// application inside it (replaced by `{own}` before comparing), empty when it has none.
struct Shared {
    file: &'static str,
    copies: &'static [(&'static str, &'static str)],
}

const SHARED: [Shared; 4] = [
    Shared { file: "events.py", copies: &[("python-flask/events.py", ""), ("python-fastapi/events.py", "")] },
    Shared {
        file: "Event.java",
        copies: &[
            ("java-spring/src/main/java/stackbench/spring/Event.java", "stackbench.spring"),
            ("java-vertx/src/main/java/stackbench/vertx/Event.java", "stackbench.vertx"),
        ],
    },
    Shared {
        file: "cores.js",
        copies: &[
            ("node-fastify/src/cores.js", ""),
            ("node-db/src/cores.js", ""),
            ("node-grpc/src/cores.js", ""),
        ],
    },
    Shared {
        file: "yaws_dynopts.ex",
        copies: &[
            ("elixir-yaws/lib/ex_yaws/yaws_dynopts.ex", "ExYaws"),
            ("elixir-db/lib/ex_db/yaws_dynopts.ex", "ExDb"),
        ],
    },
];

fn contestants() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contestants")
}

/// Where `a` and `b` differ, as one hunk: the lines between their common beginning and
/// their common end, numbered, each side's; `None` when they are the same.
fn difference(a_name: &str, a: &str, b_name: &str, b: &str) -> Option<String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    if a == b {
        return None;
    }
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let side = |name: &str, lines: &[&str]| {
        let changed = &lines[head..lines.len() - tail];
        if changed.is_empty() {
            return format!("  {name}: nothing between its lines {head} and {}\n", head + 1);
        }
        let mut s = format!("  {name}, lines {}-{}:\n", head + 1, head + changed.len());
        for (i, line) in changed.iter().enumerate().take(20) {
            let _ = writeln!(s, "    {:>4} | {line}", head + 1 + i);
        }
        if changed.len() > 20 {
            let _ = writeln!(s, "    … {} more", changed.len() - 20);
        }
        s
    };
    Some(format!("{}{}", side(a_name, &a), side(b_name, &b)))
}

/// Every file named `name` under `dir`, leaving out what a build or an install puts there.
fn find(dir: &Path, name: &str, found: &mut Vec<PathBuf>) {
    const BUILT: [&str; 7] = ["node_modules", "_build", "deps", "target", "build", "__pycache__", ".venv"];
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !BUILT.contains(&file_name.as_str()) && !file_name.starts_with('.') {
                find(&path, name, found);
            }
        } else if file_name == name {
            found.push(path);
        }
    }
}

#[test]
fn the_copies_shared_by_contestants_are_identical() {
    let root = contestants();
    let mut differences = Vec::new();
    for shared in &SHARED {
        let read = |(path, own): &(&str, &str)| {
            let text = std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| {
                panic!("contestants/{path}: {e} (a copy of {} listed here)", shared.file)
            });
            if own.is_empty() { text } else { text.replace(own, "{own}") }
        };
        let (first, rest) = shared.copies.split_first().unwrap();
        let want = read(first);
        for copy in rest {
            let names = (format!("contestants/{}", first.0), format!("contestants/{}", copy.0));
            if let Some(d) = difference(&names.0, &want, &names.1, &read(copy)) {
                differences.push(format!("{} and {} differ:\n{d}", names.0, names.1));
            }
        }
    }
    assert!(
        differences.is_empty(),
        "copies of one file in several contestants must stay identical (change every copy, \
         or give the contestant a file of its own and take it out of SHARED in this test):\n{}",
        differences.join("\n")
    );
}

#[test]
fn every_copy_is_in_its_set() {
    let root = contestants();
    for shared in &SHARED {
        let mut found = Vec::new();
        find(&root, shared.file, &mut found);
        let mut found: Vec<String> =
            found.iter().map(|p| p.strip_prefix(&root).unwrap().to_string_lossy().into_owned()).collect();
        found.sort();
        let mut listed: Vec<String> = shared.copies.iter().map(|(p, _)| (*p).to_owned()).collect();
        listed.sort();
        assert_eq!(
            found, listed,
            "the copies of {} under contestants/ are not the ones SHARED lists",
            shared.file
        );
    }
}

#[test]
fn a_difference_names_both_files_and_the_lines() {
    assert_eq!(difference("a", "x\ny\nz\n", "b", "x\ny\nz\n"), None);
    let d = difference("a.py", "one\ntwo\nthree\nfour\n", "b.py", "one\nTWO\nthree\nfour\n").unwrap();
    assert_eq!(d, "  a.py, lines 2-2:\n       2 | two\n  b.py, lines 2-2:\n       2 | TWO\n");
    // A line added to one side: the other shows an empty range.
    let d = difference("a", "1\n2\n3\n", "b", "1\n2\nnew\n3\n").unwrap();
    assert_eq!(d, "  a: nothing between its lines 2 and 3\n  b, lines 3-3:\n       3 | new\n");
}
