//! Scenario files under load (`--scenario-file`, and `--scenario NAME`: a
//! built-in is a file too, [`stackbench_hurl::Builtin`]): the loaded file with its request names ([`FileSource`]), and the state one
//! virtual user (closed model) or runner (open model) keeps between
//! iterations ([`IterState`]): its variables, the rendered request and the
//! wire buffer, so a warm iteration writes each request into buffers it
//! already has. The worker loop sends what [`IterState::wire`] returns and
//! hands the answer to [`IterState::verdict`].
//!
//! A file's requests go where its routes say ([`urls`]: its base to the
//! target, the same server for every request of a run). Each user keeps a
//! cookie jar ([`stackbench_hurl::CookieJar`]), emptied when an iteration
//! begins unless the file keeps it (`keep_cookies`), holding the `[setup]`
//! step's cookies at first. An h2c or gRPC file's requests are written and
//! judged in [`h2`], a gRPC file's methods found in [`calls`].

use std::path::Path;

use bytes::BytesMut;
use stackbench_hurl::{
    Aim, Aimed, Builtin, CompiledChecks, CookieJar, Entry, Failure, FailureKind, FileLimits, Kind, Protocol,
    Reach, Request, Routes, Scenario, SentCookies, SetupDone, Vars, unix_now,
};
use stackbench_record::ErrorKind;

use crate::io_mode::Io;
use crate::target::Target;
use crate::wire::{Answer, Outgoing, write_http1_request};
use program::Program;

mod calls;
mod h2;
mod program;
mod redirect;
mod unsent;
mod urls;

pub use calls::Calls;
pub use h2::for_each_field;
pub use redirect::Next;
use redirect::{Follow, Hops};
pub use unsent::Unsent;
use urls::EntryUrl;
pub(crate) use urls::request_path;

/// A scenario file, loaded and checked, with the names its requests are recorded under.
#[derive(Debug, Clone)]
pub struct FileSource {
    pub scenario: Scenario,
    /// `--variable NAME=VALUE`, in order.
    pub defined: Vec<(String, String)>,
    pub seed: u64,
    /// The distinct request names, in the order they first appear in the flows.
    pub names: Vec<String>,
    /// For each flow, the index in `names` of each of its requests.
    pub slots: Vec<Vec<usize>>,
    /// Whether each of `names` is a redirect's hop (left out of the record when none was sent).
    pub hops: Vec<bool>,
    /// For each flow, how each of its requests follows redirects (`None`: it does not).
    follows: Vec<Vec<Option<Follow>>>,
    /// Whether any request follows redirects.
    follows_any: bool,
    /// A gRPC file's methods (`None` for the other protocols).
    pub calls: Option<Calls>,
    /// Where the file's origins go.
    pub routes: Routes,
    /// The variable that stands for the target, and its value (a built-in's `{{base_url}}`
    /// is the target's root, whatever its path says: the path gave its variables).
    pub(crate) base: Option<(String, String)>,
    /// For each flow, how each of its requests' URL is written.
    urls: Vec<Vec<EntryUrl>>,
    /// For each flow, each of its requests' checks, compiled at their first answer.
    compiled: Vec<Vec<CompiledChecks>>,
    /// What the `[setup]` step left for every user (set before the load starts).
    pub setup: SetupDone,
    /// Whether this is a built-in scenario, not a user's file.
    pub builtin: bool,
    /// What the load does not do of what the file asks (its `[Options]` without effect
    /// under load), to say once.
    pub notes: Vec<String>,
    /// How the run's connections reach the server, as every request's `[Options]` say alike
    /// (`insecure`, `cacert`, `cert`, `key`, `resolve`, `connect-to`; [`run_reach`]).
    pub reach: Reach,
}

