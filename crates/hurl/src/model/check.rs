//! Captures and asserts: a query on the answer, filters on its value, and a
//! predicate. Every query, filter and predicate of Hurl 8's grammar has a
//! variant here; an argument written with templates is kept as a template and
//! compiled (a jsonpath, a regex) when it is evaluated.

use regex::Regex;

use crate::error::Pos;
use crate::jsonpath::JsonPath;
use crate::template::{Filter, RegexArg, Template};

/// `name: query filters`.
#[derive(Debug, Clone)]
pub struct Capture {
    pub pos: Pos,
    pub name: Box<str>,
    pub query: Query,
    pub filters: Vec<Filter>,
    /// `redact`: the value is a secret, hidden in every message and record.
    pub redact: bool,
}

/// What an assert is written as (it decides how a repeated header is judged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssertKind {
    /// A line of `[Asserts]`.
    Explicit,
    /// A header line under the status line: holds when one of the header's values is it.
    Header,
    /// The body under the status line (an implicit `body ==` or `bytes ==`).
    Body,
}

/// `query filters predicate`, or a header line or body under `HTTP <status>`.
#[derive(Debug, Clone)]
pub struct Assert {
    pub pos: Pos,
    /// The line as written, for failure messages.
    pub source: Box<str>,
    pub kind: AssertKind,
    pub query: Query,
    pub filters: Vec<Filter>,
    pub predicate: Predicate,
}

/// What part of the answer a capture or an assert looks at.
#[derive(Debug, Clone)]
pub enum Query {
    Status,
    /// The answer's HTTP version (`1.1`, `2`).
    Version,
    /// The URL of the last answer (after the redirects followed).
    Url,
    /// The address the answer came from.
    Ip,
    /// The time to the whole answer, in milliseconds.
    Duration,
    /// The redirects followed, each an answer with its `Location`.
    Redirects,
    Header(Template),
    /// A `Set-Cookie` of the answer by name, or one of its attributes.
    Cookie {
        name: Template,
        attr: CookieAttr,
    },
    /// The body as text (decoded by its `Content-Encoding` and charset).
    Body,
    /// The body as bytes (decoded by its `Content-Encoding`).
    Bytes,
    /// The body as received.
    RawBytes,
    Sha256,
    Md5,
    JsonPath(JsonPath),
    /// A jsonpath written with templates, compiled when evaluated.
    JsonPathTemplate(Template),
    XPath(Template),
    /// The first group of the regex, on the body.
    Regex(RegexArg),
    Variable(Template),
    Certificate(CertField),
}

/// A cookie's attribute: `cookie "name[Attr]"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CookieAttr {
    Value,
    Expires,
    MaxAge,
    Domain,
    Path,
    Secure,
    HttpOnly,
    SameSite,
}

/// A certificate's field: `certificate "Subject"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertField {
    Subject,
    Issuer,
    StartDate,
    ExpireDate,
    SerialNumber,
    SubjectAltName,
    Value,
}

/// `not`? and a predicate.
#[derive(Debug, Clone)]
pub struct Predicate {
    pub not: bool,
    pub func: PredicateFunc,
}

/// Every predicate of Hurl 8.
#[derive(Debug, Clone)]
pub enum PredicateFunc {
    Equal(Expected),
    NotEqual(Expected),
    Greater(Expected),
    GreaterOrEqual(Expected),
    Less(Expected),
    LessOrEqual(Expected),
    StartsWith(Expected),
    EndsWith(Expected),
    Contains(Expected),
    Includes(Expected),
    Matches(Expected),
    Exists,
    IsEmpty,
    IsInteger,
    IsFloat,
    IsBoolean,
    IsString,
    IsCollection,
    IsDate,
    IsIsoDate,
    IsList,
    IsObject,
    IsNumber,
    IsIpv4,
    IsIpv6,
    IsUuid,
}

/// A predicate's operand.
#[derive(Debug, Clone)]
pub enum Expected {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer beyond 64 bits, its digits as written.
    BigInt(Box<str>),
    Float(f64),
    /// A quoted, backtick or multiline string (templates allowed): compared as text.
    Str(Template),
    /// A bare `{{name}}`: compared as the variable's kind.
    Var(Template),
    /// `hex,`, `base64,` or `file,`: compared as bytes.
    Bytes(Box<[u8]>),
    /// `/regex/`.
    Regex(Regex),
}

