//! Warm-ups learned from earlier starts. A contestant whose profile says
//! `warmup = "auto"` (a JIT) waits at its first start until its rate and median
//! latency are steady, which costs at least two of the detector's windows (a flat
//! window, then as long again to confirm it: about 11 s for a server steady at
//! once). Its later starts warm for a fixed time instead: the latest second from
//! which any of its earlier starts was steady, plus one window, so the measured
//! window begins where a start of this process was already steady for a window.
//! Each such warm-up is still judged afterwards over its whole seconds (the
//! record's `warmup`); one found never steady sends the next start back to
//! `auto`. Where the learned time would reach `max-warmup`, `auto` stays (it can
//! only end sooner).

use std::time::Duration;

use stackbench_record::STEADY_WINDOW as WINDOW;
use stackbench_record::Warmup;

/// What the earlier starts of one contestant said about its warm-up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Learned {
    /// The latest second of a warm-up from which a start was steady.
    steady_from_s: Option<u32>,
}

impl Learned {
    /// Takes in one run's warm-up: a start never steady forgets what was learned.
    pub(super) fn observe(&mut self, warmup: &Warmup) {
        if warmup.never_steady {
            self.steady_from_s = None;
        } else if let Some(s) = warmup.steady_from_s {
            self.steady_from_s = Some(self.steady_from_s.map_or(s, |t| t.max(s)));
        }
    }

    /// `profile` with its `auto` warm-up replaced by the learned fixed one, or
    /// `None` when it stays as written (not `auto`, nothing learned yet, or a
    /// learned time that would not end before `max-warmup`).
    pub(super) fn apply(self, profile: &toml::Table) -> Option<toml::Table> {
        if profile.get("warmup").and_then(toml::Value::as_str) != Some("auto") {
            return None;
        }
        let warm = Duration::from_secs(u64::from(self.steady_from_s?) + WINDOW as u64);
        let max = match profile.get("max-warmup").and_then(toml::Value::as_str) {
            Some(text) => text.parse::<stackbench_load::Dur>().ok()?.0,
            None => stackbench_load::DEFAULT_MAX_WARMUP,
        };
        if warm >= max {
            return None;
        }
        let mut fixed = profile.clone();
        fixed.remove("max-warmup");
        fixed.insert("warmup".into(), toml::Value::String(format!("{}s", warm.as_secs())));
        Some(fixed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warmup(steady_from_s: Option<u32>, never_steady: bool) -> Warmup {
        let spec = stackbench_report::synthetic::RunSpec::new("", "dummy", 1, 20.0);
        Warmup {
            auto: true,
            max_s: None,
            steady_from_s,
            never_steady,
            summary: stackbench_report::synthetic::run_record(&spec).summary,
            errors: std::collections::BTreeMap::new(),
            timeline: Vec::new(),
        }
    }

    fn profile(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_later_start_warms_for_the_latest_steady_second_plus_a_window() {
        let auto = profile("warmup = \"auto\"\nmax-warmup = \"20s\"\nconnections = 64");
        let mut l = Learned::default();
        assert_eq!(l.apply(&auto), None, "nothing learned: auto as written");
        l.observe(&warmup(Some(3), false));
        l.observe(&warmup(Some(2), false));
        let fixed = l.apply(&auto).unwrap();
        assert_eq!(fixed, profile("warmup = \"8s\"\nconnections = 64"));
        l.observe(&warmup(Some(9), false));
        assert_eq!(l.apply(&auto).unwrap()["warmup"].as_str(), Some("14s"));
    }

    #[test]
    fn a_start_never_steady_sends_the_next_back_to_auto() {
        let auto = profile("warmup = \"auto\"");
        let mut l = Learned::default();
        l.observe(&warmup(Some(3), false));
        assert!(l.apply(&auto).is_some());
        l.observe(&warmup(None, true));
        assert_eq!(l.apply(&auto), None);
    }

    #[test]
    fn auto_stays_where_the_learned_time_would_reach_its_maximum() {
        let mut l = Learned::default();
        l.observe(&warmup(Some(15), false));
        assert_eq!(l.apply(&profile("warmup = \"auto\"\nmax-warmup = \"20s\"")), None);
        // The engine's default maximum (30 s) leaves room.
        assert_eq!(l.apply(&profile("warmup = \"auto\"")).unwrap()["warmup"].as_str(), Some("20s"));
    }

    #[test]
    fn a_fixed_warmup_is_left_as_written() {
        let mut l = Learned::default();
        l.observe(&warmup(Some(1), false));
        assert_eq!(l.apply(&profile("warmup = \"1s\"")), None);
        assert_eq!(l.apply(&profile("duration = \"2s\"")), None);
    }
}
