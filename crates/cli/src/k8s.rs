//! `stackbench k8s load URL [load flags] --shards N --image IMAGE`: prints a
//! Kubernetes Indexed Job whose N pods each run one shard of the load
//! (`stackbench load … --shard I/N --start-at T --json -`), on different
//! nodes, with guaranteed CPU and memory, starting together at T; its header
//! comments are the `kubectl` lines that apply it, wait for it and pipe the
//! pods' logs into `stackbench merge`, where the thresholds are judged on the
//! whole. The files the load names (a scenario file, a body, `--cacert`,
//! `--cert`, `--key`) travel in a Secret of the manifest that the pods mount.
//! Nothing here talks to a cluster: the manifest is the product, and CI
//! validates it against the Kubernetes API schemas.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::bail;
use clap::{Args, Subcommand};
use stackbench_load::{Dur, LoadOptions};

use crate::deploy::{self, sh_word};

#[derive(Debug, Subcommand)]
pub enum K8sCommand {
    /// Print a Kubernetes Job that runs a load as N shards on N nodes, then merges them.
    #[command(after_help = "Examples:\n  \
        stackbench k8s load http://contestant.bench.svc:8080/events --scenario dummy --rate 60000 -d 2m \\\n      \
        --shards 3 --image registry.example/stackbench:0.1 --namespace bench --threshold 'p99<20ms' > job.yaml\n  \
        kubectl apply -f job.yaml\n\n\
        The manifest's first lines are the kubectl commands that wait for the shards and merge their records.")]
    Load(Box<K8sLoadArgs>),
}

/// `stackbench k8s load` arguments: a load as `stackbench load` takes it, and where it runs.
#[derive(Debug, Args)]
pub struct K8sLoadArgs {
    /// Target URL as the pods reach it, e.g. http://contestant.bench.svc:8080/events.
    #[arg(value_name = "URL")]
    pub url: String,
    #[command(flatten)]
    pub options: LoadOptions,
    /// Generators: N pods, one shard of the load each, on N different nodes.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000), help_heading = "Kubernetes")]
    pub shards: u32,
    /// The stackbench image the pods run (the repository's Dockerfile builds it).
    #[arg(long, value_name = "IMAGE", help_heading = "Kubernetes")]
    pub image: String,
    #[arg(long, value_name = "NS", default_value = "default", help_heading = "Kubernetes")]
    pub namespace: String,
    /// The Job's name.
    #[arg(long, value_name = "NAME", default_value = "stackbench-load", help_heading = "Kubernetes")]
    pub name: String,
    /// CPUs per pod, requested and limited alike (Guaranteed QoS); also each shard's --threads
    /// unless given.
    #[arg(long = "pod-cpus", value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=256), help_heading = "Kubernetes")]
    pub pod_cpus: u32,
    /// Memory per pod, requested and limited alike (a Kubernetes quantity).
    #[arg(long = "pod-memory", value_name = "QUANTITY", default_value = "1Gi", help_heading = "Kubernetes")]
    pub pod_memory: String,
    /// When the shards start, from now: time to apply the Job, schedule the pods and pull the image.
    #[arg(long, value_name = "DUR", default_value = "2m", help_heading = "Kubernetes")]
    pub start_in: Dur,
    /// `required`: each shard on its own node (pods wait for a free node); `preferred`: spread
    /// when the scheduler can.
    #[arg(long, value_name = "HOW", default_value = "required", value_parser = ["required", "preferred"], help_heading = "Kubernetes")]
    pub spread: String,
}

pub fn run(cmd: &K8sCommand, argv: &[String]) -> anyhow::Result<()> {
    let K8sCommand::Load(args) = cmd;
    let cwd = std::env::current_dir()?;
    print!("{}", manifest(args, deploy::after(argv, &["k8s", "load"]), &cwd, SystemTime::now())?);
    Ok(())
}

