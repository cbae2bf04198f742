//! Where a scenario's other files are read from: a directory on disk, or
//! files embedded in the binary (the built-in scenarios, compiled in with
//! `include_str!` so that an installed `stackbench` needs no repository).
//! Flows' `.hurl` files, rows, `file,name;` bodies and a gRPC file's `.proto`
//! are all read through it.
//!
//! A scenario file may come from someone else, so what it names is read only
//! under its root ([`Limits::file_root`]: the scenario file's own directory, or
//! one the user names, as Hurl's `--file-root`): an absolute path, a `..` or a
//! symbolic link that leads out of it is refused, as is anything that is not a
//! regular file (a device, a pipe), and every file read, the scenario's own
//! included, is at most [`Limits::max_file_size`] bytes (a link to `/dev/zero`
//! fails at once rather than filling memory). docs/scenarios.md, "Limits".

use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The most bytes a scenario file, or a file it names, may have unless the user says otherwise.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 64 << 20;

/// The longest value a capture may take unless the user says otherwise.
pub const DEFAULT_MAX_CAPTURE: usize = 1 << 20;

/// What a scenario may read and keep, as the user sets it (`--file-root`, `--max-file-size`,
/// `--max-capture`; a plan's contestant keys of the same names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// The directory every file a scenario names must be under; `None`: the scenario file's
    /// own directory. Once a scenario is loaded, the directory it used, made absolute.
    pub file_root: Option<PathBuf>,
    /// The most bytes a scenario file or a file it names may have.
    pub max_file_size: u64,
    /// The longest value (in bytes) a capture may take; a longer one fails its capture.
    pub max_capture: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { file_root: None, max_file_size: DEFAULT_MAX_FILE_SIZE, max_capture: DEFAULT_MAX_CAPTURE }
    }
}

impl Limits {
    /// The limits the user gave (`--file-root`, `--max-file-size`, `--max-capture`, in bytes),
    /// the defaults for the others.
    pub fn given(file_root: Option<PathBuf>, max_file_size: Option<u64>, max_capture: Option<u64>) -> Limits {
        let d = Limits::default();
        Limits {
            file_root,
            max_file_size: max_file_size.unwrap_or(d.max_file_size),
            max_capture: max_capture.map_or(d.max_capture, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        }
    }
}

/// `n` bytes as a person reads them: `64 MiB` when a whole number of MiB (or KiB), else bytes.
pub fn size(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// The directory a scenario's files are read under, made absolute, and the largest file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    dir: PathBuf,
    /// Whether the user named it (else it is the scenario file's directory), for messages.
    named: bool,
    max_file_size: u64,
}

impl Root {
    /// The root of a scenario in `dir`, under `limits`: their `file_root`, else `dir`.
    pub fn new(dir: &Path, limits: &Limits) -> std::io::Result<Root> {
        let (given, named) = match &limits.file_root {
            Some(r) => (r.as_path(), true),
            None => (dir, false),
        };
        let dir = match given.canonicalize() {
            Ok(dir) => dir,
            Err(e) if named => {
                return Err(std::io::Error::new(e.kind(), format!("--file-root {}: {e}", given.display())));
            }
            // A directory that is not there holds nothing: every read fails as not found.
            Err(_) => given.to_path_buf(),
        };
        Ok(Root { dir, named, max_file_size: limits.max_file_size })
    }

    /// The root itself.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the user named it (`--file-root`), rather than it being the scenario file's
    /// directory.
    pub fn named(&self) -> bool {
        self.named
    }

    /// `limits` once a scenario is loaded under this root: a root the user named, made
    /// absolute, so that loading the scenario again (the load engine does) reads the same files.
    pub fn limits(&self, limits: &Limits) -> Limits {
        Limits { file_root: self.named.then(|| self.dir.clone()), ..limits.clone() }
    }

    /// The most bytes a file may have.
    pub fn max_file_size(&self) -> u64 {
        self.max_file_size
    }

    /// The text of the file at `path`, which must lead (through every `..` and link) to a
    /// regular file under the root, of at most the largest size.
    pub fn read(&self, path: &Path) -> std::io::Result<String> {
        let real = self.inside(path)?;
        read_capped(&real, self.max_file_size)
    }