/// How the load's connections reach the server, as the flows' `[Options]` say: the engine
/// keeps one TLS configuration and one set of routes for a run, so every request must give
/// them alike (the first that differs is refused, at its `file:line:col`), each written as
/// a value, not a template (read once, when the file loads).
fn run_reach(scenario: &Scenario) -> Result<Reach, String> {
    use stackbench_hurl::REACH_OPTIONS;
    let mut first: Option<(Reach, String)> = None;
    for flow in &scenario.flows {
        for e in &flow.hurl.entries {
            let file = &flow.hurl.file;
            let own = e.options.iter().filter(|o| REACH_OPTIONS.contains(&o.name));
            if let Some(o) = own.clone().find(|o| o.templates().iter().any(|t| t.as_literal().is_none())) {
                return Err(format!(
                    "{file}:{}: the `{}` option: under load it is read once, when the file loads: write its value, \
                     not a template",
                    o.pos, o.name
                ));
            }
            let unread = own.clone().filter(|o| matches!(o.name, "cacert" | "cert" | "key")).find_map(|o| {
                let path = o.templates().first().and_then(|t| t.as_literal()).unwrap_or_default().to_owned();
                std::fs::metadata(&path).err().map(|why| (o, path, why))
            });
            if let Some((o, path, why)) = unread {
                return Err(format!("{file}:{}: the `{}` option: cannot read {path}: {why}", o.pos, o.name));
            }
            let reach =
                e.reach(&mut Vars::new(1)).map_err(|err| format!("{file}:{err}"))?.unwrap_or_default();
            crate::route::Route::new(&reach.resolve, &reach.connect_to)
                .map_err(|why| format!("{file}:{}: {why}", e.pos))?;
            match &first {
                None => first = Some((reach, format!("{file}:{}", e.pos))),
                Some((r, _)) if *r == reach => {}
                Some((_, at)) => {
                    let pos = own.map(|o| o.pos).next().unwrap_or(e.pos);
                    return Err(format!(
                        "{file}:{pos}: this request's `insecure`, `cacert`, `cert`, `key`, `resolve` or `connect-to` \
                         options differ from those of the request at {at}: a load keeps one TLS configuration and \
                         one set of routes for the whole run; give them alike on every request (or use the load's \
                         --insecure, --cacert, --cert, --key, --resolve, --connect-to)"
                    ));
                }
            }
        }
    }
    Ok(first.map(|(r, _)| r).unwrap_or_default())
}

/// The flows' `[Options]` under load: a `skip: true` entry is left out and a `repeat: N` one
/// sent N times; an option the engine cannot do is refused (its `file:line:col`), and one
/// without effect on a measured load is named in the notes returned.
fn entry_options(scenario: &mut Scenario) -> Result<Vec<String>, String> {
    use stackbench_hurl::{OptionArg, OptionEffect, OptionValue};
    let mut quiet: Vec<&'static str> = Vec::new();
    for flow in &mut scenario.flows {
        stackbench_hurl::invalid_jsonpath(&flow.hurl).map_err(|e| e.to_string())?;
        let file = flow.hurl.file.clone();
        let mut entries = Vec::with_capacity(flow.hurl.entries.len());
        let mut names = Vec::with_capacity(flow.request_names.len());
        for (i, e) in std::mem::take(&mut flow.hurl.entries).into_iter().enumerate() {
            let mut times = 1;
            for o in &e.options {
                let at = |why: &str| format!("{file}:{}: the `{}` option: {why}", o.pos, o.name);
                match (o.effect(), &o.value) {
                    (OptionEffect::Refused(why), _) => return Err(at(why)),
                    (_, OptionValue::Bool(OptionArg::Var(_)) | OptionValue::Count(OptionArg::Var(_)))
                        if matches!(o.name, "skip" | "repeat") =>
                    {
                        return Err(at(
                            "under load it is read once, when the file loads: write its value, not a template",
                        ));
                    }
                    (_, OptionValue::Bool(OptionArg::Literal(true))) if o.name == "skip" => times = 0,
                    (_, OptionValue::Count(OptionArg::Literal(n))) if o.name == "repeat" => {
                        times = usize::try_from(*n)
                            .map_err(|_| at("under load an entry is sent a bounded number of times"))?;
                    }
                    (OptionEffect::VerifyOnly | OptionEffect::NoEffect, _) if !quiet.contains(&o.name) => {
                        quiet.push(o.name);
                    }
                    _ => {}
                }
            }
            let name = flow.request_names.get(i).cloned();
            for _ in 0..times {
                entries.push(e.clone());
                names.extend(name.clone());
            }
        }
        if entries.is_empty() {
            return Err(format!("{file}: the flow has no request to send (none, or every one `skip: true`)"));
        }
        flow.hurl.entries = entries;
        if !flow.request_names.is_empty() {
            flow.request_names = names;
        }
    }
    Ok(if quiet.is_empty() {
        Vec::new()
    } else {
        let list: Vec<String> = quiet.iter().map(|n| format!("`{n}`")).collect();
        vec![format!(
            "the file's [Options] {} have no effect on a measured load (verify honours `delay` and `retry`)",
            list.join(", ")
        )]
    })
}

