//! The `db-read` data set and request: the row formula every store is seeded
//! with, the id rules of `GET /db/{driver}?a=&b=`, and the expected answer.
//!
//! Table `items`: `id INTEGER PRIMARY KEY`, `name VARCHAR(64) NOT NULL`,
//! `price INTEGER NOT NULL`, ids `1..=10000`, `name = "item-<id>"`,
//! `price = (id * 7919) % 10000`. In Redis: hash `item:<id>` with `name` and `price`.
//!
//! The answer always holds two entries, rows `min(a, b)` then `max(a, b)`; when
//! `a == b` that row appears twice ("fetches rows a and b").

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// Number of rows in the data set; ids are `1..=ROWS`.
pub const ROWS: u32 = 10_000;
/// Largest id a request may carry (the contract's `2^31 - 1`); ids above
/// [`ROWS`] are valid but have no row (404).
pub const MAX_ID: u32 = i32::MAX as u32;
/// Ids used when a query parameter is absent.
pub const DEFAULT_IDS: (u32, u32) = (1, 2);
/// The SQL table's DDL (portable across PostgreSQL, MySQL/MariaDB and SQLite).
pub const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, name VARCHAR(64) NOT NULL, price INTEGER NOT NULL)";

/// One row of `items`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    pub id: u32,
    pub name: String,
    pub price: u32,
}

/// The price of row `id`.
pub const fn price(id: u32) -> u32 {
    ((id as u64 * 7919) % 10_000) as u32
}

/// Row `id` as the data set defines it (for any id; only `1..=ROWS` are stored).
pub fn item(id: u32) -> Item {
    Item { id, name: format!("item-{id}"), price: price(id) }
}

/// The Redis key of row `id`.
pub fn redis_key(id: u32) -> String {
    format!("item:{id}")
}

/// Why a query string's ids are not acceptable (a 400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("query parameter `{param}` must be an integer in 1..=2147483647, got {value:?}")]
    Invalid { param: &'static str, value: String },
    #[error("query parameter `{0}` appears more than once; send it once")]
    Duplicate(&'static str),
}

/// Reads `a` and `b` from a raw query string (`a=1&b=2`, no leading `?`).
/// Absent parameters take [`DEFAULT_IDS`]; other parameters are ignored.
pub fn parse_ids(query: Option<&str>) -> Result<(u32, u32), IdError> {
    let (mut a, mut b) = (None, None);
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let (param, slot) = match key {
            "a" => ("a", &mut a),
            "b" => ("b", &mut b),
            _ => continue,
        };
        if slot.is_some() {
            return Err(IdError::Duplicate(param));
        }
        *slot = Some(parse_id(param, value)?);
    }
    Ok((a.unwrap_or(DEFAULT_IDS.0), b.unwrap_or(DEFAULT_IDS.1)))
}

/// One id: decimal digits only (no sign, no spaces), `1..=MAX_ID`.
pub fn parse_id(param: &'static str, value: &str) -> Result<u32, IdError> {
    let invalid = || IdError::Invalid { param, value: value.to_owned() };
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid());
    }
    match value.parse::<u32>() {
        Ok(id) if (1..=MAX_ID).contains(&id) => Ok(id),
        _ => Err(invalid()),
    }
}

/// The ids of the answer, in answer order.
pub fn answer_ids(a: u32, b: u32) -> [u32; 2] {
    [a.min(b), a.max(b)]
}

/// The first of `a`, `b` that has no row, if any (a 404).
pub fn missing_id(a: u32, b: u32) -> Option<u32> {
    answer_ids(a, b).into_iter().find(|&id| id == 0 || id > ROWS)
}

/// Appends the exact JSON answer for ids `a` and `b` (both must exist) to `out`.
pub fn write_answer(out: &mut String, a: u32, b: u32) {
    out.push('[');
    for (i, id) in answer_ids(a, b).into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, r#"{{"id": {id}, "name": "item-{id}", "price": {}}}"#, price(id));
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_matches_the_contract_example() {
        assert_eq!(item(1), Item { id: 1, name: "item-1".into(), price: 7919 });
        assert_eq!(item(2).price, 5838);
        assert_eq!(price(ROWS), 0);
        assert!((1..=ROWS).all(|id| price(id) < 10_000));
    }

    #[test]
    fn ids_default_and_parse() {
        assert_eq!(parse_ids(None), Ok((1, 2)));
        assert_eq!(parse_ids(Some("")), Ok((1, 2)));
        assert_eq!(parse_ids(Some("b=9&x=y&a=10000")), Ok((10000, 9)));
        assert_eq!(parse_ids(Some("a=2147483647")), Ok((MAX_ID, 2)));
    }

    #[test]
    fn bad_ids_name_the_parameter() {
        for q in ["a=0", "a=-1", "a=+1", "a=1.0", "a=", "a", "a=2147483648", "a=99999999999", "a=%31"] {
            let e = parse_ids(Some(q)).unwrap_err();
            assert!(e.to_string().contains("`a`"), "{q}: {e}");
        }
        assert_eq!(parse_ids(Some("b=1&b=2")), Err(IdError::Duplicate("b")));
    }

    #[test]
    fn answer_is_ordered_and_doubles_equal_ids() {
        let mut s = String::new();
        write_answer(&mut s, 2, 1);
        assert_eq!(
            s,
            r#"[{"id": 1, "name": "item-1", "price": 7919}, {"id": 2, "name": "item-2", "price": 5838}]"#
        );
        let parsed: Vec<Item> = serde_json::from_str(&s).unwrap();
        assert_eq!(parsed, vec![item(1), item(2)]);
        s.clear();
        write_answer(&mut s, 7, 7);
        assert_eq!(serde_json::from_str::<Vec<Item>>(&s).unwrap(), vec![item(7), item(7)]);
    }

    #[test]
    fn missing_rows() {
        assert_eq!(missing_id(1, ROWS), None);
        assert_eq!(missing_id(ROWS + 1, 3), Some(ROWS + 1));
    }
}
