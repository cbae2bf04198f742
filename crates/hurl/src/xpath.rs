//! XPath 1.0 on an answer's body, as Hurl evaluates it (`runner/xpath.rs` in Hurl).
//!
//! Hurl reads the body with libxml2: as HTML (lenient) when the answer's `Content-Type`
//! says `html`, else as XML, and for the `xpath` filter always as HTML. It registers every
//! namespace prefix the document declares, and the first default namespace as `_`, so
//! `//_:svg/_:circle` works. A node set is given as how many nodes it holds; numbers,
//! strings and booleans as themselves.
//!
//! Here the engine is pure Rust: `sxd-xpath` (XPath 1.0) over an `sxd-document` tree, the
//! HTML read by html5ever (`sxd_html`, HTML5's parsing algorithm, elements in no namespace
//! as libxml2 gives them). An XML body is parsed by `roxmltree` instead, and the expressions
//! Hurl files write are evaluated on that tree by `fast` with sxd's results, at a fraction of
//! sxd's cost; anything else is sxd's (the body parsed by sxd-document when first needed).
//! The differences from libxml2 are listed in docs/scenarios.md.
//!
//! A body is hostile input: nothing here loads a DTD, an external entity or any file (the
//! XML reader knows only the five predefined entities, so a "billion laughs" body is
//! refused as invalid), and before a body is parsed its size, its count of nodes and its
//! nesting are bounded, so a huge or deeply nested body is refused instead of parsed.

use std::borrow::Cow;
use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::LazyLock;

use memchr::memmem::Finder;

use sxd_document::Package;
use sxd_document::dom::{ChildOfElement, ChildOfRoot, Element};
use sxd_xpath::{Context, Factory, XPath};

use crate::value::Value;

mod fast;

/// The most bytes of a body that are parsed for XPath.
pub const MAX_BYTES: usize = 8 << 20;
/// The most nodes a body may make, counted before parsing as two per start tag (the element
/// and a text beside it) and one per attribute: a node of the tree takes some 400 bytes, so
/// a document stays within about 200 MB.
pub const MAX_NODES: usize = 500_000;
/// The deepest nesting of elements read as XML (libxml2's own default limit).
pub const MAX_XML_DEPTH: usize = 256;
/// The deepest nesting of elements read as HTML, counting only elements whose end tag
/// HTML requires (a `<p>` or `<li>` left open does not deepen the tree).
pub const MAX_HTML_DEPTH: usize = 512;

/// How a body is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Xml,
}

impl Format {
    /// Hurl's choice for a query: HTML when the `Content-Type` says so, else XML.
    pub fn of_content_type(content_type: Option<&str>) -> Format {
        match content_type {
            Some(t) if t.to_ascii_lowercase().contains("html") => Format::Html,
            _ => Format::Xml,
        }
    }
}

/// An XPath expression, compiled, with the namespace prefixes it names.
pub struct XPathExpr {
    xpath: XPath,
    prefixes: Vec<String>,
    /// The expression for the fast path, where it takes it.
    fast: Option<fast::Expr>,
    /// Whether it selects text nodes (see [`fast::sees_text_nodes`]).
    sees_text: bool,
}

impl std::fmt::Debug for XPathExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XPathExpr").field("prefixes", &self.prefixes).finish_non_exhaustive()
    }
}

/// The most compiled expressions a thread keeps (then it forgets them all and starts again:
/// a load checks the same few on every answer; an expression with templates whose values
/// change at each iteration is compiled each time, as it would be without the cache).
const COMPILED_KEPT: usize = 64;

/// A thread's XPath state, kept from one answer to the next (sxd's compiled expressions and
/// contexts cannot cross threads). Compiling an expression costs some 16,000 instructions and
/// building and dropping a context, which registers XPath's core functions in a hash map,
/// some 30,000: done for every check of every answer, they were over half of a load's work
/// per request on a small SOAP answer with six xpath checks (bench/load/groups/xml-xpath.hurl).
struct State {
    compiled: HashMap<String, Rc<XPathExpr>>,
    /// The context every evaluation on this thread uses. Its namespaces are the ones set for
    /// earlier expressions too: before an evaluation, every prefix the expression names is
    /// set to the body's URI for it, and one the body does not declare is refused, so a
    /// prefix left from another body is never read.
    context: Context<'static>,
}