/// The flows' `file,` bodies read once, now (a name with templates rendered with the
/// `--variable`s): a measured request does not wait on the disk.
fn file_bodies(scenario: &mut Scenario, defined: &[(String, String)]) -> Result<(), String> {
    let mut vars = Vars::new(1);
    for (k, v) in defined {
        let (v, kind) = stackbench_hurl::cli_value(v);
        vars.set(k, &v, kind);
    }
    for flow in &mut scenario.flows {
        stackbench_hurl::read_body_files(&mut flow.hurl, &mut vars)?;
    }
    Ok(())
}

impl FileSource {
    /// Loads `path` (a `.toml` scenario or a `.hurl` file) with the `--variable`s given, under
    /// `limits` (`--file-root`, `--max-file-size`, `--max-capture`), its requests aimed as `aim`
    /// says. The error says what to fix, at `file:line:col`.
    pub fn load(
        path: &Path,
        variables: &[String],
        seed: u64,
        limits: &FileLimits,
        aim: Aim<'_>,
    ) -> Result<FileSource, String> {
        let defined = variables
            .iter()
            .map(|v| match v.split_once('=') {
                Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
                _ => Err(format!("--variable {v:?}: write NAME=VALUE")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        // The variable that stands for the target takes the target's value: it needs no other.
        let base = aim.base_variable.filter(|_| aim.target.is_some());
        let names: Vec<&str> = defined.iter().map(|(k, _)| k.as_str()).chain(base).collect();
        let scenario = Scenario::load_with(path, &names, limits).map_err(|e| e.to_string())?;
        FileSource::new(scenario, defined, seed, aim)
    }

    /// Checks that `scenario` can be sent by the load engine as `aim` says, and names its
    /// requests.
    pub fn new(
        mut scenario: Scenario,
        defined: Vec<(String, String)>,
        seed: u64,
        aim: Aim<'_>,
    ) -> Result<FileSource, String> {
        let notes = entry_options(&mut scenario)?;
        file_bodies(&mut scenario, &defined)?;
        let reach = run_reach(&scenario)?;
        let calls = match scenario.protocol {
            Protocol::Grpc => Some(Calls::new(&scenario, &defined)?),
            Protocol::Http1 | Protocol::H2c => None,
        };
        let routes = Routes::new(&scenario, &defined, aim)?;
        let base = routes.base_variable.clone().zip(aim.target.map(|t| t.trim_end_matches('/').to_owned()));
        let mut constants = urls::constants(&scenario, &defined, base.as_ref());
        let (_, urls) = urls::entry_urls(&scenario, &routes, &mut constants)?;
        let (mut names, mut slots, mut follows) = (Vec::<String>::new(), Vec::new(), Vec::new());
        // Each name's place in `names`: a file of many flows is named in time linear in them.
        let mut places = std::collections::HashMap::<String, usize>::new();
        let mut place = |name: String, names: &mut Vec<String>| {
            *places.entry(name).or_insert_with_key(|name| {
                names.push(name.clone());
                names.len() - 1
            })
        };
        let mut hops = Vec::new();
        for flow in &scenario.flows {
            let mut flow_slots = Vec::with_capacity(flow.hurl.entries.len());
            let mut flow_follows = Vec::with_capacity(flow.hurl.entries.len());
            for (i, e) in flow.hurl.entries.iter().enumerate() {
                let name = flow.request_names.get(i).cloned().unwrap_or_else(|| e.name());
                let follow = redirect::options(e, &flow.hurl.file, scenario.protocol)?;
                let hop_names = follow.map(|(_, max)| redirect::hop_names(&name, max));
                flow_slots.push(place(name, &mut names));
                flow_follows.push(hop_names.zip(follow).map(|(hop_names, (trusted, max))| {
                    let slots: Vec<usize> = hop_names.into_iter().map(|n| place(n, &mut names)).collect();
                    hops.resize(names.len(), false);
                    for &s in &slots {
                        hops[s] = true;
                    }
                    Follow { trusted, max, slots: slots.into() }
                }));
            }
            slots.push(flow_slots);
            follows.push(flow_follows);
        }
        hops.resize(names.len(), false);
        let notes = routes.notes.iter().cloned().chain(notes).collect();
        let compiled =
            scenario.flows.iter().map(|f| vec![CompiledChecks::default(); f.hurl.entries.len()]).collect();
        Ok(FileSource {
            scenario,
            defined,
            seed,
            names,
            slots,
            follows_any: hops.contains(&true),
            hops,
            follows,
            calls,
            routes,
            base,
            urls,
            compiled,
            setup: SetupDone::default(),
            builtin: false,
            notes,
            reach,
        })
    }

    /// Built-in `b` sent to `target` (`db-read`'s driver from its path, the files' `{{base_url}}`
    /// its root), over h2c when `http2` and the file is HTTP/1.1.
    pub fn builtin(b: Builtin, target: &Target, http2: bool, seed: u64) -> Result<FileSource, String> {
        let defined = b.variables(&target.path).map_err(|e| e.to_string())?;
        let mut scenario = b.file(false).clone();
        if http2 && scenario.protocol == Protocol::Http1 {
            scenario.protocol = Protocol::H2c;
        }
        let defined = defined.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        let origin =
            stackbench_hurl::split_origin(target.url.as_bytes()).map_or(target.url.len(), |(_, n)| n);
        let root = &target.url[..origin];
        let mut f = FileSource::new(scenario, defined, seed, Aim { target: Some(root), ..Aim::default() })?;
        f.builtin = true;
        Ok(f)
    }
}

impl FileSource {
    /// Where the file's requests go: the target (`None`: as written) and the routes to it, as
    /// its `[setup]` step is sent before the load.
    pub fn aimed(&self) -> Aimed<'_> {
        Aimed { target: self.base.as_ref().map(|(_, url)| url.as_str()), routes: &self.routes }
    }

    /// The same HTTP/1.1 file sent over HTTP/2 (a Hurl file to an `https://` server that
    /// picked `h2` by ALPN, as curl would).
    pub fn over_h2(&self) -> FileSource {
        let mut f = self.clone();
        f.scenario.protocol = Protocol::H2c;
        f
    }
}

/// One user's (or runner's) variables and buffers, kept between iterations.
#[derive(Debug)]
pub struct IterState {
    vars: Vars,
    req: Request,
    wire: BytesMut,
    scratch: Vec<u8>,
    failures: Vec<Failure>,
    /// The target's `host:port`, host and scheme.
    authority: String,
    closing: Closing,
    host: String,
    tls: bool,
    /// The user's cookies.
    jar: CookieJar,
    /// The `Cookie` line the jar last wrote on a compiled request, written again while
    /// nothing it depends on changed.
    sent: SentCookies,
    /// The path of the last request, where the request no longer holds it (io_uring, h2c).
    path: Vec<u8>,
    /// Where the path of the request in `wire` lies, when the writer noted it (a compiled
    /// request with cookies: the `Cookie` line is written for that path); else it is looked
    /// for in the request line.
    path_at: Option<std::ops::Range<usize>>,
    /// HTTP/1.1 files: each flow's requests, compiled against `vars` when they can be.
    programs: Vec<Vec<Option<Program>>>,
    /// A compiled request's body whose length varies.
    body: Vec<u8>,
    /// Each flow's captures, as slots of `vars`: forgotten when an iteration starts.
    captured: Vec<Vec<usize>>,
    /// The slots of `vars` the scenario draws into ([`Scenario::slots`]).
    drawn: Vec<usize>,
    /// h2c and gRPC files only ([`h2`]).
    h2: h2::Buffers,
    /// Each HTTP/1.1 request is split off `wire` as shared bytes, for io_uring, which holds
    /// what it sends until the kernel has sent it; else it is lent from `wire`.
    shared: bool,
    /// The redirects of the request under way, when it follows them.
    hops: Hops,
}

/// Which of an iteration's HTTP/1.1 requests say `Connection: close` (a `bool` is whether
/// the connections are kept alive: none, or every one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closing {
    /// None: the connections are kept alive.
    None,
    /// Every request (`--no-keepalive`).
    Every,
    /// Each flow's last, so that the server ends the iteration's connection
    /// (`--new-connection iteration`).
    Last,
}

impl From<bool> for Closing {
    fn from(keepalive: bool) -> Closing {
        if keepalive { Closing::None } else { Closing::Every }
    }
}

impl Closing {
    /// Whether request `i` of a flow of `len` keeps its connection alive.
    fn keeps(self, i: usize, len: usize) -> bool {
        match self {
            Closing::None => true,
            Closing::Every => false,
            Closing::Last => i + 1 < len,
        }
    }
}

/// How an answer was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// `Err(check)` for a failed check, `Err(http_N)` for an unexpected error status.
    pub result: Result<(), ErrorKind>,
    /// A capture found nothing: the requests after it cannot be written.
    pub capture_failed: bool,
}