/// A YAML scalar that means exactly `s` (a JSON string is a YAML double-quoted one).
fn q(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// Is `s` a DNS-1123 label (what a Job's and a namespace's name must be)?
fn dns_label(s: &str) -> bool {
    (1..=63).contains(&s.len())
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Where the pods find the load's files: the mount of the Job's Secret.
const FILES_DIR: &str = "/stackbench/files";

/// The most a Secret may hold (the API server refuses an object over 1 MiB).
const SECRET_MAX: usize = 1 << 20;

/// The load's files as the Secret carries them: each key (its name under [`FILES_DIR`]) and
/// its content in base64.
type Carried = Vec<(String, String)>;

/// Reads the files the load names (`files`, absolute) into the Secret that carries them to
/// the pods, and makes `load`'s words name them where the pods mount it. A Secret, not a
/// ConfigMap: a private key (`--key`) is a secret, and a Secret holds any bytes.
fn carry(load: &mut [String], files: &[PathBuf]) -> anyhow::Result<Carried> {
    use base64::Engine as _;
    let mut carried = Carried::new();
    let mut size = 0;
    for (i, file) in files.iter().enumerate() {
        let text = file.display().to_string();
        let bytes = std::fs::read(file)
            .map_err(|e| anyhow::anyhow!("{text}: cannot read it to carry it to the pods: {e}"))?;
        let name = file.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let safe: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || "-._".contains(c) { c } else { '_' })
            .collect();
        let key = format!("f{i}-{safe}");
        let there = format!("{FILES_DIR}/{key}");
        for word in load.iter_mut() {
            // The path alone, `@PATH`, `--flag=PATH` or `--flag=@PATH`.
            let Some(before) = word.strip_suffix(text.as_str()) else { continue };
            if before.is_empty() || before == "@" || before.ends_with('=') || before.ends_with("=@") {
                *word = format!("{before}{there}");
            }
        }
        let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
        size += encoded.len() + key.len();
        carried.push((key, encoded));
    }
    if size > SECRET_MAX - 4096 {
        bail!(
            "the load's files ({}) are {size} bytes in base64, more than a Kubernetes Secret holds \
             (1 MiB): make them smaller, or build them into the image and name them there",
            files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")
        );
    }
    Ok(carried)
}

/// The manifest, with the kubectl lines in its header; relative paths of the load's files
/// are read from `cwd`.
pub fn manifest(args: &K8sLoadArgs, given: &[String], cwd: &Path, now: SystemTime) -> anyhow::Result<String> {
    for (flag, value) in [("--name", &args.name), ("--namespace", &args.namespace)] {
        if !dns_label(value) {
            bail!(
                "{flag} {value:?}: a Kubernetes name is 1 to 63 lowercase letters, digits and '-', not at either end"
            );
        }
    }
    let o = &args.options;
    let whole = deploy::check_shards(o, &args.url, args.shards, "--pod-cpus")?;
    let deploy::Given { mut load, thresholds, mut files } =
        deploy::sort_words(&deploy::command_of::<K8sCommand>("load"), given, Some(cwd));
    files.dedup();
    let files = carry(&mut load, &files)?;
    if o.threads.is_none() {
        load.extend(["--threads".to_owned(), args.pod_cpus.to_string()]);
    }
    let (_, start_text) = deploy::start_at(now, args.start_in.0);
    let n = args.shards;
    let mut command = String::from("exec stackbench load");
    for w in &load {
        command.push(' ');
        command.push_str(&sh_word(w));
    }
    let _ = write!(
        command,
        " --shard \"$((JOB_COMPLETION_INDEX+1))/{n}\" --start-at {start_text} --json - --quiet"
    );

    // Bounded: the Job ends by itself at the latest this long after it is applied.
    let run_s = deploy::longest(&whole, args.start_in.0).map(|d| d.as_secs());
    let wait = run_s.map_or_else(|| "1h".to_owned(), |s| format!("{s}s"));
    let merge = std::iter::once("stackbench merge".to_owned())
        .chain(thresholds.iter().map(|t| format!("--threshold {}", sh_word(t))))
        .collect::<Vec<_>>()
        .join(" ");
    let job = Job { start_text: &start_text, wait: &wait, merge: &merge, run_s, command: &command, files };
    Ok(yaml(args, &job))
}

/// What the manifest says, worked out.
struct Job<'a> {
    start_text: &'a str,
    wait: &'a str,
    merge: &'a str,
    run_s: Option<u64>,
    command: &'a str,
    /// The Secret's files (none: no Secret).
    files: Carried,
}

/// The Secret that carries the load's files (after the header, before the Job).
fn secret(y: &mut String, args: &K8sLoadArgs, files: &Carried) {
    let _ = writeln!(y, "apiVersion: v1");
    let _ = writeln!(y, "kind: Secret");
    let _ = writeln!(y, "metadata:");
    let _ = writeln!(y, "  name: {}", q(&format!("{}-files", args.name)));
    let _ = writeln!(y, "  namespace: {}", q(&args.namespace));
    let _ = writeln!(y, "  labels:");
    let _ = writeln!(y, "    app.kubernetes.io/name: stackbench");
    let _ = writeln!(y, "    app.kubernetes.io/component: load");
    let _ = writeln!(y, "type: Opaque");
    let _ = writeln!(y, "data:");
    for (key, content) in files {
        let _ = writeln!(y, "  {}: {}", q(key), q(content));
    }
    let _ = writeln!(y, "---");
}

