//! Where a scenario file is wrong and why: every refusal carries the file, the
//! 1-based line and column of the offending text, and what kind of mistake it
//! is, so `stackbench` can refuse a bad file before any load starts.

use std::fmt;

/// A 1-based line and column (columns count characters, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// What is wrong with a scenario file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// The text does not follow Hurl's grammar (or the TOML scenario format).
    #[error("{0}")]
    Syntax(String),
    /// A Hurl feature that the engine does not run; refused rather than skipped.
    #[error("{0} is not supported by stackbench")]
    Unsupported(String),
    /// A `{{name}}` that no capture, generator, TOML variable or `--variable` defines.
    #[error("unknown variable `{0}`")]
    UnknownVariable(String),
    /// A `{{name}}` used before the entry that captures it.
    #[error("capture `{0}` is used before the entry that takes it")]
    CaptureBeforeTaken(String),
    /// A jsonpath expression that cannot be parsed.
    #[error("jsonpath {0}")]
    JsonPath(String),
    /// An XPath expression that cannot be compiled.
    #[error("{0}")]
    XPath(String),
    /// A regular expression that cannot be compiled.
    #[error("regex: {0}")]
    Regex(String),
    /// A file the scenario names cannot be read.
    #[error("{0}")]
    Io(String),
}

/// A refusal of a scenario file, at `file:line:col`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{pos}: {kind}")]
pub struct ParseError {
    pub file: String,
    pub pos: Pos,
    pub kind: ErrorKind,
}

/// The most characters of one message `verify` prints or records about a case: a value
/// from a hostile answer (a 10 MiB URL, a capture) is cut there, and says so.
pub const MESSAGE_MAX: usize = 1000;

/// `text`, cut to at most `max` bytes (at a character's boundary) with what was cut said:
/// `... (cut: 123 more bytes)`.
pub fn cut(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}... (cut: {} more bytes)", &text[..at], text.len() - at).into()
}

/// 1-based line and column of byte `offset` in `text` (for one position; a file that
/// places many keeps its [`Lines`]).
pub fn pos_of(text: &str, offset: usize) -> Pos {
    Lines::new(text).pos(text, offset)
}

/// Where each line of a text starts, found once: a position is then a binary search and a
/// count of the characters before it on its line, not a walk from the text's start (which,
/// once per `[[flow]]`, made a file of 40,000 flows take minutes to load).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lines {
    /// The byte offset of each line's first byte.
    starts: Vec<usize>,
}

impl Lines {
    pub fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { starts }
    }

    /// 1-based line and column of byte `offset` in `text`, the text the lines were found in.
    pub fn pos(&self, text: &str, offset: usize) -> Pos {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset).max(1) - 1;
        let col = text[self.starts[line]..offset].chars().count() + 1;
        Pos { line: line as u32 + 1, col: col as u32 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_cut_and_say_so() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("abcdef", 3), "abc... (cut: 3 more bytes)");
        assert_eq!(cut("ééé", 3), "é... (cut: 4 more bytes)", "at a character's boundary");
    }

    proptest::proptest! {
        /// The line index places every offset where a walk from the start places it.
        #[test]
        fn lines_place_as_a_walk_does(text in "[a-z\\né\r]{0,40}", offset in 0usize..48) {
            let walk = {
                let mut o = offset.min(text.len());
                while !text.is_char_boundary(o) {
                    o -= 1;
                }
                let before = &text[..o];
                let line = before.matches('\n').count() + 1;
                let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                Pos { line: line as u32, col: col as u32 }
            };
            proptest::prop_assert_eq!(pos_of(&text, offset), walk);
        }
    }
}