impl IterState {
    /// The state of user (or runner) `stream` sending to `target` (its requests saying
    /// `Connection: close` as `closing` says; `true`: none): its own random source from the
    /// seed, and the flows' HTTP/1.1 requests compiled against its variables.
    pub fn new(
        src: &FileSource,
        target: &Target,
        closing: impl Into<Closing>,
        io: Io,
        stream: u64,
    ) -> IterState {
        let closing = closing.into();
        let mut vars = Vars::new(src.seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        vars.max_capture = src.scenario.limits.max_capture;
        for (k, v) in &src.defined {
            let (v, kind) = stackbench_hurl::cli_value(v);
            vars.set(k, &v, kind);
        }
        if let Some((name, value)) = &src.base {
            vars.set(name, value, Kind::String);
        }
        src.setup.apply(&mut vars);
        let authority = target.authority.clone();
        let captured = (src.scenario.flows.iter())
            .map(|f| f.hurl.captures().map(|c| vars.index(&c.name)).collect())
            .collect();
        let drawn = src.scenario.slots(&mut vars);
        let mut programs = Vec::new();
        if src.scenario.protocol == Protocol::Http1 {
            for ((flow, urls), follows) in src.scenario.flows.iter().zip(&src.urls).zip(&src.follows) {
                let len = flow.hurl.entries.len();
                let compile = |(i, (e, u)): (usize, (&Entry, &EntryUrl))| {
                    // A request that follows redirects is rendered: its hops start from it.
                    let (prefix, from) = u.compiled.as_ref().filter(|_| follows[i].is_none())?;
                    Program::compile(e, &mut vars, (prefix, *from), &authority, closing.keeps(i, len))
                };
                programs.push(flow.hurl.entries.iter().zip(urls).enumerate().map(compile).collect());
            }
        }
        IterState {
            vars,
            req: Request::default(),
            wire: BytesMut::with_capacity(1024),
            scratch: Vec::new(),
            failures: Vec::new(),
            authority,
            closing,
            host: target.host.clone(),
            tls: target.tls,
            jar: src.setup.jar.clone(),
            sent: SentCookies::default(),
            path: Vec::new(),
            path_at: None,
            programs,
            body: Vec::new(),
            captured,
            drawn,
            h2: h2::Buffers::default(),
            shared: io == Io::Uring,
            hops: Hops::default(),
        }
    }

    /// Starts iteration `n`: draws its variables, forgets the last one's captures and
    /// picks its flow by weight; returns the flow's index.
    pub fn begin(&mut self, src: &FileSource, n: u64) -> usize {
        let s = &src.scenario;
        // A scenario with no variable or data file draws nothing.
        if !self.drawn.is_empty() {
            s.draw_at(n, &mut self.vars, &self.drawn);
        }
        // One flow needs no draw.
        let i = if s.flows.len() == 1 {
            0
        } else {
            let flow = s.pick_flow(&mut self.vars);
            s.flows.iter().position(|f| std::ptr::eq(f, flow)).unwrap_or(0)
        };
        for &slot in &self.captured[i] {
            self.vars.unset_at(slot);
        }
        if !s.keep_cookies && (!self.jar.is_empty() || !src.setup.jar.is_empty()) {
            self.jar.clone_from(&src.setup.jar);
        }
        i
    }

    /// Writes `entry` (request `i` of flow `flow`) as an HTTP/1.1 request. `Err` when it
    /// cannot be: a variable it uses has no value (a capture of this iteration found
    /// nothing), holds what its line or headers cannot carry, or its URL is not on the
    /// target ([`Unsent`]).
    pub fn wire(
        &mut self,
        src: &FileSource,
        (flow, i): (usize, usize),
        entry: &Entry,
    ) -> Result<&[u8], Unsent> {
        self.wire.clear();
        self.path_at = None;
        let compiled = self.programs.get_mut(flow).and_then(|f| f.get_mut(i)).and_then(Option::as_mut);
        let ours = src.scenario.flows.get(flow).and_then(|f| f.hurl.entries.get(i));
        if let Some(p) = compiled.filter(|_| ours.is_some_and(|e| std::ptr::eq(entry, e))) {
            if self.jar.is_empty() {
                p.write(&mut self.vars, &mut self.body, &mut self.wire).map_err(Unsent::from)?;
            } else if let Some((_, at)) = p.literal_path() {
                // The `Cookie` line known before the request is written: one piece with it.
                let (jar, host, tls, sent) = (&self.jar, self.host.as_str(), self.tls, &mut self.sent);
                p.write_cookied(
                    jar.stamp(),
                    move |path: &[u8]| sent.line(jar, host, path, tls, unix_now),
                    &mut self.vars,
                    &mut self.body,
                    &mut self.wire,
                )
                .map_err(Unsent::from)?;
                self.path_at = Some(at);
            } else {
                let (jar, host, tls, sent) = (&self.jar, self.host.as_str(), self.tls, &mut self.sent);
                let path_at = &mut self.path_at;
                p.write_with(&mut self.vars, &mut self.body, &mut self.wire, |out, path| {
                    *path_at = Some(path.clone());
                    if let Some(line) = sent.line(jar, host, &out[path], tls, unix_now) {
                        out.extend_from_slice(line.text);
                    }
                })
                .map_err(Unsent::from)?;
            }
        } else {
            entry.render(&mut self.vars, &mut self.req).map_err(|e| Unsent::from(e.why))?;
            urls::path_into(&src.routes, &self.req.url, &mut self.path).map_err(Unsent::Url)?;
            if src.follows[flow][i].is_some() {
                self.hops.start(&src.routes, &self.req).map_err(Unsent::Url)?;
            }
            if !self.jar.is_empty() {
                let path = std::str::from_utf8(&self.path).unwrap_or("/");
                stackbench_hurl::add_cookies(&self.jar, &mut self.req, &self.host, path, self.tls);
            }
            let len = src.scenario.flows.get(flow).map_or(0, |f| f.hurl.entries.len());
            write_http1_request(
                &mut self.wire,
                &entry.method,
                (!entry.own_host()).then_some(self.authority.as_str()),
                &self.path,
                &self.req.headers,
                &self.req.body,
                self.closing.keeps(i, len),
            );
        }
        Ok(&self.wire)
    }

    /// Writes request `i` of flow `flow` (`entry`) in the file's protocol.
    pub fn outgoing(
        &mut self,
        src: &FileSource,
        at: (usize, usize),
        entry: &Entry,
    ) -> Result<Outgoing<'_>, Unsent> {
        if src.scenario.protocol != Protocol::Http1 {
            return self.h2_request(src, at, entry);
        }
        self.wire(src, at, entry)?;
        Ok(self.lend(&*entry.method == "HEAD"))
    }

