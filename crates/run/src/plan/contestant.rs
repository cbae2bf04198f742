//! One contestant of a plan resolved: its table's keys checked one after another in the
//! table's order (`command` or `url`, placeholders, `path`, CPUs and limits, the load
//! profile, `requires`, the waits) and the plan's `[defaults]` filled in.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use toml::Spanned;

use super::{
    Contestant, ContestantFile, CpuList, DEFAULT_COLD_STARTS, DEFAULT_READY_TIMEOUT, DEFAULT_STOP_GRACE,
    Launch, LimitsMode, Located, PLACEHOLDERS, PlanContext, ScenarioRef, Settings, VerifyMode, bounded,
    bounded_dur, limits, profile,
};

/// A contestant as the plan's tables give it, each key checked in the table's order and
/// the plan's `[defaults]` filled in.
pub(super) fn resolve(
    c: &ContestantFile,
    scenario: ScenarioRef,
    name: &str,
    d: &Settings,
    load: &BTreeMap<String, Spanned<profile::Table>>,
    ctx: &PlanContext,
) -> Result<Contestant, Located> {
    let plain = |m: String| (None, format!("contestant {name:?}: {m}"));
    let launch = launch_of(c).map_err(plain)?;
    let path = commands_and_path(c, &scenario, &launch).map_err(plain)?;
    let cpus = c.cpus.as_ref().or(d.cpus.as_ref());
    let load_cpus = c.load_cpus.as_ref().or(d.load_cpus.as_ref());
    check_cpus(cpus, load_cpus, ctx)?;
    let cpu_quota = c.cpu_quota.as_ref().or(d.cpu_quota.as_ref());
    check_cpu_quota(cpu_quota)?;
    let profile = profile::Profile::merge(
        load.get(scenario.name()).into_iter().chain(c.load.as_ref()).map(Spanned::get_ref),
    );
    // The path the load goes to: an external server's URL path, or `path`.
    let load_path = match &launch {
        Launch::External { url } => crate::url::split(url).map(|(_, path)| path).filter(|p| !p.is_empty()),
        Launch::Command { .. } => None,
    };
    profile
        .check(&scenario, launch.scheme(), load_path.as_deref().unwrap_or(&path))
        .map_err(|(sp, m)| (sp, format!("contestant {name:?}: its {scenario} load profile: {m}")))?;
    let requires = requires(c)?;
    let (cold_starts, ready_timeout, stop_grace) = waits(c, d)?;
    Ok(Contestant {
        name: name.to_owned(),
        scenario,
        language: c.language.clone(),
        framework: c.framework.clone(),
        launch,
        path,
        reset: c.reset.clone(),
        build: c.build.clone(),
        artifact: c.artifact.clone(),
        source: c.source.clone(),
        requires,
        optional: c.optional,
        cold_starts,
        ready_timeout,
        stop_grace,
        cpus: cpus.map(|l| l.get_ref().0.clone()),
        load_cpus: load_cpus.map(|l| l.get_ref().0.clone()),
        cpu_quota: cpu_quota.map(|q| *q.get_ref()),
        memory: c.memory.or(d.memory).map(|m| m.0),
        limits: c.limits.or(d.limits).unwrap_or(LimitsMode::Strict),
        verify: c.verify.or(d.verify).unwrap_or(VerifyMode::Standard),
        profile: profile.table,
        profile_spans: profile.spans,
    })
}

/// `source`, `reset` and `build` (placeholders known, programs given) and `path` (absolute,
/// and one a built-in scenario can serve when stackbench starts the server): the path.
fn commands_and_path(c: &ContestantFile, scenario: &ScenarioRef, launch: &Launch) -> Result<String, String> {
    for s in c.source.iter().flatten() {
        check_placeholders(s)?;
    }
    for argv in [&c.reset, &c.build].into_iter().flatten() {
        if argv.is_empty() {
            return Err("`reset` and `build` need a program to run, like [\"./reset.sh\"]".into());
        }
        for s in argv {
            check_placeholders(s)?;
        }
    }
    let path = c.path.clone().unwrap_or_else(|| "/".to_owned());
    if !path.starts_with('/') {
        return Err(format!("`path` must start with '/', got {path:?}"));
    }
    if let Some(b) = scenario.builtin()
        && matches!(launch, Launch::Command { .. })
        && let Err(e) = b.variables(&path)
    {
        return Err(e.for_plan());
    }
    Ok(path)
}

/// `cpu_quota` is in cores, at least a hundredth of one.
fn check_cpu_quota(q: Option<&Spanned<f64>>) -> Result<(), Located> {
    match q {
        Some(q) if !(q.get_ref().is_finite() && *q.get_ref() >= 0.01) => Err((
            Some(q.span()),
            format!(
                "`cpu_quota` is in cores (1.0 = one core) and must be at least 0.01, got {}",
                q.get_ref()
            ),
        )),
        _ => Ok(()),
    }
}

/// `requires`: program names looked up on PATH.
fn requires(c: &ContestantFile) -> Result<Vec<String>, Located> {
    c.requires
        .iter()
        .map(|r| {
            let prog = r.get_ref();
            if prog.is_empty() || prog.chars().any(|ch| ch.is_whitespace() || ch == '/') {
                Err((
                    Some(r.span()),
                    format!(
                        "`requires` lists program names looked up on PATH (\"go\", \"java\"), got {prog:?}"
                    ),
                ))
            } else {
                Ok(prog.clone())
            }
        })
        .collect()
}

