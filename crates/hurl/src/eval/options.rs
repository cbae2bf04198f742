//! The `[Options]` that act on how an entry is run, worked out for one run of it
//! (their templates rendered): `variable` sets a variable for this entry and the
//! ones after, as in Hurl; `skip`, `repeat`, `retry`, `retry-interval` and
//! `delay` say how the runner sends it; `location`, `location-trusted` and
//! `max-redirs` whether and how far it follows redirects (Hurl's default
//! `max-redirs` is 50).

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