    /// The HTTP/1.1 request just written in `wire` (its answer has no body when `head_only`),
    /// lent or shared. In line (`always`): a call per request cost more than the choice.
    #[expect(clippy::inline_always, reason = "called once per request, from the iteration's loop")]
    #[inline(always)]
    fn lend(&mut self, head_only: bool) -> Outgoing<'_> {
        if self.shared {
            // Where the request went, for the cookies its answer sets: the request leaves.
            let path = request_path(&self.wire);
            self.path.clear();
            self.path.extend_from_slice(&self.wire[path]);
            // The split shares the buffer's allocation; once the ring drops it, the next
            // `clear` and write take the whole buffer back (no allocation per request).
            return Outgoing::Http1Shared { wire: self.wire.split().freeze(), head_only };
        }
        Outgoing::Http1 { wire: &self.wire, head_only }
    }

    /// Stores the cookies `answer` sets (`first`, its first `Set-Cookie`, and the others
    /// when `more` and the first is text), for the host and path of the request it answers;
    /// whether the first is text.
    #[inline(never)]
    fn store_cookies(
        &mut self,
        answer: &impl stackbench_hurl::Answer,
        first: impl AsRef<[u8]>,
        more: bool,
    ) -> bool {
        // An HTTP/1.1 request lent from `wire` is still there; otherwise `path` holds it.
        let path = if self.wire.is_empty() {
            &self.path[..]
        } else {
            &self.wire[self.path_at.clone().unwrap_or_else(|| request_path(&self.wire))]
        };
        let text = self.jar.store_at(first.as_ref(), &self.host, path, unix_now);
        if text && more {
            for v in (1..).map_while(|i| answer.header("set-cookie", i)) {
                self.jar.store_at(v.as_bytes(), &self.host, path, unix_now);
            }
        }
        text
    }

    /// Checks an answer to request `i` of flow `flow` (`entry`) in the file's protocol.
    pub fn verdict(
        &mut self,
        src: &FileSource,
        at: (usize, usize),
        entry: &Entry,
        answer: &Answer<'_>,
        asserts: bool,
    ) -> Verdict {
        if src.scenario.protocol == Protocol::Http1 {
            if src.follows[at.0][at.1].is_some() {
                return self.judge_hopped(src, at, entry, answer, asserts);
            }
            let mut answered = Answered::new(answer);
            if let (Some(first), second) = answered.set_cookie {
                // The jar reads it as text: the checks need not look again.
                answered.text = self.store_cookies(&answered, first, second.is_some());
            }
            return self.check(&src.compiled[at.0][at.1], entry, &answered, asserts);
        }
        self.h2_check(src, at, entry, answer, asserts)
    }

    /// Checks an answer to `entry` (its checks compiled into `compiled`) as any protocol shows
    /// it to the checks: its status and captures always, its asserts when `asserts` (the
    /// `--check-every` turn).
    fn judge(
        &mut self,
        compiled: &CompiledChecks,
        entry: &Entry,
        answer: &impl stackbench_hurl::Answer,
        asserts: bool,
    ) -> Verdict {
        if let (Some(first), more) = answer.first_set_cookie() {
            self.store_cookies(answer, first, more);
        }
        self.check(compiled, entry, answer, asserts)
    }

    /// [`IterState::judge`] of an answer whose cookies are stored.
    fn check(
        &mut self,
        compiled: &CompiledChecks,
        entry: &Entry,
        answer: &impl stackbench_hurl::Answer,
        asserts: bool,
    ) -> Verdict {
        self.failures.clear();
        entry.check_some(compiled, answer, &mut self.vars, &mut self.scratch, &mut self.failures, asserts);
        // As in Hurl, a wrong status or a failed capture ends the entry's checks before the
        // captures after it: the requests that need them are not sent.
        let captures = entry.response.as_ref().is_some_and(|r| !r.captures.is_empty());
        let capture_failed = captures
            && self.failures.iter().any(|f| {
                matches!(
                    f.kind,
                    FailureKind::Capture { .. }
                        | FailureKind::CaptureTooLong { .. }
                        | FailureKind::Status { .. }
                        | FailureKind::Version { .. }
                ) || f.source.ends_with(": ...")
            });
        let result = match self.failures.first() {
            None => Ok(()),
            Some(Failure { kind: FailureKind::Status { expected, actual }, .. })
                if *actual >= 400 && *expected < 400 =>
            {
                Err(ErrorKind::Http(*actual))
            }
            Some(_) => Err(ErrorKind::Check),
        };
        Verdict { result, capture_failed }
    }
}

