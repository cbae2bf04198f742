//! `stackbench swarm load URL [load flags] --shards N --image IMAGE [--run]`:
//! one load as N shards on a Docker swarm, one service per shard (one
//! replica, never restarted: a shard run again later is not part of the same
//! load), each running `stackbench load … --shard I/N --start-at T --json -`
//! with its index in its own command line (a replicated job's
//! `{{.Task.Slot}}` is not an index for every task, and Docker 20.10 leaves a
//! removed job's containers behind). Without `--run` it prints the shell lines that create the
//! services, wait for them, pipe their logs into `stackbench merge` and
//! remove them; with `--run` it does that itself (`run`), through the
//! `docker` command, and exits with `stackbench load`'s codes. Files the load
//! reads (a scenario file, a body, a .proto) reach the shards by a read-only
//! bind mount of their directory, at the same path.

mod docker;
mod run;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand};
use stackbench_load::{Dur, LoadOptions, Shard};

use crate::deploy::{self, sh_word};
use crate::exit;
use crate::merge::MergedOutputs;

#[derive(Debug, Subcommand)]
pub enum SwarmCommand {
    /// Run a load as N shards on a Docker swarm, one service each, then merge their records.
    #[command(after_help = exit::after_help("swarm load", "Examples:\n  \
        stackbench swarm load http://sut.example:8080/events --scenario dummy --rate 60000 -d 2m \\\n      \
        --shards 3 --image registry.example/stackbench:0.1 --threshold 'p99<20ms' --run\n  \
        stackbench swarm load http://127.0.0.1:8080/ -c 64 -d 30s --shards 2 --image stackbench:0.1.0 > load.sh\n\n\
        Without --run the shell lines are printed (create, wait, merge, remove); with --run stackbench does all of \
        it on the swarm `docker` points at. image/build.sh builds the image."))]
    Load(Box<SwarmLoadArgs>),
}

/// `stackbench swarm load` arguments: a load as `stackbench load` takes it, and where it runs.
#[derive(Debug, Args)]
pub struct SwarmLoadArgs {
    /// Target URL as the swarm's nodes reach it (the shards use the host's network).
    #[arg(value_name = "URL")]
    pub url: String,
    #[command(flatten)]
    pub options: LoadOptions,
    /// Generators: N services, one shard of the load each.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000), help_heading = "Swarm")]
    pub shards: u32,
    /// The stackbench image the shards run (image/build.sh builds one); every node needs it.
    #[arg(long, value_name = "IMAGE", help_heading = "Swarm")]
    pub image: String,
    /// The services are NAME-1 … NAME-N.
    #[arg(long, value_name = "NAME", default_value = "stackbench-load", help_heading = "Swarm")]
    pub name: String,
    /// When the shards start, from now: time to create the services, place them and bring the image
    /// to the nodes.
    #[arg(long, value_name = "DUR", default_value = "30s", help_heading = "Swarm")]
    pub start_in: Dur,
    /// Shard I runs on the I-th of these nodes (hostnames, as `docker node ls` shows them); one per
    /// shard. Without it the swarm's scheduler places them.
    #[arg(long, value_name = "HOST,...", value_delimiter = ',', help_heading = "Swarm")]
    pub nodes: Vec<String>,
    /// A placement constraint for every shard (`docker service create --constraint`), e.g.
    /// node.labels.loadgen==true; repeat for more.
    #[arg(long = "constraint", value_name = "EXPR", help_heading = "Swarm")]
    pub constraints: Vec<String>,
    /// CPUs each shard reserves and is limited to; also each shard's --threads unless given.
    #[arg(long = "shard-cpus", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256), help_heading = "Swarm")]
    pub shard_cpus: Option<u32>,
    /// Memory each shard reserves and is limited to, in docker's units (512M, 2G).
    #[arg(long = "shard-memory", value_name = "BYTES", help_heading = "Swarm")]
    pub shard_memory: Option<String>,
    /// Create the services on the swarm `docker` points at (DOCKER_HOST, DOCKER_CONTEXT), wait
    /// for every shard, merge their records, judge the thresholds on the whole, remove the
    /// services. Without it, the shell lines that do so are printed.
    #[arg(long, help_heading = "Swarm")]
    pub run: bool,
    #[command(flatten)]
    pub out: MergedOutputs,
    /// With --run: also write each shard's record, as it came, to DIR/NAME-I.json.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub shard_records: Option<PathBuf>,
}

