//! The TOML scenario file: what Hurl cannot say. Flows (each a `.hurl` file
//! or inline Hurl) with weights, variables drawn per iteration, rows of a CSV
//! or JSON-lines file, the protocol, verification cases with their contract
//! level, and a reset step. Every key is documented in docs/scenarios.md,
//! "Write your own scenario".
//!
//! Loading is strict, as the plan parser is (`crates/run/src/plan.rs`): an
//! unknown key is refused, values are checked while they are read, and every
//! error carries the `file:line:col` of the offending value; an error in a
//! flow's Hurl carries the `.hurl` file's own position. Every `{{name}}` of
//! every flow must be defined before anything starts.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::error::{ErrorKind, Lines, ParseError, Pos};
use crate::expr::Expr;
use crate::files::{Files, Limits, Root};
use crate::model::HurlFile;
use crate::template::{Kind, Vars};

mod grpc;
mod rows;
mod scope;
mod steps;
mod variables;

pub use grpc::Grpc;
use grpc::{grpc, grpc_flow};
use scope::{Scope, cases};
use steps::{RawReset, RawSetup, reset, setup};
use variables::{data, scalar};

pub use rows::{Order, Rows};

/// A scenario, loaded and checked.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The scenario's name (`[load.<name>]` in a plan): `name`, or the file stem.
    pub name: String,
    pub description: Option<String>,
    pub protocol: Protocol,
    pub variables: Vec<Variable>,
    pub rows: Vec<Rows>,
    pub flows: Vec<Flow>,
    pub verify: Vec<VerifyCase>,
    pub reset: Option<Reset>,
    /// `[setup]`: requests run once before the measured load, whose captures every user reads.
    pub setup: Option<HurlFile>,
    /// `keep_cookies = true`: a user's cookie jar lasts across its iterations (else it is
    /// emptied when each iteration begins).
    pub keep_cookies: bool,
    pub grpc: Option<Grpc>,
    /// What it may read and keep, as the user set it; its `file_root` the root the user named
    /// (`--file-root`), made absolute, else `None`.
    pub limits: Limits,
    /// The directory its files were read under: the root the user named, else the scenario
    /// file's own directory (`None` for a built-in, whose files are compiled in).
    pub root: Option<PathBuf>,
}

/// How requests travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Http1,
    H2c,
    Grpc,
}

/// A variable drawn anew for each iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    pub name: String,
    pub draw: Draw,
}

/// How a variable gets its value.
#[derive(Debug, Clone, PartialEq)]
pub enum Draw {
    /// The same value every time.
    Const(String, Kind),
    /// Uniform in `lo..=hi`.
    Int { lo: i64, hi: i64 },
    /// `len` characters from `[a-z0-9]`.
    String { len: usize },
    /// One of the values, uniformly.
    Choice(Vec<(String, Kind)>),
    /// `start`, `start + 1`, ... by iteration.
    Sequence { start: i64 },
    /// An integer worked out after the other variables (and, in verification, from the
    /// captures of the cases before), or no value when it has none ([`crate::expr`]).
    Expr(Expr),
}

/// A sequence of requests run in order in one iteration.
#[derive(Debug, Clone)]
pub struct Flow {
    pub name: String,
    /// Relative share of iterations (weights need not sum to anything).
    pub weight: u32,
    pub hurl: HurlFile,
    /// The name of each request, by entry (the TOML's `names`, or method and URL template).
    pub request_names: Vec<String>,
}

/// The contract level of a verification case (docs/scenarios.md, "Verification").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The answer is right: a failure stops the contestant from being measured.
    Core,
    /// Bad input is refused: a failure is shown beside the results.
    Hardening,
}

/// A verification case: a flow whose every check must hold.
#[derive(Debug, Clone)]
pub struct VerifyCase {
    pub name: String,
    pub hurl: HurlFile,
    /// The name of each request: its flow's, or method and URL template.
    pub request_names: Vec<String>,
    pub level: Level,
    /// Run right after the reset step, on an empty store.
    pub clean_store: bool,
    /// On a store known to be empty, the value each named capture of the case must take,
    /// and keeps for the cases after whatever the answer said.
    pub clean_values: Vec<CleanValue>,
    /// Sent after a start until it passes: the contestant is ready at its first pass.
    pub probe: bool,
    /// What a server that fails the case does not enforce, in a few words ("duplicate
    /// keys"), for the warning beside its results; empty: the case's name says it.
    pub enforces: String,
}

