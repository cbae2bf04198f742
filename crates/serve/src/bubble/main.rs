//! `sb-bubble-sort`: the `bubble-sort` reference contestant as a slim binary
//! (no CLI framework, nothing but this service), so that its stripped size is
//! comparable with the "image size" of the original experiment's services.
//!
//! Same behaviour as `stackbench serve bubble-sort`: the first line on stdout
//! says `... listening on http://ADDR; ...`, `--port 0` picks a free port,
//! `PORT` in the environment sets the default, SIGTERM stops it gracefully.

use std::io::Write as _;
use std::net::IpAddr;
use std::process::ExitCode;

use stackbench_serve::bubble::{self, Options};
use stackbench_serve::server;

const USAGE: &str = "\
sb-bubble-sort: the bubble-sort contestant of stackbench (gRPC sort.v1.SortService/BubbleSort over h2c)

Usage: sb-bubble-sort [--port PORT] [--bind ADDR] [--rest] [--sort fast|textbook]

Options:
  -p, --port PORT   TCP port; 0 picks a free one (default: $PORT, else 8080)
      --bind ADDR   address to bind (default: 127.0.0.1)
      --rest        also answer Connect JSON: POST /sort.v1.SortService/BubbleSort {\"data\": [...]}
      --sort KIND   fast (default: tuned passes, about 2x the textbook loop) or textbook (the
                    nested loop the experiment's servers run: compare stacks, not sort tuning)
  -h, --help        this text
  -V, --version     the version

Example:
  sb-bubble-sort --port 50051 --rest &
  curl -s -H 'Content-Type: application/json' -d '{\"data\":[3,1,2]}' \\
    http://127.0.0.1:50051/sort.v1.SortService/BubbleSort
  {\"data\":[1,2,3]}
";

#[derive(Debug, PartialEq, Eq)]
struct Args {
    port: u16,
    bind: IpAddr,
    opts: Options,
}

#[derive(Debug, PartialEq, Eq)]
enum Parsed {
    Run(Args),
    Help,
    Version,
}

fn parse(args: impl IntoIterator<Item = String>, env_port: Option<String>) -> Result<Parsed, String> {
    let port = |v: &str, from: &str| -> Result<u16, String> {
        v.trim().parse().map_err(|_| format!("{from} must be a port number 0-65535, got {v:?}"))
    };
    let mut out = Args {
        port: match env_port {
            Some(v) if !v.trim().is_empty() => port(&v, "PORT")?,
            _ => 8080,
        },
        bind: IpAddr::from([127, 0, 0, 1]),
        opts: Options::default(),
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline.clone().or_else(|| args.next()).ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "-p" | "--port" => out.port = port(&value("--port")?, "--port")?,
            "--bind" => {
                let v = value("--bind")?;
                out.bind = v.parse().map_err(|_| format!("--bind must be an IP address, got {v:?}"))?;
            }
            "--rest" => out.opts.rest = true,
            "--sort" => out.opts.sort = value("--sort")?.parse()?,
            "-h" | "--help" => return Ok(Parsed::Help),
            "-V" | "--version" => return Ok(Parsed::Version),
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    Ok(Parsed::Run(out))
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1), std::env::var("PORT").ok()) {
        Ok(Parsed::Run(args)) => args,
        Ok(Parsed::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Version) => {
            println!("sb-bubble-sort {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let runtime = bubble::runtime()?;
    runtime.block_on(async {
        let listener = server::bind(args.bind, args.port).await?;
        let addr = listener.local_addr()?;
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "sb-bubble-sort (tonic, {} sort): listening on http://{addr}; {}; Ctrl-C or SIGTERM stops",
            args.opts.sort.name(),
            bubble::protocols(args.opts)
        )?;
        out.flush()?;
        drop(out);
        bubble::serve(listener, args.opts).await?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_args(args: &[&str], env: Option<&str>) -> Result<Parsed, String> {
        parse(args.iter().map(|&s| s.to_owned()), env.map(str::to_owned))
    }

    #[test]
    fn flags_env_and_defaults() {
        let local = IpAddr::from([127, 0, 0, 1]);
        assert_eq!(
            run_args(&[], None),
            Ok(Parsed::Run(Args { port: 8080, bind: local, opts: Options::default() }))
        );
        assert_eq!(
            run_args(&["--port", "0", "--rest", "--bind=0.0.0.0", "--sort", "textbook"], Some("9000")),
            Ok(Parsed::Run(Args {
                port: 0,
                bind: IpAddr::from([0, 0, 0, 0]),
                opts: Options { rest: true, sort: bubble::SortKind::Textbook }
            }))
        );
        assert_eq!(
            run_args(&[], Some("9000")),
            Ok(Parsed::Run(Args { port: 9000, bind: local, opts: Options::default() }))
        );
        assert_eq!(
            run_args(&["-p", "7"], None),
            Ok(Parsed::Run(Args { port: 7, bind: local, opts: Options::default() }))
        );
        assert_eq!(run_args(&["--help"], None), Ok(Parsed::Help));
        assert_eq!(run_args(&["-V"], None), Ok(Parsed::Version));
    }

    #[test]
    fn mistakes_say_what_to_fix() {
        assert!(run_args(&["--port"], None).unwrap_err().contains("needs a value"));
        assert!(run_args(&["--port", "70000"], None).unwrap_err().contains("0-65535"));
        assert!(run_args(&[], Some("x")).unwrap_err().contains("PORT"));
        assert!(run_args(&["--bind", "localhost"], None).unwrap_err().contains("IP address"));
        assert!(run_args(&["--grpc"], None).unwrap_err().contains("unknown argument \"--grpc\""));
    }
}
