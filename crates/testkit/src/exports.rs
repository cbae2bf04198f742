//! What each library crate's root exports, and who outside the crate names it.
//!
//! A library crate's root is its door: what it exports (a `pub mod`, a `pub use`, a `pub`
//! item) is what other crates may use, and it exports nothing that no other crate uses. Who
//! counts as outside: the other crates, and the crate's own integration tests, benches,
//! examples and binaries and the fuzz targets (they see the crate only through its door).
//! A name counts as used when a path in their code names it as the crate's (`stackbench_hurl::Vars`,
//! or `Vars` in `use stackbench_hurl::{…}`); doc comments do not count. [`unused_exports`]
//! lists the names a root exports that nothing outside names.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// The names the crate root `lib_rs` exports: each `pub` module and item, and each name a
/// `pub use` brings in (its new name when renamed); `#[cfg(test)]` items and narrower
/// visibilities (`pub(crate)`) aside. A glob (`pub use x::*`) is `*`.
///
/// # Errors
/// Text that does not parse as Rust.
pub fn exports(lib_rs: &str) -> Result<Vec<String>, String> {
    let file = syn::parse_file(lib_rs).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for item in &file.items {
        let (vis, attrs, name) = match item {
            syn::Item::Mod(i) => (&i.vis, &i.attrs, Some(&i.ident)),
            syn::Item::Fn(i) => (&i.vis, &i.attrs, Some(&i.sig.ident)),
            syn::Item::Struct(i) => (&i.vis, &i.attrs, Some(&i.ident)),
            syn::Item::Enum(i) => (&i.vis, &i.attrs, Some(&i.ident)),
            syn::Item::Const(i) => (&i.vis, &i.attrs, Some(&i.ident)),
            syn::Item::Static(i) => (&i.vis, &i.attrs, Some(&i.ident)),
            syn::Item::Type(i) => (&i.vis, &i.attrs, Some(&i.ident)),
            syn::Item::Trait(i) => (&i.vis, &i.attrs, Some(&i.ident)),
            syn::Item::Union(i) => (&i.vis, &i.attrs, Some(&i.ident)),
            syn::Item::Use(i) => (&i.vis, &i.attrs, None),
            _ => continue,
        };
        if !matches!(vis, syn::Visibility::Public(_)) || attrs.iter().any(is_cfg_test) {
            continue;
        }
        match (name, item) {
            (Some(n), _) => out.push(n.to_string()),
            (None, syn::Item::Use(u)) => use_names(&u.tree, None, &mut out),
            _ => {}
        }
    }
    Ok(out)
}

fn is_cfg_test(a: &syn::Attribute) -> bool {
    a.path().is_ident("cfg") && a.meta.require_list().is_ok_and(|l| l.tokens.to_string() == "test")
}

/// The names `tree` brings in; `last` is the segment before it (what `self` stands for).
fn use_names(tree: &syn::UseTree, last: Option<&syn::Ident>, out: &mut Vec<String>) {
    match tree {
        syn::UseTree::Path(p) => use_names(&p.tree, Some(&p.ident), out),
        syn::UseTree::Name(n) if n.ident == "self" => out.extend(last.map(ToString::to_string)),
        syn::UseTree::Name(n) => out.push(n.ident.to_string()),
        syn::UseTree::Rename(r) => out.push(r.rename.to_string()),
        syn::UseTree::Glob(_) => out.push("*".to_owned()),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_names(t, last, out)),
    }
}

/// Every path `text` names in crate `krate` (`stackbench_hurl`), from the segment after
/// `krate::`: a path in the code (`krate::a::B` is `a::B`) and each path of a `use krate::{…}`
/// tree (`self` is its prefix; a glob ends in `*`). Doc comments are attributes' strings: a
/// link in one names nothing.
///
/// # Errors
/// Text that does not lex as Rust.
pub fn paths_used(text: &str, krate: &str) -> Result<BTreeSet<Vec<String>>, String> {
    let tokens: TokenStream = text.parse().map_err(|e: proc_macro2::LexError| e.to_string())?;
    let mut out = BTreeSet::new();
    walk(tokens, krate, &mut out);
    Ok(out)
}

