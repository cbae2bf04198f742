//! The typed model of a Hurl file: entries of a request (its headers, its
//! sections and its body), the expected version and status, captures, asserts
//! and an implicit body assert. Everything here was checked when the file was
//! loaded (jsonpaths compiled, regexes built, files read), so evaluating it
//! cannot meet a syntax error; a query, filter or predicate whose argument is
//! a template is compiled when it is evaluated.

use crate::error::Pos;
use crate::template::Template;

mod check;
pub mod options;

pub use crate::template::{Filter, FilterKind, IntArg, RegexArg};
pub use check::{
    Assert, AssertKind, Capture, CertField, CookieAttr, Expected, Predicate, PredicateFunc, Query,
};
pub use options::{EntryOption, OptionValue};

/// A parsed `.hurl` file.
#[derive(Debug, Clone)]
pub struct HurlFile {
    /// The file's path as given (for `file:line` in messages).
    pub file: String,
    pub entries: Vec<Entry>,
    /// The directory the names it gives (`file,` bodies, `output`) are relative to, and the
    /// root they must lead under; `None` for a built-in scenario's (embedded) files.
    pub disk: Option<(std::path::PathBuf, crate::files::Root)>,
}

/// One request and what its answer must be.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Where the request line starts.
    pub pos: Pos,
    pub method: Box<str>,
    pub url: Template,
    pub headers: Vec<Header>,
    /// `[Query]` (`[QueryStringParams]`): appended to the URL, each value encoded as curl does.
    pub query: Vec<Param>,
    /// `[Form]` (`[FormParams]`): the body, `application/x-www-form-urlencoded`.
    pub form: Vec<Param>,
    /// `[Multipart]` (`[MultipartFormData]`): the body, `multipart/form-data`.
    pub multipart: Vec<MultipartParam>,
    /// `[Cookies]`: one `Cookie` header.
    pub cookies: Vec<Param>,
    /// `[BasicAuth]`: an `Authorization: Basic` header.
    pub basic_auth: Option<Param>,
    /// `[Options]`, in order.
    pub options: Vec<EntryOption>,
    pub body: Option<Body>,
    /// Where a `file,name;` body is read from: `body` holds what it read when the file loaded.
    pub body_file: Option<Box<FileBody>>,
    pub response: Option<Response>,
}

/// A request header. `Name;` and `Name:` both send the header with an empty value.
#[derive(Debug, Clone)]
pub struct Header {
    /// Where its name starts.
    pub pos: Pos,
    pub name: Template,
    pub value: Template,
}

/// `name: value` in a request section.
#[derive(Debug, Clone)]
pub struct Param {
    pub pos: Pos,
    pub name: Template,
    pub value: Template,
}

/// A field of `[Multipart]`: a value, or a file (read when the file was loaded).
#[derive(Debug, Clone)]
pub enum MultipartParam {
    Field(Param),
    File {
        pos: Pos,
        name: Template,
        /// The file's name as written (sent as the part's `filename`).
        filename: Box<str>,
        /// As written after `;`, else from the file's extension, as Hurl does.
        content_type: Template,
        data: Box<[u8]>,
    },
}

/// A request body (or the text of an implicit body assert).
#[derive(Debug, Clone)]
pub struct Body {
    pub kind: BodyKind,
    pub template: Template,
}

/// A `file,name;` request body. Hurl reads it when the request is sent, so `verify` reads it
/// again then (a file an earlier request or a script writes before); a load reads it once,
/// when the file loads (crate::body_file).
#[derive(Debug, Clone)]
pub struct FileBody {
    /// Where its name starts.
    pub pos: Pos,
    /// The name as written: `file,{{name}};` is a template.
    pub name: Template,
    /// Why it could not be read when the file loaded (the body is then empty), or `None`.
    pub unread: Option<String>,
}

/// What a body was written as; it decides the `Content-Type` the request gets when the
/// entry sets none, as Hurl does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// JSON (of any value), or a ```` ```json ```` string: `application/json`.
    Json,
    /// An XML document, or a ```` ```xml ```` string: `application/xml`.
    Xml,
    /// A ```` ```graphql ```` string, sent as Hurl sends it: `{"query": ..., "variables": ...}`.
    GraphQl,
    /// A one-line or multiline string (text as written): no `Content-Type`.
    Raw,
    /// `hex,`, `base64,` or `file,`: bytes as they are, no `Content-Type`.
    Bytes,
}

/// An HTTP version in the status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// `HTTP`: any version.
    Any,
    Http10,
    Http11,
    Http2,
    Http3,
}

