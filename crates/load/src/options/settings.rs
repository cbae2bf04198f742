//! The settings of a load run's connections and clock taken from [`LoadOptions`]: when a
//! connection is given up for a new one, TLS, the warm-up and the open model's timer slack.

use std::time::Duration;

use super::{DEFAULT_MAX_WARMUP, LoadOptions, limits};
use crate::spec::{Target, Transport};
use crate::spec_error::{SpecError, conflict, invalid};
use crate::values::{Dur, WarmupArg};

impl LoadOptions {
    /// `--no-keepalive` and `--new-connection`: when a connection is given up for a new one
    /// (`None`: kept alive); `iteration` needs a scenario (`file`), whose iterations it means.
    pub(super) fn reuse(&self, file: bool) -> Result<Option<crate::spec::NewConnection>, SpecError> {
        use crate::spec::NewConnection;
        match (self.new_connection, self.no_keepalive) {
            (Some(NewConnection::Iteration), true) => Err(conflict(
                "--no-keepalive",
                "--new-connection iteration",
                "--no-keepalive opens a connection per request",
            )),
            (Some(NewConnection::Iteration), false) if !file => Err(invalid(
                "--new-connection",
                "iteration needs a scenario (--scenario-file or --scenario), whose iterations run \
                 several requests; for a connection per request write --new-connection request",
            )),
            (None, true) => Ok(Some(NewConnection::Request)),
            (chosen, _) => Ok(chosen),
        }
    }

    /// The TLS configuration of an `https://` target (`None` for `http://`, where a TLS flag
    /// is refused). ALPN offers `h2` for HTTP/2 and gRPC, `http/1.1` for HTTP/1.1 requests,
    /// and both for a Hurl file, which then speaks what the server picks (as curl does).
    pub(super) fn tls(
        &self,
        target: &Target,
        transport: Transport,
        file: &stackbench_hurl::Reach,
    ) -> Result<Option<std::sync::Arc<crate::tls::TlsSpec>>, SpecError> {
        let given = [
            ("--cacert", self.cacert.is_some()),
            ("--insecure", self.insecure),
            ("--cert", self.cert.is_some()),
            ("--key", self.key.is_some()),
            ("--no-resume", self.no_resume),
            ("--tls-groups", !self.tls_groups.is_empty()),
            ("--tls-version", self.tls_version.is_some()),
        ];
        if !target.tls {
            return match given.iter().find(|(_, set)| *set) {
                Some((flag, _)) => {
                    Err(invalid(flag, format!("applies to https:// URLs, and {} is http://", target.url)))
                }
                None => Ok(None),
            };
        }
        let hurl = self.scenario_file.as_ref().is_some_and(|p| p.extension().is_some_and(|e| e == "hurl"));
        let alpn = match transport {
            Transport::H2c | Transport::Grpc => crate::tls::Alpn::H2,
            Transport::Http1 if hurl => crate::tls::Alpn::Either,
            Transport::Http1 => crate::tls::Alpn::Http1,
        };
        Ok(Some(std::sync::Arc::new(crate::tls::TlsSpec::new(
            &target.host,
            &self.tls_flags().with_reach(file),
            alpn,
        )?)))
    }

    /// The TLS flags, gathered.
    pub fn tls_flags(&self) -> crate::tls::TlsFlags {
        crate::tls::TlsFlags {
            cacert: self.cacert.clone(),
            insecure: self.insecure,
            cert: self.cert.clone(),
            key: self.key.clone(),
            no_resume: self.no_resume,
            groups: self.tls_groups.clone(),
            version: self.tls_version.clone(),
        }
    }

    /// `--warmup` and `--max-warmup`: the (longest) warm-up, and whether it ends at steady
    /// state. An automatic warm-up cannot go with `--stages` (timed from the start, they would
    /// be cut at a second nobody chose) or `--shard` (the shards would start their measured
    /// windows apart).
    pub(super) fn warmup(&self) -> Result<(Duration, bool), SpecError> {
        let max = self.max_warmup.map(|d| d.0);
        match self.warmup {
            None | Some(WarmupArg::Fixed(_)) if max.is_some() => {
                Err(invalid("--max-warmup", "belongs to --warmup auto"))
            }
            None => Ok((Duration::ZERO, false)),
            Some(WarmupArg::Fixed(d)) => Ok((d.0, false)),
            Some(WarmupArg::Auto) => {
                if self.stages.is_some() {
                    return Err(conflict(
                        "--warmup auto",
                        "--stages",
                        "the stages are timed from the start, so the measured window would begin at an unknown stage",
                    ));
                }
                if self.shard.is_some() {
                    return Err(conflict(
                        "--warmup auto",
                        "--shard",
                        "each shard would begin its measured window at its own second",
                    ));
                }
                let max = max.unwrap_or(DEFAULT_MAX_WARMUP);
                let least =
                    Duration::from_secs((stackbench_record::STEADY_WINDOW + crate::warmup::CONFIRM) as u64);
                if max < least {
                    return Err(invalid(
                        "--max-warmup",
                        format!(
                            "must be at least {}: steady state is judged over 5 seconds and confirmed over 5 more",
                            Dur(least)
                        ),
                    ));
                }
                Ok((max, true))
            }
        }
    }

    /// `--timer-slack`: open model only, below [`limits::TIMER_SLACK`].
    pub(super) fn timer_slack(&self) -> Result<Duration, SpecError> {
        let Some(slack) = self.timer_slack.map(|d| d.0) else { return Ok(Duration::ZERO) };
        if self.rate.is_none() {
            return Err(invalid("--timer-slack", "applies to the open model; add --rate"));
        }
        if slack > limits::TIMER_SLACK {
            return Err(invalid(
                "--timer-slack",
                format!(
                    "at most {:?}, got {slack:?}: every request would wait up to that long",
                    limits::TIMER_SLACK
                ),
            ));
        }
        Ok(slack)
    }
}
