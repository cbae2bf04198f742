//! What a request's line and headers may carry: a template written there
//! ([`Template::render_head`](super::Template::render_head)) refuses a value with a CR, LF or NUL, and more than
//! [`MAX_HEAD_VALUES`] bytes of values; and why a template could not be written
//! ([`RenderError`], [`Unwritable`]). docs/scenarios.md, "What a request's line and
//! headers may carry".

use crate::error::Pos;

/// The most bytes of variables' values a request's line and headers may carry together
/// (`{{base_url}}`, the target, aside): as much as an answer's head may have. The file's own
/// text of them is bounded alike when it loads.
pub const MAX_HEAD_VALUES: usize = 64 << 10;

/// The first byte of `text` that a request line or header cannot carry: CR, LF (which would
/// end the line and start another: a header, or a second request) or NUL. Looked for eight
/// bytes at a time: a word with no byte below 0x20 (nearly every word of a value) is passed in
/// a few instructions, without the set-up a search routine makes for every call.
#[inline]
pub fn unsafe_byte(text: &[u8]) -> Option<u8> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let scan = |bytes: &[u8]| bytes.iter().copied().find(|&b| matches!(b, b'\r' | b'\n' | 0));
    let mut words = text.chunks_exact(8);
    for word in &mut words {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        // Whether a byte of `w` is below 0x20: exact as a yes or no for the word.
        if w.wrapping_sub(0x20 * ONES) & !w & HIGH != 0
            && let Some(b) = scan(word)
        {
            return Some(b);
        }
    }
    scan(words.remainder())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::unsafe_byte;

    proptest! {
        /// The unsafe bytes are found eight at a time where a byte-by-byte look finds them.
        #[test]
        fn unsafe_byte_finds_cr_lf_and_nul(s in "[a-z\\x00-\\x1f\\x7f-\\u{3ff}]{0,24}") {
            let want = s.bytes().find(|b| matches!(b, b'\r' | b'\n' | 0));
            prop_assert_eq!(unsafe_byte(s.as_bytes()), want);
        }
    }
}

/// Why a template could not be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unwritable {
    /// The variable has no value in this iteration.
    NoValue,
    /// A placeholder's expression could not be evaluated (`{{id toInt}}` of `"x"`): why.
    Expr(Box<str>),
    /// Its value holds this byte (CR, LF or NUL), which a request line or header cannot carry.
    Byte(u8),
    /// With its value, the request's line and headers would carry more than `max` bytes of
    /// variables' values.
    TooLong { max: usize },
    /// As a header's name, it names one that stackbench writes itself (`Content-Length`,
    /// `Transfer-Encoding`, `Host`).
    OwnHeader,
    /// Its value, from an answer or a data row, would write the request's host.
    Host,
    /// The `file,` body it names could not be read when the request was to be sent: why.
    File(Box<str>),
}

/// A template's variable could not be written: it has no value in this iteration, a
/// placeholder's expression could not be evaluated, or its value cannot go where it stands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: {}", self.why())]
pub struct RenderError {
    pub name: String,
    pub pos: Pos,
    pub why: Unwritable,
}

impl RenderError {
    /// Variable `name`, at `pos`, has no value.
    pub fn no_value(name: &str, pos: Pos) -> RenderError {
        RenderError::unwritable(name, pos, Unwritable::NoValue)
    }

    /// Placeholder `name`, at `pos`, could not be evaluated: `why`.
    pub fn expr(name: &str, pos: Pos, why: impl Into<Box<str>>) -> RenderError {
        RenderError::unwritable(name, pos, Unwritable::Expr(why.into()))
    }

    /// Variable `name`, at `pos`, cannot be written, for `why`.
    pub fn unwritable(name: &str, pos: Pos, why: Unwritable) -> RenderError {
        RenderError { name: name.to_owned(), pos, why }
    }

    /// Whether the request was not written because a value cannot go where it stands (not
    /// for lack of one, nor for an expression's failure).
    pub fn refused(&self) -> bool {
        !matches!(self.why, Unwritable::NoValue | Unwritable::Expr(_))
    }

    /// What is wrong, after the position.
    fn why(&self) -> String {
        let byte = |b: u8| match b {
            b'\r' => "a carriage return (CR)",
            b'\n' => "a line feed (LF)",
            _ => "a NUL byte",
        };
        let name = &self.name;
        match &self.why {
            Unwritable::NoValue => format!("variable `{name}` has no value"),
            Unwritable::Expr(why) | Unwritable::File(why) => why.to_string(),
            Unwritable::Byte(b) => format!(
                "variable `{name}` holds {}, which a request line or header cannot carry (it would end the \
                 line): the request is not sent",
                byte(*b)
            ),
            Unwritable::Host => format!(
                "variable `{name}` comes from an answer or a data row and would write the request's host: a \
                 host comes from the file or the user (the target, --variable), never from an answer: the \
                 request is not sent"
            ),
            Unwritable::OwnHeader => format!(
                "variable `{name}` names, as a header, one that stackbench writes itself (Host, \
                 Content-Length, Transfer-Encoding): the request is not sent"
            ),
            Unwritable::TooLong { max } => format!(
                "variable `{name}` is too long: with it the request's line and headers would carry more \
                 than {max} bytes of variables' values, the most they may: the request is not sent"
            ),
        }
    }
}
