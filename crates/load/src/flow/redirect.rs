//! Redirects under load, as `verify` follows them: a request whose `[Options]` say
//! `location` (or `location-trusted`) follows each `3xx` answer's `Location`,
//! each hop made by the one function `verify` uses
//! ([`stackbench_hurl::follow_redirect`]: curl's method, body and
//! `Authorization` rules, the file's routes), then sent, measured and counted
//! under a name of its own (`<request> → hop N`), with the cookies of the
//! user's jar. Only the last answer is judged against the request's checks
//! (its `url` and `redirects` queries answered). A hop whose `Location`
//! leaves the file's origins, or one past `max-redirs`, is not sent: it counts
//! `check` under its name, with why, and ends the iteration, as a failed
//! capture does. A request that does not follow redirects takes none of this.

use stackbench_hurl::{
    Entry, OptionArg, OptionValue, Protocol, Redirect, Request, Routes, add_cookies, follow_redirect,
    is_redirect, split_origin, too_many_redirects,
};

use super::{Answered, FileSource, IterState, Outgoing, Unsent, Verdict, urls};
use crate::wire::Answer;

/// How a request follows redirects under load.
#[derive(Debug, Clone)]
pub(super) struct Follow {
    /// `location-trusted`: `Authorization` goes along to another origin too.
    pub(super) trusted: bool,
    /// `max-redirs`.
    pub(super) max: u32,
    /// The names of hops 1 to `max + 1` (the last one never sent: it counts the chains
    /// that went past `max-redirs`).
    pub(super) slots: Box<[usize]>,
}

/// The most redirects one request may follow under load.
const MOST: u32 = 50;

/// Whether `e` follows redirects (`location`, `location-trusted`) and how far (`max-redirs`,
/// 50 as in Hurl when not given): `None` when it does not. Refused, at `file:line:col`: a
/// template for one of them (read once, when the file loads), a chain without end or past
/// 50, and redirects in an HTTP/2 or gRPC file.
pub(super) fn options(e: &Entry, file: &str, protocol: Protocol) -> Result<Option<(bool, u32)>, String> {
    let (mut location, mut trusted, mut max) = (false, false, i64::from(MOST));
    for o in &e.options {
        let at = |why: &str| format!("{file}:{}: the `{}` option: {why}", o.pos, o.name);
        match (o.name, &o.value) {
            ("location" | "location-trusted", OptionValue::Bool(OptionArg::Var(_)))
            | ("max-redirs", OptionValue::Count(OptionArg::Var(_))) => {
                return Err(at(
                    "under load it is read once, when the file loads: write its value, not a template",
                ));
            }
            ("location", OptionValue::Bool(OptionArg::Literal(b))) => location = *b,
            ("location-trusted", OptionValue::Bool(OptionArg::Literal(b))) => {
                trusted = *b;
                location |= *b;
            }
            ("max-redirs", OptionValue::Count(OptionArg::Literal(n))) => {
                if !(0..=i64::from(MOST)).contains(n) {
                    return Err(at(&format!(
                        "under load a request follows at most {MOST} redirects: give a count from 0 to {MOST}"
                    )));
                }
                max = *n;
            }
            _ => {}
        }
    }
    if location && protocol != Protocol::Http1 {
        let at = e.options.iter().find(|o| o.name.starts_with("location")).map_or(e.pos, |o| o.pos);
        return Err(format!(
            "{file}:{at}: under load redirects are followed over HTTP/1.1; this file's requests go over HTTP/2"
        ));
    }
    Ok(location.then(|| (trusted, u32::try_from(max).unwrap_or(MOST))))
}

/// The names of hops 1 to `max + 1` of the request named `name`.
pub(super) fn hop_names(name: &str, max: u32) -> Vec<String> {
    (1..=max + 1).map(|n| format!("{name} → hop {n}")).collect()
}

impl FileSource {
    /// Whether any request follows redirects (an iteration of one request then may send more).
    pub fn follows_redirects(&self) -> bool {
        self.follows_any
    }

    /// Whether every iteration is one request (each flow one that follows no redirect).
    pub fn one_request_each(&self) -> bool {
        !self.follows_any && self.scenario.flows.iter().all(|f| f.hurl.entries.len() == 1)
    }
}

/// The redirects of a request under way: where its last hop went, with the headers the file
/// wrote, and the hops so far.
#[derive(Debug, Default)]
pub(super) struct Hops {
    /// The URL of the last request sent, where it went (routed).
    url: Vec<u8>,
    /// The request's headers as the file wrote them (before the jar's cookies), and where
    /// its `[Cookies]` value begins.
    written: Vec<u8>,
    written_at: Option<usize>,
    /// Where the request itself went (`Authorization` goes nowhere else unless trusted).
    first: Option<stackbench_hurl::Origin>,
    redirects: Vec<Redirect>,
}

impl Hops {
    /// A request that follows redirects, `req` as rendered (its URL as written), is sent.
    pub(super) fn start(&mut self, routes: &Routes, req: &Request) -> Result<(), String> {
        self.url.clone_from(&req.url);
        routes.route(&mut self.url)?;
        self.first = split_origin(&self.url).map(|(o, _)| o);
        self.written.clone_from(&req.headers);
        self.written_at = req.cookies_at;
        self.redirects.clear();
        Ok(())
    }
}

