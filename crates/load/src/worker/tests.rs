//! The worker's arithmetic: the timer-slack grid and the split of users and counts.

use super::*;

#[test]
fn slack_wakes_on_a_grid_from_the_start() {
    let start = Instant::now();
    let at = |us: u64| start + Duration::from_micros(us);
    let slack = Duration::from_micros(200);
    assert_eq!(slack_wake(start, at(1), slack), at(200));
    assert_eq!(slack_wake(start, at(199), slack), at(200));
    assert_eq!(slack_wake(start, at(200), slack), at(200));
    assert_eq!(slack_wake(start, at(201), slack), at(400));
    assert_eq!(slack_wake(start, at(0), slack), at(0));
    // Without slack every request wakes at its own due time.
    assert_eq!(slack_wake(start, at(123), Duration::ZERO), at(123));
    // Hours into a run the grid is still exact.
    let late = 3_600_000_000 * 5 + 17;
    assert_eq!(slack_wake(start, at(late), slack), at(late - 17 + 200));
}

#[test]
fn splits_add_up() {
    for total in 0..50 {
        for parts in 1..7 {
            assert_eq!((0..parts).map(|i| split(total, parts, i)).sum::<usize>(), total);
        }
    }
}
