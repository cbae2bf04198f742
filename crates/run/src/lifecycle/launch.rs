//! How a contestant is launched and reached: the plan's placeholders (`{port}`, `{scratch}`,
//! `{tls_cert}`, …) expanded into its command, environment and working directory; the
//! base URL it answers on and the path the load and verification use; the prober pointed
//! at it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Orchestrator, tls};
use crate::plan::{Contestant, Launch};
use crate::process::LaunchSpec;

impl Orchestrator<'_, '_> {
    pub(super) fn vars(&self, c: &Contestant, port: Option<u16>) -> BTreeMap<&'static str, String> {
        let mut v = BTreeMap::from([
            ("{stackbench}", self.opts.stackbench.display().to_string()),
            ("{bin_dir}", self.opts.bin_dir.display().to_string()),
            ("{scratch}", self.scratch.join(stackbench_record::file_safe(&c.name)).display().to_string()),
            ("{plan_dir}", self.plan_dir.display().to_string()),
        ]);
        if let Some(p) = port {
            v.insert("{port}", p.to_string());
        }
        if tls::serves_tls(c) {
            let made = tls::paths(&self.scratch.join(stackbench_record::file_safe(&c.name)));
            v.insert("{tls_cert}", made.cert.display().to_string());
            v.insert("{tls_key}", made.key.display().to_string());
        }
        v
    }

    /// The certificate made for contestant `c` (`tls = true`), when it has one.
    pub(super) fn made_tls(&self, c: &Contestant) -> Option<tls::Made> {
        tls::serves_tls(c).then(|| tls::paths(&self.scratch.join(stackbench_record::file_safe(&c.name))))
    }

    /// Where started contestant `c` answers on `port`, the prober pointed at it.
    pub(super) fn base(&self, c: &Contestant, port: u16) -> String {
        self.reach(c);
        format!("{}://127.0.0.1:{port}", tls::scheme(c))
    }

    /// Points the prober at contestant `c`: its TLS flags and routes, its certificate trusted.
    pub(super) fn reach(&self, c: &Contestant) {
        self.deps.prober.reach(tls::reach(c, self.made_tls(c).as_ref()));
    }

    pub(super) fn cwd(&self, c: &Contestant, vars: &BTreeMap<&'static str, String>) -> Option<PathBuf> {
        match &c.launch {
            Launch::Command { cwd: Some(cwd), .. } => {
                Some(self.plan_dir.join(expand(&cwd.display().to_string(), vars)))
            }
            _ => None,
        }
    }

    pub(super) fn spec(&self, c: &Contestant, argv: &[String], port: Option<u16>) -> LaunchSpec {
        let vars = self.vars(c, port);
        let mut env: BTreeMap<String, String> = match &c.launch {
            Launch::Command { env, .. } => env.iter().map(|(k, v)| (k.clone(), expand(v, &vars))).collect(),
            Launch::External { .. } => BTreeMap::new(),
        };
        if let Some(p) = port {
            env.entry("PORT".into()).or_insert_with(|| p.to_string());
        }
        LaunchSpec {
            argv: argv.iter().map(|a| expand(a, &vars)).collect(),
            env,
            cwd: self.cwd(c, &vars),
            cpus: c.cpus.clone(),
            cgroup_procs: Vec::new(),
            log: Some(self.store.log_path(&c.name)),
        }
    }
}

/// The path the load and verification use: the contestant's `path`, or the
/// path of its external URL.
pub(super) fn path_of(c: &Contestant) -> String {
    if let Launch::External { url } = &c.launch
        && let Some((_, path)) = crate::url::split(url).filter(|(_, p)| !p.is_empty())
    {
        return path;
    }
    if c.path == "/" { String::new() } else { c.path.clone() }
}

/// `scheme://authority` of a URL.
pub(super) fn base_of(url: &str) -> String {
    crate::url::split(url).map_or_else(|| url.to_owned(), |(base, _)| base)
}

/// Whether `program` is an executable file in one of `PATH`'s directories.
pub(super) fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Substitutes the placeholders.
pub fn expand(s: &str, vars: &BTreeMap<&'static str, String>) -> String {
    let mut out = s.to_owned();
    for (k, v) in vars {
        if out.contains(k) {
            out = out.replace(k, v);
        }
    }
    out
}

/// A port nobody listens on right now.
pub fn free_port() -> Option<u16> {
    std::net::TcpListener::bind(("127.0.0.1", 0)).ok()?.local_addr().ok().map(|a| a.port())
}