/// What follows an answer to a request that may follow redirects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// The answer is the last: judge it.
    Judge,
    /// A redirect followed: the hop to send is written by [`IterState::hop_outgoing`], under
    /// this name.
    Hop(usize),
    /// A redirect not followed (why): it counts `check` under this name, unsent.
    Stop(usize, String),
}

impl IterState {
    /// What follows `answer`, to request `at` (`entry`) after `hop` redirects: the next hop
    /// made ready (the answer's cookies stored), or the answer judged.
    pub fn redirect(
        &mut self,
        src: &FileSource,
        (flow, i): (usize, usize),
        entry: &Entry,
        answer: &Answer<'_>,
        hop: usize,
    ) -> Next {
        let Some(follow) = &src.follows[flow][i] else { return Next::Judge };
        let location = crate::wire::header_value(answer, "location", 0);
        let Some(location) = location.filter(|_| is_redirect(answer.status)) else { return Next::Judge };
        let answered = Answered::new(answer);
        if let (Some(first), more) = stackbench_hurl::Answer::header_first(&answered, "set-cookie") {
            self.store_cookies(&answered, first, more);
        }
        let name = follow.slots[hop.min(follow.slots.len() - 1)];
        if hop >= follow.max as usize {
            return Next::Stop(name, too_many_redirects(hop, follow.max.into()));
        }
        let location = String::from_utf8_lossy(location).into_owned();
        let url = String::from_utf8_lossy(&self.hops.url).into_owned();
        let Some(first) = self.hops.first.clone() else {
            return Next::Stop(name, format!("{url:?} is not an http:// URL"));
        };
        let written = std::mem::take(&mut self.hops.written);
        let made = follow_redirect(
            Some(&src.routes),
            &mut self.req,
            (&entry.method, &written, self.hops.written_at),
            (&url, &first),
            (answer.status, &location),
            follow.trusted,
        );
        self.hops.written = written;
        match made {
            Ok(r) => {
                self.hops.url.clone_from(&self.req.url);
                self.hops.redirects.push(r);
                Next::Hop(name)
            }
            Err(why) => {
                Next::Stop(name, format!("{}:{}: {why}", src.scenario.flows[flow].hurl.file, entry.pos))
            }
        }
    }

    /// Writes the hop [`IterState::redirect`] made ready for request `at` (`entry`).
    pub fn hop_outgoing(
        &mut self,
        src: &FileSource,
        (flow, i): (usize, usize),
        entry: &Entry,
    ) -> Result<Outgoing<'_>, Unsent> {
        urls::path_into(&src.routes, &self.req.url, &mut self.path).map_err(Unsent::Url)?;
        if !self.jar.is_empty() {
            let path = std::str::from_utf8(&self.path).unwrap_or("/");
            add_cookies(&self.jar, &mut self.req, &self.host, path, self.tls);
        }
        let len = src.scenario.flows[flow].hurl.entries.len();
        let method = self.req.method.unwrap_or(&entry.method);
        self.wire.clear();
        crate::wire::write_http1_request(
            &mut self.wire,
            method,
            (!entry.own_host()).then_some(self.authority.as_str()),
            &self.path,
            &self.req.headers,
            &self.req.body,
            self.closing.keeps(i, len),
        );
        let head_only = method == "HEAD";
        Ok(self.lend(head_only))
    }

    /// Judges the last answer to request `at` (`entry`), which follows redirects: its `url` and
    /// `redirects` are those of the hops.
    pub(super) fn judge_hopped(
        &mut self,
        src: &FileSource,
        at: (usize, usize),
        entry: &Entry,
        answer: &Answer<'_>,
        asserts: bool,
    ) -> Verdict {
        let hops = std::mem::take(&mut self.hops);
        let url = src.routes.as_written(&String::from_utf8_lossy(&hops.url));
        let hopped = Hopped { answer: Answered::new(answer), url: &url, redirects: &hops.redirects };
        let verdict = self.judge(&src.compiled[at.0][at.1], entry, &hopped, asserts);
        self.hops = hops;
        verdict
    }
}

/// The last answer of a request that followed redirects, as its checks see it.
struct Hopped<'r, 'a> {
    answer: Answered<'r, 'a>,
    url: &'r str,
    redirects: &'r [Redirect],
}

impl stackbench_hurl::Answer for Hopped<'_, '_> {
    fn status(&self) -> u16 {
        self.answer.status()
    }
    fn header(&self, name: &str, nth: usize) -> Option<&str> {
        self.answer.header(name, nth)
    }
    fn header_first(&self, name: &str) -> (Option<&str>, bool) {
        self.answer.header_first(name)
    }
    fn header_bytes(&self, name: &str) -> (Option<&[u8]>, bool) {
        self.answer.header_bytes(name)
    }
    fn body(&self) -> &[u8] {
        self.answer.body()
    }
    fn url(&self) -> Option<&str> {
        Some(self.url)
    }
    fn redirects(&self) -> &[Redirect] {
        self.redirects
    }
}
