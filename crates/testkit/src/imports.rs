//! The import graph of a crate's modules, and its circles.
//!
//! A module uses another when one of its paths names an item there: a `use`, or a path in
//! its code (`crate::…`, `super::…`, `self::…`, or through a name it imported), followed
//! through re-exports (`pub use`) to the module that defines the item. Tests
//! (`#[cfg(test)]` modules) are left out. A use is drawn between the two siblings under the
//! modules' nearest common ancestor: `flow::h2` using `spec::Io` is `flow → spec`; a module
//! using its parent or its own children draws nothing. A circle is a set of sibling modules
//! that reach each other this way ([`circles`]); a crate without one can be drawn as layers,
//! each module above the ones it uses.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// A module's path from the crate root (empty: the root).
pub type ModPath = Vec<String>;

/// Where a use was seen: file and line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    pub file: PathBuf,
    pub line: usize,
    /// The path as written.
    pub path: String,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} ({})", self.file.display(), self.line, self.path)
    }
}

/// A crate's modules and what they use.
#[derive(Debug, Default)]
pub struct Graph {
    modules: BTreeMap<ModPath, Module>,
    /// Sibling → sibling, with the first use seen that draws it.
    pub edges: BTreeMap<(ModPath, ModPath), Site>,
}

#[derive(Debug, Default)]
struct Module {
    /// Names brought in by `use` (and `pub use`): name → absolute path (or an extern path,
    /// which starts with a segment that is no module of the crate).
    imports: BTreeMap<String, Vec<String>>,
    /// Paths the module names: absolute when they start with `crate`, `super` or `self`,
    /// or through an import.
    uses: Vec<(Vec<String>, Site)>,
}

/// The graph of the crate whose root file is `root` (`src/lib.rs`, `src/main.rs`, a
/// `src/bin/*.rs`).
///
/// # Errors
/// A module file that cannot be read or parsed.
pub fn crate_graph(root: &Path) -> Result<Graph, String> {
    graph_of(root, &|p| std::fs::read_to_string(p).ok())
}

/// [`crate_graph`] of the files `read` gives (`None`: no such file).
///
/// # Errors
/// A module file that `read` does not give, or that cannot be parsed.
pub fn graph_of(root: &Path, read: &Read<'_>) -> Result<Graph, String> {
    let mut g = Graph::default();
    let dir = root.parent().unwrap_or(Path::new(".")).to_path_buf();
    load_file(&mut g, read, root, &dir, &Vec::new())?;
    let mut edges = BTreeMap::new();
    for (from, m) in &g.modules {
        for (path, site) in &m.uses {
            let Some(to) = g.resolve(path, 0) else { continue };
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue;
            }
            let edge = (from[..=common].to_vec(), to[..=common].to_vec());
            edges.entry(edge).or_insert_with(|| site.clone());
        }
    }
    g.edges = edges;
    Ok(g)
}

