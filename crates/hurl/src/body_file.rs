//! `file,name;` request bodies read when Hurl reads them. Hurl reads such a file when it
//! sends the request, so a file that an earlier request writes (`output`) or a script
//! writes before the run is found: `verify` reads it again then, its name rendered with
//! the variables of the moment (`file,{{name}};`). A load reads each once, when the file
//! loads ([`read_for_load`]): a measured request does not wait on the disk, and a file
//! that cannot be read then is refused at its `file:line:col` before anything is sent.

use std::path::Path;

use crate::model::{Entry, HurlFile};
use crate::parse::body_of;
use crate::template::{RenderError, Unwritable, Vars};

impl Entry {
    /// Reads its `file,` body again into `body`, as Hurl reads it when it sends the
    /// request: the name rendered with `vars`, the file read under the scenario's root.
    /// Nothing for another body, or a built-in scenario's (embedded) file.
    pub fn read_body_file(&self, vars: &mut Vars, body: &mut Vec<u8>) -> Result<(), RenderError> {
        let Some(f) = &self.body_file else { return Ok(()) };
        let Some((dir, root)) = &f.disk else { return Ok(()) };
        let name = f.name.render_string(vars)?;
        *body = read(dir, root, &name)
            .map_err(|why| RenderError::unwritable(&name, f.pos, Unwritable::File(why.into())))?;
        Ok(())
    }
}

/// What `name` (beside `dir`, under `root`) holds, or why it cannot be read.
fn read(dir: &Path, root: &crate::files::Root, name: &str) -> Result<Vec<u8>, String> {
    let path = dir.join(name);
    root.read_bytes(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Under load: every `file,` body of `hurl` read once, now. A name written out was read when
/// the file loaded (its error, if any, is given now); a name with templates is rendered with
/// `vars` (what is known before the load: the `--variable`s), so a variable that a capture or
/// a generator sets is refused. The error is `file:line:col: why`.
pub fn read_for_load(hurl: &mut HurlFile, vars: &mut Vars) -> Result<(), String> {
    for e in &mut hurl.entries {
        let Some(f) = &mut e.body_file else { continue };
        let at = |why: &str| format!("{}:{}: {why}", hurl.file, f.pos);
        if let Some(why) = &f.unread {
            return Err(at(&format!("{why} (a load reads a `file,` body once, when the file loads)")));
        }
        let Some((dir, root)) = &f.disk else { continue };
        if f.name.as_literal().is_some() {
            continue;
        }
        let name = f.name.render_string(vars).map_err(|err| {
            at(&format!(
                "a load reads a `file,` body once, when the file loads, and `{}` has no value then: give \
                 it with --variable (a capture's or a generator's value is known only once sent)",
                err.name
            ))
        })?;
        let bytes = read(dir, root, &name).map_err(|why| at(&why))?;
        e.body = Some(body_of(bytes));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::{Files, Limits, Root};
    use crate::template::Kind;

    /// A scratch directory with `a.bin` (text) and `b.bin` (not UTF-8).
    fn dir(test: &str) -> tempfile::TempDir {
        let d = tempfile::Builder::new().prefix(&format!("sb-body-file-{test}-")).tempdir().unwrap();
        std::fs::write(d.path().join("a.bin"), "first").unwrap();
        std::fs::write(d.path().join("b.bin"), [0xff, 0, 1]).unwrap();
        d
    }

    fn parse(d: &Path, text: &str) -> Result<HurlFile, crate::ParseError> {
        let root = Root::new(d, &Limits::default()).unwrap();
        crate::parse::parse_in("t.hurl", text, Some(Files::Dir { dir: d, root: &root }))
    }

    fn sent(e: &Entry, vars: &mut Vars) -> Result<Vec<u8>, RenderError> {
        let mut req = crate::Request::default();
        e.render(vars, &mut req).unwrap();
        e.read_body_file(vars, &mut req.body)?;
        Ok(req.body)
    }

    /// Hurl reads a `file,` body when it sends the request: a file written after the Hurl
    /// file loaded, or changed since, is sent as it is then; one still missing fails the
    /// request at the name's place.
    #[test]
    fn verify_sends_the_file_as_it_is_when_the_request_goes() {
        let t = dir("send");
        let d = t.path();
        let text = "POST http://h/a\nfile,a.bin;\n\nPOST http://h/b\nfile,later.bin;\n";
        let f = parse(d, text).unwrap();
        let mut vars = Vars::new(1);
        std::fs::write(d.join("a.bin"), "changed").unwrap();
        assert_eq!(sent(&f.entries[0], &mut vars).unwrap(), b"changed");
        let err = sent(&f.entries[1], &mut vars).unwrap_err();
        assert_eq!(err.pos, crate::Pos { line: 5, col: 6 });
        assert!(err.to_string().contains("cannot read") && err.to_string().contains("later.bin"), "{err}");
        std::fs::write(d.join("later.bin"), [0xfe, 0x01]).unwrap();
        assert_eq!(sent(&f.entries[1], &mut vars).unwrap(), [0xfe, 0x01]);
        // Under load the missing file is refused when the file loads, at the same place.
        let mut f = parse(d, "POST http://h/b\nfile,missing.bin;\n").unwrap();
        let e = read_for_load(&mut f, &mut vars).unwrap_err();
        assert!(e.starts_with("t.hurl:2:6: cannot read") && e.contains("once, when the file loads"), "{e}");
    }

    /// A name with a template (and escapes, as Hurl writes them) is rendered when verify sends
    /// the request; under load, with the variables known before it, or refused.
    #[test]
    fn a_templated_name_is_rendered_when_sent_and_read_once_under_load() {
        let t = dir("template");
        let d = t.path();
        std::fs::write(d.join("with space;"), "spaced").unwrap();
        let text = "POST http://h/a\nfile,{{name}};\n\nPOST http://h/c\nfile,with\\ space\\;;\n";
        let mut f = parse(d, text).unwrap();
        let mut vars = Vars::new(1);
        vars.set("name", "b.bin", Kind::String);
        assert_eq!(sent(&f.entries[0], &mut vars).unwrap(), [0xff, 0, 1]);
        assert_eq!(sent(&f.entries[1], &mut vars).unwrap(), b"spaced");
        vars.set("name", "a.bin", Kind::String);
        assert_eq!(sent(&f.entries[0], &mut vars).unwrap(), b"first");
        read_for_load(&mut f, &mut vars).unwrap();
        let body = f.entries[0].body.as_ref().unwrap();
        assert_eq!(body.template.as_literal(), Some("first"));
        // A name no value is known for before the load is refused, naming the variable.
        let mut f = parse(d, "POST http://h/a\nfile,{{later}};\n").unwrap();
        let e = read_for_load(&mut f, &mut Vars::new(1)).unwrap_err();
        assert!(e.starts_with("t.hurl:2:6:") && e.contains("`later`") && e.contains("--variable"), "{e}");
        // A rendered name is held to the root as a written one is.
        vars.set("name", "../outside", Kind::String);
        let err = sent(&parse(d, text).unwrap().entries[0], &mut vars).unwrap_err();
        assert!(err.to_string().contains("cannot read"), "{err}");
    }
}
