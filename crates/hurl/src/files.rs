//! Where a scenario's other files are read from: a directory on disk, or
//! files embedded in the binary (the built-in scenarios, compiled in with
//! `include_str!` so that an installed `stackbench` needs no repository).
//! Flows' `.hurl` files, rows and `file,name;` bodies are all read through it.

use std::path::Path;

/// The files a scenario names, by their names relative to it.
#[derive(Debug, Clone, Copy)]
pub enum Files<'a> {
    /// On disk, in this directory.
    Dir(&'a Path),
    /// Embedded: each file's name and text; `dir` is where they are said to be, in messages.
    Embedded { dir: &'a Path, files: &'a [(&'a str, &'a str)] },
}

impl<'a> Files<'a> {
    /// The directory names are relative to.
    pub fn dir(&self) -> &'a Path {
        match self {
            Files::Dir(d) | Files::Embedded { dir: d, .. } => d,
        }
    }

    /// The same files, seen from directory `dir` (a `.hurl` file's `file,` bodies are read
    /// beside it). Embedded files keep their names: they have no directories.
    pub fn beside<'b>(&self, dir: &'b Path) -> Files<'b>
    where
        'a: 'b,
    {
        match *self {
            Files::Dir(_) => Files::Dir(dir),
            Files::Embedded { files, .. } => Files::Embedded { dir, files },
        }
    }

    /// The bytes of `name`.
    pub fn read_bytes(&self, name: &str) -> std::io::Result<Vec<u8>> {
        match self {
            Files::Dir(d) => std::fs::read(d.join(name)),
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
            Files::Dir(_) => std::fs::read_to_string(&path)?,
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
}
