//! Filters, as Hurl applies them (`runner/filter/` in Hurl): each takes the
//! value of the query (or the filter before it) and gives a new one, or nothing
//! (a `regex` that does not match), or an error that says why the value does
//! not fit (`count` of a string, `toInt` of `"abc"`).

use std::borrow::Cow;

use base64::Engine as _;
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use regex::Regex;

use super::predicate::render;
use crate::jsonpath::{Budget, JsonPath};
use crate::model::{FilterKind, IntArg, RegexArg};
use crate::template::{Template, Vars};
use crate::value::{Value, hex, parse_json};

/// Applies `f` to `v`. `Err` says why it could not.
pub(crate) fn apply<'a>(
    f: &FilterKind,
    v: Value<'a>,
    vars: &mut Vars,
    scratch: &mut Vec<u8>,
) -> Result<Option<Value<'a>>, String> {
    match f {
        FilterKind::Count | FilterKind::First | FilterKind::Last | FilterKind::Nth(_) => list(f, v, vars),
        FilterKind::ToInt | FilterKind::ToFloat | FilterKind::ToString | FilterKind::ToHex => cast(f, v),
        FilterKind::Base64Decode
        | FilterKind::Base64UrlSafeDecode
        | FilterKind::Base64Encode
        | FilterKind::Base64UrlSafeEncode
        | FilterKind::CharsetDecode(_)
        | FilterKind::Utf8Decode
        | FilterKind::Utf8Encode => bytes(f, v, vars),
        FilterKind::ToDate(_)
        | FilterKind::DateFormat(_)
        | FilterKind::DaysAfterNow
        | FilterKind::DaysBeforeNow
        | FilterKind::Location => dates(f, v, vars),
        FilterKind::JsonPath(_)
        | FilterKind::XPath(_)
        | FilterKind::Regex(_)
        | FilterKind::Replace(..)
        | FilterKind::ReplaceRegex(..)
        | FilterKind::Split(_)
        | FilterKind::UrlEncode
        | FilterKind::UrlDecode
        | FilterKind::UrlQueryParam(_)
        | FilterKind::HtmlEscape
        | FilterKind::HtmlUnescape => text_filter(f, v, vars, scratch),
    }
}

/// A template argument, rendered.
fn text(t: &Template, vars: &mut Vars) -> Result<String, String> {
    t.render_string(vars).map_err(|e| e.to_string())
}

/// Why a filter does not take a value of `kind`: it takes `expected`.
fn wrong<T>(expected: &str, kind: &str) -> Result<T, String> {
    Err(format!("the filter takes {expected}, not {kind}"))
}

/// `count`, `first`, `last` and `nth`: of a list (`count` also of bytes and a node set).
fn list<'a>(f: &FilterKind, v: Value<'a>, vars: &mut Vars) -> Result<Option<Value<'a>>, String> {
    let kind = v.kind();
    Ok(Some(match (f, v) {
        (FilterKind::Count, Value::List(l)) => Value::Int(l.len() as i64),
        (FilterKind::Count, Value::Bytes(b)) => Value::Int(b.len() as i64),
        (FilterKind::Count, Value::Nodeset(n)) => Value::Int(n as i64),
        (FilterKind::Count, _) => return wrong("a list, bytes or a node set", kind),
        (FilterKind::First, Value::List(l)) => l.into_iter().next().ok_or("the list is empty")?,
        (FilterKind::Last, Value::List(l)) => l.into_iter().next_back().ok_or("the list is empty")?,
        (FilterKind::Nth(n), Value::List(mut l)) => {
            let n = match n {
                IntArg::Literal(n) => *n,
                IntArg::Var(t) => match super::placeholder_value(t, vars).map_err(|e| e.to_string())? {
                    Value::Int(n) => n,
                    other => return Err(format!("`nth` takes an integer, not {}", other.kind())),
                },
            };
            let len = l.len() as i64;
            let i = if n < 0 { len + n } else { n };
            if !(0..len).contains(&i) {
                return Err(format!("index {n} is out of bounds (the list has {len})"));
            }
            l.swap_remove(i as usize)
        }
        (FilterKind::First | FilterKind::Last | FilterKind::Nth(_), _) => return wrong("a list", kind),
        _ => return wrong("a string", kind),
    }))
}

