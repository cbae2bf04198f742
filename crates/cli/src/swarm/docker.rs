//! The swarm as the `docker` command sees it: the real [`Swarm`] of
//! `stackbench swarm load --run`. Using the command (not the Engine API)
//! keeps the user's own way of reaching a swarm: DOCKER_HOST, DOCKER_CONTEXT,
//! ssh or TLS contexts.

use std::process::{Command, Output};

use anyhow::{Context as _, bail};

use super::run::{Swarm, Task};

/// The `docker` command on PATH.
#[derive(Debug)]
pub struct Docker {
    program: &'static str,
}

impl Default for Docker {
    fn default() -> Docker {
        Docker { program: "docker" }
    }
}

impl Docker {
    fn output(&self, args: &[&str]) -> anyhow::Result<Output> {
        Command::new(self.program).args(args).output().with_context(|| {
            format!(
                "cannot run {} (install Docker's command line and point it at a swarm manager)",
                self.program
            )
        })
    }

    /// Its stdout, or an error with its stderr.
    fn ok(&self, args: &[&str]) -> anyhow::Result<String> {
        let out = self.output(args)?;
        if !out.status.success() {
            bail!(
                "{} {} failed: {}",
                self.program,
                args.iter().take(3).copied().collect::<Vec<_>>().join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Swarm for Docker {
    fn check(&mut self) -> anyhow::Result<()> {
        let state =
            self.ok(&["info", "--format", "{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}"])?;
        match state.split_whitespace().collect::<Vec<_>>()[..] {
            ["active", "true"] => Ok(()),
            ["active", _] => bail!(
                "the docker daemon {} talks to is a worker of its swarm: point it at a manager (DOCKER_HOST or \
                 DOCKER_CONTEXT)",
                self.program
            ),
            _ => bail!(
                "the docker daemon {} talks to is not in a swarm (its state: {}); make one with `docker swarm init`, \
                 or point it at a manager",
                self.program,
                state.trim()
            ),
        }
    }

    fn create(&mut self, args: &[String]) -> anyhow::Result<String> {
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.output(&words)?;
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        if !out.status.success() {
            bail!("{stderr}");
        }
        Ok(stderr)
    }

    fn tasks(&mut self, names: &[String]) -> anyhow::Result<Vec<Task>> {
        let mut args = vec!["service", "ps", "--no-trunc", "--format", "{{json .}}"];
        args.extend(names.iter().map(String::as_str));
        let text = self.ok(&args)?;
        let mut tasks: Vec<Task> = Vec::new();
        for line in text.lines().filter(|l| l.starts_with('{')) {
            let v: serde_json::Value =
                serde_json::from_str(line).context("docker service ps printed no JSON")?;
            let field = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
            // A task is SERVICE.SLOT or SERVICE.NODE; an earlier task of the same slot starts with `\_ `.
            let name = field("Name");
            let name = name.trim_start_matches("\\_").trim();
            let service = name.rsplit_once('.').map_or(name, |(s, _)| s).to_owned();
            if tasks.iter().any(|t| t.service == service) {
                continue; // the newest task comes first
            }
            let state = field("CurrentState");
            tasks.push(Task {
                service,
                state: state.split_whitespace().next().unwrap_or("unknown").to_ascii_lowercase(),
                error: field("Error").trim_matches('"').to_owned(),
                node: field("Node"),
            });
        }
        Ok(tasks)
    }

    fn logs(&mut self, name: &str) -> anyhow::Result<(String, String)> {
        // --raw: each line as the shard wrote it, a long one whole (a prefixed line is cut every 16 KiB).
        let out = self.output(&["service", "logs", "--raw", name])?;
        if !out.status.success() {
            bail!("docker service logs {name} failed: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
        Ok((
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    }

    fn remove(&mut self, names: &[String]) -> anyhow::Result<()> {
        let mut args = vec!["service", "rm"];
        args.extend(names.iter().map(String::as_str));
        self.ok(&args).map(drop)
    }

    fn left(&mut self, names: &[String]) -> anyhow::Result<usize> {
        let services = self.ok(&["service", "ls", "--format", "{{.Name}}"])?;
        let mut left = services.lines().filter(|l| names.iter().any(|n| n == l.trim())).count();
        for name in names {
            let filter = format!("label=com.docker.swarm.service.name={name}");
            left += self.ok(&["ps", "-a", "-q", "--filter", &filter])?.lines().count();
        }
        Ok(left)
    }
}
