//! Is a measured run a result? A run in which the tool failed, nothing
//! completed, the host stalled the generator, or the contestant sat idle
//! while every user waited on it measures nothing about the contestant: it
//! gets an [`Invalid`] of its own kind, is named in the terminal and the
//! report, is left out of the statistics, and is measured once more.

use stackbench_record::{Invalid, Model, RunRecord};

/// Below this CPU (percent of one core) in every sample, a contestant that
/// has every user waiting on it is not working: it is starved.
pub const STARVED_CPU_PERCENT: f64 = 10.0;

/// The reason `record` is not a result, if it is not. An interrupted run is
/// judged by what ran (it is left out for being interrupted anyway).
pub fn assess(record: &RunRecord) -> Option<Invalid> {
    if let Some(i) = &record.invalid {
        return Some(i.clone());
    }
    if record.interrupted {
        return None;
    }
    let s = &record.summary;
    if s.requests == 0 {
        return Some(Invalid::new(
            Invalid::NO_PROGRESS,
            format!("no request completed in the {:.1} s measured (not even an error)", s.duration_s),
        ));
    }
    if let Some(ms) = record.params.duration_ms {
        let expected = (ms / 1000) as usize;
        if record.timeline.len() < expected {
            return Some(Invalid::new(
                Invalid::STALLED_HOST,
                format!(
                    "the timeline has {} of the {expected} seconds measured: the load generator did not \
                     run for the rest (the host stalled it)",
                    record.timeline.len()
                ),
            ));
        }
    }
    if let (Model::Closed { connections, .. }, Some(samples)) = (&record.params.model, &record.samples) {
        let users = u64::from(*connections);
        // Waiting the whole second: (nearly) every user had a request out when it was cut, and
        // fewer answers came in it than there are users. (A closed model's users have a request
        // out at nearly every cut, and at the end of a run, which cuts off what is under way.)
        let all_waiting = !record.timeline.is_empty()
            && record.timeline.iter().all(|sec| sec.in_flight * 10 >= users * 9 && sec.completed < users);
        let idle =
            !samples.points.is_empty() && samples.points.iter().all(|p| p.cpu_percent < STARVED_CPU_PERCENT);
        if users > 0 && all_waiting && idle {
            return Some(Invalid::new(
                Invalid::STARVED,
                format!(
                    "every one of the {users} users waited on the contestant in every second while its CPU \
                     stayed under {STARVED_CPU_PERCENT:.0}% of a core (at most {:.1}%): it was not running, \
                     not working",
                    samples.points.iter().map(|p| p.cpu_percent).fold(0.0, f64::max)
                ),
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use stackbench_report::synthetic::{RunSpec, run_record};

    use super::*;

    fn good() -> RunRecord {
        let mut r = run_record(&RunSpec::new("a", "dummy", 1, 1_000.0));
        r.params.duration_ms = Some(10_000);
        r
    }

    fn kind(r: &RunRecord) -> Option<String> {
        assess(r).map(|i| i.kind)
    }

    #[test]
    fn a_normal_run_is_a_result() {
        let r = good();
        assert_eq!(r.timeline.len(), 10);
        assert_eq!(kind(&r), None);
    }

    #[test]
    fn nothing_completed_is_no_progress() {
        let mut r = good();
        r.summary.requests = 0;
        r.summary.ok = 0;
        assert_eq!(kind(&r).as_deref(), Some(Invalid::NO_PROGRESS));
        r.interrupted = true;
        assert_eq!(kind(&r), None, "an interrupted run is left out for that already");
    }

    /// Regression: a db-read run with 3 of its 5 timeline seconds was averaged in.
    #[test]
    fn missing_seconds_are_a_stalled_host() {
        let mut r = good();
        r.timeline.truncate(6);
        let i = assess(&r).unwrap();
        assert_eq!(i.kind, Invalid::STALLED_HOST);
        assert!(i.reason.contains("6 of the 10 seconds"), "{}", i.reason);
    }

    #[test]
    fn an_idle_contestant_with_every_user_waiting_is_starved() {
        let mut r = good();
        let Model::Closed { connections, .. } = r.params.model else { panic!("closed model") };
        for p in &mut r.samples.as_mut().unwrap().points {
            p.cpu_percent = 2.0;
        }
        // Every user has a request out at every cut, as in any closed-model run: answered
        // within each second, it is a result however idle the contestant looks.
        for s in &mut r.timeline {
            s.in_flight = u64::from(connections);
        }
        assert_eq!(kind(&r), None);
        for s in &mut r.timeline {
            s.completed = 0;
        }
        assert_eq!(kind(&r).as_deref(), Some(Invalid::STARVED));
        // Busy, or not everyone waiting: a result.
        r.samples.as_mut().unwrap().points[3].cpu_percent = 40.0;
        assert_eq!(kind(&r), None);
        r.samples.as_mut().unwrap().points[3].cpu_percent = 2.0;
        r.timeline[2].in_flight = u64::from(connections) / 2;
        assert_eq!(kind(&r), None);
    }

    #[test]
    fn the_engines_verdict_stands() {
        let mut r = good();
        r.invalid = Some(Invalid::new(Invalid::TOOL_FAILURE, "sb-load-0 panicked"));
        assert_eq!(kind(&r).as_deref(), Some(Invalid::TOOL_FAILURE));
    }
}
