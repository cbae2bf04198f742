//! The small value types of `stackbench load`'s flags and of a plan's load
//! table: durations (`10s`, `100ms`, `2m`), CPU lists (`1`, `0-3,6`), stages
//! (`30s:100,2m:100,10s:0`), `--warmup` (a duration or `auto`) and
//! `--check-every` (`auto` or K).
//!
//! Each parses from a string with [`std::str::FromStr`] (what clap calls) and
//! deserializes from the same string (what a TOML plan holds), so the flag and
//! the plan key accept exactly the same spellings and give the same message.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;

/// A duration written like `10s`, `100ms`, `1m30s` (humantime's syntax).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct Dur(pub Duration);

impl FromStr for Dur {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if t.is_empty() {
            return Err("empty duration; write it like 10s, 2m or 100ms".into());
        }
        if t.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return Err(format!("{t:?} has no unit; write it like {t}s or {t}ms"));
        }
        humantime::parse_duration(t)
            .map(Dur)
            .map_err(|e| format!("{t:?} is not a duration ({e}); write it like 10s, 2m or 100ms"))
    }
}

impl TryFrom<String> for Dur {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", humantime::format_duration(self.0))
    }
}

/// A share written like `5%` (or a fraction, `0.05`), strictly between 0 and 100%.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub struct Percent(pub f64);

impl FromStr for Percent {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let value = match t.strip_suffix('%') {
            Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
            None => t.parse::<f64>(),
        };
        match value {
            Ok(v) if v > 0.0 && v < 1.0 => Ok(Percent(v)),
            _ => Err(format!("{t:?} is not a share between 0 and 100%; write it like 5% or 0.05")),
        }
    }
}

impl TryFrom<String> for Percent {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

/// `I/N`: the I-th (1-based) of N equal slices of a load (`--shard`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct Shard {
    /// 1-based.
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// The part `[from, to)` of `total` items this shard takes: k6's
    /// execution-segment rule, boundaries at `total * (i-1)/N` and `total * i/N`
    /// rounded down, so the slices are as even as integers allow and add up.
    pub fn slice(self, total: u64) -> (u64, u64) {
        let (i, n) = (u64::from(self.index), u64::from(self.count));
        (total * (i - 1) / n, total * i / n)
    }

    /// How many of `total` items this shard takes.
    pub fn share(self, total: u64) -> u64 {
        let (from, to) = self.slice(total);
        to - from
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "{s:?} is not a shard; write I/N, like 2/3 (the second of three), with 1 <= I <= N <= 1000"
            )
        };
        let (i, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) =
            (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if index == 0 || index > count || count > 1000 {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl TryFrom<String> for Shard {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A wall-clock time: RFC 3339 (`2026-12-01T10:00:05Z`, fractions allowed)
/// or milliseconds since the Unix epoch (`--start-at`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct WallTime(pub std::time::SystemTime);

impl FromStr for WallTime {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if let Ok(ms) = t.parse::<u64>() {
            return Ok(WallTime(std::time::UNIX_EPOCH + Duration::from_millis(ms)));
        }
        humantime::parse_rfc3339_weak(t).map(WallTime).map_err(|e| {
            format!(
                "{t:?} is not a time ({e}); write RFC 3339, like 2026-12-01T10:00:05Z, or Unix milliseconds"
            )
        })
    }
}

impl TryFrom<String> for WallTime {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

/// A list of CPU numbers like `1`, `0-3` or `0,2-3` (the `taskset -c`
/// syntax), ascending, each once; CPUs above 4095 are refused. The one CPU
/// list of stackbench: `--cpus` and a plan's `cpus`/`load_cpus` (where a bare
/// integer is taken too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

impl FromStr for CpuList {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not a CPU list; write CPU numbers and ranges, like 1, 0-3 or 0,2-3");
        let mut cpus = Vec::new();
        for part in s.split(',').map(str::trim) {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let (a, b): (usize, usize) =
                (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
            if b < a || b > 4095 {
                return Err(bad());
            }
            cpus.extend(a..=b);
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(CpuList(cpus))
    }
}

/// As it would be written: `0-3,6` (runs of two or more as ranges).
impl fmt::Display for CpuList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < self.0.len() {
            let mut j = i;
            while j + 1 < self.0.len() && self.0[j + 1] == self.0[j] + 1 {
                j += 1;
            }
            parts.push(if j > i { format!("{}-{}", self.0[i], self.0[j]) } else { self.0[i].to_string() });
            i = j + 1;
        }
        f.write_str(&parts.join(","))
    }
}

impl<'de> Deserialize<'de> for CpuList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(usize),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) if n <= 4095 => Ok(CpuList(vec![n])),
            Raw::Int(n) => Err(serde::de::Error::custom(format!("CPU {n} is above 4095"))),
            Raw::Text(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// One stage: move linearly to `target` over `duration`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageSpec {
    pub duration: Duration,
    pub target: f64,
}

/// `--stages 30s:100,2m:100,10s:0`: a list of `DURATION:TARGET`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub struct Stages(pub Vec<StageSpec>);

impl FromStr for Stages {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((d, t)) = part.split_once(':') else {
                return Err(format!("stage {part:?} is not DURATION:TARGET, like 30s:100"));
            };
            let duration = d.parse::<Dur>().map_err(|e| format!("stage {part:?}: {e}"))?.0;
            let target: f64 = t
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("stage {part:?}: target {t:?} is not a number >= 0"))?;
            if duration.is_zero() {
                return Err(format!("stage {part:?}: a stage must last longer than 0s"));
            }
            out.push(StageSpec { duration, target });
        }
        if out.is_empty() {
            return Err("no stages given; write them like 30s:100,2m:100,10s:0".into());
        }
        Ok(Stages(out))
    }
}