/// `clean_values = { name = value }` of a `[[verify]]` case.
#[derive(Debug, Clone, PartialEq)]
pub struct CleanValue {
    pub name: String,
    pub text: String,
    pub kind: Kind,
    /// Where `clean_values` is written (for `file:line:col`).
    pub file: String,
    pub pos: Pos,
}

/// How to empty the store between verification and measurement.
#[derive(Debug, Clone)]
pub enum Reset {
    /// A program and its arguments, run from the scenario's directory.
    Command(Vec<String>),
    /// Requests sent to the contestant.
    Hurl(HurlFile),
    /// The orchestrator empties the store: the plan's contestant `reset` command, or its
    /// start command, runs before the contestant starts, and verification begins on that
    /// fresh start (`by = "contestant"`).
    Contestant,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Option<Spanned<String>>,
    description: Option<String>,
    protocol: Option<Spanned<String>>,
    #[serde(default)]
    variables: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    rows: Vec<Spanned<RawRows>>,
    #[serde(default, rename = "flow")]
    flows: Vec<Spanned<RawFlow>>,
    #[serde(default)]
    verify: Vec<Spanned<RawVerify>>,
    reset: Option<Spanned<RawReset>>,
    setup: Option<Spanned<RawSetup>>,
    #[serde(default)]
    keep_cookies: bool,
    grpc: Option<Spanned<RawGrpc>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRows {
    file: Spanned<String>,
    order: Option<Spanned<String>>,
}

/// Requests: a `.hurl` file or inline Hurl text.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    name: Option<Spanned<String>>,
    file: Option<Spanned<String>>,
    hurl: Option<Spanned<String>>,
    weight: Option<Spanned<i64>>,
    names: Option<Spanned<Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVerify {
    name: Spanned<String>,
    flow: Option<Spanned<String>>,
    file: Option<Spanned<String>>,
    hurl: Option<Spanned<String>>,
    level: Option<Spanned<String>>,
    #[serde(default)]
    clean_store: bool,
    clean_values: Option<Spanned<toml::Table>>,
    #[serde(default)]
    probe: bool,
    #[serde(default)]
    enforces: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGrpc {
    proto: Spanned<String>,
    method: Option<Spanned<String>>,
    message: Option<Spanned<String>>,
}

type Span = std::ops::Range<usize>;

/// Reads and checks what the TOML names, with positions in the TOML's text.
struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
    /// Where `text`'s lines start, for positions.
    lines: Lines,
    files: Files<'a>,
    /// `protocol = "grpc"`: a request's default name is its call, `package.Service/Method`.
    grpc: bool,
}

impl Ctx<'_> {
    /// The names of requests the file does not name: method and URL template without
    /// `{{base_url}}` (`POST /todos`), or in a gRPC file the call (`sort.v1.SortService/BubbleSort`).
    fn default_names(&self, hurl: &HurlFile) -> Vec<String> {
        let name = |e: &crate::model::Entry| {
            let name = e.name();
            match name.strip_prefix("POST /") {
                Some(call) if self.grpc => call.to_owned(),
                _ => name,
            }
        };
        hurl.entries.iter().map(name).collect()
    }

    /// The line and column of byte `offset` of the TOML.
    fn pos(&self, offset: usize) -> Pos {
        self.lines.pos(self.text, offset)
    }

    fn err(&self, span: Span, kind: ErrorKind) -> ParseError {
        ParseError { file: self.file.to_owned(), pos: self.pos(span.start), kind }
    }

    fn syntax(&self, span: Span, msg: impl Into<String>) -> ParseError {
        self.err(span, ErrorKind::Syntax(msg.into()))
    }

    /// A file relative to the scenario's directory, read as text.
    fn read(&self, rel: &Spanned<String>) -> Result<(String, String), ParseError> {
        self.files.read(rel.get_ref()).map_err(|e| {
            let path = self.files.dir().join(rel.get_ref());
            self.err(rel.span(), ErrorKind::Io(format!("cannot read {}: {e}", path.display())))
        })
    }

