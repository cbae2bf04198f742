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
    /// Frequency boost (turbo): `on` or `off`, when the machine says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boost: Option<String>,
    /// The cgroup hierarchy limits are applied through: `v2` or `v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
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
            boost: boost(
                &read("/sys/devices/system/cpu/cpufreq/boost"),
                &read("/sys/devices/system/cpu/intel_pstate/no_turbo"),
            ),
            cgroup: if std::path::Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
                Some("v2".to_owned())
            } else if std::path::Path::new("/sys/fs/cgroup/cpu").exists() {
                Some("v1".to_owned())
            } else {
                None
            },
            stackbench_version: stackbench_version.to_owned(),
        }
    }
}

/// This build of stackbench, told apart from any other with the same
/// version: `0.1.0 (build 3fa2c1d9)`. The build is the start of the
/// executable's GNU build ID (the linker's hash of its output, read from the
/// first 64 KiB of the file) or, for an executable without one, a hash of the
/// whole file. `--resume` refuses to mix runs of two builds; a report says
/// which build measured.
pub fn version_with_build(version: &str) -> String {
    static BUILD: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let build = BUILD.get_or_init(|| {
        use std::hash::{DefaultHasher, Hasher as _};
        use std::io::Read as _;
        let Ok(exe) = std::env::current_exe() else { return "unknown".to_owned() };
        let mut head = Vec::new();
        if fs::File::open(&exe).and_then(|f| f.take(64 * 1024).read_to_end(&mut head)).is_ok()
            && let Some(id) = elf_build_id(&head).and_then(|id| <[u8; 4]>::try_from(id.get(..4)?).ok())
        {
            return format!("{:08x}", u32::from_be_bytes(id));
        }
        match fs::read(&exe) {
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

/// The GNU build ID (`NT_GNU_BUILD_ID`) of a little-endian ELF64 image,
/// found through its program headers' `PT_NOTE` segments, when `head` (the
/// image's first bytes) holds them. Anything else, truncated or malformed
/// included, gives `None`.
fn elf_build_id(head: &[u8]) -> Option<&[u8]> {
    const PT_NOTE: u32 = 4;
    const NT_GNU_BUILD_ID: u32 = 3;
    let u16_at =
        |b: &[u8], at: usize| b.get(at..at.checked_add(2)?).map(|x| u16::from_le_bytes([x[0], x[1]]));
    let u32_at = |b: &[u8], at: usize| {
        b.get(at..at.checked_add(4)?).map(|x| u32::from_le_bytes(x.try_into().expect("4 bytes")))
    };
    let u64_at = |b: &[u8], at: usize| {
        let x = b.get(at..at.checked_add(8)?)?;
        usize::try_from(u64::from_le_bytes(x.try_into().expect("8 bytes"))).ok()
    };
    // Magic, ELFCLASS64, ELFDATA2LSB.
    if head.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let (phoff, phentsize, phnum) =
        (u64_at(head, 0x20)?, usize::from(u16_at(head, 0x36)?), u16_at(head, 0x38)?);
    if phentsize < 0x38 {
        return None;
    }
    for i in 0..usize::from(phnum) {
        let ph = phoff.checked_add(i.checked_mul(phentsize)?)?;
        if u32_at(head, ph)? != PT_NOTE {
            continue;
        }
        let (offset, size) = (u64_at(head, ph + 8)?, u64_at(head, ph + 0x20)?);
        let mut notes = head.get(offset..offset.checked_add(size)?)?;
        // Each note: name size, descriptor size, type, then name and descriptor, each padded to 4.
        while notes.len() >= 12 {
            let name_len = usize::try_from(u32_at(notes, 0)?).ok()?;
            let desc_len = usize::try_from(u32_at(notes, 4)?).ok()?;
            let name_end = 12usize.checked_add(name_len)?;
            let desc_at = name_end.checked_next_multiple_of(4)?;
            let desc_end = desc_at.checked_add(desc_len)?;
            let name = notes.get(12..name_end)?;
            let desc = notes.get(desc_at..desc_end)?;
            if u32_at(notes, 8)? == NT_GNU_BUILD_ID && name == b"GNU\0" && !desc.is_empty() {
                return Some(desc);
            }
            notes = notes.get(desc_end.checked_next_multiple_of(4)?.min(notes.len())..)?;
        }
    }
    None
}

impl Environment {
    /// What differs between the machine a result directory was measured on
    /// (`self`) and `now`, in the terms that change the numbers (CPU model,
    /// cores, kernel, governor, boost, stackbench version): one `field: was → now`
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
        check("boost", self.boost.clone().unwrap_or_default(), now.boost.clone().unwrap_or_default());
        check("stackbench_version", self.stackbench_version.clone(), now.stackbench_version.clone());
        out
    }
}

/// Boost from the generic cpufreq switch (`1` on) or, on Intel's driver,
/// from `no_turbo` (`1` off); `None` when neither file says.
fn boost(cpufreq_boost: &str, intel_no_turbo: &str) -> Option<String> {
    let on = |b: bool| Some(if b { "on" } else { "off" }.to_owned());
    match (cpufreq_boost.trim(), intel_no_turbo.trim()) {
        ("1", _) | (_, "0") => on(true),
        ("0", _) | (_, "1") => on(false),
        _ => None,
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
    fn boost_is_read_from_either_switch() {
        assert_eq!(boost("1\n", "").as_deref(), Some("on"));
        assert_eq!(boost("", "1\n").as_deref(), Some("off"));
        assert_eq!(boost("", "0").as_deref(), Some("on"));
        assert_eq!(boost("", ""), None);
    }

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

    /// A little-endian ELF64 header with a PT_LOAD and a PT_NOTE program header; the note
    /// segment holds an ABI tag, then a build ID when `id` is given.
    fn elf(id: Option<&[u8]>) -> Vec<u8> {
        let note = |kind: u32, desc: &[u8]| {
            let mut n = Vec::new();
            n.extend_from_slice(&4u32.to_le_bytes());
            n.extend_from_slice(&u32::try_from(desc.len()).unwrap().to_le_bytes());
            n.extend_from_slice(&kind.to_le_bytes());
            n.extend_from_slice(b"GNU\0");
            n.extend_from_slice(desc);
            while n.len() % 4 != 0 {
                n.push(0);
            }
            n
        };
        let mut notes = note(1, &[0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
        if let Some(id) = id {
            notes.extend(note(3, id));
        }
        let mut b = vec![0u8; 64 + 2 * 56];
        b[..6].copy_from_slice(b"\x7fELF\x02\x01");
        b[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
        b[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        b[0x38..0x3a].copy_from_slice(&2u16.to_le_bytes());
        b[64..68].copy_from_slice(&1u32.to_le_bytes());
        let ph = 64 + 56;
        b[ph..ph + 4].copy_from_slice(&4u32.to_le_bytes());
        let offset = b.len() as u64;
        b[ph + 8..ph + 16].copy_from_slice(&offset.to_le_bytes());
        b[ph + 0x20..ph + 0x28].copy_from_slice(&(notes.len() as u64).to_le_bytes());
        b.extend(notes);
        b
    }

    #[test]
    fn the_build_id_is_found_among_the_notes() {
        let id = [
            0xd0, 0x2e, 0xf6, 0x02, 0x9d, 0xdf, 0x83, 0xd1, 0x0a, 0x0c, 0x00, 0x5e, 0xb2, 0xde, 0xca, 0xed,
            0x73,
        ];
        let image = elf(Some(&id));
        assert_eq!(elf_build_id(&image), Some(&id[..]));
        assert_eq!(elf_build_id(&elf(None)), None, "an ABI tag is no build ID");
        // Cut short anywhere before the ID's last byte, the ID is not there to find.
        for cut in 0..image.len() {
            assert_eq!(elf_build_id(&image[..cut]), None, "cut at {cut}");
        }
        let mut be = image.clone();
        be[5] = 2;
        assert_eq!(elf_build_id(&be), None, "big-endian images are not read");
        let mut wrong_name = image;
        let at = wrong_name.len() - 20 - 4;
        wrong_name[at..at + 4].copy_from_slice(b"GNX\0");
        assert_eq!(elf_build_id(&wrong_name), None);
    }

    #[test]
    fn this_executable_is_named_by_its_build_id_when_it_has_one() {
        let head = fs::read(std::env::current_exe().unwrap()).unwrap();
        match elf_build_id(&head[..head.len().min(64 * 1024)]) {
            Some(id) => {
                let hex = format!("{:02x}{:02x}{:02x}{:02x}", id[0], id[1], id[2], id[3]);
                assert_eq!(version_with_build("1.2.3"), format!("1.2.3 (build {hex})"));
            }
            // CI links with Debian's toolchain, whose linker writes a build ID.
            None => assert!(std::env::var_os("CI").is_none(), "no build ID in this test executable"),
        }
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_after_an_elf_magic_never_panic(
            tail in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
        ) {
            let mut b = b"\x7fELF\x02\x01".to_vec();
            b.extend(tail);
            let _ = elf_build_id(&b);
        }
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