impl Expected {
    /// Its template, if it has one.
    pub fn template(&self) -> Option<&Template> {
        match self {
            Expected::Str(t) | Expected::Var(t) => Some(t),
            _ => None,
        }
    }

    fn template_mut(&mut self) -> Option<&mut Template> {
        match self {
            Expected::Str(t) | Expected::Var(t) => Some(t),
            _ => None,
        }
    }
}

impl PredicateFunc {
    /// Its operand, if it has one.
    pub fn expected(&self) -> Option<&Expected> {
        match self {
            PredicateFunc::Equal(e)
            | PredicateFunc::NotEqual(e)
            | PredicateFunc::Greater(e)
            | PredicateFunc::GreaterOrEqual(e)
            | PredicateFunc::Less(e)
            | PredicateFunc::LessOrEqual(e)
            | PredicateFunc::StartsWith(e)
            | PredicateFunc::EndsWith(e)
            | PredicateFunc::Contains(e)
            | PredicateFunc::Includes(e)
            | PredicateFunc::Matches(e) => Some(e),
            _ => None,
        }
    }

    fn expected_mut(&mut self) -> Option<&mut Expected> {
        match self {
            PredicateFunc::Equal(e)
            | PredicateFunc::NotEqual(e)
            | PredicateFunc::Greater(e)
            | PredicateFunc::GreaterOrEqual(e)
            | PredicateFunc::Less(e)
            | PredicateFunc::LessOrEqual(e)
            | PredicateFunc::StartsWith(e)
            | PredicateFunc::EndsWith(e)
            | PredicateFunc::Contains(e)
            | PredicateFunc::Includes(e)
            | PredicateFunc::Matches(e) => Some(e),
            _ => None,
        }
    }

    /// The template of its operand, if it has one.
    pub fn template(&self) -> Option<&Template> {
        self.expected().and_then(Expected::template)
    }
}

impl Query {
    /// Its templates.
    pub fn templates(&self) -> Vec<&Template> {
        match self {
            Query::Header(t)
            | Query::Cookie { name: t, .. }
            | Query::JsonPathTemplate(t)
            | Query::XPath(t)
            | Query::Variable(t)
            | Query::Regex(RegexArg::Template(t)) => vec![t],
            _ => Vec::new(),
        }
    }

    fn templates_mut(&mut self) -> Vec<&mut Template> {
        match self {
            Query::Header(t)
            | Query::Cookie { name: t, .. }
            | Query::JsonPathTemplate(t)
            | Query::XPath(t)
            | Query::Variable(t)
            | Query::Regex(RegexArg::Template(t)) => vec![t],
            _ => Vec::new(),
        }
    }

    /// Whether it reads the answer's body.
    pub fn reads_body(&self) -> bool {
        matches!(
            self,
            Query::Body
                | Query::Bytes
                | Query::RawBytes
                | Query::Sha256
                | Query::Md5
                | Query::JsonPath(_)
                | Query::JsonPathTemplate(_)
                | Query::XPath(_)
                | Query::Regex(_)
        )
    }
}

impl Capture {
    /// Every template it evaluates (query and filters).
    pub fn templates(&self) -> Vec<&Template> {
        let mut t = self.query.templates();
        t.extend(self.filters.iter().flat_map(|f| f.kind.templates()));
        t
    }

    pub(crate) fn templates_mut(&mut self) -> Vec<&mut Template> {
        let mut t = self.query.templates_mut();
        t.extend(self.filters.iter_mut().flat_map(|f| f.kind.templates_mut()));
        t
    }
}

impl Assert {
    /// Every template it evaluates (query, filters and operand).
    pub fn templates(&self) -> Vec<&Template> {
        let mut t = self.query.templates();
        t.extend(self.filters.iter().flat_map(|f| f.kind.templates()));
        t.extend(self.predicate.func.template());
        t
    }

    pub(crate) fn templates_mut(&mut self) -> Vec<&mut Template> {
        let mut t = self.query.templates_mut();
        t.extend(self.filters.iter_mut().flat_map(|f| f.kind.templates_mut()));
        t.extend(self.predicate.func.expected_mut().and_then(Expected::template_mut));
        t
    }
}
