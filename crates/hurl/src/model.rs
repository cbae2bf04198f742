//! The typed model of a Hurl file, as far as the engine runs it: entries of
//! a request, the expected status, captures and asserts. Everything here was
//! checked when the file was loaded (jsonpaths compiled, regexes built,
//! unsupported features refused), so evaluating it cannot meet a syntax error.

use std::sync::OnceLock;

use regex::Regex;

use crate::error::Pos;
use crate::eval::Quick;
use crate::jsonpath::JsonPath;
use crate::jsonpath::stream::Plan;
use crate::template::Template;

/// A parsed `.hurl` file.
#[derive(Debug, Clone)]
pub struct HurlFile {
    /// The file's path as given (for `file:line` in messages).
    pub file: String,
    pub entries: Vec<Entry>,
}

/// One request and what its answer must be.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Where the request line starts.
    pub pos: Pos,
    pub method: Box<str>,
    pub url: Template,
    pub headers: Vec<Header>,
    pub body: Option<Body>,
    pub response: Option<Response>,
}

/// A request header.
#[derive(Debug, Clone)]
pub struct Header {
    pub name: Template,
    pub value: Template,
}

/// A request body.
#[derive(Debug, Clone)]
pub struct Body {
    pub kind: BodyKind,
    pub template: Template,
}

/// What a request body was written as (a JSON body gets `Content-Type:
/// application/json` when the entry sets none, as Hurl does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    Json,
    Raw,
}

/// The `HTTP <status>` line and the sections below it.
#[derive(Debug, Clone)]
pub struct Response {
    pub pos: Pos,
    /// `None` for `HTTP *`.
    pub status: Option<u16>,
    pub captures: Vec<Capture>,
    pub asserts: Vec<Assert>,
    /// Its jsonpath queries as one pass over an answer follows them (`None` when it
    /// cannot), worked out at the first check.
    pub plan: OnceLock<Option<Plan>>,
    /// Its checks compiled for an answer that passes them (`None` when some check is left
    /// to the general evaluator), worked out at the first check.
    pub quick: OnceLock<Option<Quick>>,
}

/// `name: query filters`.
#[derive(Debug, Clone)]
pub struct Capture {
    pub pos: Pos,
    pub name: Box<str>,
    pub query: Query,
    pub filters: Vec<Filter>,
}

/// `query filters predicate`, or a header line under `HTTP <status>`.
#[derive(Debug, Clone)]
pub struct Assert {
    pub pos: Pos,
    /// The line as written, for failure messages.
    pub source: Box<str>,
    pub query: Query,
    pub filters: Vec<Filter>,
    pub predicate: Predicate,
}

/// What part of the answer a capture or an assert looks at.
#[derive(Debug, Clone)]
pub enum Query {
    Status,
    Header(Box<str>),
    JsonPath(JsonPath),
    /// The first group of the regex (the whole match without groups), on the body.
    Regex(Regex),
    Body,
}

/// A transformation of a query's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// The length of a collection.
    Count,
}

/// `not`? and a predicate.
#[derive(Debug, Clone)]
pub struct Predicate {
    pub not: bool,
    pub func: PredicateFunc,
}

/// The predicates the engine evaluates.
#[derive(Debug, Clone)]
pub enum PredicateFunc {
    Equal(Expected),
    NotEqual(Expected),
    Greater(Expected),
    GreaterOrEqual(Expected),
    Less(Expected),
    LessOrEqual(Expected),
    StartsWith(Template),
    EndsWith(Template),
    Contains(Template),
    Includes(Expected),
    Matches(Regex),
    Exists,
    IsEmpty,
    IsInteger,
    IsFloat,
    IsBoolean,
    IsString,
    IsCollection,
}

/// A predicate's operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A quoted string (templates allowed): compared as text.
    Str(Template),
    /// A bare `{{name}}`: compared as the variable's kind.
    Var(Template),
}

impl PredicateFunc {
    /// The template of the predicate's operand, if it has one (a quoted string, a bare
    /// `{{name}}`, or the text of `startsWith`, `endsWith` and `contains`).
    pub fn template(&self) -> Option<&Template> {
        match self {
            PredicateFunc::Equal(e)
            | PredicateFunc::NotEqual(e)
            | PredicateFunc::Greater(e)
            | PredicateFunc::GreaterOrEqual(e)
            | PredicateFunc::Less(e)
            | PredicateFunc::LessOrEqual(e)
            | PredicateFunc::Includes(e) => match e {
                Expected::Str(t) | Expected::Var(t) => Some(t),
                _ => None,
            },
            PredicateFunc::StartsWith(t) | PredicateFunc::EndsWith(t) | PredicateFunc::Contains(t) => Some(t),
            _ => None,
        }
    }

    /// [`PredicateFunc::template`], to change in place.
    fn template_mut(&mut self) -> Option<&mut Template> {
        match self {
            PredicateFunc::Equal(e)
            | PredicateFunc::NotEqual(e)
            | PredicateFunc::Greater(e)
            | PredicateFunc::GreaterOrEqual(e)
            | PredicateFunc::Less(e)
            | PredicateFunc::LessOrEqual(e)
            | PredicateFunc::Includes(e) => match e {
                Expected::Str(t) | Expected::Var(t) => Some(t),
                _ => None,
            },
            PredicateFunc::StartsWith(t) | PredicateFunc::EndsWith(t) | PredicateFunc::Contains(t) => Some(t),
            _ => None,
        }
    }
}

impl Entry {
    /// The request's name: method and URL template without a leading
    /// `{{base_url}}` (`GET /todos/{{todo_id}}`).
    pub fn name(&self) -> String {
        let url = self.url.source();
        let path = url.strip_prefix("{{base_url}}").unwrap_or(&url);
        format!("{} {path}", self.method)
    }
}

impl HurlFile {
    /// Moves every position through `f` (Hurl written inline in another file
    /// gets that file's lines).
    pub fn map_positions(&mut self, f: impl Fn(Pos) -> Pos) {
        for e in &mut self.entries {
            e.pos = f(e.pos);
            let mut templates: Vec<&mut Template> = vec![&mut e.url];
            for h in &mut e.headers {
                templates.push(&mut h.name);
                templates.push(&mut h.value);
            }
            templates.extend(e.body.as_mut().map(|b| &mut b.template));
            if let Some(r) = &mut e.response {
                r.pos = f(r.pos);
                for c in &mut r.captures {
                    c.pos = f(c.pos);
                }
                for a in &mut r.asserts {
                    a.pos = f(a.pos);
                    templates.extend(a.predicate.func.template_mut());
                }
            }
            for t in templates {
                t.map_positions(&f);
            }
        }
    }

    /// Every variable the file refers to, with where (request templates and asserts).
    pub fn captures(&self) -> impl Iterator<Item = &Capture> {
        self.entries.iter().filter_map(|e| e.response.as_ref()).flat_map(|r| r.captures.iter())
    }
}