/// `toInt`, `toFloat`, `toString` and `toHex`: a value as another kind.
fn cast<'a>(f: &FilterKind, v: Value<'a>) -> Result<Option<Value<'a>>, String> {
    let kind = v.kind();
    Ok(Some(match (f, v) {
        (FilterKind::ToInt, Value::Float(f)) => Value::Int(f as i64),
        (FilterKind::ToInt, Value::Str(s)) => {
            Value::Int(s.parse().map_err(|_| format!("{s:?} is not an integer"))?)
        }
        (FilterKind::ToInt, v @ Value::Int(_)) | (FilterKind::ToFloat, v @ Value::Float(_)) => v,
        (FilterKind::ToFloat, Value::Int(n)) => Value::Float(n as f64),
        (FilterKind::ToFloat, Value::Str(s)) => {
            Value::Float(s.parse().map_err(|_| format!("{s:?} is not a float"))?)
        }
        (FilterKind::ToFloat, Value::BigInt(s)) => {
            return Err(format!("{s} is too big to be cast as a float"));
        }
        (FilterKind::ToInt | FilterKind::ToFloat, _) => {
            return wrong("a float, an integer or a string", kind);
        }
        (FilterKind::ToString, v) => Value::Str(Cow::Owned(
            v.render().ok_or_else(|| format!("{} cannot be made a string", v.kind()))?.into_owned(),
        )),
        (FilterKind::ToHex, Value::Bytes(b)) => Value::Str(Cow::Owned(hex(&b))),
        (FilterKind::ToHex, _) => return wrong("bytes", kind),
        _ => return wrong("a string", kind),
    }))
}

/// Between text and bytes: base64 both ways, `charsetDecode`, `utf8Decode`, `utf8Encode`.
fn bytes<'a>(f: &FilterKind, v: Value<'a>, vars: &mut Vars) -> Result<Option<Value<'a>>, String> {
    let kind = v.kind();
    Ok(Some(match (f, v) {
        (FilterKind::Base64Decode, Value::Str(s)) => Value::Bytes(Cow::Owned(
            base64::engine::general_purpose::STANDARD
                .decode(&*s)
                .map_err(|_| "the string is not base64".to_owned())?,
        )),
        (FilterKind::Base64UrlSafeDecode, Value::Str(s)) => Value::Bytes(Cow::Owned(
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(&*s)
                .map_err(|_| "the string is not base64 (URL-safe, without padding)".to_owned())?,
        )),
        (FilterKind::Base64Encode, Value::Bytes(b)) => {
            Value::Str(Cow::Owned(base64::engine::general_purpose::STANDARD.encode(&b)))
        }
        (FilterKind::Base64UrlSafeEncode, Value::Bytes(b)) => {
            Value::Str(Cow::Owned(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&b)))
        }
        (FilterKind::CharsetDecode(t), Value::Bytes(b)) => {
            let label = text(t, vars)?;
            let enc = encoding_rs::Encoding::for_label(label.as_bytes())
                .ok_or_else(|| format!("unknown charset {label:?}"))?;
            let s = enc
                .decode_without_bom_handling_and_without_replacement(&b)
                .ok_or_else(|| format!("the bytes are not {label} text"))?;
            Value::Str(Cow::Owned(s.into_owned()))
        }
        (FilterKind::Utf8Decode, Value::Bytes(b)) => {
            Value::Str(Cow::Owned(String::from_utf8_lossy(&b).into_owned()))
        }
        (
            FilterKind::Base64Encode
            | FilterKind::Base64UrlSafeEncode
            | FilterKind::Utf8Decode
            | FilterKind::CharsetDecode(_),
            _,
        ) => {
            return wrong("bytes", kind);
        }
        (FilterKind::Utf8Encode, Value::Str(s)) => Value::Bytes(Cow::Owned(s.as_bytes().to_vec())),
        _ => return wrong("a string", kind),
    }))
}

