//! The import graph of a crate's modules, and its circles (docs/design.md, "One of each, no
//! circles, one test layout": modules inside a crate depend on each other one way).
//!
//! A module is a file under `src/` (`lib.rs` the root, `a.rs` and `a/mod.rs` the module `a`,
//! `a/b.rs` the module `a::b`). It uses another when its code names a path through `crate::` or
//! `super::` (in a `use` or inline, `use crate::{a::X, b::Y}` groups included); comments and a
//! trailing `#[cfg(test)] mod tests` are left out, and so are files named `tests.rs`: tests may
//! reach anywhere. A module using its own ancestor or descendant is how Rust nests modules, not
//! a circle; any other use is lifted to the two siblings under the modules' closest common
//! ancestor (`eval::quick` using `model` makes the edge `eval → model`), and a circle is a cycle
//! among siblings.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module's path inside its crate, `["eval", "quick"]` for `eval::quick`; empty for the root.
pub type Module = Vec<String>;

/// The modules of the crate whose `src/` is `src` and, for each, the modules it uses.
pub fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut files = Vec::new();
    collect_files(src, &mut files);
    let modules: BTreeSet<Module> = files.iter().map(|f| module_of(src, f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let here = module_of(src, file);
        let mut uses = BTreeSet::new();
        if file.file_name().is_some_and(|n| n != "tests.rs") {
            let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            for path in paths_named(&code_only(&text)) {
                if let Some(target) = resolve(&here, &path, &modules) {
                    uses.insert(target);
                }
            }
        }
        graph.entry(here).or_insert_with(BTreeSet::new).extend(uses);
    }
    graph
}

/// Every circle of the crate whose `src/` is `src`, each as its modules in order
/// (`["eval", "model"]` when `eval` and `model` use each other); empty when it has none.
pub fn circles(src: &Path) -> Vec<Vec<String>> {
    let mut sibling_edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (from, uses) in graph(src) {
        for to in uses {
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue; // an ancestor or a descendant
            }
            sibling_edges.entry(from[..=common].to_vec()).or_default().insert(to[..=common].to_vec());
        }
    }
    let mut found = Vec::new();
    for component in strongly_connected(&sibling_edges) {
        if component.len() > 1 {
            found.push(component.iter().map(|m| m.join("::")).collect());
        }
    }
    found.sort();
    found
}

fn collect_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut paths: Vec<_> = entries.map(|e| e.expect("a directory entry").path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            collect_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).expect("a file under src/").with_extension("");
    let mut parts: Module = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("lib" | "main" | "mod")) {
        parts.pop();
    }
    parts
}

/// The text without comments and without a trailing `#[cfg(test)] mod tests` (by the workspace's
/// habit, the last thing in a file). String literals are kept: a `crate::` inside one is rare,
/// and at worst adds an edge.
fn code_only(text: &str) -> String {
    let end = text.find("#[cfg(test)]\nmod tests {").unwrap_or(text.len());
    let mut out = String::with_capacity(end);
    for line in text[..end].lines() {
        let code = match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// Every path that starts with `crate::`, `super::` or `self::`, as its segments, groups
/// expanded (`crate::{a::X, b}` gives `crate a X` and `crate b`).
fn paths_named(code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word =
            i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':');
        let head =
            ["crate::", "super::", "self::"].into_iter().find(|h| bytes[i..].starts_with(h.as_bytes()));
        match head {
            Some(h) if starts_word => {
                let (paths, next) = parse_path(code, i);
                out.extend(paths);
                i = next.max(i + h.len());
            }
            _ => i += 1,
        }
    }
    out
}