/// The load engine's answer as the checks see it; headers are found in the reader's parse.
/// Its first two `Set-Cookie` headers are looked up once, when it is made: the jar stores the
/// first from every answer, and a `cookie` query reads it again. They are read as text only
/// when asked for as text (the jar passes over the header it stored last by its bytes).
struct Answered<'r, 'a> {
    answer: &'r Answer<'a>,
    /// The first two `Set-Cookie` values as received.
    set_cookie: (Option<&'a [u8]>, Option<&'a [u8]>),
    /// Whether the first is known to be text: the jar stored it.
    text: bool,
}

impl<'r, 'a> Answered<'r, 'a> {
    fn new(answer: &'r Answer<'a>) -> Self {
        // One walk of the head for what `header(name, 0)` and `header(name, 1)` would find.
        Answered { answer, set_cookie: crate::wire::Marks::set_cookie(answer), text: false }
    }
}

const SET_COOKIE: &str = "set-cookie";

/// Whether a header name asked for is `Set-Cookie`'s (whose first value [`Answered`] keeps).
#[inline]
fn is_set_cookie(name: &str) -> bool {
    crate::wire::same_name(name.as_bytes(), SET_COOKIE.as_bytes())
}

impl stackbench_hurl::Answer for Answered<'_, '_> {
    fn status(&self) -> u16 {
        self.answer.status
    }