    /// The bytes of the file at `path`, on the terms of [`Root::read`] but any bytes.
    pub fn read_bytes(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        let real = self.inside(path)?;
        read_capped_bytes(&real, self.max_file_size)
    }

    /// Writes `bytes` to the file at `path`, whose directory must lead (through every `..`
    /// and link) under the root, as must a link in its place.
    pub fn write(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::{Error, ErrorKind};
        let name = path.file_name().ok_or_else(|| Error::new(ErrorKind::InvalidInput, "it names no file"))?;
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let real = self.inside(parent)?.join(name);
        if std::fs::symlink_metadata(&real).is_ok_and(|m| m.file_type().is_symlink()) {
            self.inside(&real)?;
        }
        std::fs::write(&real, bytes)
    }

    /// Where `path` leads, when that is under the root.
    pub fn inside(&self, path: &Path) -> std::io::Result<PathBuf> {
        let real = path.canonicalize()?;
        if real.starts_with(&self.dir) {
            return Ok(real);
        }
        let whose = if self.named { "the root given" } else { "the scenario file's directory" };
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "it leads to {}, outside {} ({whose}), and a scenario reads files under its root only; \
                 name a root that holds it with --file-root (`file_root` in a plan)",
                real.display(),
                self.dir.display()
            ),
        ))
    }
}

/// The text of the regular file at `path`, refused past `max` bytes (read no further than
/// one byte past it, whatever the file says its size is) or when it is not UTF-8.
pub fn read_capped(path: &Path, max: u64) -> std::io::Result<String> {
    let bytes = read_capped_bytes(path, max)?;
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

/// The bytes of the regular file at `path`, refused past `max` bytes (read no further than
/// one byte past it, whatever the file says its size is).
pub fn read_capped_bytes(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, ErrorKind};
    let meta = std::fs::metadata(path)?;
    let too_large = || {
        Error::new(
            ErrorKind::InvalidData,
            format!(
                "it is larger than {}, the most a scenario's file may have (--max-file-size raises it; \
                 `max_file_size` in a plan)",
                size(max)
            ),
        )
    };
    if !meta.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "it is not a regular file"));
    }
    if meta.len() > max {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The files a scenario names, by their names relative to it.
#[derive(Debug, Clone, Copy)]
pub enum Files<'a> {
    /// On disk, in directory `dir`, under `root`.
    Dir { dir: &'a Path, root: &'a Root },
    /// Embedded: each file's name and text; `dir` is where they are said to be, in messages.
    Embedded { dir: &'a Path, files: &'a [(&'a str, &'a str)] },
}