thread_local! {
    static STATE: RefCell<State> =
        RefCell::new(State { compiled: HashMap::new(), context: Context::new() });
}

/// `expr` compiled, or why it cannot be (compiled once per thread: see [`State`]).
pub fn compile(expr: &str) -> Result<Rc<XPathExpr>, String> {
    if let Some(found) = STATE.with_borrow(|s| s.compiled.get(expr).cloned()) {
        return Ok(found);
    }
    let built = catch_unwind(|| Factory::new().build(expr))
        .map_err(|_| format!("invalid xpath expression {expr:?}"))?;
    let compiled = match built {
        Ok(Some(xpath)) => {
            let prefixes = prefixes(expr);
            let fast = fast::parse(expr, &prefixes);
            let sees_text = fast.as_ref().is_some_and(fast::sees_text_nodes);
            Rc::new(XPathExpr { xpath, prefixes, fast, sees_text })
        }
        Ok(None) => return Err("the xpath expression is empty".to_owned()),
        Err(e) => return Err(format!("invalid xpath expression {expr:?}: {e}")),
    };
    STATE.with_borrow_mut(|s| {
        if s.compiled.len() >= COMPILED_KEPT {
            s.compiled.clear();
        }
        s.compiled.insert(expr.to_owned(), Rc::clone(&compiled));
    });
    Ok(compiled)
}

/// The namespace prefixes of the qualified names in `expr` (`p` of `p:name`, `p:*`,
/// `$p:var`), outside its string literals; an axis (`child::`) is not one.
fn prefixes(expr: &str) -> Vec<String> {
    let b = expr.as_bytes();
    let name_char = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.') || c >= 0x80;
    let mut found: Vec<String> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' || c == b'\'' {
            i += 1 + b[i + 1..].iter().position(|&q| q == c).map_or(b.len(), |e| e + 1);
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let start = i;
            while i < b.len() && name_char(b[i]) {
                i += 1;
            }
            let next = b.get(i + 1).copied();
            if b.get(i) == Some(&b':') && next.is_some_and(|n| n != b':' && (name_char(n) || n == b'*')) {
                let p = &expr[start..i];
                if !found.iter().any(|f| f == p) {
                    found.push(p.to_owned());
                }
                i += 1;
            }
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    found
}

/// A body parsed once, for every XPath expression that reads it.
pub struct Doc {
    tree: Tree,
    /// The prefixes to register (`_` for the first default namespace), XML only.
    namespaces: Vec<(String, String)>,
}

/// How a body is held.
enum Tree {
    /// Parsed by sxd (HTML, or XML that roxmltree refuses).
    Sxd(Package),
    /// XML parsed by roxmltree, and by sxd-document when an expression needs sxd.
    Fast {
        xml: XmlTree,
        /// Whether sxd would split a text node where roxmltree keeps one (the body has a
        /// reference or a CDATA section): then an expression that selects text nodes is sxd's.
        split_text: bool,
        sxd: OnceCell<Result<Package, String>>,
    },
}

type RoDocument<'a> = roxmltree::Document<'a>;

self_cell::self_cell!(
    /// An XML body (its document type declaration blanked out) and its roxmltree.
    struct XmlTree {
        owner: String,
        #[covariant]
        dependent: RoDocument,
    }
);

/// Searchers for what every XML body is looked through for, built once: building one costs
/// more than a search of a small body.
static DOCTYPE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"<!DOCTYPE"));
static CDATA: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"<![CDATA["));
static XMLNS: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"xmlns"));

/// The most namespace prefixes an expression on the fast path names.
const FAST_PREFIXES: usize = 8;

