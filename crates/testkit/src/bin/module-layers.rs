//! Prints a crate's top-level modules in layers, highest first, each with the modules it uses
//! (`testkit::imports`): the picture of a crate's modules in docs/design.md is this output.
//!
//! `cargo run -p stackbench-testkit --bin module-layers -- crates/load/src/lib.rs`

use std::path::Path;

use stackbench_testkit::imports::{circles, crate_graph, describe, layers_text};

fn main() {
    let Some(root) = std::env::args().nth(1) else {
        eprintln!("usage: module-layers CRATE_ROOT (a src/lib.rs or src/main.rs)");
        std::process::exit(2);
    };
    let g = crate_graph(Path::new(&root)).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1);
    });
    let found = circles(&g);
    if !found.is_empty() {
        for c in &found {
            eprintln!("circle: {}", describe(&g, c, Path::new("")));
        }
        std::process::exit(1);
    }
    print!("{}", layers_text(&g));
}
