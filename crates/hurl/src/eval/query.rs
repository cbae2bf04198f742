//! Queries, as Hurl evaluates them (`runner/query.rs` in Hurl), on one answer:
//! its body decoded once per check by its `Content-Encoding` (gzip, deflate,
//! br) and read as text in its charset, parsed as JSON once for every jsonpath
//! query (unless each is read in one pass over the body: the singular paths that
//! the entry's plan follows, a path of one filter) and as an XML or HTML document
//! once for every xpath query; `Set-Cookie`
//! headers read for `cookie`. A jsonpath yields nothing, the one value it found,
//! or the list of what it found, as in Hurl.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::io::Read as _;

use regex::Regex;

use super::predicate::render;
use super::{Answer, FailureKind};
use crate::jsonpath::stream::{Leaf, MAX, Plan};
use crate::jsonpath::{Budget, JsonPath};
use crate::model::{CookieAttr, Query, RegexArg};
use crate::template::Vars;
use crate::value::{Value, parse_json};
use crate::xpath;

/// The most a decompressed body may hold (the engine's answer cap).
const MAX_DECODED: u64 = 64 << 20;

/// The answer's body as the queries of one check read it, worked out on first use.
pub(crate) struct Body<'a> {
    raw: &'a [u8],
    encoding: Option<&'a str>,
    content_type: Option<&'a str>,
    bytes: OnceCell<Result<Cow<'a, [u8]>, String>>,
    text: OnceCell<Result<Cow<'a, str>, String>>,
    json: OnceCell<Result<serde_json::Value, String>>,
    xml: OnceCell<Result<xpath::Doc, String>>,
    /// The plan of the entry's singular jsonpaths, and what it found in one pass (`None`:
    /// the body is not its own text, or not JSON).
    plan: Option<&'a Plan>,
    found: OnceCell<Option<[Leaf<'a>; MAX]>>,
}