    /// Requests from `file` or `hurl` (exactly one), checked against `defined`.
    fn requests(
        &self,
        span: Span,
        file: Option<&Spanned<String>>,
        hurl: Option<&Spanned<String>>,
        defined: &dyn Fn(&str) -> bool,
    ) -> Result<HurlFile, ParseError> {
        match (file, hurl) {
            (Some(f), None) => {
                let (path, text) = self.read(f)?;
                let dir = self.files.dir().join(f.get_ref());
                let files = self.files.for_hurl(dir.parent().unwrap_or(self.files.dir()));
                crate::load_in(&path, &text, Some(files), defined)
            }
            (None, Some(h)) => {
                // Inline Hurl: positions are those of the TOML file, from the string's first line.
                let start = self.pos(h.span().start);
                let src = &self.text[h.span()];
                let offset = u32::from(src.starts_with("'''") || src.starts_with("\"\"\""));
                let shift = |p: Pos| {
                    let col = if p.line == 1 && offset == 0 { p.col + start.col } else { p.col };
                    Pos { line: p.line + start.line - 1 + offset, col }
                };
                let mut hurl =
                    crate::load_in(self.file, h.get_ref(), Some(self.files), defined).map_err(|mut e| {
                        e.pos = shift(e.pos);
                        e
                    })?;
                hurl.map_positions(shift);
                Ok(hurl)
            }
            _ => Err(self.syntax(
                span,
                "give the requests as `file` (a .hurl file) or `hurl` (inline), one of the two",
            )),
        }
    }
}

impl Scenario {
    /// Loads a scenario file: a `.toml` scenario, or a `.hurl` file alone (one
    /// flow). `defined` names the variables given outside the file
    /// (`--variable`); `base_url` is always defined. The files it names are read
    /// under its own directory, each at most [`crate::files::DEFAULT_MAX_FILE_SIZE`].
    pub fn load(path: &Path, defined: &[&str]) -> Result<Scenario, ParseError> {
        Scenario::load_with(path, defined, &Limits::default())
    }

