//! `sb-db-read`: the `db-read` reference contestant alone, a slim binary with
//! only the db-read router and its drivers (the artifact whose size a plan
//! reports). Same flags and behaviour as `stackbench serve db-read`.

use std::io::Write as _;
use std::net::IpAddr;
use std::process::ExitCode;

use stackbench_serve::db_read::{self, Config};

const USAGE: &str = "\
sb-db-read: the db-read reference contestant (GET /db/{driver}?a=&b= answers two rows)

Usage: sb-db-read [--store URL]... [--seed] [--pool N] [--port PORT] [--bind ADDR]

Serves every driver whose database is given with --store (repeat it: the forms
of `stackbench seed db-read`, postgres://, mysql://, redis://, sqlite:PATH; the
older --postgres URL, --mysql URL, --redis URL and --sqlite PATH do the same);
without any, serves `sqlite` on the default file (seeded if missing). PORT in the environment sets the port.
Load a database first with `stackbench seed db-read --store URL`, or give
--seed to load every given database before serving (idempotent).

Example:
  sb-db-read --postgres postgres://postgres@127.0.0.1/stackbench --port 8080
";

struct Args {
    config: Config,
    port: u16,
    bind: IpAddr,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let port = match std::env::var("PORT") {
        Ok(p) => p.parse().map_err(|_| format!("PORT={p:?} is not a port number (0..=65535)"))?,
        Err(_) => 8080,
    };
    let mut args = Args { config: Config::new(), port, bind: IpAddr::from([127, 0, 0, 1]) };
    while let Some(flag) = argv.next() {
        if flag == "--help" || flag == "-h" {
            return Ok(None);
        }
        if flag == "--version" || flag == "-V" {
            println!("sb-db-read {}", env!("CARGO_PKG_VERSION"));
            std::process::exit(0);
        }
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n.to_owned(), Some(v.to_owned())),
            None => (flag.clone(), None),
        };
        let mut value = || inline.clone().or_else(|| argv.next()).ok_or(format!("{name} needs a value"));
        match name.as_str() {
            "--seed" => args.config.seed = true,
            "--store" => args.config.add_store(&value()?).map_err(|e| e.to_string())?,
            "--postgres" => args.config.postgres = Some(value()?),
            "--mysql" => args.config.mysql = Some(value()?),
            "--redis" => args.config.redis = Some(value()?),
            "--sqlite" => args.config.sqlite = Some(value()?.into()),
            "--pool" => {
                let v = value()?;
                let n =
                    v.parse().ok().filter(|&n| n > 0).ok_or(format!("--pool {v:?}: give a count >= 1"))?;
                args.config.pool = Some(n);
            }
            "--port" | "-p" => {
                let v = value()?;
                args.port =
                    v.parse().map_err(|_| format!("--port {v:?} is not a port number (0..=65535)"))?;
            }
            "--bind" => {
                let v = value()?;
                args.bind = v.parse().map_err(|_| format!("--bind {v:?} is not an IP address"))?;
            }
            _ => return Err(format!("unknown argument {flag:?}")),
        }
    }
    Ok(Some(args))
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        let mut out = std::io::stdout();
        db_read::serve(&args.config, args.bind, args.port, "sb-db-read db-read", &mut out).await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::FAILURE
        }
    }
}