impl<'a> Body<'a> {
    /// The body of `answer`; with `plan`, the paths it follows are read in one pass.
    pub(crate) fn of(answer: &'a impl Answer, plan: Option<&'a Plan>) -> Body<'a> {
        Body {
            raw: answer.body(),
            encoding: answer.header("content-encoding", 0),
            content_type: answer.header("content-type", 0),
            bytes: OnceCell::new(),
            text: OnceCell::new(),
            json: OnceCell::new(),
            xml: OnceCell::new(),
            plan,
            found: OnceCell::new(),
        }
    }

    /// What `p` finds by the plan's one pass, as [`unwrap`] gives it; `None` when the plan
    /// does not follow it or cannot tell.
    #[expect(clippy::option_option, reason = "cannot tell, nothing found, or a value")]
    fn one_pass(&self, p: &JsonPath) -> Option<Option<Value<'a>>> {
        let plan = self.plan?;
        let i = plan.index_of(p)?;
        let found = self.found.get_or_init(|| {
            let mut out = [const { Leaf::Nothing }; MAX];
            (self.is_text() && plan.find(self.raw, true, &mut out).is_ok()).then_some(out)
        });
        Value::from_leaf(&found.as_ref()?[i])
    }

    /// The body decoded by its `Content-Encoding`.
    pub(crate) fn bytes(&self) -> Result<&[u8], String> {
        self.bytes.get_or_init(|| decode(self.raw, self.encoding)).as_deref().map_err(Clone::clone)
    }

    /// The decoded body as text, in its charset (UTF-8 without one).
    pub(crate) fn text(&self) -> Result<&str, String> {
        self.text
            .get_or_init(|| {
                let bytes = match self.bytes.get_or_init(|| decode(self.raw, self.encoding)) {
                    Ok(Cow::Borrowed(b)) => Cow::Borrowed(*b),
                    Ok(Cow::Owned(b)) => Cow::Owned(b.clone()),
                    Err(e) => return Err(e.clone()),
                };
                let charset = self.content_type.and_then(charset);
                let enc = match charset {
                    None => encoding_rs::UTF_8,
                    Some(c) => encoding_rs::Encoding::for_label(c.as_bytes())
                        .ok_or_else(|| format!("the answer's charset {c:?} is unknown"))?,
                };
                if enc == encoding_rs::UTF_8 {
                    return match bytes {
                        Cow::Borrowed(b) => std::str::from_utf8(b).map(Cow::Borrowed),
                        Cow::Owned(b) => String::from_utf8(b).map(Cow::Owned).map_err(|e| e.utf8_error()),
                    }
                    .map_err(|_| "the answer's body is not UTF-8 text".to_owned());
                }
                enc.decode_without_bom_handling_and_without_replacement(&bytes)
                    .map(|s| Cow::Owned(s.into_owned()))
                    .ok_or_else(|| format!("the answer's body is not {} text", enc.name()))
            })
            .as_deref()
            .map_err(Clone::clone)
    }

    /// The body as a JSON document.
    fn json(&self) -> Result<&serde_json::Value, String> {
        self.json
            .get_or_init(|| {
                let text = self.text()?;
                parse_json(text.as_bytes()).map_err(|_| "the answer's body is not JSON".to_owned())
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// Whether a body with these `Content-Encoding` and `Content-Type` values (the first of each)
/// is its own text as received: no encoding, and UTF-8 (no charset, or UTF-8's). A type that is
/// not UTF-8 text itself is not told apart: `false`. In line: the compiled checks ask it on
/// every answer whose body they read.
#[inline]
pub(crate) fn own_text(encoding: Option<&[u8]>, content_type: Option<&[u8]>) -> bool {
    encoding.is_none()
        && content_type.is_none_or(|t| {
            // No parameter, no charset: the look for `;` spares the parse on most answers.
            !crate::bytes::has(t, b';')
                || std::str::from_utf8(t).is_ok_and(|t| {
                    charset(t).is_none_or(|c| {
                        encoding_rs::Encoding::for_label(c.as_bytes()) == Some(encoding_rs::UTF_8)
                    })
                })
        })
}

impl Body<'_> {
    /// Whether the body as received is its text: no `Content-Encoding`, and UTF-8.
    fn is_text(&self) -> bool {
        own_text(self.encoding.map(str::as_bytes), self.content_type.map(str::as_bytes))
    }

    /// The body as a document for XPath: HTML when its `Content-Type` says so, else XML.
    fn xml(&self) -> Result<&xpath::Doc, String> {
        self.xml
            .get_or_init(|| {
                let format = xpath::Format::of_content_type(self.content_type);
                xpath::Doc::parse(self.text()?, format)
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// `raw` decoded by the encodings of `Content-Encoding` (in the order listed, as Hurl).
fn decode<'a>(raw: &'a [u8], encoding: Option<&str>) -> Result<Cow<'a, [u8]>, String> {
    let mut data = Cow::Borrowed(raw);
    for e in encoding.into_iter().flat_map(|h| h.split(',')).map(str::trim) {
        let mut out = Vec::new();
        let read = match e.to_ascii_lowercase().as_str() {
            "identity" | "" => continue,
            "gzip" | "x-gzip" => {
                flate2::read::MultiGzDecoder::new(&*data).take(MAX_DECODED).read_to_end(&mut out)
            }
            "deflate" => flate2::read::ZlibDecoder::new(&*data).take(MAX_DECODED).read_to_end(&mut out),
            "br" => {
                brotli_decompressor::Decompressor::new(&*data, 4096).take(MAX_DECODED).read_to_end(&mut out)
            }
            other => {
                return Err(format!(
                    "the answer's Content-Encoding {other:?} is not one Hurl decodes (gzip, deflate, br)"
                ));
            }
        };
        read.map_err(|err| format!("the answer's body is not valid {e}: {err}"))?;
        data = Cow::Owned(out);
    }
    Ok(data)
}

/// The `charset` parameter of a `Content-Type`.
fn charset(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case("charset").then(|| v.trim().trim_matches('"'))
    })
}

/// What a query found: nothing, or a value; `Err` says why it could not be evaluated.
pub(crate) fn query<'b>(
    q: &Query,
    answer: &'b impl Answer,
    body: &'b Body<'b>,
    vars: &mut Vars,
    scratch: &mut Vec<u8>,
) -> Result<Option<Value<'b>>, FailureKind> {
    Ok(Some(match q {
        Query::Status => Value::Int(i64::from(answer.status())),
        Query::Version => Value::Str(Cow::Borrowed(answer.version().ok_or_else(|| unknown("version"))?)),
        Query::Url => Value::Str(Cow::Borrowed(answer.url().ok_or_else(|| unknown("URL"))?)),
        Query::Ip => Value::Str(Cow::Owned(answer.ip().ok_or_else(|| unknown("address"))?.to_string())),
        Query::Duration => {
            Value::Int(answer.duration().ok_or_else(|| unknown("duration"))?.as_millis() as i64)
        }
        Query::Redirects => Value::List(
            answer
                .redirects()
                .iter()
                .map(|r| Value::Response { status: r.status, location: Some(Cow::Borrowed(&r.location)) })
                .collect(),
        ),
        Query::Header(t) => {
            let name = render(t, vars, scratch).map_err(|e| e.to_string())?;
            let (first, more) = answer.header_first(name);
            match (first, more) {
                (None, _) => return Ok(None),
                (Some(one), false) => Value::Str(Cow::Borrowed(one)),
                (Some(_), true) => Value::List(
                    (0..)
                        .map_while(|i| answer.header(name, i))
                        .map(|h| Value::Str(Cow::Borrowed(h)))
                        .collect(),
                ),
            }
        }
        Query::Cookie { name, attr } => {
            let name = render(name, vars, scratch).map_err(|e| e.to_string())?.to_owned();
            return cookie(answer, &name, *attr);
        }
        Query::Body => Value::Str(Cow::Borrowed(body.text()?)),
        Query::Bytes => Value::Bytes(Cow::Borrowed(body.bytes()?)),
        Query::RawBytes => Value::Bytes(Cow::Borrowed(answer.body())),
        Query::Sha256 => {
            use sha2::Digest as _;
            Value::Bytes(Cow::Owned(sha2::Sha256::digest(body.bytes()?).to_vec()))
        }
        Query::Md5 => {
            use md5::Digest as _;
            Value::Bytes(Cow::Owned(md5::Md5::digest(body.bytes()?).to_vec()))
        }
        Query::JsonPath(p) => return jsonpath(p, body),
        Query::JsonPathTemplate(t) => {
            let src = render(t, vars, scratch).map_err(|e| e.to_string())?;
            let p = JsonPath::parse(src).map_err(|(_, m)| format!("jsonpath {src:?}: {m}"))?;
            return jsonpath(&p, body);
        }
        Query::Regex(re) => {
            let re = match re {
                RegexArg::Literal(r) => Cow::Borrowed(r),
                RegexArg::Template(t) => {
                    let src = render(t, vars, scratch).map_err(|e| e.to_string())?;
                    Cow::Owned(Regex::new(src).map_err(|e| format!("invalid regex: {e}"))?)
                }
            };
            let text = body.text()?;
            return Ok(re
                .captures(text)
                .and_then(|c| c.get(1))
                .map(|m| Value::Str(Cow::Borrowed(m.as_str()))));
        }
        Query::Variable(t) => {
            let name = render(t, vars, scratch).map_err(|e| e.to_string())?.to_owned();
            return Ok(vars.get(&name).map(|v| Value::of_var(v).into_owned()));
        }
        Query::XPath(t) => {
            let expr = xpath::compile(render(t, vars, scratch).map_err(|e| e.to_string())?)?;
            return Ok(Some(body.xml()?.eval(&expr)?));
        }
        Query::Certificate(_) => return Ok(None),
    }))
}