/// The manifest's text.
fn yaml(args: &K8sLoadArgs, job: &Job<'_>) -> String {
    let (name, ns) = (&args.name, &args.namespace);
    let n = args.shards;
    let Job { start_text, wait, merge, run_s, command, files } = job;
    let mut y = String::new();
    let _ = writeln!(
        y,
        "# stackbench: {n} shard{} of one load, starting together at {start_text}.",
        if n == 1 { "" } else { "s" }
    );
    let _ = writeln!(y, "# Apply it well before then (a shard that starts late is reported by the merge):");
    let _ = writeln!(y, "#   kubectl apply -f THIS_FILE");
    let _ = writeln!(y, "#   kubectl -n {ns} wait --for=condition=complete --timeout={wait} job/{name}");
    let _ = writeln!(
        y,
        "#   kubectl -n {ns} logs -l job-name={name} --tail=-1 --max-log-requests={} | {merge}",
        n.max(5)
    );
    if files.is_empty() {
        let _ = writeln!(y, "#   kubectl -n {ns} delete job {name}");
    } else {
        let _ = writeln!(y, "#   kubectl -n {ns} delete job/{name} secret/{name}-files");
    }
    let _ = writeln!(y, "# Each pod prints its summary on stderr and its record as one JSON line on stdout;");
    let _ = writeln!(
        y,
        "# the merge adds the latency histograms exactly and judges the thresholds on the whole."
    );
    if !files.is_empty() {
        secret(&mut y, args, files);
    }
    let _ = writeln!(y, "apiVersion: batch/v1");
    let _ = writeln!(y, "kind: Job");
    let _ = writeln!(y, "metadata:");
    let _ = writeln!(y, "  name: {}", q(name));
    let _ = writeln!(y, "  namespace: {}", q(ns));
    let _ = writeln!(y, "  labels:");
    let _ = writeln!(y, "    app.kubernetes.io/name: stackbench");
    let _ = writeln!(y, "    app.kubernetes.io/component: load");
    let _ = writeln!(y, "spec:");
    let _ = writeln!(y, "  completionMode: Indexed");
    let _ = writeln!(y, "  completions: {n}");
    let _ = writeln!(y, "  parallelism: {n}");
    let _ = writeln!(y, "  # A shard run again later would not be part of the same load.");
    let _ = writeln!(y, "  backoffLimit: 0");
    if let Some(s) = run_s {
        let _ = writeln!(y, "  activeDeadlineSeconds: {s}");
    }
    let _ = writeln!(y, "  template:");
    let _ = writeln!(y, "    metadata:");
    let _ = writeln!(y, "      labels:");
    let _ = writeln!(y, "        app.kubernetes.io/name: stackbench");
    let _ = writeln!(y, "        stackbench/load: {}", q(name));
    let _ = writeln!(y, "    spec:");
    let _ = writeln!(y, "      restartPolicy: Never");
    let _ = writeln!(y, "      affinity:");
    let _ = writeln!(y, "        podAntiAffinity:");
    let term = |indent: &str| {
        format!(
            "{indent}labelSelector:\n{indent}  matchLabels:\n{indent}    stackbench/load: {}\n{indent}topologyKey: kubernetes.io/hostname\n",
            q(name)
        )
    };
    if args.spread == "required" {
        let _ = writeln!(y, "          requiredDuringSchedulingIgnoredDuringExecution:");
        let _ = write!(y, "          - {}", term("            ").trim_start());
    } else {
        let _ = writeln!(y, "          preferredDuringSchedulingIgnoredDuringExecution:");
        let _ = writeln!(y, "          - weight: 100");
        let _ = writeln!(y, "            podAffinityTerm:");
        y.push_str(&term("              "));
    }
    let _ = writeln!(y, "      containers:");
    let _ = writeln!(y, "      - name: shard");
    let _ = writeln!(y, "        image: {}", q(&args.image));
    let _ = writeln!(y, "        command: [\"sh\", \"-c\", {}]", q(command));
    let _ = writeln!(y, "        resources:");
    for part in ["requests", "limits"] {
        let _ = writeln!(y, "          {part}:");
        let _ = writeln!(y, "            cpu: {}", q(&args.pod_cpus.to_string()));
        let _ = writeln!(y, "            memory: {}", q(&args.pod_memory));
    }
    if !files.is_empty() {
        let _ = writeln!(y, "        volumeMounts:");
        let _ = writeln!(y, "        - name: files");
        let _ = writeln!(y, "          mountPath: {}", q(FILES_DIR));
        let _ = writeln!(y, "          readOnly: true");
        let _ = writeln!(y, "      volumes:");
        let _ = writeln!(y, "      - name: files");
        let _ = writeln!(y, "        secret:");
        let _ = writeln!(y, "          secretName: {}", q(&format!("{name}-files")));
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use clap::Parser as _;

    fn parse(line: &str) -> (K8sLoadArgs, Vec<String>) {
        let argv: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        let cli = crate::cli::Cli::try_parse_from(&argv).unwrap();
        let crate::cli::Command::K8s(K8sCommand::Load(args)) = cli.command else { panic!() };
        let at = argv.iter().position(|a| a == "load").unwrap() + 1;
        (*args, argv[at..].to_vec())
    }

    #[test]
    fn the_pods_run_the_load_as_given_as_shards() {
        let (args, given) = parse(
            "stackbench k8s load http://sut:8080/events --scenario dummy --rate 9000 -d 30s --shards 3 \
             --image reg/sb:1 --namespace bench --threshold p99<20ms --pod-cpus=4",
        );
        let t = SystemTime::UNIX_EPOCH + Duration::from_hours(498_920);
        let y = manifest(&args, &given, Path::new("/"), t).unwrap();
        assert!(!y.contains("kind: Secret") && !y.contains("volumes:"), "{y}");
        assert!(y.contains("completionMode: Indexed") && y.contains("parallelism: 3"), "{y}");
        assert!(y.contains(
            r#"exec stackbench load http://sut:8080/events --scenario dummy --rate 9000 -d 30s --threads 4 --shard \"$((JOB_COMPLETION_INDEX+1))/3\" --start-at 2026-12-01T08:02:00.000Z --json - --quiet"#
        ), "{y}");
        assert!(y.contains("| stackbench merge --threshold 'p99<20ms'"), "{y}");
        assert!(y.contains("requiredDuringSchedulingIgnoredDuringExecution"), "{y}");
        assert!(y.contains("activeDeadlineSeconds: 280"), "{y}");
        assert!(!y.contains("--image") && !y.contains("--pod-cpus"), "{y}");
    }

    #[test]
    fn what_cannot_run_in_pods_is_refused() {
        for (line, want) in [
            ("--shard 1/2", "leave them out"),
            ("--cpus 1", "--pod-cpus"),
            ("-c 2", "gets none"),
            ("--name Big_Name", "Kubernetes name"),
            ("--find-max --slo p99<1ms", "capacity search"),
        ] {
            let (args, given) =
                parse(&format!("stackbench k8s load http://sut:8080/ --shards 3 --image x {line}"));
            let e = manifest(&args, &given, Path::new("/"), SystemTime::now()).unwrap_err().to_string();
            assert!(e.contains(want), "{line}: {e}");
        }
    }

    #[test]
    fn the_loads_files_reach_the_pods_in_a_secret() {
        use base64::Engine as _;
        use stackbench_testkit::tls::{Certs, Leaf};
        let scratch = tempfile::Builder::new().prefix("sb-k8s-files-").tempdir().unwrap();
        let dir = scratch.path();
        let certs = Certs::new(&dir.join("tls"), &["sut"], Leaf::Valid);
        std::fs::write(dir.join("a.hurl"), "GET {{base_url}}/\n").unwrap();
        // Absolute: `to_spec` reads them where the test runs.
        let d = dir.display();
        let (args, given) = parse(&format!(
            "stackbench k8s load https://sut:8443/ --scenario-file {d}/a.hurl --cacert {d}/tls/ca.pem \
             --cert={d}/tls/client.pem --key {d}/tls/client-key.pem -d 5s --shards 2 --image x"
        ));
        let y = manifest(&args, &given, dir, SystemTime::now()).unwrap();
        assert!(y.contains("kind: Secret") && y.contains("secretName: \"stackbench-load-files\""), "{y}");
        let decoded = |key: &str| {
            let line = y.lines().find(|l| l.trim_start().starts_with(&format!("\"{key}\":"))).unwrap();
            let value: String = serde_json::from_str(line.split_once(": ").unwrap().1).unwrap();
            base64::engine::general_purpose::STANDARD.decode(value).unwrap()
        };
        assert_eq!(decoded("f0-a.hurl"), b"GET {{base_url}}/\n");
        assert_eq!(decoded("f1-ca.pem"), std::fs::read(&certs.ca).unwrap());
        assert_eq!(decoded("f2-client.pem"), std::fs::read(&certs.client_cert).unwrap());
        assert_eq!(decoded("f3-client-key.pem"), std::fs::read(&certs.client_key).unwrap());
        assert!(
            y.contains(
                "--scenario-file /stackbench/files/f0-a.hurl --cacert /stackbench/files/f1-ca.pem \
                 --cert=/stackbench/files/f2-client.pem --key /stackbench/files/f3-client-key.pem"
            ),
            "{y}"
        );
        assert!(y.contains("delete job/stackbench-load secret/stackbench-load-files"), "{y}");
    }
}