impl std::fmt::Debug for Doc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let engine = match self.tree {
            Tree::Sxd(_) => "sxd",
            Tree::Fast { .. } => "roxmltree",
        };
        f.debug_struct("Doc")
            .field("tree", &engine)
            .field("namespaces", &self.namespaces)
            .finish_non_exhaustive()
    }
}

impl Doc {
    /// `text` parsed as `format`, or why it cannot be.
    pub fn parse(text: &str, format: Format) -> Result<Doc, String> {
        let what = match format {
            Format::Html => "HTML",
            Format::Xml => "XML",
        };
        if text.trim().is_empty() {
            return Err(format!("the body is empty, not {what}"));
        }
        check_bounds(text, format)?;
        if format == Format::Html {
            // The HTML tree builder asserts its own invariants; one failing is this body's
            // error, not the run's.
            let package = catch_unwind(AssertUnwindSafe(|| sxd_html::parse_html(before_tail(text))))
                .map_err(|_| "the body could not be read as HTML".to_owned())?;
            return Ok(Doc { tree: Tree::Sxd(package), namespaces: Vec::new() });
        }
        let text = without_doctype(text).into_owned();
        let tree = if sxd_reads_alike(&text) {
            XmlTree::try_new_or_recover(text, |t| roxmltree::Document::parse(t))
        } else {
            Err((text, roxmltree::Error::NodesLimitReached))
        };
        match tree {
            Ok(xml) => {
                let namespaces = xml.with_dependent(|_, doc| tree_namespaces(doc));
                let t = xml.borrow_owner().as_bytes();
                let split_text = memchr::memchr(b'&', t).is_some() || CDATA.find(t).is_some();
                Ok(Doc { tree: Tree::Fast { xml, split_text, sxd: OnceCell::new() }, namespaces })
            }
            Err((text, _)) => {
                let package = parse_xml(&text)?;
                let namespaces = namespaces(&package);
                Ok(Doc { tree: Tree::Sxd(package), namespaces })
            }
        }
    }

    /// The value of `expr` on this document, typed as Hurl types it.
    pub fn eval(&self, expr: &XPathExpr) -> Result<Value<'static>, String> {
        let mut uris = [""; FAST_PREFIXES];
        for (i, p) in expr.prefixes.iter().enumerate() {
            let Some((_, uri)) = self.namespaces.iter().find(|(n, _)| n == p) else {
                return Err(format!("xpath: the namespace prefix `{p}` is not declared in the body"));
            };
            if let Some(u) = uris.get_mut(i) {
                *u = uri;
            }
        }
        let package = match &self.tree {
            Tree::Sxd(package) => package,
            Tree::Fast { xml, split_text, sxd } => {
                if let Some(e) = &expr.fast
                    && expr.prefixes.len() <= FAST_PREFIXES
                    && !(*split_text && expr.sees_text)
                    && let Ok(v) = xml.with_dependent(|_, doc| fast::eval::evaluate(e, doc, &uris))
                {
                    return Ok(v);
                }
                sxd.get_or_init(|| parse_xml(xml.borrow_owner())).as_ref().map_err(Clone::clone)?
            }
        };
        let doc = package.as_document();
        let value = STATE.with_borrow_mut(|s| {
            for p in &expr.prefixes {
                if let Some((_, uri)) = self.namespaces.iter().find(|(n, _)| n == p) {
                    s.context.set_namespace(p, uri);
                }
            }
            catch_unwind(AssertUnwindSafe(|| expr.xpath.evaluate(&s.context, doc.root())))
                .map_err(|_| "xpath: the expression could not be evaluated".to_owned())?
                .map_err(|e| format!("xpath: {e}"))
        })?;
        Ok(match value {
            sxd_xpath::Value::Boolean(b) => Value::Bool(b),
            sxd_xpath::Value::Number(n) => Value::Float(n),
            sxd_xpath::Value::String(s) => Value::Str(s.into()),
            sxd_xpath::Value::Nodeset(n) => Value::Nodeset(n.size()),
        })
    }
}

