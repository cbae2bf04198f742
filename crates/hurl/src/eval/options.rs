//! The `[Options]` that act on how an entry is run, worked out for one run of it
//! (their templates rendered): `variable` sets a variable for this entry and the
//! ones after, as in Hurl; `skip`, `repeat`, `retry`, `retry-interval` and
//! `delay` say how the runner sends it; `location`, `location-trusted` and
//! `max-redirs` whether and how far it follows redirects (Hurl's default
//! `max-redirs` is 50); `insecure`, `cacert`, `cert`, `key`, `resolve` and
//! `connect-to` how its connection reaches the server ([`Reach`]).

use std::time::Duration;

use crate::model::options::Arg;
use crate::model::{Entry, OptionValue};
use crate::template::{RenderError, Template, Vars};

/// How an entry is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOptions {
    /// `skip: true`: not sent.
    pub skip: bool,
    /// How many times it is sent (`repeat`; `None`: without end).
    pub repeat: Option<u64>,
    /// How many more times it is sent while its checks fail (`retry`; `None`: without end).
    pub retry: Option<u64>,
    pub retry_interval: Duration,
    /// Waited before it is sent.
    pub delay: Duration,
    /// `location` (or `location-trusted`): redirects are followed.
    pub location: bool,
    /// `location-trusted`: the `Authorization` header goes along to another host too.
    pub location_trusted: bool,
    /// The most redirects followed (`max-redirs`; `None`: without end).
    pub max_redirs: Option<u64>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            skip: false,
            repeat: Some(1),
            retry: Some(0),
            retry_interval: Duration::from_secs(1),
            delay: Duration::ZERO,
            location: false,
            location_trusted: false,
            max_redirs: Some(50),
        }
    }
}

impl Entry {
    /// Its run options, its `variable` options set in `vars` first.
    pub fn run_options(&self, vars: &mut Vars) -> Result<RunOptions, RenderError> {
        let mut o = RunOptions::default();
        for opt in &self.options {
            match (opt.name, &opt.value) {
                ("variable", OptionValue::Variable { name, text, kind }) => {
                    let value = text.render_string(vars)?;
                    vars.set(name, &value, *kind);
                }
                ("skip", OptionValue::Bool(b)) => o.skip = flag(b, vars)?,
                ("repeat", OptionValue::Count(n)) => o.repeat = count(n, vars)?,
                ("retry", OptionValue::Count(n)) => o.retry = count(n, vars)?,
                ("retry-interval", OptionValue::Duration(d)) => o.retry_interval = duration(d, vars)?,
                ("delay", OptionValue::Duration(d)) => o.delay = duration(d, vars)?,
                ("location", OptionValue::Bool(b)) => o.location = flag(b, vars)?,
                ("location-trusted", OptionValue::Bool(b)) => {
                    o.location_trusted = flag(b, vars)?;
                    o.location |= o.location_trusted;
                }
                ("max-redirs", OptionValue::Count(n)) => o.max_redirs = count(n, vars)?,
                _ => {}
            }
        }
        Ok(o)
    }
}

/// How one entry's connection reaches its server, as its `[Options]` say (curl's options,
/// for this request alone): the server's certificate not checked (`insecure`), the
/// authorities trusted (`cacert`), a client certificate and its key (`cert`, `key`), and
/// where the connection goes (`resolve`, `connect-to`, in curl's syntax). File paths are
/// as curl reads them, from the working directory. `insecure: false` is the default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    pub insecure: bool,
    pub cacert: Option<String>,
    pub cert: Option<String>,
    pub key: Option<String>,
    pub resolve: Vec<String>,
    pub connect_to: Vec<String>,
}

/// The options [`Reach`] gathers.
pub const REACH_OPTIONS: [&str; 6] = ["cacert", "cert", "connect-to", "insecure", "key", "resolve"];

impl Entry {
    /// How its connection reaches the server (`None` when no option says).
    pub fn reach(&self, vars: &mut Vars) -> Result<Option<Reach>, RenderError> {
        let mut r: Option<Reach> = None;
        for opt in self.options.iter().filter(|o| REACH_OPTIONS.contains(&o.name)) {
            let r = r.get_or_insert_with(Reach::default);
            match &opt.value {
                OptionValue::Bool(b) => r.insecure = flag(b, vars)?,
                OptionValue::Text(t) => {
                    let v = t.render_string(vars)?;
                    match opt.name {
                        "cacert" => r.cacert = Some(v),
                        "cert" => r.cert = Some(v),
                        "key" => r.key = Some(v),
                        "resolve" => r.resolve.push(v),
                        _ => r.connect_to.push(v),
                    }
                }
                _ => {}
            }
        }
        Ok(r)
    }
}

/// A boolean option's value.
pub(crate) fn flag(b: &Arg<bool>, vars: &mut Vars) -> Result<bool, RenderError> {
    match b {
        Arg::Literal(b) => Ok(*b),
        Arg::Var(t) => match t.render_string(vars)?.as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            other => Err(bad(t, format!("{other:?} is not `true` or `false`"))),
        },
    }
}

/// A count: `None` for `-1` (without end).
fn count(n: &Arg<i64>, vars: &mut Vars) -> Result<Option<u64>, RenderError> {
    let n = match n {
        Arg::Literal(n) => *n,
        Arg::Var(t) => {
            let s = t.render_string(vars)?;
            s.parse().map_err(|_| bad(t, format!("{s:?} is not a count")))?
        }
    };
    Ok(u64::try_from(n).ok())
}

/// A duration (a template's value in milliseconds).
fn duration(d: &Arg<Duration>, vars: &mut Vars) -> Result<Duration, RenderError> {
    match d {
        Arg::Literal(d) => Ok(*d),
        Arg::Var(t) => {
            let s = t.render_string(vars)?;
            s.parse()
                .map(Duration::from_millis)
                .map_err(|_| bad(t, format!("{s:?} is not a duration in milliseconds")))
        }
    }
}

fn bad(t: &Template, why: String) -> RenderError {
    let (name, pos) = t.vars().first().map(|(n, p)| ((*n).to_owned(), *p)).unwrap_or_default();
    RenderError::expr(&name, pos, why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::Kind;

    #[test]
    fn reach_gathers_an_entrys_tls_and_route_options() {
        let text = "GET http://a.test/\n[Options]\ninsecure: true\ncacert: ca.pem\nresolve: a.test:80:127.0.0.1\n\
                    connect-to: b.test:80:a.test:{{port}}\nconnect-to: c.test:80:a.test:81\nretry: 2\n\n\
                    GET http://a.test/\n[Options]\nretry: 2\n";
        let f = crate::parse::parse("r.hurl", text).unwrap();
        let mut vars = Vars::new(1);
        vars.set("port", "8080", Kind::String);
        let r = f.entries[0].reach(&mut vars).unwrap().unwrap();
        assert!(r.insecure);
        assert_eq!(r.cacert.as_deref(), Some("ca.pem"));
        assert_eq!(r.resolve, ["a.test:80:127.0.0.1"]);
        assert_eq!(r.connect_to, ["b.test:80:a.test:8080", "c.test:80:a.test:81"]);
        assert_eq!((r.cert, r.key), (None, None));
        assert_eq!(f.entries[1].reach(&mut vars).unwrap(), None);
    }
}
