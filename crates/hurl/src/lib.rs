//! Scenarios as files: requests written in Hurl's format (hurl.dev) and the
//! TOML scenario file that says what Hurl cannot (flows, weights, drawn
//! variables, verification cases).
//!
//! Loading refuses anything the engine would not run as written, with
//! `file:line:col`; running an entry renders its request into reusable
//! buffers and checks the answer into typed failures. See
//! docs/scenarios.md, "Write your own scenario".
//!
//! The modules are private: the root exports what the load engine, the orchestrator, the CLI,
//! this crate's integration tests and the fuzz targets name, under names that say what they are
//! outside their module (`VerifyLevel`, `StoreReset`, `CompiledChecks`, `FileLimits`).

#![allow(
    clippy::many_single_char_names,
    reason = "the parser and the evaluator name a cursor, a byte, a text and a value by a letter each"
)]

mod body_file;
mod builtin;
mod bytes;
mod cookies;
mod defined;
mod error;
mod eval;
mod expr;
mod files;
mod framing;
mod fuzzing;
mod jsonpath;
mod model;
mod origin;
mod parse;
mod run;
mod scenario;
mod shipped;
mod template;
mod value;
mod xpath;

pub use body_file::read_for_load as read_body_files;
pub use builtin::{Builtin, PathError as BuiltinPathError, UnknownBuiltin};
pub use cookies::{Jar as CookieJar, Sent as SentCookies, SentLine, now as unix_now};
pub use defined::Defined as DefinedVars;
pub use error::{ErrorKind, MESSAGE_MAX, ParseError, Pos, cut as cut_message, pos_of};
pub use eval::{
    Answer, Compiled as CompiledChecks, Failure, FailureKind, REACH_OPTIONS, Reach, Redirect, Request,
    has_dot_segment,
};
pub use expr::fuzz_expr;
pub use files::{Limits as FileLimits, Root as FileRoot};
pub use fuzzing::fuzz_eval;
pub use model::options::{Arg as OptionArg, Effect as OptionEffect};
pub use model::{Body, BodyKind, Entry, EntryOption, Header, HurlFile, OptionValue, Query};
pub use origin::{
    Aim, Origin, Routes, constants as constant_vars, files as request_files, parse_maps as parse_origin_maps,
    split as split_origin, static_url,
};
pub use parse::is_var_name;
pub use run::wire::{
    HopTarget, Wire, add_cookies, hop_target, is_redirect, redirect_to, too_many as too_many_redirects,
};
pub use run::{
    Aimed, CaseResult, SetupDone, Step as StepOutcome, Verification, run_flow, run_flow_in,
    setup as run_setup, unwritten as why_unwritten, verify as run_verification,
};
pub use scenario::{Level as VerifyLevel, Protocol, Reset as StoreReset, Scenario, VerifyCase};
pub use template::compiled::Compiled as CompiledTemplate;
pub use template::{Escape, Kind, Part as TemplatePart, Template, Unwritable, Vars, cli_value, unsafe_byte};
pub use xpath::{fuzz_panic_hook, fuzz_xpath};

use template::GENERATORS;

/// For fuzzing: parse arbitrary bytes as a Hurl file; must never panic.
pub fn fuzz_parse(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(file) = parse::parse("fuzz.hurl", text)
    {
        let _ = check_variables(&file, |_| true);
        for e in &file.entries {
            let _ = e.name();
        }
    }
}

/// For fuzzing: parse arbitrary bytes as a TOML scenario file (the files it names looked for
/// in a directory that does not exist), then draw and render three iterations of every flow,
/// case and reset; must never panic.
pub fn fuzz_scenario(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let dir = std::path::Path::new("/nonexistent/stackbench-fuzz");
    let Ok(s) = scenario::Scenario::parse("fuzz.toml", text, dir, "fuzz", &[]) else { return };
    let mut vars = Vars::new(1);
    vars.set("base_url", "http://127.0.0.1:8080", Kind::String);
    let mut req = Request::default();
    let reset = match &s.reset {
        Some(scenario::Reset::Hurl(h)) => Some(h),
        _ => None,
    };
    let files: Vec<&HurlFile> =
        s.flows.iter().map(|f| &f.hurl).chain(s.verify.iter().map(|v| &v.hurl)).chain(reset).collect();
    for n in 0..3 {
        s.draw(n, &mut vars);
        for e in files.iter().flat_map(|h| &h.entries) {
            let _ = e.render(&mut vars, &mut req);
        }
    }
}