/// Whether sxd-document makes the tree of `text` that roxmltree makes (the fast path is
/// held to sxd's answers): not where sxd keeps a carriage return, or a tab or line break in
/// an attribute's value, that XML (and roxmltree) reads as a line feed or a space, nor
/// where it puts elements in other namespaces (see [`default_namespaces_alike`]).
fn sxd_reads_alike(text: &str) -> bool {
    memchr::memchr(b'\r', text.as_bytes()).is_none()
        && !attribute_white_space(text.as_bytes())
        && default_namespaces_alike(text)
}

/// Whether a start tag of `text` has a tab or a line feed in an attribute's value (a
/// scan of the tags, skipping comments, CDATA sections and processing instructions).
fn attribute_white_space(text: &[u8]) -> bool {
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'<', &text[i..]) {
        i += at + 1;
        let rest = &text[i..];
        let skip_to = |end: &[u8]| memchr::memmem::find(rest, end).map_or(rest.len(), |e| e + end.len());
        if rest.starts_with(b"!--") {
            i += skip_to(b"-->");
        } else if rest.starts_with(b"![CDATA[") {
            i += skip_to(b"]]>");
        } else if rest.starts_with(b"?") {
            i += skip_to(b"?>");
        } else if !rest.starts_with(b"/") && !rest.starts_with(b"!") {
            let mut quote = None;
            while let Some(&c) = text.get(i) {
                i += 1;
                match (quote, c) {
                    (Some(q), _) if c == q => quote = None,
                    (Some(_), b'\t' | b'\n') => return true,
                    (None, b'"' | b'\'') => quote = Some(c),
                    (None, b'>') => break,
                    _ => {}
                }
            }
        }
    }
    false
}

/// Whether sxd-document puts `text`'s elements in the namespaces XML gives them, as
/// roxmltree does: not where a prefixed element declares a default namespace (sxd leaves
/// it out) or a default namespace is undeclared (`xmlns=""`). A look at each `xmlns=` in
/// the text, wherever it is: one in a text or a comment only sends the body to sxd.
fn default_namespaces_alike(text: &str) -> bool {
    let b = text.as_bytes();
    XMLNS.find_iter(b).all(|at| {
        let rest = b[at + 5..].trim_ascii_start();
        let Some(value) = rest.strip_prefix(b"=") else { return true };
        let value = value.trim_ascii_start();
        let empty = value.len() >= 2 && matches!(value[0], b'"' | b'\'') && value[1] == value[0];
        let tag = memchr::memrchr(b'<', &b[..at]).map_or(&b[..0], |lt| &b[lt + 1..at]);
        let name = tag.split(u8::is_ascii_whitespace).next().unwrap_or_default();
        !empty && !name.contains(&b':')
    })
}

/// `text` parsed by sxd-document as XML.
fn parse_xml(text: &str) -> Result<Package, String> {
    sxd_document::parser::parse(text).map_err(|e| format!("the body is not valid XML: {e}"))
}

/// `text` with its document type declaration blanked out (same length, so a parse error's
/// offset still points into the body). No DTD is read either way; the XML reader knows
/// only `SYSTEM` identifiers, and `<!DOCTYPE svg PUBLIC "..." "...">` is common.
fn without_doctype(text: &str) -> Cow<'_, str> {
    let Some(start) = DOCTYPE.find(text.as_bytes()) else {
        return Cow::Borrowed(text);
    };
    let (mut quote, mut subset, mut end) = (None, 0usize, None);
    for (i, c) in text.bytes().enumerate().skip(start + 2) {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (None, b'"' | b'\'') => quote = Some(c),
            (None, b'[') => subset += 1,
            (None, b']') => subset = subset.saturating_sub(1),
            (None, b'>') if subset == 0 => {
                end = Some(i);
                break;
            }
            _ => {}
        }
    }
    let Some(end) = end else { return Cow::Borrowed(text) };
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..start]);
    out.extend(text[start..=end].chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
    out.push_str(&text[end + 1..]);
    Cow::Owned(out)
}