    fn header(&self, name: &str, nth: usize) -> Option<&str> {
        let value = if nth == 0 && is_set_cookie(name) {
            self.set_cookie.0
        } else {
            crate::wire::header_value(self.answer, name, nth)
        };
        std::str::from_utf8(value?).ok()
    }

    fn header_first(&self, name: &str) -> (Option<&str>, bool) {
        let (first, second) = if is_set_cookie(name) {
            self.set_cookie
        } else {
            crate::wire::header_first_two(self.answer, name)
        };
        let first = first.and_then(|v| std::str::from_utf8(v).ok());
        (first, second.is_some_and(|v| std::str::from_utf8(v).is_ok()))
    }

    fn first_set_cookie(&self) -> (Option<&[u8]>, bool) {
        (self.set_cookie.0, self.set_cookie.1.is_some())
    }

    fn first_set_cookie_is_text(&self) -> bool {
        self.text
    }

    fn header_bytes(&self, name: &str) -> (Option<&[u8]>, bool) {
        let (first, second) = crate::wire::header_first_two(self.answer, name);
        (first, second.is_some())
    }

    #[inline]
    fn body_labels(&self) -> (Option<&[u8]>, Option<&[u8]>) {
        crate::wire::Marks::body_labels(self.answer)
    }

    fn body(&self) -> &[u8] {
        self.answer.body
    }
}

#[cfg(test)]
mod tests;