    /// As [`Scenario::load`], under the user's `limits` (the files' root, their size, a
    /// capture's length; docs/scenarios.md, "Limits").
    pub fn load_with(path: &Path, defined: &[&str], limits: &Limits) -> Result<Scenario, ParseError> {
        let file = path.display().to_string();
        let io = |why: String| ParseError {
            file: file.clone(),
            pos: Pos { line: 1, col: 1 },
            kind: ErrorKind::Io(why),
        };
        let text = crate::files::read_capped(path, limits.max_file_size)
            .map_err(|e| io(format!("cannot read it: {e}")))?;
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let root = Root::new(dir, limits).map_err(|e| io(e.to_string()))?;
        let stem = path.file_stem().map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned());
        if path.extension().is_none_or(|e| e != "hurl") {
            return Scenario::parse_with(
                &file,
                &text,
                Files::Dir { dir, root: &root },
                &stem,
                defined,
                limits,
            );
        }
        if crate::shipped::named(&stem).is_some() {
            return Err(io(format!(
                "a scenario is named after its file, and `{stem}` is a built-in scenario's name: its results \
                 would be mixed with the built-in's; rename the file"
            )));
        }
        // As in Hurl, the file's own names (`file,` bodies, `output`) are relative to the root
        // the user named, else to the file's directory.
        let files = Some(Files::Dir { dir: if root.named() { root.dir() } else { dir }, root: &root });
        // A `.hurl` file alone may have no request, as in Hurl (`verify` then has nothing
        // to check; the load engine refuses a flow without one).
        let mut hurl = crate::parse::parse_in(&file, &text, files)?;
        crate::framing::settle(&mut hurl)?;
        crate::check_variables(&hurl, |n| n == "base_url" || defined.contains(&n))?;
        let request_names = hurl.entries.iter().map(crate::model::Entry::name).collect();
        let flow = Flow { name: stem.clone(), weight: 1, hurl, request_names };
        Ok(Scenario {
            name: stem,
            description: None,
            protocol: Protocol::Http1,
            variables: Vec::new(),
            rows: Vec::new(),
            flows: vec![flow],
            verify: Vec::new(),
            reset: None,
            setup: None,
            keep_cookies: false,
            grpc: None,
            limits: root.limits(limits),
            root: Some(root.dir().to_path_buf()),
        })
    }

    /// Parses the text of a TOML scenario; relative paths start at `dir`, the files' root.
    pub fn parse(
        file: &str,
        text: &str,
        dir: &Path,
        stem: &str,
        defined: &[&str],
    ) -> Result<Scenario, ParseError> {
        let limits = Limits::default();
        let root = Root::new(dir, &limits).map_err(|e| ParseError {
            file: file.to_owned(),
            pos: Pos { line: 1, col: 1 },
            kind: ErrorKind::Io(e.to_string()),
        })?;
        Scenario::parse_with(file, text, Files::Dir { dir, root: &root }, stem, defined, &limits)
    }

    /// Parses the text of a TOML scenario whose other files are `embedded` (name, text)
    /// rather than on disk; `file` is where it is said to be, in messages.
    pub fn parse_embedded(
        file: &str,
        text: &str,
        embedded: &[(&str, &str)],
        defined: &[&str],
    ) -> Result<Scenario, ParseError> {
        let path = Path::new(file);
        let stem = path.file_stem().map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned());
        let files = Files::Embedded { dir: path.parent().unwrap_or(Path::new(".")), files: embedded };
        Scenario::parse_with(file, text, files, &stem, defined, &Limits::default())
    }

    fn parse_with(
        file: &str,
        text: &str,
        files: Files<'_>,
        stem: &str,
        defined: &[&str],
        limits: &Limits,
    ) -> Result<Scenario, ParseError> {
        let mut cx = Ctx { file, text, lines: Lines::new(text), files, grpc: false };
        let raw: RawScenario =
            toml::from_str(text).map_err(|e| cx.syntax(e.span().unwrap_or(0..0), e.message().trim_end()))?;
        let name = scenario_name(&cx, &raw, stem)?;
        let protocol = match raw.protocol.as_ref().map(|p| (p.get_ref().as_str(), p.span())) {
            None | Some(("http1", _)) => Protocol::Http1,
            Some(("h2c", _)) => Protocol::H2c,
            Some(("grpc", _)) => Protocol::Grpc,
            Some((other, span)) => {
                return Err(cx.syntax(
                    span,
                    format!("unknown protocol {other:?}; the protocols are \"http1\", \"h2c\" and \"grpc\""),
                ));
            }
        };
        cx.grpc = protocol == Protocol::Grpc;
        let cx = cx;
        let (variables, rows) = data(&cx, &raw, defined)?;
        let setup = match &raw.setup {
            Some(r) => {
                let scope = Scope { defined, variables: &variables, rows: &rows };
                Some(setup(&cx, r, &|n: &str| scope.has(n, &[])).map_err(|e| scope.explain(e, &[]))?)
            }
            None => None,
        };
        // What the setup captures, every flow, case and reset may use.
        let mut given: Vec<&str> = defined.to_vec();
        given.extend(setup.iter().flat_map(HurlFile::captures).map(|c| &*c.name));
        let defined = given.as_slice();
        let scope = Scope { defined, variables: &variables, rows: &rows };
        let known = |n: &str| scope.has(n, &[]);
        let mut flows = flows(&cx, &raw.flows, &scope)?;
        let grpc = match (&raw.grpc, protocol) {
            (Some(g), Protocol::Grpc) => Some(grpc(&cx, g.get_ref(), &known)?),
            (Some(g), _) => return Err(cx.syntax(g.span(), "[grpc] needs `protocol = \"grpc\"`")),
            (None, Protocol::Grpc) => {
                return Err(cx.syntax(
                    raw.protocol.as_ref().map_or(0..0, Spanned::span),
                    "`protocol = \"grpc\"` needs a [grpc] table",
                ));
            }
            (None, _) => None,
        };
        if let Some(call) = grpc.as_ref().and_then(|g| g.call.as_ref()) {
            if let Some(i) = flows.iter().position(|f| f.name == call.method) {
                return Err(cx.syntax(
                    raw.flows[i].span(),
                    format!("a [[flow]] is named {:?}, the name of the [grpc] call's flow", call.method),
                ));
            }
            let span =
                raw.grpc.as_ref().and_then(|g| g.get_ref().method.as_ref()).map_or(0..0, Spanned::span);
            flows.push(grpc_flow(&cx, span, call, &known)?);
        }
        if flows.is_empty() {
            return Err(cx.syntax(
                0..0,
                if grpc.is_some() {
                    "a gRPC scenario needs calls: [[flow]]s of them, or the [grpc] table's `method` and `message`"
                } else {
                    "a scenario needs at least one [[flow]] of requests"
                },
            ));
        }
        let verify = cases(&cx, &raw.verify, &flows, &scope)?;
        let reset = raw.reset.as_ref().map(|r| reset(&cx, r, &known)).transpose()?;
        if verify.iter().any(|v| v.clean_store) && reset.is_none() {
            let span = raw.verify.iter().find(|v| v.get_ref().clean_store).map_or(0..0, Spanned::span);
            return Err(cx.syntax(span, "a case with `clean_store = true` needs a [reset] step"));
        }
        if matches!(reset, Some(Reset::Contestant))
            && let Some(k) = verify.iter().skip_while(|v| v.clean_store).position(|v| v.clean_store)
        {
            let k = k + verify.iter().take_while(|v| v.clean_store).count();
            return Err(cx.syntax(
                raw.verify[k].span(),
                "with `[reset] by = \"contestant\"` the store is empty only when verification begins: the `clean_store = true` cases come first",
            ));
        }
        Ok(Scenario {
            name,
            description: raw.description,
            protocol,
            variables,
            rows,
            flows,
            verify,
            reset,
            setup,
            keep_cookies: raw.keep_cookies,
            grpc,
            limits: match files {
                Files::Dir { root, .. } => root.limits(limits),
                Files::Embedded { .. } => limits.clone(),
            },
            root: match files {
                Files::Dir { root, .. } => Some(root.dir().to_path_buf()),
                Files::Embedded { .. } => None,
            },
        })
    }

    /// Picks a flow for an iteration by weight, from a uniform draw.
    pub fn pick_flow(&self, vars: &mut Vars) -> &Flow {
        let total: u64 = self.flows.iter().map(|f| u64::from(f.weight)).sum();
        let mut x = vars.rng.below(total.max(1));
        for f in &self.flows {
            if x < u64::from(f.weight) {
                return f;
            }
            x -= u64::from(f.weight);
        }
        &self.flows[0]
    }
}