/// `text` without the white space after its `</body>` (and `</html>`): HTML5's parser puts
/// it in the body, so `string(//body)` would end in it; libxml2 leaves it out.
fn before_tail(text: &str) -> &str {
    let b = text.as_bytes();
    let Some(at) = memchr::memmem::rfind(b, b"</body").or_else(|| memchr::memmem::rfind(b, b"</BODY")) else {
        return text;
    };
    let Some(gt) = memchr::memchr(b'>', &b[at..]).map(|g| at + g) else { return text };
    let tail = b[gt + 1..].trim_ascii();
    let closes_html =
        tail.len() >= 7 && tail[..7].eq_ignore_ascii_case(b"</html>") && tail[7..].trim_ascii().is_empty();
    if tail.is_empty() || closes_html { &text[..=gt] } else { text }
}

/// Refuses a body too large, with too many nodes or nested too deep to parse safely.
fn check_bounds(text: &str, format: Format) -> Result<(), String> {
    if text.len() > MAX_BYTES {
        return Err(format!(
            "the body has {} bytes; xpath reads bodies of at most {} MiB",
            text.len(),
            MAX_BYTES >> 20
        ));
    }
    let (nodes, depth) = scan(text.as_bytes(), format);
    if nodes > MAX_NODES {
        return Err(format!(
            "the body has more than {MAX_NODES} elements, attributes and texts; xpath reads at most that many"
        ));
    }
    let max = match format {
        Format::Xml => MAX_XML_DEPTH,
        Format::Html => MAX_HTML_DEPTH,
    };
    if depth > max {
        return Err(format!("the body nests elements more than {max} deep; xpath reads at most that"));
    }
    Ok(())
}

/// HTML elements without an end tag, or whose end tag may be left out without deepening
/// the tree (the next sibling closes them).
const NOT_NESTING: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track",
    "wbr", "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "thead", "tbody", "tfoot",
    "colgroup", "rb", "rt", "rp", "rtc", "html", "head", "body",
];

/// How many nodes `text` makes (two per start tag, one per `=` in a tag: see [`MAX_NODES`])
/// and how deep its elements nest, by a scan of its tags (a bound
/// for the parser, not a parser: comments, declarations and processing instructions are
/// skipped; an HTML element in [`NOT_NESTING`] does not count toward the depth).
fn scan(text: &[u8], format: Format) -> (usize, usize) {
    let (mut tags, mut depth, mut deepest) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'<', &text[i..]) {
        i += at + 1;
        let rest = &text[i..];
        if rest.starts_with(b"!--") {
            i += memchr::memmem::find(rest, b"-->").map_or(rest.len(), |e| e + 3);
            continue;
        }
        // Tags are short: a loop costs less than starting a search.
        let (mut end, mut attributes) = (0, 0);
        while end < rest.len() && rest[end] != b'>' {
            attributes += usize::from(rest[end] == b'=');
            end += 1;
        }
        let tag = &rest[..end];
        i += end;
        match tag.first() {
            Some(b'/') => depth = depth.saturating_sub(1),
            Some(c) if c.is_ascii_alphabetic() => {
                tags += 2 + attributes;
                if tag.ends_with(b"/") && format == Format::Xml {
                    continue;
                }
                let name_len =
                    tag.iter().position(|c| c.is_ascii_whitespace() || *c == b'/').unwrap_or(tag.len());
                let name = &tag[..name_len];
                if format == Format::Html
                    && NOT_NESTING.iter().any(|n| name.eq_ignore_ascii_case(n.as_bytes()))
                {
                    continue;
                }
                depth += 1;
                deepest = deepest.max(depth);
            }
            _ => {}
        }
    }
    (tags, deepest)
}

