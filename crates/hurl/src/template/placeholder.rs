//! A placeholder with filters or a function (`{{name | toInt}}`, `{{newUuid}}`) as the file
//! writes it, and the filters of Hurl 8 with their arguments, which captures and asserts
//! write after their query too. Plain data: the evaluator applies them.

use regex::Regex;

use super::Template;
use crate::error::Pos;

/// What a placeholder with filters or a function starts from, then its filters.
#[derive(Debug, Clone)]
pub struct Expr {
    pub start: ExprStart,
    pub filters: Vec<Filter>,
    /// The placeholder's text between the braces, for names and messages.
    pub source: Box<str>,
}

/// The value an expression starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExprStart {
    Var(Box<str>),
    NewUuid,
    NewDate,
    /// `getEnv "NAME"`: the environment variable, read when the file is loaded.
    Env(Box<str>),
}

/// A regex argument: `/regex/` or a quoted string (compiled at load when it has no template).
#[derive(Debug, Clone)]
pub enum RegexArg {
    Literal(Regex),
    Template(Template),
}

/// An integer argument (`nth 2`, `nth {{i}}`).
#[derive(Debug, Clone)]
pub enum IntArg {
    Literal(i64),
    Var(Template),
}

/// A transformation of a query's value, where it is written.
#[derive(Debug, Clone)]
pub struct Filter {
    pub pos: Pos,
    pub kind: FilterKind,
}

/// Every filter of Hurl 8.
#[derive(Debug, Clone)]
pub enum FilterKind {
    Base64Decode,
    Base64Encode,
    Base64UrlSafeDecode,
    Base64UrlSafeEncode,
    /// `decode "charset"` and `charsetDecode "charset"`.
    CharsetDecode(Template),
    Count,
    DaysAfterNow,
    DaysBeforeNow,
    First,
    /// `format "%Y"` and `dateFormat "%Y"`.
    DateFormat(Template),
    HtmlEscape,
    HtmlUnescape,
    JsonPath(Template),
    Last,
    Location,
    Nth(IntArg),
    Regex(RegexArg),
    Replace(Template, Template),
    ReplaceRegex(RegexArg, Template),
    Split(Template),
    ToDate(Template),
    ToFloat,
    ToHex,
    ToInt,
    ToString,
    UrlDecode,
    UrlEncode,
    UrlQueryParam(Template),
    Utf8Decode,
    Utf8Encode,
    XPath(Template),
}

impl FilterKind {
    /// Its templates.
    pub fn templates(&self) -> Vec<&Template> {
        match self {
            FilterKind::CharsetDecode(t)
            | FilterKind::DateFormat(t)
            | FilterKind::JsonPath(t)
            | FilterKind::Split(t)
            | FilterKind::ToDate(t)
            | FilterKind::UrlQueryParam(t)
            | FilterKind::XPath(t)
            | FilterKind::Nth(IntArg::Var(t))
            | FilterKind::Regex(RegexArg::Template(t))
            | FilterKind::ReplaceRegex(RegexArg::Literal(_), t) => vec![t],
            FilterKind::Replace(a, b) | FilterKind::ReplaceRegex(RegexArg::Template(a), b) => vec![a, b],
            _ => Vec::new(),
        }
    }

    pub(crate) fn templates_mut(&mut self) -> Vec<&mut Template> {
        match self {
            FilterKind::CharsetDecode(t)
            | FilterKind::DateFormat(t)
            | FilterKind::JsonPath(t)
            | FilterKind::Split(t)
            | FilterKind::ToDate(t)
            | FilterKind::UrlQueryParam(t)
            | FilterKind::XPath(t)
            | FilterKind::Nth(IntArg::Var(t))
            | FilterKind::Regex(RegexArg::Template(t))
            | FilterKind::ReplaceRegex(RegexArg::Literal(_), t) => vec![t],
            FilterKind::Replace(a, b) | FilterKind::ReplaceRegex(RegexArg::Template(a), b) => vec![a, b],
            _ => Vec::new(),
        }
    }
}
