//! The machine a run was measured on, read from `/proc` and `/sys` (Linux).
//! Parsing is separate from reading so it is tested on fixed text.

use std::fs;

use serde::{Deserialize, Serialize};

/// Facts about the machine that change how numbers should be read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Environment {
    pub os: String,
    /// Kernel release (`uname -r`).
    #[serde(default)]
    pub kernel: String,
    /// `model name` of the first CPU in `/proc/cpuinfo`.
    #[serde(default)]
    pub cpu_model: String,
    /// Logical CPUs online.
    pub cores: u32,
    /// CPUs this process may run on (its affinity), e.g. `1` or `0-3`.
    #[serde(default)]
    pub affinity: String,
    /// cpufreq governor of CPU 0, when the machine exposes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governor: Option<String>,
    pub stackbench_version: String,
}

impl Environment {
    /// Reads the current machine. Anything unreadable is left empty rather than failing.
    pub fn detect(stackbench_version: &str) -> Environment {
        let read = |p: &str| fs::read_to_string(p).unwrap_or_default();
        let status = read("/proc/self/status");
        Environment {
            os: std::env::consts::OS.to_owned(),
            kernel: read("/proc/sys/kernel/osrelease").trim().to_owned(),
            cpu_model: cpu_model(&read("/proc/cpuinfo")),
            cores: match count_cpu_list(&read("/sys/devices/system/cpu/online")) {
                0 => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
                n => n,
            },
            affinity: status_field(&status, "Cpus_allowed_list").unwrap_or_default(),
            governor: Some(read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").trim().to_owned())
                .filter(|g| !g.is_empty()),
            stackbench_version: stackbench_version.to_owned(),
        }
    }
}

/// This build of stackbench, told apart from any other with the same
/// version: `0.1.0 (build 3fa2c1d9)`, the build being a hash of the running
/// executable. `--resume` refuses to mix runs of two builds; a report says
/// which build measured.
pub fn version_with_build(version: &str) -> String {
    static BUILD: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let build = BUILD.get_or_init(|| {
        use std::hash::{DefaultHasher, Hasher as _};
        match std::env::current_exe().and_then(fs::read) {
            Ok(bytes) => {
                let mut h = DefaultHasher::new();
                h.write(&bytes);
                format!("{:08x}", h.finish() as u32)
            }
            Err(_) => "unknown".to_owned(),
        }
    });
    format!("{version} (build {build})")
}

impl Environment {
    /// What differs between the machine a result directory was measured on
    /// (`self`) and `now`, in the terms that change the numbers (CPU model,
    /// cores, kernel, governor, stackbench version): one `field: was → now`
    /// each. Empty when runs from both may be compared. The affinity is left
    /// out: it is the caller's own choice of cores, said in each record.
    pub fn differences(&self, now: &Environment) -> Vec<String> {
        let mut out = Vec::new();
        let mut check = |field: &str, was: String, is: String| {
            if was != is {
                out.push(format!("{field}: {was:?} → {is:?}"));
            }
        };
        check("os", self.os.clone(), now.os.clone());
        check("cpu_model", self.cpu_model.clone(), now.cpu_model.clone());
        check("cores", self.cores.to_string(), now.cores.to_string());
        check("kernel", self.kernel.clone(), now.kernel.clone());
        check(
            "governor",
            self.governor.clone().unwrap_or_default(),
            now.governor.clone().unwrap_or_default(),
        );
        check("stackbench_version", self.stackbench_version.clone(), now.stackbench_version.clone());
        out
    }
}

fn cpu_model(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_default()
}

fn status_field(status: &str, key: &str) -> Option<String> {
    status.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == key).then(|| v.trim().to_owned())
    })
}

/// Counts CPUs in a list like `0-3,6,8-9`.
pub fn count_cpu_list(list: &str) -> u32 {
    list.trim()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|part| match part.split_once('-') {
            Some((a, b)) => match (a.parse::<u32>(), b.parse::<u32>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 0,
            },
            None => u32::from(part.parse::<u32>().is_ok()),
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_text() {
        let cpuinfo =
            "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(cpu_model(cpuinfo), "Intel(R) Xeon(R) CPU @ 2.20GHz");
        assert_eq!(
            status_field("Name:\tx\nCpus_allowed_list:\t0-1\n", "Cpus_allowed_list").as_deref(),
            Some("0-1")
        );
        assert_eq!(count_cpu_list("0-3,6,8-9\n"), 7);
        assert_eq!(count_cpu_list(""), 0);
    }

    #[test]
    fn differences_name_each_changed_field() {
        let a = Environment::detect("1.0.0");
        assert!(a.differences(&a).is_empty());
        let b = Environment { cores: a.cores + 2, kernel: "9.9.9".into(), affinity: "7".into(), ..a.clone() };
        let d = a.differences(&b);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(
            d[0].starts_with("cores: ") && d[1].starts_with("kernel: ") && d[1].contains("\"9.9.9\""),
            "{d:?}"
        );
        let c = Environment { stackbench_version: "2.0.0".into(), ..a.clone() };
        assert_eq!(a.differences(&c), [r#"stackbench_version: "1.0.0" → "2.0.0""#]);
    }

    #[test]
    fn the_build_is_named_by_the_executable() {
        let v = version_with_build("1.2.3");
        assert!(
            v.starts_with("1.2.3 (build ") && v.ends_with(')') && v.len() == "1.2.3 (build 12345678)".len(),
            "{v}"
        );
        assert_eq!(v, version_with_build("1.2.3"), "the same executable, the same build");
    }

    #[test]
    fn detects_this_machine() {
        let e = Environment::detect("0.0.0");
        assert!(e.cores >= 1);
        assert_eq!(e.stackbench_version, "0.0.0");
        if cfg!(target_os = "linux") {
            assert!(!e.kernel.is_empty() && !e.affinity.is_empty(), "{e:?}");
        }
    }
}