/// Whether `list[i..]` starts with `::`.
fn colons(list: &[TokenTree], i: usize) -> bool {
    list.get(i..i + 2)
        .is_some_and(|p| p.iter().all(|t| matches!(t, TokenTree::Punct(c) if c.as_char() == ':')))
}

fn walk(tokens: TokenStream, krate: &str, out: &mut BTreeSet<Vec<String>>) {
    let list: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, t) in list.iter().enumerate() {
        if let TokenTree::Group(g) = t {
            walk(g.stream(), krate, out);
        }
        let TokenTree::Ident(id) = t else { continue };
        // `other::krate::…` is another crate's module of that name.
        let inside_a_path = i >= 3 && colons(&list, i - 2) && matches!(list[i - 3], TokenTree::Ident(_));
        if id == krate && !inside_a_path && colons(&list, i + 1) {
            tail(&list[i + 3..], &mut Vec::new(), out);
        }
    }
}

/// The paths the tokens after `prefix::` name: `a::b`, `{a, b::{c, self}}`, `*`.
fn tail(list: &[TokenTree], prefix: &mut Vec<String>, out: &mut BTreeSet<Vec<String>>) {
    match list.first() {
        Some(TokenTree::Ident(name)) if name == "self" => {
            out.insert(prefix.clone());
        }
        Some(TokenTree::Ident(name)) => {
            prefix.push(name.to_string());
            if colons(list, 1) {
                tail(&list[3..], prefix, out);
            } else {
                out.insert(prefix.clone());
            }
            prefix.pop();
        }
        Some(TokenTree::Punct(p)) if p.as_char() == '*' => {
            prefix.push("*".to_owned());
            out.insert(prefix.clone());
            prefix.pop();
        }
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
            let inner: Vec<TokenTree> = g.stream().into_iter().collect();
            for piece in inner.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ',')) {
                tail(piece, prefix, out);
            }
        }
        _ => {}
    }
}

/// The `.rs` files under `dir`, at any depth (`target` directories aside).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() && !p.ends_with("target") {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// A library crate of the workspace: its name in code and its directory.
#[derive(Debug)]
pub struct Library {
    /// `stackbench_hurl` for `stackbench-hurl`.
    pub name: String,
    pub dir: PathBuf,
}

/// The library crates under `root/crates` (those with a `src/lib.rs`), `skip` aside.
pub fn libraries(root: &Path, skip: &[&str]) -> Vec<Library> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(root.join("crates")) else { return out };
    let mut dirs: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    dirs.sort();
    for dir in dirs {
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
        let name = manifest.lines().find_map(|l| {
            let v = l.strip_prefix("name")?.trim_start().strip_prefix('=')?.trim();
            Some(v.trim_matches('"').replace('-', "_"))
        });
        let Some(name) = name else { continue };
        let short = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if dir.join("src/lib.rs").exists() && !skip.contains(&short.as_str()) {
            out.push(Library { name, dir });
        }
    }
    out
}

/// The files that see `lib` from outside: every `.rs` file of the other crates and the fuzz
/// targets, and `lib`'s own `tests/`, `benches/`, `examples/` and binaries (`src/main.rs`,
/// `src/bin/`).
fn outside(root: &Path, lib: &Library) -> Vec<PathBuf> {
    let mut all = Vec::new();
    rust_files(&root.join("crates"), &mut all);
    rust_files(&root.join("fuzz"), &mut all);
    let own_src = lib.dir.join("src");
    let own_bins = [own_src.join("main.rs"), own_src.join("bin")];
    all.retain(|p| !p.starts_with(&own_src) || own_bins.iter().any(|b| p.starts_with(b)));
    all
}

