//! `[Options]`: every entry Hurl 8 documents, each with the kind of value it
//! takes and what stackbench does with it ([`Effect`]): honoured, accepted
//! without effect on a measured load (said once in the output), or refused when
//! the file is loaded. [`OPTIONS`] is the one table of them; docs/scenarios.md
//! lists it and a test holds the two equal.

use std::time::Duration;

use crate::error::Pos;
use crate::template::Template;

/// One `name: value` line of `[Options]`.
#[derive(Debug, Clone)]
pub struct EntryOption {
    pub pos: Pos,
    /// The option's name as [`OPTIONS`] spells it.
    pub name: &'static str,
    pub value: OptionValue,
}

/// A literal, or a template evaluated for each request.
#[derive(Debug, Clone)]
pub enum Arg<T> {
    Literal(T),
    Var(Template),
}

/// An option's value, by the kind [`OPTIONS`] gives it.
#[derive(Debug, Clone)]
pub enum OptionValue {
    Bool(Arg<bool>),
    /// A count: `-1` is "without end" (`repeat`, `retry`, `max-redirs`).
    Count(Arg<i64>),
    /// A whole number (`limit-rate`).
    Natural(Arg<u64>),
    Duration(Arg<Duration>),
    Text(Template),
    /// `variable: name=value`: the value as a variable's text and kind.
    Variable {
        name: Box<str>,
        text: Template,
        kind: crate::template::Kind,
    },
    /// `verbosity: brief|verbose|debug`.
    Verbosity(Box<str>),
}

/// The kind of value an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    Bool,
    Count,
    Natural,
    /// A duration whose unit, when none is written, is milliseconds.
    Millis,
    /// A duration whose unit, when none is written, is seconds.
    Seconds,
    Text,
    Variable,
    Verbosity,
}

/// What stackbench does with an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Done as Hurl does it, in `verify` and under load.
    Honoured,
    /// Honoured by `verify`; accepted without effect on a measured load (said once there).
    VerifyOnly,
    /// Accepted; it changes what Hurl prints or how it reaches the server, which stackbench
    /// does not do (said once under load).
    NoEffect,
    /// How the connection reaches the server (TLS, routes): honoured by `verify` for its
    /// request alone, as curl does; a load applies it to the whole run, so every request of
    /// the load must give it alike (else it is refused at its `file:line:col`).
    Reach,
    /// Modelled, and refused when the file is loaded until the engine does it (its reason).
    Refused(&'static str),
}

