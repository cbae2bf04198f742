//! A contestant's load profile in a plan: `[load.<scenario>]`, a variant's
//! `load.<scenario>` and the contestant's own `load`, merged key by key with
//! the place of every value kept, then checked as `stackbench load` checks
//! its flags. Each refused value is reported at its own place (`file:line:col`
//! of the value, whichever table it came from), and an unknown key is told
//! the keys a plan accepts, not those it refuses.
//!
//! A profile is a table of `stackbench load` options by their long flag names
//! (kebab-case), so it deserializes straight into
//! [`stackbench_load::LoadOptions`] ([`options`]), with the scenario added;
//! [`estimated_runs`] tells from it how long a contestant's runs take.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::Deserialize as _;
use stackbench_load::LoadOptions;
use stackbench_record::ByteSize;
use toml::Spanned;

use stackbench_hurl::Builtin;

use super::ScenarioRef;

/// A load table as written: each key and value with its place in the plan text.
pub type Table = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

/// Keys of `stackbench load` that mean nothing in a plan's profile, with what to do instead.
pub fn refused(key: &str) -> Option<&'static str> {
    Some(match key {
        "cpus" => {
            "`cpus` in a load profile: give the generator's cores with `load_cpus` in [defaults] or the contestant instead"
        }
        "threshold" => "`threshold` has no meaning in a plan (the report compares contestants)",
        "proto" | "call" | "data" => {
            "`proto`, `call` and `data` in a load profile: a plan's contestants serve a scenario, whose generator builds the requests (use `stackbench load --proto` on its own)"
        }
        _ => return None,
    })
}

/// The merged profile: the table the load engine reads, and where each value is written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    pub table: toml::Table,
    /// Where each value is written.
    pub spans: BTreeMap<String, Range<usize>>,
    /// Where each key is written.
    pub key_spans: BTreeMap<String, Range<usize>>,
}

impl Profile {
    /// The layers merged in order, a later value replacing an earlier one.
    pub fn merge<'a>(layers: impl IntoIterator<Item = &'a Table>) -> Profile {
        let mut p = Profile::default();
        for layer in layers {
            for (k, v) in layer {
                let key = k.get_ref().clone();
                p.table.insert(key.clone(), v.get_ref().clone());
                p.spans.insert(key.clone(), v.span());
                p.key_spans.insert(key, k.span());
            }
        }
        p
    }

    /// Where the first key that `message` names (as `` `key` `` or `--key`) is written.
    pub fn span_named(&self, message: &str) -> Option<Range<usize>> {
        let ticked = message.split('`').skip(1).step_by(2);
        let flags = message
            .split("--")
            .skip(1)
            .map(|s| s.split(|c: char| !c.is_ascii_alphanumeric() && c != '-').next().unwrap_or(""));
        ticked.chain(flags).find_map(|k| self.spans.get(k).cloned())
    }

    /// Checks the profile as `stackbench load` would check these flags, for a
    /// contestant whose load goes to `path` over `scheme` (`http`, or `https`, where
    /// the TLS flags apply).
    pub fn check(
        &self,
        scenario: &ScenarioRef,
        scheme: &str,
        path: &str,
    ) -> Result<(), (Option<Range<usize>>, String)> {
        for (key, span) in &self.spans {
            let at = Some(span.clone());
            if let Some(why) = refused(key) {
                return Err((at, why.to_owned()));
            }
            if key == "scenario" {
                if self.table[key].as_str() != Some(scenario.name()) {
                    return Err((
                        at,
                        format!("`scenario` differs from the contestant's scenario {scenario}; remove it"),
                    ));
                }
                continue;
            }
            let one = toml::Table::from_iter([(key.clone(), self.table[key].clone())]);
            if let Err(e) = LoadOptions::deserialize(toml::Value::Table(one)) {
                let unknown = e.message().starts_with("unknown field");
                let at = if unknown { self.key_spans.get(key).cloned() } else { at };
                return Err((at, key_error(key, e.message())));
            }
        }
        let options = options(scenario, &self.table).map_err(|e| (None, e))?;
        options.to_spec(&format!("{scheme}://127.0.0.1:9{path}")).map(drop).map_err(|e| {
            let message = e.to_string();
            (self.span_named(&message), message)
        })
    }
}

/// `key = …` refused by the options' parser, said in a plan's terms.
fn key_error(key: &str, message: &str) -> String {
    let message = message.trim();
    if !message.starts_with("unknown field") {
        return format!("`{key}`: {message}");
    }
    let accepted: Vec<&str> = message
        .split("expected one of")
        .nth(1)
        .unwrap_or("")
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|k| refused(k).is_none() && *k != "scenario")
        .collect();
    format!("unknown key `{key}` in a load profile; the keys are {}", accepted.join(", "))
}

/// The engine's options for a profile: the table's keys, plus the scenario
/// (`scenario`, or a scenario file's path and variables as `load --scenario-file
/// F --variable N=V` gives them).
pub fn options(scenario: &ScenarioRef, profile: &toml::Table) -> Result<LoadOptions, String> {
    let mut table = profile.clone();
    if let Some(s) = table.get("scenario").and_then(toml::Value::as_str)
        && s != scenario.name()
    {
        return Err(format!(
            "its `scenario = {s:?}` differs from the contestant's scenario {scenario}; remove it"
        ));
    }
    match scenario {
        ScenarioRef::Builtin(s) => {
            table.insert("scenario".into(), toml::Value::String(s.name().into()));
        }
        ScenarioRef::File(_) => {
            table.remove("scenario");
        }
    }
    if let Some(why) = table.keys().find_map(|k| refused(k)) {
        return Err(why.to_owned());
    }
    let mut options =
        LoadOptions::deserialize(toml::Value::Table(table)).map_err(|e| e.message().trim().to_owned())?;
    if let ScenarioRef::File(f) = scenario {
        options.scenario_file = Some(f.path.clone());
        options.variable = f.variable_args();
        // The file is loaded again by the engine, as it was when the plan was read.
        let limits = &f.scenario.limits;
        options.file_root.clone_from(&limits.file_root);
        options.max_file_size = Some(ByteSize(limits.max_file_size));
        options.max_capture = Some(ByteSize(limits.max_capture as u64));
    }
    Ok(options)
}