/// The namespace prefixes the document declares, in document order, a later declaration of
/// a prefix replacing an earlier one, and the first default namespace as `_` (Hurl's rule).
fn namespaces(package: &Package) -> Vec<(String, String)> {
    let doc = package.as_document();
    let mut found: Vec<(String, String)> = Vec::new();
    let mut default = None;
    let mut stack: Vec<(Element<'_>, Option<Element<'_>>)> = doc
        .root()
        .children()
        .into_iter()
        .filter_map(|c| match c {
            ChildOfRoot::Element(e) => Some((e, None)),
            _ => None,
        })
        .collect();
    while let Some((e, parent)) = stack.pop() {
        if default.is_none() {
            default = e.default_namespace_uri().map(str::to_owned);
        }
        for ns in e.namespaces_in_scope() {
            let (prefix, uri) = (ns.prefix(), ns.uri());
            let own = e.namespace_uri_for_prefix(prefix) == Some(uri)
                && parent.is_none_or(|p| p.namespace_uri_for_prefix(prefix) != Some(uri));
            if own && prefix != "xml" {
                found.retain(|(p, _)| p != prefix);
                found.push((prefix.to_owned(), uri.to_owned()));
            }
        }
        let children: Vec<_> = e
            .children()
            .into_iter()
            .filter_map(|c| match c {
                ChildOfElement::Element(child) => Some((child, Some(e))),
                _ => None,
            })
            .collect();
        stack.extend(children.into_iter().rev());
    }
    if let Some(uri) = default {
        found.push(("_".to_owned(), uri));
    }
    found
}

/// [`namespaces`] of a roxmltree document: the same rule on the same document.
fn tree_namespaces(doc: &roxmltree::Document<'_>) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    let mut default = None;
    for e in doc.root().descendants().filter(roxmltree::Node::is_element) {
        if default.is_none() {
            default = e.default_namespace();
        }
        let parent = e.parent_element();
        for ns in e.namespaces() {
            let Some(prefix) = ns.name() else { continue };
            let own = parent.is_none_or(|p| p.lookup_namespace_uri(Some(prefix)) != Some(ns.uri()));
            if own && prefix != "xml" {
                found.retain(|(p, _)| p != prefix);
                found.push((prefix.to_owned(), ns.uri().to_owned()));
            }
        }
    }
    if let Some(uri) = default {
        found.push(("_".to_owned(), uri.to_owned()));
    }
    found
}

/// For fuzzing (target `xpath`): the first line of `data` as an XPath expression, the rest
/// as a body read as XML and as HTML; each compiled, bounded, parsed and evaluated, with a
/// few expressions that walk the whole tree. Must never panic outside the engine's crates
/// (whose panics [`compile`], [`Doc::parse`] and [`Doc::eval`] catch, see
/// [`fuzz_panic_hook`]).
pub fn fuzz_xpath(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (expr, body) = text.split_once('\n').unwrap_or((text, ""));
    let given = compile(expr);
    let _ = prefixes(expr);
    for format in [Format::Xml, Format::Html] {
        let Ok(doc) = Doc::parse(body, format) else { continue };
        if let Ok(e) = &given {
            let _ = doc.eval(e);
        }
        for walk in ["count(//node())", "string(/)", "//@*", "sum(//*[number(.) = number(.)])", "//_:*"] {
            if let Ok(e) = compile(walk) {
                let _ = doc.eval(&e);
            }
        }
    }
}

/// For fuzzing: libFuzzer aborts on every panic, even one that is caught; this hook lets
/// the panics of the XPath and HTML crates go on to the `catch_unwind` that turns each into
/// the body's or the expression's error, and aborts on any other (then `previous` reports it).
pub fn fuzz_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let caught = info.location().is_some_and(|l| {
            let f = l.file();
            ["sxd-xpath", "sxd-document", "sxd_html", "html5ever", "markup5ever", "tendril"]
                .iter()
                .any(|c| f.contains(c))
        });
        if !caught {
            previous(info);
        }
    }));
}

#[cfg(test)]
mod tests;