impl Version {
    /// As the `version` query gives it (`1.1`, `2`); `None` for [`Version::Any`].
    pub fn number(self) -> Option<&'static str> {
        match self {
            Version::Any => None,
            Version::Http10 => Some("1.0"),
            Version::Http11 => Some("1.1"),
            Version::Http2 => Some("2"),
            Version::Http3 => Some("3"),
        }
    }
}

/// The `HTTP <status>` line and the sections below it.
#[derive(Debug, Clone)]
pub struct Response {
    pub pos: Pos,
    pub version: Version,
    /// `None` for `HTTP *`.
    pub status: Option<u16>,
    pub captures: Vec<Capture>,
    /// Header lines, the implicit body and `[Asserts]`, in the order Hurl checks them.
    pub asserts: Vec<Assert>,
}

impl Entry {
    /// An entry of a request line alone (a method and a URL), at `pos`.
    pub fn new(pos: Pos, method: &str, url: Template) -> Entry {
        Entry {
            pos,
            method: method.into(),
            url,
            headers: Vec::new(),
            query: Vec::new(),
            form: Vec::new(),
            multipart: Vec::new(),
            cookies: Vec::new(),
            basic_auth: None,
            options: Vec::new(),
            body: None,
            body_file: None,
            response: None,
        }
    }

    /// The request's name: method and URL template without a leading
    /// `{{base_url}}` (`GET /todos/{{todo_id}}`).
    pub fn name(&self) -> String {
        let url = self.url.source();
        let path = url.strip_prefix("{{base_url}}").unwrap_or(&url);
        format!("{} {path}", self.method)
    }

    /// Whether its request is its request line, headers and body alone (no section that
    /// adds to the URL, the headers or the body): what the load engine compiles.
    pub fn is_plain(&self) -> bool {
        self.query.is_empty()
            && self.form.is_empty()
            && self.multipart.is_empty()
            && self.cookies.is_empty()
            && self.basic_auth.is_none()
            && self.body.as_ref().is_none_or(|b| b.kind != BodyKind::GraphQl)
    }

    /// Every template of the request, in the order it is written.
    pub fn request_templates(&self) -> Vec<&Template> {
        let mut t = vec![&self.url];
        for h in &self.headers {
            t.push(&h.name);
            t.push(&h.value);
        }
        for p in self.query.iter().chain(&self.form).chain(&self.cookies).chain(&self.basic_auth) {
            t.push(&p.name);
            t.push(&p.value);
        }
        for m in &self.multipart {
            match m {
                MultipartParam::Field(p) => t.extend([&p.name, &p.value]),
                MultipartParam::File { name, content_type, .. } => t.extend([name, content_type]),
            }
        }
        t.extend(self.options.iter().flat_map(EntryOption::templates));
        t.extend(self.body.as_ref().map(|b| &b.template));
        t.extend(self.body_file.as_ref().map(|f| &f.name));
        t
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
                h.pos = f(h.pos);
                templates.push(&mut h.name);
                templates.push(&mut h.value);
            }
            for p in e.query.iter_mut().chain(&mut e.form).chain(&mut e.cookies).chain(&mut e.basic_auth) {
                p.pos = f(p.pos);
                templates.push(&mut p.name);
                templates.push(&mut p.value);
            }
            for m in &mut e.multipart {
                match m {
                    MultipartParam::Field(p) => {
                        p.pos = f(p.pos);
                        templates.push(&mut p.name);
                        templates.push(&mut p.value);
                    }
                    MultipartParam::File { pos, name, content_type, .. } => {
                        *pos = f(*pos);
                        templates.push(name);
                        templates.push(content_type);
                    }
                }
            }
            for o in &mut e.options {
                o.pos = f(o.pos);
                templates.extend(o.templates_mut());
            }
            templates.extend(e.body.as_mut().map(|b| &mut b.template));
            if let Some(file) = &mut e.body_file {
                file.pos = f(file.pos);
                templates.push(&mut file.name);
            }
            if let Some(r) = &mut e.response {
                r.pos = f(r.pos);
                for c in &mut r.captures {
                    c.pos = f(c.pos);
                    templates.extend(c.templates_mut());
                }
                for a in &mut r.asserts {
                    a.pos = f(a.pos);
                    templates.extend(a.templates_mut());
                }
            }
            for t in templates {
                t.map_positions(&f);
            }
        }
    }

    /// Every capture of the file, in order.
    pub fn captures(&self) -> impl Iterator<Item = &Capture> {
        self.entries.iter().filter_map(|e| e.response.as_ref()).flat_map(|r| r.captures.iter())
    }
}