/// One shard's service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Service {
    pub name: String,
    pub shard: Shard,
    /// The arguments of `docker` that create it.
    pub create: Vec<String>,
}

/// The services of a load and what the merge needs.
#[derive(Debug)]
pub struct Plan {
    pub services: Vec<Service>,
    pub start_text: String,
    /// The latest the shards may end, from now (none: the load is bounded by a count).
    pub longest: Option<Duration>,
    /// The `--threshold` expressions as given (judged by the merge).
    pub thresholds: Vec<String>,
}

impl Plan {
    pub fn names(&self) -> Vec<String> {
        self.services.iter().map(|s| s.name.clone()).collect()
    }
}

pub fn run(cmd: &SwarmCommand, argv: &[String]) -> anyhow::Result<ExitCode> {
    let SwarmCommand::Load(args) = cmd;
    if !args.run && (!args.out.is_empty() || args.shard_records.is_some()) {
        bail!(
            "--json, --csv, --hlog and --shard-records write the records of --run; add --run, or merge yourself"
        );
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let plan = plan(args, deploy::after(argv, &["swarm", "load"]), &cwd, SystemTime::now())?;
    if !args.run {
        print!("{}", script(&plan, SystemTime::now()));
        return Ok(exit::code(exit::OK));
    }
    let opened = args.out.open()?;
    if let Some(dir) = &args.shard_records {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut swarm = docker::Docker::default();
    let outputs = run::Outputs { merged: &args.out, opened, shard_records: args.shard_records.as_deref() };
    run::run_and_merge(&plan, &mut swarm, &args.options.threshold, outputs)
}

/// Is `s` a name docker accepts for a service, with room for `-N`?
fn service_name(s: &str, shards: u32) -> bool {
    let room = 63 - 1 - shards.to_string().len();
    (1..=room).contains(&s.len())
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// The services, checked: every shard must be a load before anything is printed or created.
pub fn plan(
    args: &SwarmLoadArgs,
    given: &[String],
    cwd: &std::path::Path,
    now: SystemTime,
) -> anyhow::Result<Plan> {
    let n = args.shards;
    if !service_name(&args.name, n) {
        bail!(
            "--name {:?}: a service name is letters, digits, '_', '.' and '-', starting with a letter or digit, \
             short enough for -{n} after it (63 in all)",
            args.name
        );
    }
    if !args.nodes.is_empty() && args.nodes.len() != n as usize {
        bail!("--nodes names {} nodes for {n} shards: give one node per shard", args.nodes.len());
    }
    let whole = deploy::check_shards(&args.options, &args.url, n, "--shard-cpus")?;
    let given = deploy::sort_words(&deploy::command_of::<SwarmCommand>("load"), given, Some(cwd));
    let mounts = mounts(&given.files)?;
    let mut load = given.load;
    if let (Some(cpus), None) = (args.shard_cpus, args.options.threads) {
        load.extend(["--threads".to_owned(), cpus.to_string()]);
    }
    let (_, start_text) = deploy::start_at(now, args.start_in.0);
    let services = (1..=n)
        .map(|index| {
            let shard = Shard { index, count: n };
            let name = format!("{}-{index}", args.name);
            let mut c: Vec<String> = ["service", "create", "--detach", "--name", &name]
                .into_iter()
                .chain(["--replicas", "1", "--restart-condition", "none", "--network", "host"])
                .map(str::to_owned)
                .collect();
            c.extend(["--label".into(), format!("stackbench.load={}", args.name)]);
            c.extend(["--label".into(), format!("stackbench.shard={shard}")]);
            if let Some(node) = args.nodes.get(index as usize - 1) {
                c.extend(["--constraint".into(), format!("node.hostname=={node}")]);
            }
            for constraint in &args.constraints {
                c.extend(["--constraint".into(), constraint.clone()]);
            }
            if let Some(cpus) = args.shard_cpus {
                c.extend(["--reserve-cpu".into(), cpus.to_string(), "--limit-cpu".into(), cpus.to_string()]);
            }
            if let Some(m) = &args.shard_memory {
                c.extend(["--reserve-memory".into(), m.clone(), "--limit-memory".into(), m.clone()]);
            }
            for dir in &mounts {
                let d = dir.display();
                c.extend(["--mount".into(), format!("type=bind,source={d},target={d},readonly")]);
            }
            c.push(args.image.clone());
            c.push("load".into());
            c.extend(load.iter().cloned());
            c.extend(["--shard".into(), shard.to_string(), "--start-at".into(), start_text.clone()]);
            c.extend(["--json", "-", "--quiet"].map(str::to_owned));
            Service { name, shard, create: c }
        })
        .collect();
    Ok(Plan {
        services,
        start_text,
        longest: deploy::longest(&whole, args.start_in.0),
        thresholds: given.thresholds,
    })
}

/// The directories to bind-mount so that the shards read the load's files at the same paths.
fn mounts(files: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for file in files {
        if !file.is_file() {
            bail!(
                "{}: no such file here; the shards read it from a bind mount of its directory",
                file.display()
            );
        }
        let dir = file.parent().map_or_else(|| PathBuf::from("/"), std::path::Path::to_path_buf);
        let text = dir.display().to_string();
        if text.contains([',', '"', '\n']) {
            bail!(
                "{text}: a directory to mount into the shards cannot hold ',' or '\"' (docker's --mount syntax); move the file"
            );
        }
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    Ok(dirs)
}

/// The shell lines that do what `--run` does: create the services, wait for them (bounded),
/// pipe their records into `stackbench merge`, remove them, and exit with the merge's code.
pub fn script(plan: &Plan, now: SystemTime) -> String {
    let n = plan.services.len();
    let names: Vec<String> = plan.names().iter().map(|s| sh_word(s)).collect();
    let names = names.join(" ");
    let mut s = String::from("#!/bin/sh\n");
    let _ = writeln!(
        s,
        "# stackbench: {n} shard{} of one load on a Docker swarm, one service each, starting together at {}.",
        if n == 1 { "" } else { "s" },
        plan.start_text
    );
    s.push_str("# Run it well before then, against a manager of the swarm (a shard that starts late is\n");
    s.push_str("# reported by the merge); `stackbench swarm load ... --run` does all of it itself.\n");
    s.push_str("# Each shard prints its summary on stderr and its record as one JSON line on stdout;\n");
    s.push_str("# the merge adds the latency histograms exactly and judges the thresholds on the whole.\n");
    for service in &plan.services {
        let words: Vec<String> = service.create.iter().map(|w| sh_word(w)).collect();
        let _ = writeln!(s, "docker {}", words.join(" "));
    }
    let wait = plan.longest.unwrap_or(Duration::from_hours(1));
    let deadline = now.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default() + wait;
    let _ = writeln!(s, "# Wait until every shard's task has ended, or until the shards' deadline.");
    let _ = writeln!(s, "for s in {names}; do");
    let _ = writeln!(
        s,
        "  until docker service ps \"$s\" --format '{{{{.CurrentState}}}}' | grep -qE '^(Complete|Failed|Rejected|Shutdown|Orphaned)' \
         || [ \"$(date +%s)\" -ge {} ]; do sleep 2; done",
        deadline.as_secs()
    );
    s.push_str("done\n");
    let merge: Vec<String> = std::iter::once("stackbench merge".to_owned())
        .chain(plan.thresholds.iter().map(|t| format!("--threshold {}", sh_word(t))))
        .collect();
    let _ = writeln!(s, "for s in {names}; do docker service logs --raw \"$s\"; done | {}", merge.join(" "));
    s.push_str("code=$?\n");
    let _ = writeln!(s, "docker service rm {names} >/dev/null");
    s.push_str("exit $code\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    pub fn parse(line: &str) -> (SwarmLoadArgs, Vec<String>) {
        let argv: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        let cli = crate::cli::Cli::try_parse_from(&argv).unwrap();
        let crate::cli::Command::Swarm(SwarmCommand::Load(args)) = cli.command else { panic!() };
        let given = deploy::after(&argv, &["swarm", "load"]).to_vec();
        (*args, given)
    }

    fn at() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_hours(498_920)
    }

    #[test]
    fn each_shard_is_a_service_with_its_index_in_its_command() {
        let (args, given) = parse(
            "stackbench swarm load http://sut:8080/events --scenario dummy --rate 9000 -d 30s --shards 3 \
             --image reg/sb:1 --threshold p99<20ms --shard-cpus=4 --nodes a,b,c --start-in 10s",
        );
        let plan = plan(&args, &given, std::path::Path::new("/w"), at()).unwrap();
        assert_eq!(plan.services.len(), 3);
        let two = plan.services[1].create.join(" ");
        assert_eq!(
            two,
            "service create --detach --name stackbench-load-2 --replicas 1 --restart-condition none \
             --network host --label stackbench.load=stackbench-load --label stackbench.shard=2/3 \
             --constraint node.hostname==b --reserve-cpu 4 --limit-cpu 4 reg/sb:1 load http://sut:8080/events \
             --scenario dummy --rate 9000 -d 30s --threads 4 --shard 2/3 --start-at 2026-12-01T08:00:10.000Z \
             --json - --quiet"
        );
        assert_eq!(plan.thresholds, ["p99<20ms"]);
        assert_eq!(plan.longest, Some(Duration::from_secs(10 + 30 + 10 + 120)));
        let sh = script(&plan, at());
        assert!(sh.contains("| stackbench merge --threshold 'p99<20ms'\n"), "{sh}");
        assert!(
            sh.contains("docker service rm stackbench-load-1 stackbench-load-2 stackbench-load-3"),
            "{sh}"
        );
        assert!(sh.contains("-ge 1796112170 ]"), "{sh}");
    }

    #[test]
    fn the_loads_files_are_mounted_where_the_shards_read_them() {
        let scratch = tempfile::Builder::new().prefix("sb-swarm-files-").tempdir().unwrap();
        let dir = scratch.path();
        std::fs::write(dir.join("body.json"), "{}").unwrap();
        let line = format!(
            "stackbench swarm load http://sut:8080/ -b @{}/body.json --shards 2 --image x",
            dir.display()
        );
        let (args, given) = parse(&line);
        let plan = plan(&args, &given, std::path::Path::new("/elsewhere"), at()).unwrap();
        let c = plan.services[0].create.join(" ");
        let d = dir.display();
        assert!(c.contains(&format!("--mount type=bind,source={d},target={d},readonly x load")), "{c}");
        assert!(c.contains(&format!("-b @{d}/body.json")), "{c}");
    }

    #[test]
    fn what_cannot_run_as_services_is_refused() {
        for (line, want) in [
            ("--shard 1/2", "leave them out"),
            ("--cpus 1", "--shard-cpus"),
            ("-c 2", "gets none"),
            ("--name=.x", "service name"),
            ("--nodes a,b", "one node per shard"),
            ("-b @/nonexistent/file", "cannot read /nonexistent/file"),
        ] {
            let (args, given) =
                parse(&format!("stackbench swarm load http://sut:8080/ --shards 3 --image x {line}"));
            let e = plan(&args, &given, std::path::Path::new("/"), SystemTime::now()).unwrap_err();
            assert!(format!("{e:#}").contains(want), "{line}: {e:#}");
        }
    }
}