/// The circles: each set of sibling modules (at least two) that reach each other, sorted.
pub fn circles(g: &Graph) -> Vec<Vec<ModPath>> {
    let nodes: BTreeSet<&ModPath> = g.edges.keys().flat_map(|(a, b)| [a, b]).collect();
    let reach = |from: &ModPath| {
        let mut seen: BTreeSet<&ModPath> = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(n) = todo.pop() {
            for (a, b) in g.edges.keys() {
                if a == n && seen.insert(b) {
                    todo.push(b);
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&ModPath, BTreeSet<&ModPath>> = nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut out: Vec<Vec<ModPath>> = Vec::new();
    for n in &nodes {
        if !reached[n].contains(n) || out.iter().any(|c| c.contains(n)) {
            continue;
        }
        let mut members: Vec<ModPath> = nodes
            .iter()
            .filter(|m| reached[n].contains(*m) && reached[*m].contains(n))
            .map(|m| (*m).clone())
            .collect();
        members.sort();
        out.push(members);
    }
    out
}

/// Reads a source file; `None` when there is none.
pub type Read<'a> = dyn Fn(&Path) -> Option<String> + 'a;

/// A module path as written in the code (`flow::h2`; the root is `crate`).
pub fn name(m: &ModPath) -> String {
    if m.is_empty() { "crate".to_owned() } else { m.join("::") }
}

/// Says a circle: its modules, and the use that draws each of its edges (its file relative
/// to `base`).
pub fn describe(g: &Graph, circle: &[ModPath], base: &Path) -> String {
    let mut s = circle.iter().map(name).collect::<Vec<_>>().join(" ↔ ");
    for ((a, b), site) in &g.edges {
        if circle.contains(a) && circle.contains(b) {
            let file = site.file.strip_prefix(base).unwrap_or(&site.file).display();
            let _ = write!(s, "\n    {} → {}: {file}:{} ({})", name(a), name(b), site.line, site.path);
        }
    }
    s
}

/// The modules directly under `parent` in layers, lowest first: a module is one layer above
/// the highest sibling it uses (layer 0 uses none). Each with the siblings it uses. Meaningful
/// only without a circle among them ([`circles`]).
pub fn layers(g: &Graph, parent: &ModPath) -> Vec<Vec<(String, Vec<String>)>> {
    let children: Vec<&ModPath> =
        g.modules.keys().filter(|m| m.len() == parent.len() + 1 && m.starts_with(parent)).collect();
    let uses =
        |m: &ModPath| -> Vec<&ModPath> { g.edges.keys().filter(|(a, _)| a == m).map(|(_, b)| b).collect() };
    let mut level: BTreeMap<&ModPath, usize> = BTreeMap::new();
    // Longest path down; at most as many rounds as modules, without a circle.
    for _ in 0..=children.len() {
        for m in &children {
            let l = uses(m).iter().map(|u| level.get(u).map_or(1, |l| l + 1)).max().unwrap_or(0);
            level.insert(m, l);
        }
    }
    let top = level.values().copied().max().unwrap_or(0);
    let mut out = vec![Vec::new(); top + 1];
    for m in children {
        let last = |p: &ModPath| p.last().cloned().unwrap_or_default();
        out[level[m]].push((last(m), uses(m).into_iter().map(last).collect()));
    }
    out
}

/// [`layers`] of the crate root's modules as text, highest layer first: `n module → uses`
/// per line, the leaves (layer 0) on one line. The picture of load's modules in
/// docs/design.md is this text (`module-layers`, and a test holds the two alike).
pub fn layers_text(g: &Graph) -> String {
    let mut out = String::new();
    for (n, layer) in layers(g, &Vec::new()).iter().enumerate().rev() {
        if n == 0 {
            let leaves: Vec<&str> = layer.iter().map(|(m, _)| m.as_str()).collect();
            let _ = writeln!(out, "{n:>2} {}", leaves.join(", "));
            continue;
        }
        for (module, uses) in layer {
            let _ = writeln!(out, "{n:>2} {module} → {}", uses.join(", "));
        }
    }
    out
}

impl Graph {
    /// The module that defines what `path` (absolute) names: the longest prefix that is a
    /// module, followed through that module's imports; `None` outside the crate.
    fn resolve(&self, path: &[String], depth: usize) -> Option<ModPath> {
        let mut n = 0;
        while n < path.len() && self.modules.contains_key(&path[..=n]) {
            n += 1;
        }
        let module = path[..n].to_vec();
        if depth < 16
            && let Some(next) = path.get(n)
            && let Some(target) = self.modules[&module].imports.get(next)
        {
            let mut full = target.clone();
            full.extend_from_slice(&path[n + 1..]);
            if full.first().is_some_and(|s| s == "crate") {
                return self.resolve(&full[1..], depth + 1);
            }
            return None;
        }
        Some(module)
    }
}

fn load_file(g: &mut Graph, read: &Read<'_>, file: &Path, dir: &Path, at: &ModPath) -> Result<(), String> {
    let text = read(file).ok_or_else(|| format!("{}: cannot read this module's file", file.display()))?;
    let parsed = syn::parse_file(&text).map_err(|e| {
        let l = e.span().start();
        format!("{}:{}:{}: {e}", file.display(), l.line, l.column + 1)
    })?;
    load_items(g, read, &parsed.items, (file, dir), at)
}

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.meta.require_list().is_ok_and(|l| l.tokens.to_string().contains("test"))
    })
}

/// `items` are module `at`'s, in `file`; its child modules' files are under `dir`.
fn load_items(
    g: &mut Graph,
    read: &Read<'_>,
    items: &[syn::Item],
    (file, dir): (&Path, &Path),
    at: &ModPath,
) -> Result<(), String> {
    let mut children = Vec::new();
    for item in items {
        if let syn::Item::Mod(m) = item
            && !is_test(&m.attrs)
        {
            children.push(m.ident.to_string());
        }
    }
    let mut paths = Paths { at, children: &children, file, found: Vec::new(), imports: BTreeMap::new() };
    // The imports first: the code may name them before their `use`.
    for item in items {
        if let syn::Item::Use(u) = item {
            paths.use_tree(&u.tree, Vec::new(), u.use_token.span.start().line);
        }
    }
    for item in items {
        if !matches!(item, syn::Item::Mod(_) | syn::Item::Use(_)) {
            paths.visit_item(item);
        }
    }
    let module = Module { imports: paths.imports, uses: paths.found };
    g.modules.insert(at.clone(), module);
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        if is_test(&m.attrs) {
            continue;
        }
        let mut child = at.clone();
        child.push(m.ident.to_string());
        let child_dir = dir.join(m.ident.to_string());
        if let Some((_, inner)) = &m.content {
            load_items(g, read, inner, (file, &child_dir), &child)?;
        } else {
            let (f, d) = module_file(read, &m.attrs, dir, &m.ident.to_string());
            load_file(g, read, &f, &d, &child)?;
        }
    }
    Ok(())
}

