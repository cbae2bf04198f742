//! Why a scenario file's requests were not sent: a request whose variables have no value
//! (an expression that overflowed or divided by zero, for instance) is counted `check` on
//! its name and never sent; [`NotSent`] keeps the reason beside the count, so a run says
//! what to fix rather than only how often. A few distinct reasons are kept per name
//! ([`NotSent::KEPT`]); the rest are counted together, so a record stays small whatever a
//! file's values do.

use serde::{Deserialize, Serialize};

/// Requests of one name that were not sent for one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotSent {
    /// `file:line:col: variable `x` has no value (`x` = `a / b`: division by zero)`.
    pub reason: String,
    pub requests: u64,
}

impl NotSent {
    /// Distinct reasons kept per request name.
    pub const KEPT: usize = 4;
    /// What the requests past the kept reasons are counted under.
    pub const OTHER: &'static str = "other reasons";

    /// Counts `n` requests not sent for `reason` into `list`: under its own entry while fewer
    /// than [`NotSent::KEPT`] are kept, else under [`NotSent::OTHER`].
    pub fn add(list: &mut Vec<NotSent>, reason: &str, n: u64) {
        if let Some(e) = list.iter_mut().find(|e| e.reason == reason) {
            e.requests += n;
            return;
        }
        let kept = list.iter().filter(|e| e.reason != NotSent::OTHER).count();
        let reason = if kept < NotSent::KEPT { reason } else { NotSent::OTHER };
        match list.iter_mut().find(|e| e.reason == reason) {
            Some(e) => e.requests += n,
            None => list.push(NotSent { reason: reason.to_owned(), requests: n }),
        }
    }

    /// Adds every entry of `other` into `list`.
    pub fn merge(list: &mut Vec<NotSent>, other: &[NotSent]) {
        for e in other {
            NotSent::add(list, &e.reason, e.requests);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_reasons_are_kept_and_the_rest_counted_together() {
        let mut list = Vec::new();
        for (i, reason) in ["a", "b", "a", "c", "d", "e", "f", "e"].iter().enumerate() {
            NotSent::add(&mut list, reason, i as u64 + 1);
        }
        let got: Vec<(&str, u64)> = list.iter().map(|e| (e.reason.as_str(), e.requests)).collect();
        assert_eq!(got, [("a", 4), ("b", 2), ("c", 4), ("d", 5), (NotSent::OTHER, 6 + 7 + 8)]);
        let mut merged = vec![NotSent { reason: "z".into(), requests: 1 }];
        NotSent::merge(&mut merged, &list);
        assert_eq!(merged.iter().map(|e| e.requests).sum::<u64>(), 1 + 4 + 2 + 4 + 5 + 21);
        assert_eq!(merged.len(), NotSent::KEPT + 1);
    }
}
