//! Wall-clock times as the records hold them (milliseconds since the Unix
//! epoch) and their UTC calendar form, for result-directory names and report
//! headers, without a date library.

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
    /// The UTC calendar time of `ms` since the Unix epoch.
    pub fn from_ms(ms: u64) -> Utc {
        let secs = ms / 1000;
        let (days, rem) = (secs / 86_400, secs % 86_400);
        let (year, month, day) = civil_from_days(days as i64);
        let rem = rem as u32;
        Utc { year, month, day, hour: rem / 3600, minute: rem % 3600 / 60, second: rem % 60 }
    }
}

/// Days since 1970-01-01 to `(year, month, day)` (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
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

    #[test]
    fn every_day_follows_the_previous_one() {
        // 1970 to 2200: the day after each date is the next calendar date.
        let mut prev = civil_from_days(0);
        for z in 1..84_000 {
            let next = civil_from_days(z);
            let (y, m, d) = prev;
            let ok =
                next == (y, m, d + 1) || (next.2 == 1 && (next == (y, m + 1, 1) || next == (y + 1, 1, 1)));
            assert!(ok, "{prev:?} then {next:?}");
            assert!(d <= 31 && (1..=12).contains(&m));
            prev = next;
        }
    }
}
