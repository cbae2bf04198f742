//! Redirects under load, as `verify` follows them: a request whose `[Options]` say
//! `location` (or `location-trusted`) follows each `3xx` answer's `Location`,
//! each hop made by the functions `verify` uses
//! ([`stackbench_hurl::hop_target`] and [`stackbench_hurl::redirect_to`]: curl's
//! method, body and `Authorization` rules, the file's routes; where a `Location` leads
//! is worked out once per user and kept, [`Hops`]), then sent, measured and counted
//! under a name of its own (`<request> → hop N`), with the cookies of the
//! user's jar. Only the last answer is judged against the request's checks
//! (its `url` and `redirects` queries answered). A hop whose `Location`
//! leaves the file's origins, or one past `max-redirs`, is not sent: it counts
//! `check` under its name, with why, and ends the iteration, as a failed
//! capture does. A request that does not follow redirects takes none of this.

use stackbench_hurl::{
    Entry, HopTarget, OptionArg, OptionValue, Origin, Protocol, Redirect, Request, Routes, add_cookies,
    hop_target, is_redirect, redirect_to, split_origin, too_many_redirects,
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
    first: Option<Origin>,
    redirects: Vec<Redirect>,
    /// Where the last few redirects led ([`Kept`]): a server answers the same `Location`
    /// to the same request, and working it out again (a URL parsed, its origin found among
    /// the file's) cost more than the rest of a hop.
    kept: Vec<Kept>,
}

/// Where a redirect from `url`, on the way from `first`, with `location` led.
#[derive(Debug)]
struct Kept {
    first: Origin,
    url: Vec<u8>,
    location: Vec<u8>,
    target: Result<HopTarget, String>,
}

/// How many redirects a user keeps ([`Hops::kept`]): a file's redirecting requests and their
/// chains, most often one or two.
const KEPT: usize = 8;

impl Hops {
    /// Where a redirect from the last hop's URL with `location` leads, as
    /// [`stackbench_hurl::hop_target`] says: kept from the last time, or worked out and kept.
    fn target(&mut self, routes: &Routes, first: &Origin, location: &[u8]) -> &Result<HopTarget, String> {
        let found =
            self.kept.iter().position(|k| k.url == self.url && k.location == location && k.first == *first);
        let at = if let Some(at) = found {
            at
        } else {
            let url = String::from_utf8_lossy(&self.url);
            let target = hop_target(Some(routes), &url, first, &String::from_utf8_lossy(location));
            let kept =
                Kept { first: first.clone(), url: self.url.clone(), location: location.to_vec(), target };
            if self.kept.len() == KEPT {
                self.kept.remove(0);
            }
            self.kept.push(kept);
            self.kept.len() - 1
        };
        &self.kept[at].target
    }
}

impl Hops {
    /// A request that follows redirects, `req` as rendered (its URL as written), is sent.
    pub(super) fn start(&mut self, routes: &Routes, req: &Request) -> Result<(), String> {
        self.url.clone_from(&req.url);
        routes.route(&mut self.url)?;
        // Most often where the user's last one went: kept, without splitting the URL anew.
        if self.first.as_ref().is_none_or(|o| o.written_at(&self.url).is_none()) {
            self.first = split_origin(&self.url).map(|(o, _)| o);
        }
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
        let Some(first) = self.hops.first.take() else {
            return Next::Stop(
                name,
                format!("{:?} is not an http:// URL", String::from_utf8_lossy(&self.hops.url)),
            );
        };
        let written = std::mem::take(&mut self.hops.written);
        let written_at = self.hops.written_at;
        let made = match self.hops.target(&src.routes, &first, location) {
            Ok(target) => Ok(redirect_to(
                &mut self.req,
                (&entry.method, &written, written_at),
                answer.status,
                target,
                follow.trusted,
            )),
            Err(why) => Err(format!("{}:{}: {why}", src.scenario.flows[flow].hurl.file, entry.pos)),
        };
        self.hops.written = written;
        self.hops.first = Some(first);
        match made {
            Ok(r) => {
                self.hops.url.clone_from(&self.req.url);
                self.hops.redirects.push(r);
                Next::Hop(name)
            }
            Err(why) => Next::Stop(name, why),
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
        self.path_at = None;
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
        // Where the last hop went, as the file would write it, is where its redirect pointed.
        let url = match hops.redirects.last() {
            Some(r) => std::borrow::Cow::Borrowed(r.location.as_str()),
            None => std::borrow::Cow::Owned(src.routes.as_written(&String::from_utf8_lossy(&hops.url))),
        };
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
    fn first_set_cookie(&self) -> (Option<&[u8]>, bool) {
        self.answer.first_set_cookie()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn routes() -> Routes {
        let toml = "[[flow]]\nhurl = \"GET http://app.example/a\"\n";
        let s = stackbench_hurl::Scenario::parse_embedded("s.toml", toml, &[], &[]).unwrap();
        Routes::at(&s, "http://127.0.0.1:9").unwrap()
    }

    /// Where a redirect leads is worked out once per user and kept: the same URL and
    /// `Location` give what `hop_target` gives, a refused `Location` stays refused, and no
    /// more than `KEPT` are kept.
    #[test]
    fn a_kept_target_is_the_one_worked_out() {
        let routes = routes();
        let mut hops = Hops::default();
        let req = Request { url: b"http://app.example/a".to_vec(), ..Request::default() };
        hops.start(&routes, &req).unwrap();
        let first = hops.first.clone().unwrap();
        let fresh = |location: &str| hop_target(Some(&routes), "http://127.0.0.1:9/a", &first, location);
        for location in ["/b", "http://app.example/c?d=1", "http://elsewhere.example/", "/b"] {
            let kept = hops.target(&routes, &first, location.as_bytes()).clone();
            assert_eq!(kept, fresh(location), "{location}");
        }
        assert_eq!(hops.kept.len(), 3, "the second /b was found");
        let moved = hops.target(&routes, &first, b"/b").clone().unwrap();
        assert_eq!(
            (moved.url.as_str(), moved.as_written.as_str()),
            ("http://127.0.0.1:9/b", "http://app.example/b")
        );
        assert!(
            hops.target(&routes, &first, b"http://elsewhere.example/")
                .as_ref()
                .unwrap_err()
                .contains("leaves")
        );
        // From another URL the same `Location` is worked out again.
        hops.url = b"http://127.0.0.1:9/x/y".to_vec();
        let from_elsewhere = hops.target(&routes, &first, b"z").clone().unwrap();
        assert_eq!(from_elsewhere.url, "http://127.0.0.1:9/x/z");
        for n in 0..2 * KEPT {
            let _ = hops.target(&routes, &first, format!("/n{n}").as_bytes());
        }
        assert_eq!(hops.kept.len(), KEPT);
    }
}
