//! The files a request reads and writes as Hurl does: `file,name;` bodies and `output`.
//! Hurl reads a `file,` body when it sends the request, so a file that an earlier
//! request writes (`output`) or a script writes before the run is found: `verify` reads
//! it again then, its name rendered with the variables of the moment (`file,{{name}};`).
//! A load reads each once, when the file loads ([`read_for_load`]): a measured request
//! does not wait on the disk, and a file that cannot be read then is refused at its
//! `file:line:col` before anything is sent. `verify` writes an answer's body where its
//! `output` says, under the scenario's root; a load writes nothing.

use std::path::Path;

use crate::model::{Entry, HurlFile, OptionValue};
use crate::parse::body_of;
use crate::template::{RenderError, Unwritable, Vars};

impl Entry {
    /// Reads its `file,` body again into `body`, as Hurl reads it when it sends the
    /// request: the name rendered with `vars`, the file read beside `hurl` (the file it is
    /// written in), under the scenario's root.
    /// Nothing for another body, or a built-in scenario's (embedded) file.
    pub fn read_body_file(
        &self,
        hurl: &HurlFile,
        vars: &mut Vars,
        body: &mut Vec<u8>,
    ) -> Result<(), RenderError> {
        let Some(f) = &self.body_file else { return Ok(()) };
        let Some((dir, root)) = &hurl.disk else { return Ok(()) };
        let name = f.name.render_string(vars)?;
        *body = read(dir, root, &name)
            .map_err(|why| RenderError::unwritable(&name, f.pos, Unwritable::File(why.into())))?;
        Ok(())
    }
}

impl Entry {
    /// Writes `body`, its answer's, where its `output` option says, as Hurl does: beside
    /// `hurl`, under the scenario's root (`-`, Hurl's standard output, is left alone: the
    /// report is written there). `Err` says why it could not, at the option's place.
    pub fn write_output(&self, hurl: &HurlFile, vars: &mut Vars, body: &[u8]) -> Result<(), String> {
        let Some(o) = self.options.iter().rev().find(|o| o.name == "output") else { return Ok(()) };
        let (OptionValue::Text(t), Some((dir, root))) = (&o.value, &hurl.disk) else { return Ok(()) };
        let name = t.render_string(vars).map_err(|e| e.to_string())?;
        if name == "-" {
            return Ok(());
        }
        let path = dir.join(&name);
        root.write(&path, body)
            .map_err(|e| format!("{}: the `output` option: cannot write {}: {e}", o.pos, path.display()))
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
        let Some((dir, root)) = &hurl.disk else { continue };
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

    fn sent(f: &HurlFile, i: usize, vars: &mut Vars) -> Result<Vec<u8>, RenderError> {
        let e = &f.entries[i];
        let mut req = crate::Request::default();
        e.render(vars, &mut req).unwrap();
        e.read_body_file(f, vars, &mut req.body)?;
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
        assert_eq!(sent(&f, 0, &mut vars).unwrap(), b"changed");
        let err = sent(&f, 1, &mut vars).unwrap_err();
        assert_eq!(err.pos, crate::Pos { line: 5, col: 6 });
        assert!(err.to_string().contains("cannot read") && err.to_string().contains("later.bin"), "{err}");
        std::fs::write(d.join("later.bin"), [0xfe, 0x01]).unwrap();
        assert_eq!(sent(&f, 1, &mut vars).unwrap(), [0xfe, 0x01]);
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
        assert_eq!(sent(&f, 0, &mut vars).unwrap(), [0xff, 0, 1]);
        assert_eq!(sent(&f, 1, &mut vars).unwrap(), b"spaced");
        vars.set("name", "a.bin", Kind::String);
        assert_eq!(sent(&f, 0, &mut vars).unwrap(), b"first");
        read_for_load(&mut f, &mut vars).unwrap();
        let body = f.entries[0].body.as_ref().unwrap();
        assert_eq!(body.template.as_literal(), Some("first"));
        // A name no value is known for before the load is refused, naming the variable.
        let mut f = parse(d, "POST http://h/a\nfile,{{later}};\n").unwrap();
        let e = read_for_load(&mut f, &mut Vars::new(1)).unwrap_err();
        assert!(e.starts_with("t.hurl:2:6:") && e.contains("`later`") && e.contains("--variable"), "{e}");
        // A rendered name is held to the root as a written one is.
        vars.set("name", "../outside", Kind::String);
        let err = sent(&parse(d, text).unwrap(), 0, &mut vars).unwrap_err();
        assert!(err.to_string().contains("cannot read"), "{err}");
    }

    /// An answer of status 200 and `body`.
    struct Body(Vec<u8>);

    impl crate::Answer for Body {
        fn status(&self) -> u16 {
            200
        }
        fn header(&self, _: &str, _: usize) -> Option<&str> {
            None
        }
        fn body(&self) -> &[u8] {
            &self.0
        }
    }

    /// `output` writes the answer's body beside the file (its name rendered), where a later
    /// request's `file,` body reads it, as in Hurl; a name that leads out of the root fails
    /// its request at the option's place and ends the run; `-` (Hurl's standard output) is
    /// left alone.
    #[test]
    fn output_is_written_under_the_root_and_read_back_by_a_later_file_body() {
        let t = dir("output");
        let d = t.path().join("inner");
        std::fs::create_dir_all(d.join("out")).unwrap();
        let text = "GET http://h/a\n[Options]\noutput: out/{{name}}.bin\nHTTP 200\n\n\
                    POST http://h/b\n[Options]\noutput: -\nfile,out/first.bin;\nHTTP 200\n\n\
                    GET http://h/c\n[Options]\noutput: ../escape.bin\nHTTP 200\n\nGET http://h/never\n";
        let f = parse(&d, text).unwrap();
        let mut vars = Vars::new(1);
        vars.set("name", "first", Kind::String);
        let mut sent = Vec::new();
        let mut send = |e: &Entry, req: &crate::Request| -> Result<Body, String> {
            sent.push((e.method.to_string(), req.body.clone()));
            Ok(Body(format!("answer to {}", String::from_utf8_lossy(&req.url)).into_bytes()))
        };
        let steps = crate::run::run_flow(&f, &[], &mut vars, &mut send);
        assert_eq!(std::fs::read(d.join("out/first.bin")).unwrap(), b"answer to http://h/a");
        assert_eq!(sent[1], ("POST".to_owned(), b"answer to http://h/a".to_vec()));
        assert_eq!(sent.len(), 3, "the run ends at the output that cannot be written");
        assert!(steps[..2].iter().all(|s| s.error.is_none() && s.failures.is_empty()), "{steps:?}");
        let why = steps[2].error.as_deref().unwrap();
        assert!(
            why.starts_with("t.hurl:14:1: the `output` option: cannot write") && why.contains("outside"),
            "{why}"
        );
        assert!(!t.path().join("escape.bin").exists() && !d.join("-").exists());
    }
}
