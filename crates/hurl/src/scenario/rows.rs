//! Rows of data for the variables of an iteration: a CSV file (RFC 4180:
//! a header line naming the variables, commas, `"`-quoted fields with `""`
//! for a quote) or a JSON-lines file (one object per line, its keys naming
//! the variables). Each row is one iteration's values, in file order or
//! drawn at random.

use crate::error::{ErrorKind, ParseError, Pos};
use crate::template::Kind;

/// Which row an iteration gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Row `n mod rows` for iteration `n`.
    Sequence,
    /// A row drawn uniformly.
    Random,
}

/// The rows of one file: variable names and, per row, each variable's text and kind.
#[derive(Debug, Clone, PartialEq)]
pub struct Rows {
    pub columns: Vec<String>,
    /// Per row, each column's text and kind.
    pub values: Vec<Vec<(String, Kind)>>,
    pub order: Order,
}

impl Rows {
    /// Parses `text`, CSV unless `file` ends in `.jsonl` or `.ndjson`.
    pub fn parse(file: &str, text: &str, order: Order) -> Result<Rows, ParseError> {
        let err = |line: usize, col: usize, msg: String| ParseError {
            file: file.to_owned(),
            pos: Pos { line: line as u32, col: col as u32 },
            kind: ErrorKind::Syntax(msg),
        };
        let mut r = Rows { columns: Vec::new(), values: Vec::new(), order };
        let ext = std::path::Path::new(file).extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
        if matches!(ext.as_deref(), Some("jsonl" | "ndjson")) {
            for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                let obj: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line)
                    .map_err(|e| err(i + 1, e.column(), format!("not a JSON object: {e}")))?;
                if r.columns.is_empty() {
                    r.columns = obj.keys().cloned().collect();
                    check_names(&r.columns).map_err(|m| err(i + 1, 1, m))?;
                }
                if obj.len() != r.columns.len() || !r.columns.iter().all(|c| obj.contains_key(c)) {
                    return Err(err(
                        i + 1,
                        1,
                        format!("every line has the keys of the first: {}", r.columns.join(", ")),
                    ));
                }
                r.values.push(r.columns.iter().map(|c| json_text(&obj[c])).collect());
            }
        } else {
            let mut lines = csv_records(text);
            let Some(header) = lines.next() else {
                return Err(err(1, 1, "the file is empty; its first line names the columns".into()));
            };
            r.columns = header.map_err(|(l, m)| err(l, 1, m))?.1;
            check_names(&r.columns).map_err(|m| err(1, 1, m))?;
            for rec in lines {
                let (line, fields) = rec.map_err(|(l, m)| err(l, 1, m))?;
                if fields.len() != r.columns.len() {
                    return Err(err(
                        line,
                        1,
                        format!("{} fields for {} columns", fields.len(), r.columns.len()),
                    ));
                }
                r.values.push(fields.into_iter().map(|f| (f, Kind::String)).collect());
            }
        }
        if r.values.is_empty() {
            return Err(err(1, 1, "the file has no rows".into()));
        }
        Ok(r)
    }
}

fn check_names(cols: &[String]) -> Result<(), String> {
    for (i, c) in cols.iter().enumerate() {
        if !crate::parse::is_var_name(c) {
            return Err(format!(
                "column {c:?} is not a variable name (a letter, then letters, digits, `_` or `-`)"
            ));
        }
        if cols[..i].contains(c) {
            return Err(format!("column {c:?} appears twice"));
        }
    }
    Ok(())
}

fn json_text(v: &serde_json::Value) -> (String, Kind) {
    match v {
        serde_json::Value::String(s) => (s.clone(), Kind::String),
        serde_json::Value::Number(n) => (n.to_string(), if n.is_f64() { Kind::Float } else { Kind::Integer }),
        serde_json::Value::Bool(b) => (b.to_string(), Kind::Bool),
        serde_json::Value::Null => ("null".into(), Kind::Null),
        other => (other.to_string(), Kind::Json),
    }
}

type Record = Result<(usize, Vec<String>), (usize, String)>;