/// The file of `mod name;` declared with children under `dir`, and the directory of its own
/// children.
fn module_file(read: &Read<'_>, attrs: &[syn::Attribute], dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    for a in attrs {
        if a.path().is_ident("path")
            && let syn::Meta::NameValue(nv) = &a.meta
            && let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = &nv.value
        {
            let f = dir.join(s.value());
            let d = f.with_extension("");
            return (f, d);
        }
    }
    let flat = dir.join(format!("{name}.rs"));
    if read(&flat).is_some() {
        (flat, dir.join(name))
    } else {
        (dir.join(name).join("mod.rs"), dir.join(name))
    }
}

/// Collects one module's imports and paths.
struct Paths<'a> {
    at: &'a ModPath,
    children: &'a [String],
    file: &'a Path,
    found: Vec<(Vec<String>, Site)>,
    imports: BTreeMap<String, Vec<String>>,
}

impl Paths<'_> {
    /// `segments` made absolute (starting with `crate`), or `None` for a path that starts
    /// elsewhere (an extern crate, a local name).
    fn absolute(&self, segments: &[String], in_use: bool) -> Option<Vec<String>> {
        let first = segments.first()?;
        let mut base: Vec<String> = match first.as_str() {
            "crate" => return Some(segments.to_vec()),
            "self" => self.at.clone(),
            "super" => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                let mut b = self.at.clone();
                b.truncate(b.len().saturating_sub(ups));
                let mut out = vec!["crate".to_owned()];
                out.extend(b);
                out.extend_from_slice(&segments[ups..]);
                return Some(out);
            }
            _ if self.children.contains(first) => {
                let mut b = self.at.clone();
                b.push(first.clone());
                b
            }
            _ if !in_use => {
                let target = self.imports.get(first)?;
                let mut out = target.clone();
                out.extend_from_slice(&segments[1..]);
                return (out.first()? == "crate").then_some(out);
            }
            _ => return None,
        };
        base.insert(0, "crate".to_owned());
        base.extend_from_slice(&segments[1..]);
        Some(base)
    }

    fn note(&mut self, segments: &[String], line: usize, in_use: bool) {
        if let Some(abs) = self.absolute(segments, in_use) {
            let site = Site { file: self.file.to_path_buf(), line, path: segments.join("::") };
            self.found.push((abs[1..].to_vec(), site));
        }
    }

    fn use_tree(&mut self, tree: &syn::UseTree, prefix: Vec<String>, line: usize) {
        match tree {
            syn::UseTree::Path(p) => {
                let mut next = prefix;
                next.push(p.ident.to_string());
                self.use_tree(&p.tree, next, line);
            }
            syn::UseTree::Name(n) => self.use_name(prefix, &n.ident, &n.ident, line),
            syn::UseTree::Rename(r) => self.use_name(prefix, &r.ident, &r.rename, line),
            syn::UseTree::Glob(_) => self.note(&prefix, line, true),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(t, prefix.clone(), line);
                }
            }
        }
    }

    fn use_name(&mut self, mut prefix: Vec<String>, ident: &syn::Ident, alias: &syn::Ident, line: usize) {
        let name = ident.to_string();
        if name != "self" {
            prefix.push(name);
        }
        let Some(abs) = self.absolute(&prefix, true) else { return };
        self.note(&prefix, line, true);
        let alias =
            if alias == "self" { prefix.last().cloned().unwrap_or_default() } else { alias.to_string() };
        if alias != "_" {
            self.imports.insert(alias, abs);
        }
    }

    /// Paths inside a macro's tokens: `crate`, `super` or `self` followed by `::` names.
    fn macro_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => self.macro_tokens(g.stream()),
                TokenTree::Ident(id) if matches!(id.to_string().as_str(), "crate" | "super" | "self") => {
                    let line = id.span().start().line;
                    let mut segments = vec![id.to_string()];
                    let mut j = i + 1;
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(n)),
                    ) = (trees.get(j), trees.get(j + 1), trees.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segments.push(n.to_string());
                        j += 3;
                    }
                    if segments.len() > 1 {
                        self.note(&segments, line, false);
                    }
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        // One segment is a local name, or an import already counted at its `use`.
        if segments.len() > 1 {
            let line = p.segments.first().map_or(0, |s| s.ident.span().start().line);
            self.note(&segments, line, false);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.macro_tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        // A `use` inside a function body.
        let line = u.use_token.span.start().line;
        self.use_tree(&u.tree, Vec::new(), line);
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }
}