/// The answer's `what` is not known to the transport that sent it.
fn unknown(what: &str) -> FailureKind {
    FailureKind::Error(format!("the answer's {what} is not known to the transport that sent the request"))
}

/// A jsonpath on the body, as Hurl gives its result: a path the entry's plan follows, or a
/// path of one filter ([`crate::jsonpath::stream::Filtered`]), read in one pass over a body
/// that is its own text, when that pass can tell; else evaluated on the parsed document.
fn jsonpath<'b>(p: &JsonPath, body: &'b Body<'b>) -> Result<Option<Value<'b>>, FailureKind> {
    if let Some(v) = body.one_pass(p) {
        return Ok(v);
    }
    if let Some(f) = p.filtered()
        && body.is_text()
        && let Some(v) = filtered(f, body.raw)
    {
        return Ok(v);
    }
    let doc = match body.json() {
        Ok(doc) => doc,
        Err(e) if e.ends_with("is not JSON") => return Err(FailureKind::NotJson),
        Err(e) => return Err(FailureKind::Error(e)),
    };
    let found = p.nodes(doc, doc, &mut Budget::for_answer(body.raw.len())).map_err(FailureKind::TooMuch)?;
    Ok(unwrap(&found))
}

/// What `f` finds in `raw`, as [`unwrap`] gives it; `None` when its pass cannot tell.
#[expect(clippy::option_option, reason = "cannot tell, nothing found, or a value")]
fn filtered<'b>(f: &crate::jsonpath::stream::Filtered, raw: &'b [u8]) -> Option<Option<Value<'b>>> {
    let mut found = Vec::new();
    f.find(raw, &mut found)?;
    match found.as_slice() {
        [] => Some(None),
        [one] => Value::from_leaf(one),
        many => Some(Some(Value::List(
            many.iter().map(|l| Value::from_leaf(l).flatten()).collect::<Option<_>>()?,
        ))),
    }
}