impl TryFrom<String> for Stages {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

/// `--warmup`: a fixed duration, or `auto`: until the warm-up's per-second rate and
/// median latency are steady (`crate::warmup`), at most `--max-warmup`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum WarmupArg {
    Fixed(Dur),
    Auto,
}

impl FromStr for WarmupArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "auto" => Ok(WarmupArg::Auto),
            t => t.parse().map(WarmupArg::Fixed).map_err(|e| format!("{e}, or `auto`")),
        }
    }
}

impl TryFrom<String> for WarmupArg {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl fmt::Display for WarmupArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WarmupArg::Fixed(d) => d.fmt(f),
            WarmupArg::Auto => f.write_str("auto"),
        }
    }
}

/// `--check-every`: `auto` (every response while checking costs under 5% of
/// a worker's time, then every 2nd, 4th, …) or a fixed K (`0` = never).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CheckEvery {
    #[default]
    Auto,
    Every(u32),
}

impl FromStr for CheckEvery {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "auto" => Ok(CheckEvery::Auto),
            t => t
                .parse()
                .map(CheckEvery::Every)
                .map_err(|_| format!("{t:?} is neither `auto` nor a whole number (0 = never check)")),
        }
    }
}

impl<'de> Deserialize<'de> for CheckEvery {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u32),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => Ok(CheckEvery::Every(n)),
            Raw::S(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_as_evenly_as_integers_allow() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
        for bad in ["0/3", "4/3", "3", "a/b", "1/1001"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        for total in [0u64, 1, 2, 7, 10, 100, 101] {
            for n in 1..=7u32 {
                let shares: Vec<u64> = (1..=n).map(|i| Shard { index: i, count: n }.share(total)).collect();
                assert_eq!(shares.iter().sum::<u64>(), total, "{total} over {n}");
                assert!(shares.iter().max().unwrap() - shares.iter().min().unwrap() <= 1, "{shares:?}");
            }
        }
        assert_eq!(Shard { index: 3, count: 3 }.slice(10), (6, 10));
    }

    #[test]
    fn wall_times() {
        let t = "2026-12-01T10:00:05Z".parse::<WallTime>().unwrap().0;
        assert_eq!(t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs(), 1_796_119_205);
        let ms = "1796119205250".parse::<WallTime>().unwrap().0;
        assert_eq!(ms.duration_since(t).unwrap(), Duration::from_millis(250));
        assert!("tomorrow".parse::<WallTime>().unwrap_err().contains("RFC 3339"));
    }

    #[test]
    fn warmups_are_durations_or_auto() {
        assert_eq!("auto".parse::<WarmupArg>(), Ok(WarmupArg::Auto));
        assert_eq!("2s".parse::<WarmupArg>(), Ok(WarmupArg::Fixed(Dur(Duration::from_secs(2)))));
        assert!("soon".parse::<WarmupArg>().unwrap_err().ends_with("or `auto`"));
        assert_eq!(WarmupArg::Auto.to_string(), "auto");
    }

    #[test]
    fn durations() {
        assert_eq!("10s".parse::<Dur>().unwrap().0, Duration::from_secs(10));
        assert_eq!("100ms".parse::<Dur>().unwrap().0, Duration::from_millis(100));
        assert_eq!("1m30s".parse::<Dur>().unwrap().0, Duration::from_secs(90));
        assert!("10".parse::<Dur>().unwrap_err().contains("no unit"));
        assert!("ten seconds".parse::<Dur>().unwrap_err().contains("not a duration"));
        assert!("".parse::<Dur>().is_err());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!("1".parse::<CpuList>().unwrap().0, vec![1]);
        assert_eq!("0-3,6".parse::<CpuList>().unwrap().0, vec![0, 1, 2, 3, 6]);
        assert_eq!("0, 0-1".parse::<CpuList>().unwrap().0, vec![0, 1]);
        for bad in ["", "a", "3-1", "1,", "-1"] {
            assert!(bad.parse::<CpuList>().is_err(), "{bad}");
        }
    }

    #[test]
    fn stages() {
        let s = "30s:100, 2m:100,10s:0".parse::<Stages>().unwrap().0;
        assert_eq!(s.len(), 3);
        assert_eq!(s[1], StageSpec { duration: Duration::from_mins(2), target: 100.0 });
        assert!("30s".parse::<Stages>().unwrap_err().contains("DURATION:TARGET"));
        assert!("30s:-1".parse::<Stages>().unwrap_err().contains(">= 0"));
        assert!("0s:5".parse::<Stages>().unwrap_err().contains("longer than 0s"));
        assert!("x:5".parse::<Stages>().is_err());
        assert!("".parse::<Stages>().is_err());
    }

    #[test]
    fn check_every() {
        assert_eq!("auto".parse::<CheckEvery>(), Ok(CheckEvery::Auto));
        assert_eq!("4".parse::<CheckEvery>(), Ok(CheckEvery::Every(4)));
        assert!("often".parse::<CheckEvery>().is_err());
    }
}