/// Parses the path (maybe with `{…}` groups) that starts at `at`; returns its expansions and
/// where it ends.
fn parse_path(code: &str, at: usize) -> (Vec<Vec<String>>, usize) {
    let bytes = code.as_bytes();
    let mut segments = Vec::new();
    let mut i = at;
    loop {
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        if i > start {
            segments.push(code[start..i].to_owned());
        }
        let rest = &code[i..];
        let skip = rest.len() - rest.trim_start().len();
        if rest.trim_start().starts_with("::") {
            i += skip + 2;
            i += code[i..].len() - code[i..].trim_start().len();
            if code[i..].starts_with('{') {
                let mut all = Vec::new();
                i += 1;
                loop {
                    i += code[i..].len() - code[i..].trim_start().len();
                    if i >= bytes.len() || bytes[i] == b'}' {
                        break;
                    }
                    let (inner, next) = parse_path(code, i);
                    for tail in inner {
                        all.push(segments.iter().cloned().chain(tail).collect());
                    }
                    i = next;
                    i += code[i..].len() - code[i..].trim_start().len();
                    if i < bytes.len() && bytes[i] == b',' {
                        i += 1;
                    } else if i < bytes.len() && bytes[i] != b'}' {
                        i += 1; // ` as name`, `*`: skip a byte and go on
                    }
                }
                return (all, (i + 1).min(bytes.len()));
            }
            continue;
        }
        return (vec![segments], i);
    }
}

/// The deepest module of `modules` the path `path` (as written in the module `here`) names.
fn resolve(here: &Module, path: &[String], modules: &BTreeSet<Module>) -> Option<Module> {
    let mut base = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("self" | "super") => here.clone(),
        _ => return None,
    };
    let mut rest = &path[1..];
    if path[0] == "super" {
        base.pop();
    }
    while rest.first().is_some_and(|s| s == "super") {
        base.pop();
        rest = &rest[1..];
    }
    for segment in rest {
        base.push(segment.clone());
        if !modules.contains(&base) {
            base.pop();
            break;
        }
    }
    Some(base)
}

/// Tarjan's strongly connected components of `edges`.
fn strongly_connected(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on_stack: BTreeSet<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Module) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            component.sort();
            s.out.push(component);
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    #[test]
    fn finds_a_circle_through_a_nested_module_and_a_group() {
        let dir = std::env::temp_dir().join(format!("sb-modgraph-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        write(
            &dir,
            &[
                ("lib.rs", "mod eval; mod model; mod leaf;\n"),
                ("model.rs", "use crate::{leaf::X, eval::quick::Cache};\n"),
                ("eval.rs", "mod quick;\n// crate::nothing\n"),
                ("eval/quick.rs", "use super::super::model::Entry;\nuse super::Parent;\n"),
                ("leaf.rs", "pub struct X;\n#[cfg(test)]\nmod tests {\n    use crate::model::Y;\n}\n"),
                ("leaf/tests.rs", "use crate::eval::E;\n"),
            ],
        );
        let g = graph(&dir);
        assert!(g[&vec!["leaf".to_owned()]].is_empty(), "{g:?}");
        assert_eq!(circles(&dir), vec![vec!["eval".to_owned(), "model".to_owned()]]);
        std::fs::write(dir.join("model.rs"), "use crate::leaf::X;\n").unwrap();
        assert!(circles(&dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// docs/design.md: no crate of the workspace has a circle among its modules. Those of the
    /// crates in `STILL_CIRCULAR` are being removed; once a crate has none, this test fails
    /// until it leaves the list, so none comes back.
    #[test]
    fn no_crate_has_a_circle() {
        const STILL_CIRCULAR: &[&str] = &["load"];
        let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut report = Vec::new();
        let mut dirs: Vec<_> = std::fs::read_dir(&crates).unwrap().map(|e| e.unwrap().path()).collect();
        dirs.sort();
        for dir in dirs.iter().filter(|d| d.join("src").is_dir()) {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            let found = circles(&dir.join("src"));
            match (found.is_empty(), STILL_CIRCULAR.contains(&name.as_str())) {
                (false, false) => report.push(format!("{name}: {found:?}")),
                (true, true) => report.push(format!("{name} has none left: take it out of STILL_CIRCULAR")),
                _ => {}
            }
        }
        assert!(report.is_empty(), "modules that use each other:\n{}", report.join("\n"));
    }
}
