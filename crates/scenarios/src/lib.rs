//! The scenario contracts of stackbench (`docs/scenarios.md`): what a request is and
//! what the right answer to it is, for `event-log`, `dummy`, `db-read` and
//! `bubble-sort`.
//!
//! This crate does no I/O. The reference contestants use it to validate
//! requests ([`event`], [`dbread`], [`contract`]), the load engine to generate
//! requests ([`generate`]) and check responses ([`check`]). Verification, before a
//! contestant is measured, is the built-in scenarios' files (`scenarios/builtin/`, run by
//! `stackbench-run`).

pub mod bubble;
pub mod check;
pub mod contract;
pub mod dbread;
pub mod event;
pub mod generate;
pub mod rng;

use std::fmt;
use std::str::FromStr;

/// One of the standard scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scenario {
    EventLog,
    Dummy,
    DbRead,
    BubbleSort,
}

/// The protocol a scenario is spoken in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP/1.1 JSON (h2c welcome).
    Http,
    /// gRPC over HTTP/2 cleartext.
    Grpc,
}

impl Scenario {
    /// Every scenario, in the order the contract lists them.
    pub const ALL: [Scenario; 4] =
        [Scenario::EventLog, Scenario::Dummy, Scenario::DbRead, Scenario::BubbleSort];

    /// The name used on the command line and in plans.
    pub const fn name(self) -> &'static str {
        match self {
            Scenario::EventLog => "event-log",
            Scenario::Dummy => "dummy",
            Scenario::DbRead => "db-read",
            Scenario::BubbleSort => "bubble-sort",
        }
    }

    pub const fn protocol(self) -> Protocol {
        match self {
            Scenario::BubbleSort => Protocol::Grpc,
            _ => Protocol::Http,
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown scenario name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scenario {0:?}; the scenarios are event-log, dummy, db-read, bubble-sort")]
pub struct UnknownScenario(pub String);

impl FromStr for Scenario {
    type Err = UnknownScenario;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scenario::ALL.into_iter().find(|sc| sc.name() == s).ok_or_else(|| UnknownScenario(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in Scenario::ALL {
            assert_eq!(s.name().parse::<Scenario>(), Ok(s));
        }
        assert!("bubble".parse::<Scenario>().unwrap_err().to_string().contains("bubble-sort"));
    }
}