/// `toDate`, `dateFormat`, `daysAfterNow`, `daysBeforeNow`, and `location` of a response.
fn dates<'a>(f: &FilterKind, v: Value<'a>, vars: &mut Vars) -> Result<Option<Value<'a>>, String> {
    let kind = v.kind();
    Ok(Some(match (f, v) {
        (FilterKind::ToDate(t), Value::Str(s)) => Value::Date(to_date(&s, &text(t, vars)?)?),
        (FilterKind::DateFormat(t), Value::Date(d)) => {
            let fmt = text(t, vars)?;
            let mut out = String::new();
            std::fmt::Write::write_fmt(&mut out, format_args!("{}", d.format(&fmt)))
                .map_err(|_| format!("{fmt:?} is not a date format"))?;
            Value::Str(Cow::Owned(out))
        }
        (FilterKind::DaysAfterNow, Value::Date(d)) => {
            Value::Int(d.signed_duration_since(Utc::now()).num_days())
        }
        (FilterKind::DaysBeforeNow, Value::Date(d)) => {
            Value::Int(Utc::now().signed_duration_since(d).num_days())
        }
        (FilterKind::DateFormat(_) | FilterKind::DaysAfterNow | FilterKind::DaysBeforeNow, _) => {
            return wrong("a date", kind);
        }
        (FilterKind::Location, Value::Response { location, .. }) => {
            return Ok(location.map(Value::Str));
        }
        (FilterKind::Location, _) => return wrong("an HTTP response (a redirect)", kind),
        _ => return wrong("a string", kind),
    }))
}

/// The filters of a string: `jsonpath`, `xpath`, `regex`, `replace`, `replaceRegex`, `split`,
/// the URL and HTML codings, `urlQueryParam`.
fn text_filter<'a>(
    f: &FilterKind,
    v: Value<'a>,
    vars: &mut Vars,
    scratch: &mut Vec<u8>,
) -> Result<Option<Value<'a>>, String> {
    let kind = v.kind();
    Ok(Some(match (f, v) {
        (FilterKind::JsonPath(t), Value::Str(s)) => {
            let path = text(t, vars)?;
            let doc = parse_json(s.as_bytes()).map_err(|_| "the value is not JSON".to_owned())?;
            let p = JsonPath::parse(&path).map_err(|(_, m)| format!("jsonpath {m}"))?;
            let found = p.nodes(&doc, &doc, &mut Budget::for_answer(s.len())).map_err(|e| e.to_string())?;
            return Ok(super::query::unwrap(&found));
        }
        (FilterKind::XPath(t), Value::Str(s)) => {
            let expr = crate::xpath::compile(&text(t, vars)?)?;
            // Hurl reads the value with its HTML parser, which takes XML too.
            let doc = crate::xpath::Doc::parse(&s, crate::xpath::Format::Html)?;
            doc.eval(&expr)?
        }
        (FilterKind::Regex(re), Value::Str(s)) => {
            let re = regex_of(re, vars, scratch)?;
            return Ok(re
                .captures(&s)
                .and_then(|c| c.get(1))
                .map(|m| Value::Str(Cow::Owned(m.as_str().to_owned()))));
        }
        (FilterKind::Replace(old, new), Value::Str(s)) => {
            let (old, new) = (text(old, vars)?, text(new, vars)?);
            Value::Str(Cow::Owned(s.replace(&old, &new)))
        }
        (FilterKind::ReplaceRegex(re, new), Value::Str(s)) => {
            let re = regex_of(re, vars, scratch)?;
            let new = text(new, vars)?;
            Value::Str(Cow::Owned(re.replace_all(&s, new.as_str()).into_owned()))
        }
        (FilterKind::Split(sep), Value::Str(s)) => {
            let sep = text(sep, vars)?;
            Value::List(s.split(sep.as_str()).map(|p| Value::Str(Cow::Owned(p.to_owned()))).collect())
        }
        (FilterKind::UrlEncode, Value::Str(s)) => Value::Str(Cow::Owned(url_encode(&s, true))),
        (FilterKind::UrlDecode, Value::Str(s)) => Value::Str(Cow::Owned(url_decode(&s))),
        (FilterKind::UrlQueryParam(t), Value::Str(s)) => {
            let name = text(t, vars)?;
            let query = s.split_once('?').map_or("", |(_, q)| q);
            let query = query.split('#').next().unwrap_or("");
            return Ok(query
                .split('&')
                .filter_map(|kv| kv.split_once('=').or(Some((kv, ""))))
                .find(|(k, _)| url_decode(k) == name)
                .map(|(_, v)| Value::Str(Cow::Owned(url_decode(&v.replace('+', " "))))));
        }
        (FilterKind::HtmlEscape, Value::Str(s)) => Value::Str(Cow::Owned(html_escape(&s))),
        (FilterKind::HtmlUnescape, Value::Str(s)) => Value::Str(Cow::Owned(html_unescape(&s))),
        _ => return wrong("a string", kind),
    }))
}