/// The scenario's `name`, or its file's `stem`. A file on disk may not take a built-in's name
/// unless it is that built-in's file as shipped: its results would be mixed with the built-in's.
fn scenario_name(cx: &Ctx<'_>, raw: &RawScenario, stem: &str) -> Result<String, ParseError> {
    let name = raw.name.as_ref().map_or_else(|| stem.to_owned(), |n| n.get_ref().clone());
    if let Some(n) = &raw.name
        && n.get_ref().trim().is_empty()
    {
        return Err(cx.syntax(n.span(), "`name` must not be empty"));
    }
    if let (Files::Dir { .. }, Some(b)) = (cx.files, crate::shipped::named(&name))
        && !b.is_its_file(cx.text)
    {
        let (at, what) = match &raw.name {
            Some(n) => (n.span(), format!("`name = {name:?}`")),
            None => (0..0, format!("its name (the file's, `{name}`)")),
        };
        return Err(cx.syntax(
            at,
            format!(
                "{what} is a built-in scenario's, and this file is not that built-in's \
                 (scenarios/builtin/): its results would be mixed with the built-in's; give it another `name`"
            ),
        ));
    }
    Ok(name)
}

pub(super) type Known<'a> = &'a dyn Fn(&str) -> bool;

/// One `[[flow]]`, the `n`th before it, named after its file when it has no `name`.
/// The `[[flow]]`s, each named once.
fn flows(cx: &Ctx<'_>, raw: &[Spanned<RawFlow>], scope: &Scope<'_>) -> Result<Vec<Flow>, ParseError> {
    let known = |n: &str| scope.has(n, &[]);
    let mut flows: Vec<Flow> = Vec::new();
    let mut names = HashSet::new();
    for f in raw {
        let flow = flow(cx, f, flows.len(), &known).map_err(|e| scope.explain(e, &[]))?;
        if !names.insert(flow.name.clone()) {
            let at = f.get_ref().name.as_ref().map_or(f.span(), Spanned::span);
            return Err(cx.syntax(at, format!("two flows are named {:?}", flow.name)));
        }
        flows.push(flow);
    }
    Ok(flows)
}

