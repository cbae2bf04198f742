//! Wall-clock times as the records hold them (milliseconds since the Unix
//! epoch) and their UTC calendar form, for result-directory names and report
//! headers (the calendar is humantime's).

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A moment in UTC, to the second (proleptic Gregorian calendar).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utc {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

impl Utc {
    /// The UTC calendar time of `ms` since the Unix epoch (humantime's RFC 3339 form, read back).
    pub fn from_ms(ms: u64) -> Utc {
        let t = UNIX_EPOCH + std::time::Duration::from_secs(ms / 1000);
        // `YYYY-MM-DDTHH:MM:SSZ`
        let s = humantime::format_rfc3339_seconds(t).to_string();
        let n = |r: std::ops::Range<usize>| s.get(r).and_then(|x| x.parse::<u32>().ok()).unwrap_or(0);
        Utc {
            year: i64::from(n(0..4)),
            month: n(5..7),
            day: n(8..10),
            hour: n(11..13),
            minute: n(14..16),
            second: n(17..19),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_dates() {
        let u = |ms| {
            let t = Utc::from_ms(ms);
            (t.year, t.month, t.day, t.hour, t.minute, t.second)
        };
        assert_eq!(u(0), (1970, 1, 1, 0, 0, 0));
        assert_eq!(u(1_764_460_800_000), (2025, 11, 30, 0, 0, 0));
        assert_eq!(u(951_782_400_000 + 3_661_000), (2000, 2, 29, 1, 1, 1));
        assert_eq!(u(951_868_800_000), (2000, 3, 1, 0, 0, 0));
        assert_eq!(u(4_107_542_399_999), (2100, 2, 28, 23, 59, 59));
        assert_eq!(u(4_107_542_400_000), (2100, 3, 1, 0, 0, 0), "2100 is not a leap year");
    }
}
