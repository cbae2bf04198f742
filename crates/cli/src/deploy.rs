//! What `stackbench k8s load` and `stackbench swarm load` share: the load's
//! words exactly as given, told apart from the engine's own flags and from
//! the thresholds (which the merge judges on the whole, not each shard on its
//! slice) by clap's own definition of the command, so that a new `load`
//! option reaches the shards without being listed here; the words that name
//! files (so that an engine can bring them to its shards); the checks every
//! shard passes before anything is printed or created; the start time; and
//! how long the shards may take at most. Shell quoting of the words is here
//! too.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use anyhow::bail;
use clap::{Args as _, Command, ValueHint};
use stackbench_load::{LoadOptions, LoadSpec, Shard};

/// The words after `stackbench ENGINE load`, sorted out.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Given {
    /// The URL and the load flags with their values, as given (files made absolute when asked).
    pub load: Vec<String>,
    /// The `--threshold` expressions.
    pub thresholds: Vec<String>,
    /// The files named by load flags (absolute), in the order given.
    pub files: Vec<PathBuf>,
}

/// The words of `argv` after the subcommand path `path` (e.g. `["swarm", "load"]`).
pub fn after<'a>(argv: &'a [String], path: &[&str]) -> &'a [String] {
    let at = argv.windows(path.len()).position(|w| w.iter().zip(path).all(|(a, b)| a == b));
    at.map_or(&[][..], |i| &argv[i + path.len()..])
}

/// The `clap` definition of the subcommand `name` of the engine's subcommands `S`
/// (`load` of `SwarmCommand`).
pub fn command_of<S: clap::Subcommand>(name: &str) -> Command {
    let engine = S::augment_subcommands(Command::new("engine"));
    engine.find_subcommand(name).unwrap_or_else(|| panic!("no subcommand {name}")).clone()
}

/// Sorts `given` (the words after `ENGINE load`, already accepted by `cmd`):
/// `load` keeps the URL and every flag of [`LoadOptions`] but `--threshold`;
/// the engine's own flags are dropped. With `absolute`, a value that names a
/// file (a path-typed flag, or `@FILE` of a flag whose value may be one) is
/// made absolute, relative to `cwd`, and listed in `files`.
pub fn sort_words(cmd: &Command, given: &[String], absolute: Option<&std::path::Path>) -> Given {
    let load_ids: Vec<String> = LoadOptions::augment_args(Command::new("load"))
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    let mut out = Given::default();
    let mut words = given.iter();
    let mut rest_positional = false;
    while let Some(word) = words.next() {
        if rest_positional || word == "-" || !word.starts_with('-') {
            rest_positional |= word == "--";
            out.load.push(word.clone());
            continue;
        }
        // The flag this word names, its value if attached, and how it was written.
        let (arg, attached, flag) = if let Some(long) = word.strip_prefix("--") {
            let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v.to_owned())));
            let arg = cmd.get_arguments().find(|a| {
                a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|al| al.contains(&name))
            });
            (arg, value, format!("--{name}"))
        } else {
            let mut chars = word.chars().skip(1);
            let c = chars.next().unwrap_or('-');
            let rest: String = chars.collect();
            let arg = cmd.get_arguments().find(|a| a.get_short() == Some(c));
            let takes = arg.is_some_and(|a| a.get_action().takes_values());
            let value = (takes && !rest.is_empty()).then(|| rest.trim_start_matches('=').to_owned());
            (arg, value, if takes { format!("-{c}") } else { word.clone() })
        };
        let Some(arg) = arg else {
            out.load.push(word.clone());
            continue;
        };
        let takes = arg.get_action().takes_values();
        let value = if takes && attached.is_none() { words.next().cloned() } else { attached.clone() };
        let id = arg.get_id().as_str();
        if !load_ids.iter().any(|l| l == id) {
            continue; // the engine's own flag
        }
        if id == "threshold" {
            out.thresholds.extend(value);
            continue;
        }
        let Some(mut value) = value.filter(|_| takes) else {
            out.load.push(word.clone());
            continue;
        };
        if let Some(cwd) = absolute {
            let path_typed =
                matches!(arg.get_value_hint(), ValueHint::AnyPath | ValueHint::FilePath | ValueHint::DirPath);
            let at_file =
                arg.get_value_names().is_some_and(|n| n.iter().any(|n| n.as_str().contains("@FILE")));
            let (prefix, path) = match value.strip_prefix('@') {
                Some(p) if at_file => ("@", p),
                _ if path_typed => ("", value.as_str()),
                _ => ("", ""),
            };
            if !path.is_empty() {
                let abs = cwd.join(path);
                value = format!("{prefix}{}", abs.display());
                out.files.push(abs);
            }
        }
        if attached.is_some() && flag.starts_with("--") {
            out.load.push(format!("{flag}={value}"));
        } else {
            out.load.extend([flag, value]);
        }
    }
    out
}

