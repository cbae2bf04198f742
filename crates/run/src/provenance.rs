//! What a reader needs to rebuild a contestant exactly, or to doubt it: the
//! version each toolchain it `requires` reports (`go version`, `java
//! -version`, …) and the SHA-256 of each lockfile in its sources (`go.sum`,
//! `package-lock.json`, `requirements.txt`, `pom.xml`, `mix.lock`, …), the
//! pinned dependency set it was built from. Both go into the contestant's
//! record; a program that does not answer in time is recorded as such, never
//! guessed.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};
use stackbench_record::Lockfile;

/// File names that pin a dependency set, in the ecosystems the contestants use.
const LOCKFILES: [&str; 11] = [
    "Cargo.lock",
    "go.sum",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "requirements.txt",
    "poetry.lock",
    "uv.lock",
    "pom.xml",
    "mix.lock",
    "rebar.lock",
];

/// Directories that hold what was installed or built, not what was pinned.
const SKIPPED_DIRS: [&str; 8] = ["node_modules", ".venv", "target", "_build", "deps", "bin", ".git", "build"];

/// How long a toolchain may take to say its version (a JVM's start included).
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// The lockfiles under `dirs` (two levels deep, install and build directories
/// skipped), each with its path relative to the directory it was found in
/// and its SHA-256, in path order.
pub fn lockfiles(dirs: &[PathBuf]) -> Vec<Lockfile> {
    let mut found = Vec::new();
    for dir in dirs {
        collect(dir, dir, 0, &mut found);
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found.dedup_by(|a, b| a.path == b.path && a.sha256 == b.sha256);
    found
}

fn collect(root: &Path, dir: &Path, depth: u32, out: &mut Vec<Lockfile>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        // Never follow a symlink out of the sources.
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() && depth < 2 && !SKIPPED_DIRS.contains(&name) && !name.starts_with('.') {
            collect(root, &e.path(), depth + 1, out);
        } else if kind.is_file()
            && LOCKFILES.contains(&name)
            && let Some(sha256) = sha256_file(&e.path())
        {
            let path = e.path().strip_prefix(root).map_or_else(|_| e.path(), Path::to_path_buf);
            out.push(Lockfile { path: path.display().to_string(), sha256 });
        }
    }
}

/// The SHA-256 of a file, lower-case hex; `None` when it cannot be read.
pub fn sha256_file(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(_) => return None,
        }
    }
    Some(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Each program's version, as it reports it, keyed by program name.
pub fn toolchains(programs: &[String]) -> BTreeMap<String, String> {
    programs.iter().map(|p| (p.clone(), version(p))).collect()
}

/// How `program` asks for its version: Go and Java have their own spellings.
fn version_args(program: &str) -> &'static [&'static str] {
    match program {
        "go" => &["version"],
        "java" | "javac" => &["-version"],
        _ => &["--version"],
    }
}

/// The first lines (at most three, non-empty, joined with `; `) a program
/// prints when asked its version, on stdout or stderr (java writes there);
/// or why there is none.
fn version(program: &str) -> String {
    let child = Command::new(program)
        .args(version_args(program))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return format!("not run: {e}"),
    };
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < VERSION_TIMEOUT => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return format!("no answer within {}s", VERSION_TIMEOUT.as_secs());
            }
        }
    }
    let mut text = String::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = out.read_to_string(&mut text);
    }
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_string(&mut text);
    }
    first_lines(&text)
}

fn first_lines(text: &str) -> String {
    let text = plain(text);
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).take(3).collect();
    let joined = lines.join("; ");
    match joined.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &joined[..at]),
        None => joined,
    }
}

/// `text` without terminal escapes (`mvn -v` prints its first line in bold
/// even into a pipe) or other control characters but line ends.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            // CSI: ESC [ parameters, then one final byte in @..~.
            '\u{1b}' => {
                if chars.clone().next() == Some('[') {
                    chars.next();
                    for f in chars.by_ref() {
                        if ('@'..='~').contains(&f) {
                            break;
                        }
                    }
                }
            }
            '\n' => out.push('\n'),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lockfiles_are_found_hashed_and_installs_skipped() {
        let scratch = tempfile::Builder::new().prefix("sb-run-").tempdir().unwrap();
        let dir = scratch.path();
        std::fs::create_dir_all(dir.join("node_modules/x")).unwrap();
        std::fs::create_dir_all(dir.join("api")).unwrap();
        std::fs::write(dir.join("go.sum"), b"abc").unwrap();
        std::fs::write(dir.join("api/package-lock.json"), b"").unwrap();
        std::fs::write(dir.join("node_modules/x/package-lock.json"), b"installed").unwrap();
        std::fs::write(dir.join("main.go"), b"package main").unwrap();
        let found = lockfiles(&[dir.to_path_buf()]);
        let paths: Vec<&str> = found.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(paths, ["api/package-lock.json", "go.sum"]);
        // SHA-256 of "abc" and of nothing (FIPS 180-2 test vectors).
        assert_eq!(found[1].sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(found[0].sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }

    #[test]
    fn a_version_is_what_the_program_says_or_why_not() {
        let v = toolchains(&["sh".to_owned(), "no-such-program-stackbench".to_owned()]);
        assert!(v["no-such-program-stackbench"].starts_with("not run: "), "{v:?}");
        assert!(!v["sh"].is_empty());
    }

    #[test]
    fn terminal_escapes_are_left_out() {
        assert_eq!(
            first_lines("\u{1b}[1mApache Maven 3.8.7\u{1b}[m\r\nMaven home: /usr\n"),
            "Apache Maven 3.8.7; Maven home: /usr"
        );
    }

    #[test]
    fn long_answers_are_cut_to_three_lines() {
        assert_eq!(
            first_lines("\nErlang/OTP 25\n\nElixir 1.14.0\nmore\nand more\n"),
            "Erlang/OTP 25; Elixir 1.14.0; more"
        );
        assert_eq!(first_lines(&"x".repeat(300)).chars().count(), 201);
    }
}