fn flow(cx: &Ctx<'_>, f: &Spanned<RawFlow>, n: usize, known: Known<'_>) -> Result<Flow, ParseError> {
    let rf = f.get_ref();
    let hurl = cx.requests(f.span(), rf.file.as_ref(), rf.hurl.as_ref(), known)?;
    let name = match (&rf.name, &rf.file) {
        (Some(n), _) => n.get_ref().clone(),
        (None, Some(file)) => Path::new(file.get_ref())
            .file_stem()
            .map_or_else(|| "flow".into(), |s| s.to_string_lossy().into_owned()),
        (None, None) => format!("flow{}", n + 1),
    };
    let weight = match &rf.weight {
        None => 1,
        Some(w) => u32::try_from(*w.get_ref())
            .ok()
            .filter(|w| *w > 0)
            .ok_or_else(|| cx.syntax(w.span(), "`weight` is a whole number from 1"))?,
    };
    let request_names = match &rf.names {
        None => cx.default_names(&hurl),
        Some(n) if n.get_ref().len() == hurl.entries.len() => n.get_ref().clone(),
        Some(n) => {
            return Err(cx.syntax(
                n.span(),
                format!("`names` has {} names for {} requests", n.get_ref().len(), hurl.entries.len()),
            ));
        }
    };
    Ok(Flow { name, weight, hurl, request_names })
}

/// One `[[verify]]` case: a flow by name (among `flows`), or its own requests.
fn verify_case(
    cx: &Ctx<'_>,
    v: &Spanned<RawVerify>,
    flows: &HashMap<&str, &Flow>,
    known: Known<'_>,
) -> Result<VerifyCase, ParseError> {
    let rv = v.get_ref();
    let (hurl, request_names) = match &rv.flow {
        Some(fname) if rv.file.is_none() && rv.hurl.is_none() => flows
            .get(fname.get_ref().as_str())
            .map(|f| (f.hurl.clone(), f.request_names.clone()))
            .ok_or_else(|| cx.syntax(fname.span(), format!("no flow is named {:?}", fname.get_ref())))?,
        Some(fname) => {
            return Err(
                cx.syntax(fname.span(), "a case names a `flow`, or gives `file` or `hurl`, one of the three")
            );
        }
        None => {
            let hurl = cx.requests(v.span(), rv.file.as_ref(), rv.hurl.as_ref(), known)?;
            let names = cx.default_names(&hurl);
            (hurl, names)
        }
    };
    let level = match rv.level.as_ref().map(|l| (l.get_ref().as_str(), l.span())) {
        None | Some(("core", _)) => Level::Core,
        Some(("hardening", _)) => Level::Hardening,
        Some((other, span)) => {
            return Err(cx.syntax(
                span,
                format!("unknown level {other:?}; the levels are \"core\" and \"hardening\""),
            ));
        }
    };
    let mut clean_values = Vec::new();
    if let Some(t) = &rv.clean_values {
        if !rv.clean_store {
            return Err(cx.syntax(t.span(), "`clean_values` are for a case with `clean_store = true`"));
        }
        let pos = cx.pos(t.span().start);
        for (name, value) in t.get_ref() {
            if !hurl.captures().any(|c| *c.name == *name) {
                return Err(cx.syntax(
                    t.span(),
                    format!("`clean_values` names `{name}`, which this case does not capture"),
                ));
            }
            let (text, kind) = scalar(value)
                .ok_or_else(|| cx.syntax(t.span(), "a clean value is a string, a number or a boolean"))?;
            clean_values.push(CleanValue { name: name.clone(), text, kind, file: cx.file.to_owned(), pos });
        }
    }
    Ok(VerifyCase {
        name: rv.name.get_ref().clone(),
        hurl,
        request_names,
        level,
        clean_store: rv.clean_store,
        clean_values,
        probe: rv.probe,
        enforces: rv.enforces.clone(),
    })
}

#[cfg(test)]
mod tests;