/// Checks that every `{{name}}` of `file` has a value when it is used: a
/// generator, a variable `defined` outside the file (`base_url`, the TOML's
/// variables, `--variable`), a `variable` option of this entry or one before,
/// or a capture of an earlier entry (an entry's asserts may also use its own
/// captures).
pub(crate) fn check_variables(file: &HurlFile, defined: impl Fn(&str) -> bool) -> Result<(), ParseError> {
    let mut taken: Vec<&str> = Vec::new();
    for (i, entry) in file.entries.iter().enumerate() {
        let check = |t: &Template, taken: &[&str]| -> Result<(), ParseError> {
            for (name, pos) in t.vars() {
                if GENERATORS.contains(&name) || defined(name) || taken.contains(&name) {
                    continue;
                }
                let later = file.entries[i..]
                    .iter()
                    .filter_map(|e| e.response.as_ref())
                    .any(|r| r.captures.iter().any(|c| &*c.name == name));
                let kind = if later {
                    ErrorKind::CaptureBeforeTaken(name.into())
                } else {
                    ErrorKind::UnknownVariable(name.into())
                };
                return Err(ParseError { file: file.file.clone(), pos, kind });
            }
            Ok(())
        };
        for o in &entry.options {
            if let model::OptionValue::Variable { name, text, .. } = &o.value {
                check(text, &taken)?;
                taken.push(name);
            }
        }
        for t in entry.request_templates() {
            check(t, &taken)?;
        }
        let Some(r) = &entry.response else { continue };
        if let Some(c) = r.captures.iter().find(|c| &*c.name == "base_url") {
            return Err(ParseError {
                file: file.file.clone(),
                pos: c.pos,
                kind: ErrorKind::Syntax(
                    "a capture cannot set `base_url`: a request's host comes from the file or the user \
                     (the target, --variable), never from an answer"
                        .into(),
                ),
            });
        }
        for c in &r.captures {
            for t in c.templates() {
                check(t, &taken)?;
            }
            taken.push(&c.name);
        }
        for t in r.asserts.iter().flat_map(model::Assert::templates) {
            check(t, &taken)?;
        }
    }
    Ok(())
}

/// Refuses a jsonpath or an xpath query written without templates that does not compile.
/// `verify` runs it as Hurl does, failing the check it is in; the load engine refuses it
/// here, with its `file:line:col`, rather than count every request it checks as failed.
pub fn invalid_jsonpath(file: &HurlFile) -> Result<(), ParseError> {
    for r in file.entries.iter().filter_map(|e| e.response.as_ref()) {
        let captures = r.captures.iter().map(|c| (c.pos, &c.query));
        for (pos, q) in captures.chain(r.asserts.iter().map(|a| (a.pos, &a.query))) {
            let kind = match q {
                model::Query::JsonPathTemplate(t) => t
                    .as_literal()
                    .and_then(|src| jsonpath::JsonPath::parse(src).err().map(|(_, why)| (src, why)))
                    .map(|(src, why)| ErrorKind::JsonPath(format!("{src:?}: {why}"))),
                model::Query::XPath(t) => {
                    t.as_literal().and_then(|src| xpath::compile(src).err()).map(ErrorKind::XPath)
                }
                _ => None,
            };
            if let Some(kind) = kind {
                return Err(ParseError { file: file.file.clone(), pos, kind });
            }
        }
    }
    Ok(())
}

/// Parses a `.hurl` file's text and checks that every variable has a value where it is used
/// (`defined` says which are defined outside the file: `base_url`, `--variable`s).
pub fn load(file: &str, text: &str, defined: impl Fn(&str) -> bool) -> Result<HurlFile, ParseError> {
    load_in(file, text, None, defined)
}

/// As [`load`], with the files `file,name;` bodies are read from ([`parse::parse_in`]).
pub(crate) fn load_in(
    file: &str,
    text: &str,
    files: Option<files::Files<'_>>,
    defined: impl Fn(&str) -> bool,
) -> Result<HurlFile, ParseError> {
    let mut f = parse::parse_in(file, text, files)?;
    framing::settle(&mut f)?;
    check_variables(&f, defined)?;
    if f.entries.is_empty() {
        return Err(ParseError {
            file: file.into(),
            pos: Pos { line: 1, col: 1 },
            kind: ErrorKind::Syntax("the file has no request".into()),
        });
    }
    Ok(f)
}