/// The crates of the workspace at `root`: every `crates/*` and `fuzz`, each root file
/// (`src/lib.rs`, `src/main.rs`, `src/bin/*.rs`, `fuzz_targets/*.rs`) with a name to say.
pub fn workspace_roots(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    dirs.push(root.join("fuzz"));
    dirs.sort();
    for dir in dirs {
        let crate_name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for f in ["src/lib.rs", "src/main.rs"] {
            if dir.join(f).exists() {
                out.push((format!("{crate_name} ({f})"), dir.join(f)));
            }
        }
        for sub in ["src/bin", "fuzz_targets"] {
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
                .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
                .unwrap_or_default();
            files.retain(|p| p.extension().is_some_and(|e| e == "rs"));
            files.sort();
            for p in files {
                let rel = p.strip_prefix(&dir).unwrap_or(&p).display().to_string();
                out.push((format!("{crate_name} ({rel})"), p));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A made-up crate: `a` uses `b`, which uses `a` in a macro's arguments; `a` names `c`'s
    /// item through the root's re-export, and `c` uses `b`'s child. Tests and a module's
    /// use of its parent draw nothing.
    #[test]
    fn finds_a_circle_through_re_exports_macros_and_children() {
        let files: BTreeMap<PathBuf, &str> = [
            ("src/lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\npub use c::Stop;\n"),
            ("src/a.rs", "use crate::b::X;\npub fn g(_: crate::Stop) {}\n"),
            ("src/b.rs", "pub struct X;\npub mod inner { pub fn f() {} }\nfn f() { println!(\"{:?}\", crate::a::g); }\n"),
            ("src/c.rs", "pub struct Stop;\nfn h() { crate::b::inner::f(); }\n"),
            ("src/d.rs", "use super::a;\nmod e;\n#[cfg(test)]\nmod tests { use crate::d::e::E; }\n"),
            ("src/d/e.rs", "use super::super::c::Stop;\npub struct E;\n#[cfg(test)]\nfn t() { crate::d::x(); }\n"),
        ]
        .into_iter()
        .map(|(p, t)| (PathBuf::from(p), t))
        .collect();
        let g = graph_of(Path::new("src/lib.rs"), &|p| files.get(p).map(|t| (*t).to_owned())).unwrap();
        let m = |s: &str| vec![s.to_owned()];
        assert_eq!(circles(&g), vec![vec![m("a"), m("b"), m("c")]]);
        assert!(g.edges.contains_key(&(m("d"), m("a"))));
        assert!(g.edges.contains_key(&(m("d"), m("c"))), "d::e's use is d's among the root's modules");
        assert_eq!(g.edges.len(), 6, "{:?}", g.edges.keys());
        let said = describe(&g, &circles(&g)[0], Path::new(""));
        assert!(said.starts_with("a ↔ b ↔ c\n"), "{said}");
        assert!(said.contains("b → a: src/b.rs:3 (crate::a::g)"), "{said}");
    }

    /// No crate of the workspace has a circle among its modules.
    #[test]
    fn no_crate_has_a_circle_among_its_modules() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the workspace");
        let roots = workspace_roots(&root);
        assert!(
            roots.iter().any(|(n, _)| n.starts_with("load ")),
            "no crates found under {}",
            root.display()
        );
        let mut found = Vec::new();
        for (krate, file) in &roots {
            let g = crate_graph(file).unwrap_or_else(|e| panic!("{krate}: {e}"));
            found.extend(circles(&g).iter().map(|c| format!("{krate}: {}", describe(&g, c, &root))));
        }
        assert!(found.is_empty(), "modules that import each other:\n{}", found.join("\n"));
    }

    /// docs/design.md's picture of the load engine's modules is what the code draws.
    #[test]
    fn the_load_engines_picture_in_the_design_is_the_codes() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let design = std::fs::read_to_string(root.join("docs/design.md")).expect("docs/design.md");
        let after = "--bin module-layers -- crates/load/src/lib.rs` prints them from the code:";
        let at = design.find(after).expect("the picture's introduction in docs/design.md");
        let block = &design[at..];
        let start = block.find("```text\n").expect("its ```text block") + "```text\n".len();
        let drawn = &block[start..start + block[start..].find("```").expect("the block's end")];
        let g = crate_graph(&root.join("crates/load/src/lib.rs")).expect("load's modules");
        let code = layers_text(&g);
        assert!(
            drawn == code,
            "docs/design.md's picture of load's modules differs from the code: replace it with the \
             output of `cargo run -p stackbench-testkit --bin module-layers -- crates/load/src/lib.rs`:\n{code}"
        );
    }
}