/// About how long one contestant's measured runs take with this profile: a
/// plain run is its warm-up and measured time; a capacity search about nine
/// steps the first time and four after (docs/capacity.md), each a settle and
/// a step; plus a second to start and stop the contestant each time.
pub fn estimated_runs(
    scenario: &ScenarioRef,
    profile: &toml::Table,
    repetitions: u32,
) -> std::time::Duration {
    use std::time::Duration;
    // The timing does not depend on what is sent: the spec of the same profile's fixed request.
    let timing = |o: LoadOptions| LoadOptions {
        scenario: None,
        scenario_file: None,
        variable: Vec::new(),
        check_every: None,
        grpc: false,
        threshold: Vec::new(),
        slo: o.slo.iter().filter(|t| t.request.is_none()).cloned().collect(),
        ..o
    };
    let Ok(spec) = options(scenario, profile)
        .and_then(|o| timing(o).to_spec("http://127.0.0.1:9/").map_err(|e| e.to_string()))
    else {
        return Duration::ZERO;
    };
    let overhead = Duration::from_secs(1);
    let one = |steps: u32| match &spec.search {
        Some(s) => (spec.warmup + s.step) * steps + overhead,
        None => spec.warmup + spec.duration().unwrap_or_default() + overhead,
    };
    if repetitions == 0 {
        return Duration::ZERO;
    }
    one(9) + one(4) * (repetitions - 1)
}

/// Every `[load.<name>]` names a built-in scenario or a scenario file of the plan's.
pub(super) fn check_profiles(
    load: &BTreeMap<String, Spanned<Table>>,
    contestants: &[super::Contestant],
) -> Result<(), super::Located> {
    for (name, table) in load {
        if name.parse::<Builtin>().is_ok() || contestants.iter().any(|c| c.scenario.name() == name) {
            continue;
        }
        let mut files: Vec<&str> =
            contestants.iter().filter_map(|c| c.scenario.file()).map(|f| f.scenario.name.as_str()).collect();
        files.sort_unstable();
        files.dedup();
        let files = if files.is_empty() {
            "; a scenario file's is its `name`, or its file name without .toml or .hurl".to_owned()
        } else {
            format!(", and this plan's scenario files: {}", files.join(", "))
        };
        return Err((
            Some(table.span()),
            format!(
                "[load.{name}]: unknown scenario; the scenarios are event-log, dummy, db-read, bubble-sort{files}"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(text: &str) -> Profile {
        let t: BTreeMap<String, Table> = toml::from_str(text).unwrap();
        Profile::merge(t.values())
    }

    fn refusal(text: &str) -> (Option<Range<usize>>, String) {
        profile(text).check(&Builtin::DUMMY.into(), "http", "/").unwrap_err()
    }

    #[test]
    fn later_layers_win_and_keep_their_place() {
        let text = "[a]\nconnections = 5\nduration = \"1s\"\n[b]\nconnections = 7\n";
        let p = profile(text);
        assert_eq!(p.table["connections"].as_integer(), Some(7));
        assert_eq!(&text[p.spans["connections"].clone()], "7");
        assert_eq!(&text[p.spans["duration"].clone()], "\"1s\"");
        assert!(p.check(&Builtin::DUMMY.into(), "http", "/").is_ok());
    }

    #[test]
    fn every_refusal_points_at_its_value() {
        for (text, value, says) in [
            (
                "[a]\nduration = \"5 parsecs\"\n",
                "\"5 parsecs\"",
                "`duration`: \"5 parsecs\" is not a duration",
            ),
            ("[a]\nduration = 5\n", "5", "`duration`:"),
            ("[a]\ntimeout = \"0s\"\n", "\"0s\"", "--timeout: must be longer than 0s"),
            ("[a]\nrate = 0\n", "0", "--rate"),
            ("[a]\ncpus = \"1\"\n", "\"1\"", "load_cpus"),
            ("[a]\nconnections = 4294967295\n", "4294967295", "at most 100000"),
            ("[a]\nrate = 10\nthink = \"1s\"\n", "\"1s\"", "--think and --rate"),
        ] {
            let (span, message) = refusal(text);
            let span = span.unwrap_or_else(|| panic!("{text:?}: no place for {message:?}"));
            assert_eq!(&text[span], value, "{text:?}: {message}");
            assert!(message.contains(says), "{text:?}: {message}");
        }
    }

    /// The list offered for a misspelt key holds only keys a plan accepts,
    /// and the place is the key's.
    #[test]
    fn unknown_keys_are_offered_the_accepted_ones() {
        let text = "[a]\nconections = 3\n";
        let (span, message) = refusal(text);
        assert_eq!(&text[span.unwrap()], "conections");
        assert!(
            message.starts_with("unknown key `conections` in a load profile; the keys are "),
            "{message}"
        );
        assert!(message.contains("connections") && message.contains("duration"), "{message}");
        for refused in ["cpus", "threshold", "proto", "call", "data", "scenario"] {
            assert!(!message.split(", ").any(|k| k.trim() == refused), "{refused} offered: {message}");
        }
    }
}