/// `cold_starts`, `ready_timeout` and `stop_grace`, the contestant's or the defaults', in bounds.
fn waits(c: &ContestantFile, d: &Settings) -> Result<(u32, Duration, Duration), Located> {
    let cold_starts =
        bounded(c.cold_starts.as_ref().or(d.cold_starts.as_ref()), "cold_starts", 0..=limits::COLD_STARTS)?;
    let ready_timeout = bounded_dur(
        c.ready_timeout.as_ref().or(d.ready_timeout.as_ref()),
        "ready_timeout",
        Duration::from_millis(1)..=limits::WAIT,
    )?;
    let stop_grace = bounded_dur(
        c.stop_grace.as_ref().or(d.stop_grace.as_ref()),
        "stop_grace",
        Duration::ZERO..=limits::STOP_GRACE,
    )?;
    Ok((
        cold_starts.unwrap_or(DEFAULT_COLD_STARTS),
        ready_timeout.unwrap_or(DEFAULT_READY_TIMEOUT),
        stop_grace.unwrap_or(DEFAULT_STOP_GRACE),
    ))
}

/// The contestant's and the load's CPUs: ones this process may use, and apart.
fn check_cpus(
    cpus: Option<&Spanned<CpuList>>,
    load_cpus: Option<&Spanned<CpuList>>,
    ctx: &PlanContext,
) -> Result<(), Located> {
    for list in [cpus, load_cpus].into_iter().flatten() {
        if let Some(&bad) = list.get_ref().0.iter().find(|n| !ctx.cpus.contains(n)) {
            return Err((
                Some(list.span()),
                format!(
                    "CPU {bad} is not one this process may use: it may use CPUs {} (its affinity mask, as \
                     taskset or a container's cpuset set it)",
                    CpuList(ctx.cpus.clone())
                ),
            ));
        }
    }
    if let (Some(a), Some(b)) = (cpus, load_cpus)
        && a.get_ref().0.iter().any(|x| b.get_ref().0.contains(x))
    {
        return Err((
            Some(b.span()),
            format!(
                "`load_cpus` {} overlaps the contestant's `cpus` {}: the load would compete with the contestant",
                b.get_ref(),
                a.get_ref()
            ),
        ));
    }
    Ok(())
}

/// `command` or `url`, and the keys that only make sense with one of them.
fn launch_of(c: &ContestantFile) -> Result<Launch, String> {
    Ok(match (&c.command, &c.url) {
        (Some(_), Some(_)) => {
            return Err("has both `command` and `url`; give `command` for a server stackbench starts, `url` for one it does not".into());
        }
        (None, None) => {
            return Err("needs `command = [\"program\", \"arg\", …]` (stackbench starts it) or `url = \"http://…\"` (an external server)".into());
        }
        (Some(argv), None) => {
            if argv.is_empty() || argv[0].trim().is_empty() {
                return Err("`command` is empty; give the program and its arguments, like [\"./server\", \"--port\", \"{port}\"]".into());
            }
            for s in argv.iter().chain(c.env.values()) {
                check_placeholders(s)?;
                if !c.tls && (s.contains("{tls_cert}") || s.contains("{tls_key}")) {
                    return Err(format!(
                        "{s:?} uses {{tls_cert}}/{{tls_key}}, which stand for the certificate stackbench makes \
                         when the contestant has `tls = true`; add it"
                    ));
                }
            }
            Launch::Command {
                argv: argv.clone(),
                env: c.env.clone(),
                cwd: c.cwd.as_ref().map(PathBuf::from),
                port: c.port.as_ref().map(|p| *p.get_ref()),
                tls: c.tls,
            }
        }
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!("`url` must start with http:// or https://, got {url:?}"));
            }
            // The load engine's own check: a port outside 1–65535 is refused, never taken as 80.
            stackbench_load::parse_target(url).map_err(|e| format!("`url`: {e}"))?;
            for (key, present) in [
                ("tls", c.tls),
                ("env", !c.env.is_empty()),
                ("cwd", c.cwd.is_some()),
                ("port", c.port.is_some()),
                ("reset", c.reset.is_some()),
                ("build", c.build.is_some()),
                ("cpus", c.cpus.is_some()),
                ("cpu_quota", c.cpu_quota.is_some()),
                ("memory", c.memory.is_some()),
            ] {
                if present {
                    return Err(format!(
                        "`{key}` needs a server stackbench starts (`command`); with `url` stackbench cannot apply it{}",
                        if key == "tls" { " (an https:// URL is loaded over TLS by itself)" } else { "" }
                    ));
                }
            }
            Launch::External { url: url.clone() }
        }
    })
}

/// A fixed `port` is one to connect to: not 0 (the TOML type refuses past 65535).
pub(super) fn check_port(c: &ContestantFile, name: &str) -> Result<(), Located> {
    match c.port.as_ref().filter(|p| *p.get_ref() == 0) {
        Some(port) => Err((
            Some(port.span()),
            format!(
                "contestant {name:?}: `port = 0` is not a port to connect to; give one in 1–65535, \
                 or leave `port` out and pass `{{port}}` to the program"
            ),
        )),
        None => Ok(()),
    }
}

/// Refuses `{…}` that is not a known placeholder (a typo would otherwise reach the program).
fn check_placeholders(s: &str) -> Result<(), String> {
    let mut rest = s;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else { break };
        let token = &rest[start..=start + len];
        if !PLACEHOLDERS.contains(&token)
            && !token[1..token.len() - 1].contains(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        {
            return Err(format!(
                "unknown placeholder {token} in {s:?}; the placeholders are {}",
                PLACEHOLDERS.join(", ")
            ));
        }
        rest = &rest[start + len + 1..];
    }
    Ok(())
}