/// Hurl's result of a jsonpath: nothing, the one value found, or the list of them.
pub(crate) fn unwrap(found: &[&serde_json::Value]) -> Option<Value<'static>> {
    match found {
        [] => None,
        [one] => Some(Value::from_json(one)),
        many => Some(Value::List(many.iter().map(|v| Value::from_json(v)).collect())),
    }
}

/// The cookie named `name` of the answer's `Set-Cookie` headers, or one of its attributes
/// (read in place: the compiled checks call it on every answer).
pub(super) fn cookie<'b>(
    answer: &'b impl Answer,
    name: &str,
    attr: CookieAttr,
) -> Result<Option<Value<'b>>, FailureKind> {
    // The first `Set-Cookie` as the answer keeps it at hand, then the others in order; one
    // that is not text ends them, as it ends `header`'s.
    let first = answer.first_set_cookie().0.and_then(|h| std::str::from_utf8(h).ok());
    let Some((value, attrs)) = std::iter::once(first)
        .chain((1..).map(|i| answer.header("set-cookie", i)))
        .map_while(|v| v)
        .filter_map(crate::cookies::name_value)
        .find_map(|(n, v, attrs)| (n == name).then_some((v, attrs)))
    else {
        return Ok(None);
    };
    let attrs = attrs
        .split(';')
        .map(|p| p.split_once('=').map_or((p.trim(), None), |(k, v)| (k.trim(), Some(v.trim()))));
    let get = |key: &str| attrs.clone().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v);
    let text = |v: Option<&'b str>| v.map(|s| Value::Str(Cow::Borrowed(s)));
    Ok(match attr {
        CookieAttr::Value => Some(Value::Str(Cow::Borrowed(value))),
        CookieAttr::Domain => text(get("domain").flatten()),
        CookieAttr::Path => text(get("path").flatten()),
        CookieAttr::SameSite => text(get("samesite").flatten()),
        CookieAttr::MaxAge => get("max-age").flatten().and_then(|v| v.parse().ok()).map(Value::Int),
        CookieAttr::Secure => get("secure").map(|_| Value::Unit),
        CookieAttr::HttpOnly => get("httponly").map(|_| Value::Unit),
        CookieAttr::Expires => match get("expires").flatten() {
            None => None,
            Some(s) => Some(Value::Date(
                crate::cookies::date(s).ok_or_else(|| format!("the cookie's Expires {s:?} is not a date"))?,
            )),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_decode_by_their_encoding_and_charset() {
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all("café".as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(decode(&gz, Some("gzip")).unwrap().as_ref(), "café".as_bytes());
        assert!(decode(b"plain", Some("zstd")).unwrap_err().contains("zstd"));
        assert!(decode(b"not gzip", Some("gzip")).is_err());
        assert_eq!(charset("text/plain; charset=ISO-8859-1"), Some("ISO-8859-1"));
        assert_eq!(charset("text/plain"), None);
    }

    /// The tree's answer for `path` on `body`, as `jsonpath` gives it without the one pass.
    #[expect(clippy::option_option, reason = "not JSON, nothing found, or a value")]
    fn tree(path: &JsonPath, body: &[u8]) -> Option<Option<Value<'static>>> {
        let doc = parse_json(body).ok()?;
        Some(unwrap(&path.nodes(&doc, &doc, &mut Budget::new(crate::jsonpath::MIN_BUDGET)).unwrap()))
    }

    #[test]
    fn filters_read_in_one_pass_give_hurls_results() {
        let body = br#"{"orders": [{"id": "o-1", "status": "paid"}, {"status": "pending", "id": "o-2"}]}"#;
        let p = JsonPath::parse("$.orders[?(@.status == 'pending')].id").unwrap();
        let fast = filtered(p.filtered().unwrap(), body);
        assert_eq!(fast, Some(Some(Value::Str(Cow::Borrowed("o-2")))));
        assert_eq!(fast, tree(&p, body));
        let p = JsonPath::parse("$.orders[?(@.status)].id").unwrap();
        let fast = filtered(p.filtered().unwrap(), body).unwrap().unwrap();
        assert_eq!(format!("{fast:?}"), format!("{:?}", tree(&p, body).unwrap().unwrap()));
        assert!(matches!(fast, Value::List(l) if l.len() == 2));
        // An integer the parsed document keeps as a big integer is left to it.
        let big = br#"{"orders": [{"id": 18446744073709551615, "status": "paid"}]}"#;
        let p = JsonPath::parse("$.orders[?(@.status == 'paid')].id").unwrap();
        assert_eq!(filtered(p.filtered().unwrap(), big), None);
    }

    proptest::proptest! {
        /// Whenever the pass answers, its value is the tree's, of the same kind (big integers,
        /// floats and escapes among the members).
        #[test]
        fn filtered_values_are_the_trees(
            members in proptest::collection::vec(proptest::collection::vec(
                (proptest::sample::select(vec!["a", "b", "c"]), proptest::sample::select(vec![
                    "1", "2", "-1", "1.0", "-0", "1e2", "18446744073709551615", "9223372036854775808",
                    "9223372036854775807", "12345678901234567890123", r#""a""#, r#""\u0061""#, r#""é""#,
                    "true", "null", "[1]", "{}"])), 0..4), 0..4),
            m in proptest::sample::select(vec!["a", "b", "c"]), t in proptest::sample::select(vec!["a", "b", "c"]),
            op in proptest::sample::select(vec!["==", "!=", "<", ">="]),
            lit in proptest::sample::select(vec!["1", "2", "1.0", "'a'", "true", "null", "9223372036854775807"]),
        ) {
            let elements: Vec<String> = members.iter().map(|e| {
                let m: Vec<String> = e.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
                format!("{{{}}}", m.join(", "))
            }).collect();
            let body = format!("{{\"x\": [{}]}}", elements.join(", "));
            let p = JsonPath::parse(&format!("$.x[?(@.{m} {op} {lit})].{t}")).unwrap();
            if let Some(fast) = filtered(p.filtered().unwrap(), body.as_bytes()) {
                proptest::prop_assert_eq!(format!("{fast:?}"), format!("{:?}", tree(&p, body.as_bytes()).unwrap()));
            }
        }
    }
}