/// Each name a library root of the workspace at `root` exports that nothing outside the crate
/// names, as `crate: name` (`skip` names crate directories left out: a test helper crate).
/// A public module counts as named when something outside names a path through it.
///
/// # Errors
/// A file that cannot be read or parsed.
pub fn unused_exports(root: &Path, skip: &[&str]) -> Result<Vec<String>, String> {
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let mut unused = Vec::new();
    for lib in libraries(root, skip) {
        let lib_rs = lib.dir.join("src/lib.rs");
        let exported = exports(&read(&lib_rs)?).map_err(|e| format!("{}: {e}", lib_rs.display()))?;
        let mut used = BTreeSet::new();
        for f in outside(root, &lib) {
            let paths = paths_used(&read(&f)?, &lib.name).map_err(|e| format!("{}: {e}", f.display()))?;
            used.extend(paths.into_iter().filter_map(|p| p.into_iter().next()));
        }
        let short = lib.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let glob = used.contains("*");
        unused.extend(
            exported
                .into_iter()
                .filter(|n| n == "*" || !(glob || used.contains(n)))
                .map(|n| format!("{short}: {n}")),
        );
    }
    Ok(unused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_a_root_exports() {
        let lib = "//! A crate.\npub mod a;\nmod b;\npub(crate) mod c;\n#[cfg(test)]\npub mod tests;\n\
                   pub use b::{X, Y as Why, inner::{self, Z}};\npub use c::*;\npub fn f() {}\nfn g() {}\n\
                   pub struct S;\npub(crate) struct T;\n";
        assert_eq!(exports(lib).unwrap(), ["a", "X", "Why", "inner", "Z", "*", "f", "S"]);
    }

    #[test]
    fn reads_the_paths_a_file_names_in_a_crate() {
        let text = "//! See [`k::Doc`].\nuse k::{A, b::{C, self, D as E}, f::*};\nuse k::m;\n\
                    fn f() -> k::H { other::k::I; x!(k::J); kk::L; m::N }\n";
        let used = paths_used(text, "k").unwrap();
        let got: Vec<String> = used.iter().map(|p| p.join("::")).collect();
        assert_eq!(got, ["A", "H", "J", "b", "b::C", "b::D", "f::*", "m"]);
    }

    /// Types a root exports that no other crate names yet, each reached through an export that
    /// others do use (what it returns, a field of what it takes): naming them at the root
    /// lets a caller write them. Each with what carries it.
    const CARRIED: &[(&str, &str, &str)] = &[
        ("hurl", "ErrorKind", "ParseError::kind"),
        ("hurl", "ParseError", "what load and Scenario::parse return"),
        ("load", "Bound", "LoadSpec::bound"),
        ("load", "ModelSpec", "LoadSpec::model"),
        ("load", "SpecError", "what LoadOptions::to_spec returns"),
        ("load", "StageSpec", "LoadSpec::stages"),
        ("load", "Stages", "LoadOptions::stages"),
        ("load", "TlsConnector", "what TlsSpec::connector makes"),
        ("load", "TlsSpec", "LoadSpec::tls"),
        ("load", "WallTime", "LoadOptions::start_at"),
        ("report", "Comparison", "what compare returns"),
        ("report", "Exporter", "what Format::exporter returns"),
        ("run", "Outcome", "what run_plan returns"),
        ("run", "PlanError", "what Plan::load returns"),
        ("serve", "LaunchError", "what the run_* launchers return"),
    ];

    /// Each library root exports only what something outside its crate names, or a type
    /// [`CARRIED`] by such an export (testkit, the tests' helper crate, aside).
    #[test]
    fn every_library_root_exports_only_what_others_use() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the workspace");
        assert!(
            libraries(&root, &[]).iter().any(|l| l.name == "stackbench_load"),
            "no crates under {}",
            root.display()
        );
        let unused = unused_exports(&root, &["testkit"]).unwrap();
        let carried: Vec<String> = CARRIED.iter().map(|(c, n, _)| format!("{c}: {n}")).collect();
        let wider: Vec<&String> = unused.iter().filter(|u| !carried.contains(u)).collect();
        assert!(
            wider.is_empty(),
            "exported by a library root, named by no other crate (make it private, or list a type \
             that an export others use carries in CARRIED):\n{}",
            wider.iter().map(|u| u.as_str()).collect::<Vec<_>>().join("\n")
        );
        let stale: Vec<&String> = carried.iter().filter(|c| !unused.contains(c)).collect();
        assert!(
            stale.is_empty(),
            "listed in CARRIED but now named outside, or no longer exported: {stale:?}"
        );
    }
}