impl<'a> Files<'a> {
    /// The directory names are relative to.
    pub fn dir(&self) -> &'a Path {
        match self {
            Files::Dir { dir: d, .. } | Files::Embedded { dir: d, .. } => d,
        }
    }

    /// The same files, seen from directory `dir` (a `.hurl` file's `file,` bodies are read
    /// beside it). Embedded files keep their names: they have no directories.
    pub fn beside<'b>(&self, dir: &'b Path) -> Files<'b>
    where
        'a: 'b,
    {
        match *self {
            Files::Dir { root, .. } => Files::Dir { dir, root },
            Files::Embedded { files, .. } => Files::Embedded { dir, files },
        }
    }

    /// The files a `.hurl` file in directory `dir` names: as in Hurl, relative to the root the
    /// user named (`--file-root`), else beside the `.hurl` file.
    pub fn for_hurl<'b>(&self, dir: &'b Path) -> Files<'b>
    where
        'a: 'b,
    {
        match *self {
            Files::Dir { root, .. } if root.named() => Files::Dir { dir: root.dir(), root },
            _ => self.beside(dir),
        }
    }

    /// Where names are read on disk, owned (a `file,` body is read again when `verify` sends
    /// it); `None` for embedded files.
    pub fn disk(&self) -> Option<(PathBuf, Root)> {
        match self {
            Files::Dir { dir, root } => Some((dir.to_path_buf(), (*root).clone())),
            Files::Embedded { .. } => None,
        }
    }

    /// The bytes of `name`.
    pub fn read_bytes(&self, name: &str) -> std::io::Result<Vec<u8>> {
        match self {
            Files::Dir { dir, root } => root.read_bytes(&dir.join(name)),
            Files::Embedded { files, .. } => {
                files.iter().find(|(n, _)| *n == name).map(|(_, t)| t.as_bytes().to_vec()).ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::NotFound, "not among the embedded files")
                })
            }
        }
    }

    /// The text of `name`, and its path for messages.
    pub fn read(&self, name: &str) -> std::io::Result<(String, String)> {
        let path = self.dir().join(name);
        let text = match self {
            Files::Dir { root, .. } => root.read(&path)?,
            Files::Embedded { files, .. } => {
                files.iter().find(|(n, _)| *n == name).map(|(_, t)| (*t).to_owned()).ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::NotFound, "not among the embedded files")
                })?
            }
        };
        Ok((path.display().to_string(), text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_files_are_found_by_name_and_placed_in_their_directory() {
        let files = Files::Embedded { dir: Path::new("scenarios/builtin"), files: &[("a.json", "{}")] };
        let (path, text) = files.read("a.json").unwrap();
        assert_eq!((path.as_str(), text.as_str()), ("scenarios/builtin/a.json", "{}"));
        assert_eq!(files.read("b.json").unwrap_err().kind(), std::io::ErrorKind::NotFound);
        let beside = files.beside(Path::new("scenarios/builtin/sub"));
        assert_eq!(beside.read("a.json").unwrap().0, "scenarios/builtin/sub/a.json");
    }

    /// A directory of its own per test, with `inner/` (the scenario's) beside `secret`.
    fn tree(test: &str) -> tempfile::TempDir {
        let d = tempfile::Builder::new().prefix(&format!("sb-files-{test}-")).tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("inner/sub")).unwrap();
        std::fs::write(d.path().join("secret"), "s").unwrap();
        std::fs::write(d.path().join("inner/sub/ok.json"), "{}").unwrap();
        d
    }

    /// Issue 45 #6: absolute paths, `..` and links that lead out of the root are refused; what
    /// is under it is read, through `..` and links that stay inside.
    #[test]
    fn only_files_under_the_root_are_read() {
        let t = tree("root");
        let d = t.path();
        let inner = d.join("inner");
        std::os::unix::fs::symlink(d.join("secret"), inner.join("out")).unwrap();
        std::os::unix::fs::symlink(inner.join("sub/ok.json"), inner.join("in")).unwrap();
        let root = Root::new(&inner, &Limits::default()).unwrap();
        let files = Files::Dir { dir: &inner, root: &root };
        for name in ["sub/ok.json", "sub/../sub/ok.json", "in"] {
            assert_eq!(files.read(name).unwrap().1, "{}", "{name}");
        }
        let secret = d.join("secret");
        for name in ["../secret", secret.to_str().unwrap(), "out", "/etc/passwd"] {
            let e = files.read(name).unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{name}: {e}");
            assert!(e.to_string().contains("--file-root"), "{e}");
        }
        // A root the user names widens it.
        let wide =
            Root::new(&inner, &Limits { file_root: Some(d.to_path_buf()), ..Limits::default() }).unwrap();
        assert_eq!(Files::Dir { dir: &inner, root: &wide }.read("../secret").unwrap().1, "s");
    }

    /// Issue 45 #7: a file past the cap, or not a regular file (a link to `/dev/zero`), is
    /// refused without reading it whole; the error names the cap and how to raise it.
    #[test]
    fn large_files_and_devices_are_refused() {
        let t = tree("size");
        let d = t.path();
        std::fs::write(d.join("big"), vec![b'x'; 2048]).unwrap();
        let e = read_capped(&d.join("big"), 1024).unwrap_err();
        assert!(
            e.to_string().contains("larger than 1 KiB") && e.to_string().contains("--max-file-size"),
            "{e}"
        );
        assert_eq!(read_capped(&d.join("big"), 2048).unwrap().len(), 2048);
        std::os::unix::fs::symlink("/dev/zero", d.join("zero")).unwrap();
        let root = Root::new(Path::new("/"), &Limits::default()).unwrap();
        let e = root.read(&d.join("zero")).unwrap_err();
        assert_eq!(e.to_string(), "it is not a regular file");
        // A file that says it is empty but is not (`/proc`) is cut at the cap all the same.
        assert!(
            read_capped(Path::new("/proc/self/status"), 16).unwrap_err().to_string().contains("16 bytes")
        );
    }
}