/// CSV records with the line each starts on; blank lines are skipped.
fn csv_records(text: &str) -> impl Iterator<Item = Record> + '_ {
    let mut chars = text.chars().peekable();
    let mut line = 1;
    std::iter::from_fn(move || {
        loop {
            chars.peek()?;
            let start = line;
            let mut fields = Vec::new();
            let mut field = String::new();
            let mut quoted = false;
            let mut any = false;
            loop {
                match chars.next() {
                    None => break,
                    Some('"') if quoted => {
                        if chars.peek() == Some(&'"') {
                            chars.next();
                            field.push('"');
                        } else {
                            quoted = false;
                        }
                    }
                    Some('"') if field.is_empty() => {
                        quoted = true;
                        any = true;
                    }
                    Some(',') if !quoted => {
                        fields.push(std::mem::take(&mut field));
                        any = true;
                    }
                    Some('\n') if !quoted => {
                        line += 1;
                        break;
                    }
                    Some('\r') if !quoted && chars.peek() == Some(&'\n') => {}
                    Some(c) => {
                        if c == '\n' {
                            line += 1;
                        }
                        field.push(c);
                        any = true;
                    }
                }
            }
            if quoted {
                return Some(Err((start, "a quoted field without its closing `\"`".into())));
            }
            if !any && field.is_empty() {
                continue;
            }
            fields.push(field);
            return Some(Ok((start, fields)));
        }
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn csv_with_quotes() {
        let r = Rows::parse(
            "u.csv",
            "name,city\r\nann,\"Paris, FR\"\n\n\"bo \"\"b\"\"\",\"multi\nline\"\n",
            Order::Sequence,
        )
        .unwrap();
        assert_eq!(r.columns, ["name", "city"]);
        assert_eq!(r.values[0], [("ann".into(), Kind::String), ("Paris, FR".into(), Kind::String)]);
        assert_eq!(r.values[1][0].0, "bo \"b\"");
        assert_eq!(r.values[1][1].0, "multi\nline");
    }

    #[test]
    fn csv_refusals() {
        let e = Rows::parse("u.csv", "a,b\n1,2\n3\n", Order::Sequence).unwrap_err();
        assert_eq!((e.pos.line, e.kind), (3, ErrorKind::Syntax("1 fields for 2 columns".into())));
        assert!(Rows::parse("u.csv", "a b\n1\n", Order::Sequence).is_err());
        assert!(Rows::parse("u.csv", "a,a\n1,2\n", Order::Sequence).is_err());
        assert!(Rows::parse("u.csv", "a\n", Order::Sequence).is_err());
        assert!(Rows::parse("u.csv", "a\n\"x\n", Order::Sequence).is_err());
    }

    #[test]
    fn json_lines() {
        let r = Rows::parse(
            "u.jsonl",
            "{\"id\": 1, \"name\": \"x\"}\n\n{\"id\": 2.5, \"name\": null}\n",
            Order::Random,
        )
        .unwrap();
        assert_eq!(r.columns, ["id", "name"]);
        assert_eq!(r.values[1], [("2.5".into(), Kind::Float), ("null".into(), Kind::Null)]);
        let e = Rows::parse("u.jsonl", "{\"id\": 1}\n{\"other\": 1}\n", Order::Sequence).unwrap_err();
        assert_eq!(e.pos.line, 2);
        let e = Rows::parse("u.jsonl", "{\"id\": 1}\n{\"id\": }\n", Order::Sequence).unwrap_err();
        assert_eq!(e.pos, Pos { line: 2, col: 8 });
    }

    proptest! {
        /// Fields written as CSV (always quoted) read back as written.
        #[test]
        fn csv_roundtrip(rows in proptest::collection::vec(proptest::collection::vec(".{0,6}", 2), 1..5)) {
            let mut text = String::from("a,b\n");
            for r in &rows {
                let q: Vec<String> = r.iter().map(|f| format!("\"{}\"", f.replace('"', "\"\""))).collect();
                text.push_str(&q.join(","));
                text.push('\n');
            }
            let parsed = Rows::parse("p.csv", &text, Order::Sequence).unwrap();
            let got: Vec<Vec<String>> = parsed.values.into_iter().map(|r| r.into_iter().map(|(t, _)| t).collect()).collect();
            prop_assert_eq!(got, rows);
        }
    }
}