/// Every `[Options]` entry of Hurl 8: its name, the value it takes and its effect here.
pub const OPTIONS: [(&str, ValueKind, Effect); 42] = [
    ("aws-sigv4", ValueKind::Text, Effect::Refused("AWS signatures are not computed")),
    ("cacert", ValueKind::Text, Effect::Reach),
    ("cert", ValueKind::Text, Effect::Reach),
    ("compressed", ValueKind::Bool, Effect::Honoured),
    ("connect-timeout", ValueKind::Seconds, Effect::NoEffect),
    ("connect-to", ValueKind::Text, Effect::Reach),
    ("delay", ValueKind::Millis, Effect::VerifyOnly),
    ("digest", ValueKind::Bool, Effect::Refused("digest authentication is not done")),
    ("header", ValueKind::Text, Effect::Honoured),
    ("http1.0", ValueKind::Bool, Effect::Refused("requests are sent over HTTP/1.1 or HTTP/2")),
    ("http1.1", ValueKind::Bool, Effect::Honoured),
    ("http2", ValueKind::Bool, Effect::NoEffect),
    ("http3", ValueKind::Bool, Effect::Refused("requests are sent over HTTP/1.1 or HTTP/2")),
    ("insecure", ValueKind::Bool, Effect::Reach),
    ("ipv4", ValueKind::Bool, Effect::NoEffect),
    ("ipv6", ValueKind::Bool, Effect::NoEffect),
    ("key", ValueKind::Text, Effect::Reach),
    ("limit-rate", ValueKind::Natural, Effect::NoEffect),
    ("location", ValueKind::Bool, Effect::Honoured),
    ("location-trusted", ValueKind::Bool, Effect::Honoured),
    ("max-redirs", ValueKind::Count, Effect::Honoured),
    ("max-time", ValueKind::Millis, Effect::NoEffect),
    ("negotiate", ValueKind::Bool, Effect::Refused("SPNEGO authentication is not done")),
    ("netrc", ValueKind::Bool, Effect::Refused("credentials are not read from a .netrc file")),
    ("netrc-file", ValueKind::Text, Effect::Refused("credentials are not read from a .netrc file")),
    ("netrc-optional", ValueKind::Bool, Effect::Refused("credentials are not read from a .netrc file")),
    ("ntlm", ValueKind::Bool, Effect::Refused("NTLM authentication is not done")),
    ("output", ValueKind::Text, Effect::VerifyOnly),
    ("path-as-is", ValueKind::Bool, Effect::Honoured),
    ("pinnedpubkey", ValueKind::Text, Effect::Refused("the server's public key is not pinned")),
    ("proxy", ValueKind::Text, Effect::Refused("requests are not sent through a proxy")),
    ("repeat", ValueKind::Count, Effect::Honoured),
    ("resolve", ValueKind::Text, Effect::Reach),
    ("retry", ValueKind::Count, Effect::VerifyOnly),
    ("retry-interval", ValueKind::Millis, Effect::VerifyOnly),
    ("skip", ValueKind::Bool, Effect::Honoured),
    ("unix-socket", ValueKind::Text, Effect::Refused("requests go over TCP")),
    ("user", ValueKind::Text, Effect::Honoured),
    ("variable", ValueKind::Variable, Effect::Honoured),
    ("verbose", ValueKind::Bool, Effect::NoEffect),
    ("verbosity", ValueKind::Verbosity, Effect::NoEffect),
    ("very-verbose", ValueKind::Bool, Effect::NoEffect),
];

/// The entry of [`OPTIONS`] named `name`.
pub fn option(name: &str) -> Option<&'static (&'static str, ValueKind, Effect)> {
    OPTIONS.iter().find(|(n, _, _)| *n == name)
}

impl EntryOption {
    /// What stackbench does with it.
    pub fn effect(&self) -> Effect {
        option(self.name).map_or(Effect::Refused("unknown option"), |o| o.2)
    }

    /// Its templates.
    pub fn templates(&self) -> Vec<&Template> {
        match &self.value {
            OptionValue::Bool(Arg::Var(t))
            | OptionValue::Count(Arg::Var(t))
            | OptionValue::Natural(Arg::Var(t))
            | OptionValue::Duration(Arg::Var(t))
            | OptionValue::Text(t)
            | OptionValue::Variable { text: t, .. } => vec![t],
            _ => Vec::new(),
        }
    }

    pub(crate) fn templates_mut(&mut self) -> Vec<&mut Template> {
        match &mut self.value {
            OptionValue::Bool(Arg::Var(t))
            | OptionValue::Count(Arg::Var(t))
            | OptionValue::Natural(Arg::Var(t))
            | OptionValue::Duration(Arg::Var(t))
            | OptionValue::Text(t)
            | OptionValue::Variable { text: t, .. } => vec![t],
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_has_each_name_once() {
        let names: Vec<&str> = OPTIONS.iter().map(|o| o.0).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted);
    }

    /// docs/scenarios.md has a row for every option, with its effect.
    #[test]
    fn the_docs_list_every_option() {
        let docs = include_str!("../../../../docs/scenarios.md");
        for (name, _, effect) in OPTIONS {
            let word = match effect {
                Effect::Honoured | Effect::Reach => "honoured",
                Effect::NoEffect | Effect::VerifyOnly => "no effect under load",
                Effect::Refused(_) => "refused",
            };
            let row = docs.lines().find(|l| l.starts_with(&format!("| `{name}` |")));
            let row = row.unwrap_or_else(|| panic!("docs/scenarios.md has no row for `{name}`"));
            assert!(row.contains(word), "the row of `{name}` does not say {word}: {row}");
        }
    }
}