/// A regex argument, compiled (a template's rendered first).
fn regex_of<'r>(re: &'r RegexArg, vars: &mut Vars, scratch: &mut Vec<u8>) -> Result<Cow<'r, Regex>, String> {
    match re {
        RegexArg::Literal(r) => Ok(Cow::Borrowed(r)),
        RegexArg::Template(t) => {
            let src = render(t, vars, scratch).map_err(|e| e.to_string())?;
            Regex::new(src).map(Cow::Owned).map_err(|e| format!("invalid regex: {e}"))
        }
    }
}

/// `s` percent-encoded: every byte but `A-Z a-z 0-9 - . _ ~` (and `/` when `keep_slash`,
/// as Hurl's `urlEncode` keeps it).
pub(crate) fn url_encode(s: &str, keep_slash: bool) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || keep_slash && b == b'/' {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 15)] as char);
        }
    }
    out
}

/// `%XX` sequences decoded (the bytes read as UTF-8, lossily).
fn url_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(x) = s.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(x);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}

/// Character references decoded: numeric ones, and the named ones HTML text uses most.
fn html_unescape(s: &str) -> String {
    const NAMED: [(&str, &str); 16] = [
        ("amp", "&"),
        ("lt", "<"),
        ("gt", ">"),
        ("quot", "\""),
        ("apos", "'"),
        ("nbsp", "\u{a0}"),
        ("copy", "©"),
        ("reg", "®"),
        ("eacute", "é"),
        ("egrave", "è"),
        ("agrave", "à"),
        ("ccedil", "ç"),
        ("euro", "€"),
        ("hellip", "…"),
        ("mdash", "—"),
        ("ndash", "–"),
    ];
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest[1..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '#')).map(|n| n + 1);
        let (name, len) = match end {
            Some(e) => (&rest[1..e], e + usize::from(rest[e..].starts_with(';'))),
            None => (&rest[1..], rest.len()),
        };
        let decoded = if let Some(num) = name.strip_prefix('#') {
            let n = num
                .strip_prefix(['x', 'X'])
                .map_or_else(|| num.parse().ok(), |h| u32::from_str_radix(h, 16).ok());
            n.and_then(char::from_u32).map(String::from)
        } else {
            NAMED.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
        };
        match decoded {
            Some(d) if !name.is_empty() => {
                out.push_str(&d);
                rest = &rest[len..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `s` read as a date with the strftime format `fmt` (with a zone, without one, or a
/// day alone), as Hurl's `toDate` reads it.
fn to_date(s: &str, fmt: &str) -> Result<DateTime<Utc>, String> {
    if let Ok(d) = DateTime::parse_from_str(s, fmt) {
        return Ok(d.with_timezone(&Utc));
    }
    if let Ok(d) = NaiveDateTime::parse_from_str(s, fmt) {
        return Ok(d.and_utc());
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, fmt) {
        return Ok(d.and_hms_opt(0, 0, 0).expect("midnight").and_utc());
    }
    Err(format!("{s:?} is not a date of format {fmt:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings() {
        assert_eq!(url_encode("a b/c?d=é", true), "a%20b/c%3Fd%3D%C3%A9");
        assert_eq!(url_encode("a b/c", false), "a%20b%2Fc");
        assert_eq!(url_decode("a%20b%2Fc%C3%A9%"), "a b/cé%");
        assert_eq!(
            html_escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#x27;&amp;&#x27;&lt;/a&gt;"
        );
        assert_eq!(html_unescape("&lt;p&gt;caf&eacute; &#233; &#xe9; &bogus; &amp"), "<p>café é é &bogus; &");
        assert_eq!(to_date("2026-01-31", "%Y-%m-%d").unwrap().to_rfc3339(), "2026-01-31T00:00:00+00:00");
        assert!(to_date("31/01", "%Y").is_err());
    }
}
