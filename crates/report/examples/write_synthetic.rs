//! Writes the synthetic "three kings" result store to a directory, to try
//! `stackbench report` and `stackbench compare` without measuring anything:
//! `cargo run -p stackbench-report --example write_synthetic -- results/demo [slower]`
//! (`slower` makes 'flask' 20% slower and 'gin' 30% faster, a second set to compare).

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: write_synthetic DIR [slower]");
        std::process::exit(2);
    };
    let set = if args.next().as_deref() == Some("slower") {
        stackbench_report::synthetic::three_kings_with(&dir, |n| match n {
            "flask" => 0.8,
            "gin" => 1.3,
            _ => 1.0,
        })
    } else {
        stackbench_report::synthetic::three_kings(&dir)
    };
    if let Err(e) = stackbench_report::synthetic::write(&set, dir.as_ref()) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
    println!("wrote {dir}");
}