/// For the fuzz targets' property tests: `seed` with each edit `(at, byte, how)` applied in
/// turn (`how` 0 replaces the byte at `at`, 1 removes it, 2 inserts `byte` there).
#[cfg(test)]
pub(crate) fn edited(seed: &str, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut data = seed.as_bytes().to_vec();
    for &(at, byte, how) in edits {
        let at = at.min(data.len().saturating_sub(1));
        match how {
            0 if !data.is_empty() => data[at] = byte,
            1 if !data.is_empty() => {
                data.remove(at);
            }
            _ => data.insert(at, byte),
        }
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> (Pos, ErrorKind) {
        let e = load("v.hurl", text, |n| n == "base_url").unwrap_err();
        (e.pos, e.kind)
    }

    #[test]
    fn todo_example_variables_resolve() {
        load("todo.hurl", parse::tests::TODO, |n| n == "base_url").unwrap();
        // Without `base_url` defined, its first use is refused.
        let e = load("todo.hurl", parse::tests::TODO, |_| false).unwrap_err();
        assert_eq!(e.to_string(), "todo.hurl:2:6: unknown variable `base_url`");
    }

    #[test]
    fn unknown_and_early_variables_are_refused() {
        assert_eq!(
            refused("GET {{base_url}}/a/{{nope}}\n"),
            (Pos { line: 1, col: 20 }, ErrorKind::UnknownVariable("nope".into()))
        );
        let text = "GET {{base_url}}/a/{{id}}\nHTTP 200\n[Captures]\nid: jsonpath \"$.id\"\n";
        assert_eq!(refused(text), (Pos { line: 1, col: 20 }, ErrorKind::CaptureBeforeTaken("id".into())));
        let text = "GET {{base_url}}/a\nHTTP 200\n[Asserts]\nbody contains \"{{later}}\"\nGET {{base_url}}/b\nHTTP 200\n[Captures]\nlater: status\n";
        assert_eq!(refused(text), (Pos { line: 4, col: 16 }, ErrorKind::CaptureBeforeTaken("later".into())));
        assert_eq!(refused("# nothing\n").1, ErrorKind::Syntax("the file has no request".into()));
    }

    /// A scenario that uses most keys, for [`fuzz_scenario`]'s property test to damage.
    const SCENARIO: &str = r#"name = "s"
protocol = "http1"
[variables]
n = { int = [1, 9] }
w = { string = 12 }
c = { choice = ["a", 2, true] }
q = { sequence = 5 }
k = "fixed"
[[flow]]
name = "f"
weight = 2
names = ["post"]
hurl = '''
POST {{base_url}}/x/{{n}}?c={{c}}
{"w": "{{w}}", "q": {{q}}, "id": "{{newUuid}}"}
HTTP 201
[Captures]
id: jsonpath "$.id"
[Asserts]
jsonpath "$.w" == "{{w}}"
'''
[[verify]]
name = "v"
clean_store = true
hurl = "GET {{base_url}}/x/{{k}}\nHTTP 200\n"
[reset]
hurl = "DELETE {{base_url}}/x\nHTTP 204\n"
"#;

    #[test]
    fn the_fuzzed_scenario_loads_as_written() {
        let dir = std::path::Path::new("/nonexistent/stackbench-fuzz");
        let s = scenario::Scenario::parse("s.toml", SCENARIO, dir, "s", &[]).unwrap();
        assert_eq!((s.flows.len(), s.verify.len(), s.reset.is_some()), (1, 1, true));
    }

    proptest::proptest! {
        /// What the fuzz target runs never panics on arbitrary bytes.
        #[test]
        fn fuzz_parse_never_panics(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
            fuzz_parse(&data);
        }

        /// Nor does the scenario target, on a working scenario with bytes changed, cut or
        /// inserted (arbitrary bytes would rarely get past the TOML).
        #[test]
        fn fuzz_scenario_never_panics(
            edits in proptest::collection::vec((0..SCENARIO.len(), proptest::prelude::any::<u8>(), 0..3u8), 1..6)
        ) {
            fuzz_scenario(&edited(SCENARIO, &edits));
        }
    }

    /// Issue 45 #5: a capture may not set the target.
    #[test]
    fn a_capture_may_not_set_base_url() {
        let (pos, kind) = refused("GET {{base_url}}/a\nHTTP 200\n[Captures]\nbase_url: jsonpath \"$.u\"\n");
        assert_eq!(pos, Pos { line: 4, col: 1 });
        assert!(kind.to_string().starts_with("a capture cannot set `base_url`"), "{kind}");
    }

    #[test]
    fn an_entry_may_assert_on_its_own_capture() {
        load("v.hurl", "GET {{base_url}}\nHTTP 200\n[Captures]\nn: jsonpath \"$.n\"\n[Asserts]\njsonpath \"$.m\" == {{n}}\n", |n| n == "base_url").unwrap();
    }
}