/// A word for `sh -c`: bare when it is plainly safe, single-quoted otherwise.
pub fn sh_word(w: &str) -> String {
    let safe = !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@%,+".contains(c));
    if safe { w.to_owned() } else { format!("'{}'", w.replace('\'', r"'\''")) }
}

/// The whole load, after the checks every shard of it passes (those `stackbench load --shard`
/// makes where the shard runs), so that nothing is printed or created for a load that cannot run.
pub fn check_shards(o: &LoadOptions, url: &str, shards: u32, cpus_from: &str) -> anyhow::Result<LoadSpec> {
    if o.shard.is_some() || o.start_at.is_some() {
        bail!("--shard and --start-at: stackbench sets them for each shard; leave them out");
    }
    if o.cpus.is_some() {
        bail!("--cpus pins threads on one machine; each shard gets its CPUs from {cpus_from}");
    }
    let whole = o.to_spec(url)?;
    for index in 1..=shards {
        stackbench_load::apply_shard(whole.clone(), Shard { index, count: shards })?;
    }
    Ok(whole)
}

/// When the shards start (`start_in` from `now`), as the time and as `--start-at`'s text.
pub fn start_at(now: SystemTime, start_in: Duration) -> (SystemTime, String) {
    let at = now + start_in;
    (at, humantime::format_rfc3339_millis(at).to_string())
}

/// The longest the shards may take from `now` (the start, the warm-up, the run, a last
/// request's timeout and two minutes for the engine), when the load is bounded by time.
pub fn longest(whole: &LoadSpec, start_in: Duration) -> Option<Duration> {
    whole.duration().map(|d| start_in + whole.warmup + d + whole.timeout + Duration::from_mins(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn words_are_quoted_for_the_shell() {
        assert_eq!(sh_word("http://a:1/x"), "http://a:1/x");
        assert_eq!(sh_word("p99<20ms"), "'p99<20ms'");
        assert_eq!(sh_word("it's"), r"'it'\''s'");
        assert_eq!(sh_word(""), "''");
    }

    #[test]
    fn the_engine_flags_and_thresholds_are_told_from_the_load() {
        let cmd = command_of::<crate::k8s::K8sCommand>("load");
        let given = words(
            "http://a/ -c10 --shards=3 --threshold rps>5 --image x --threshold=p99<1s -H a:b --pod-cpus 2",
        );
        let g = sort_words(&cmd, &given, None);
        assert_eq!(g.load, words("http://a/ -c 10 -H a:b"));
        assert_eq!(g.thresholds, ["rps>5", "p99<1s"]);
        assert!(g.files.is_empty());
    }

    #[test]
    fn files_are_made_absolute_and_listed() {
        let cmd = command_of::<crate::swarm::SwarmCommand>("load");
        let given = words(
            "http://a/ --scenario-file s/x.hurl -b @body.json --proto=/p/a.proto -b plain --data {} --cacert ca.pem",
        );
        let g = sort_words(&cmd, &given, Some(std::path::Path::new("/home/u")));
        let want = "http://a/ --scenario-file /home/u/s/x.hurl -b @/home/u/body.json --proto=/p/a.proto -b plain \
                    --data {} --cacert /home/u/ca.pem";
        assert_eq!(g.load, words(want));
        // Every option typed as a path names a file, --cacert too: none is listed by name here.
        let files: Vec<String> = g.files.iter().map(|f| f.display().to_string()).collect();
        assert_eq!(files, ["/home/u/s/x.hurl", "/home/u/body.json", "/p/a.proto", "/home/u/ca.pem"]);
    }

    /// The engine's `load` on its own is the one `stackbench ENGINE load` parses: the same
    /// arguments, each with the same value type and hint.
    #[test]
    fn an_engines_load_is_the_one_the_cli_parses() {
        fn args(cmd: &Command) -> Vec<String> {
            cmd.get_arguments()
                .map(|a| {
                    format!(
                        "{} {:?} {:?} {}",
                        a.get_id(),
                        a.get_value_hint(),
                        a.get_num_args(),
                        a.is_positional()
                    )
                })
                .collect()
        }
        let cli = <crate::cli::Cli as clap::CommandFactory>::command();
        for (engine, own) in [
            ("k8s", command_of::<crate::k8s::K8sCommand>("load")),
            ("swarm", command_of::<crate::swarm::SwarmCommand>("load")),
        ] {
            let parsed = cli.find_subcommand(engine).and_then(|c| c.find_subcommand("load")).unwrap();
            assert_eq!(args(&own), args(parsed), "{engine}");
        }
    }

    #[test]
    fn the_words_after_the_subcommand() {
        let argv = words("stackbench swarm load http://a/ -c 2");
        assert_eq!(after(&argv, &["swarm", "load"]), &argv[3..]);
        assert!(after(&argv, &["k8s", "load"]).is_empty());
    }
}
