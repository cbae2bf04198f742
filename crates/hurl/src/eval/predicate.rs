//! Predicates, judged as Hurl judges them (`runner/predicate.rs` in Hurl): a
//! query that found nothing fails every predicate but under `not`; a predicate
//! that does not apply to the value's type (`contains` on a number, `>` on a
//! list) fails whether or not it is negated; otherwise the predicate's result,
//! negated by `not`.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::net::IpAddr;

use regex::Regex;

use crate::model::{Expected, Predicate, PredicateFunc};
use crate::template::{RenderError, Template, Vars};
use crate::value::Value;

/// Why a predicate did not hold.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Miss {
    /// It is false of the value (or true under `not`).
    False,
    /// It does not apply to the value's type.
    Type,
    /// Its operand could not be had (a variable without value, a regex that does not compile).
    Operand(RenderError),
}

/// Judges `p` on `actual` (`None`: the query found nothing).
pub(crate) fn judge(
    p: &Predicate,
    actual: Option<&Value<'_>>,
    vars: &mut Vars,
    scratch: &mut Vec<u8>,
) -> Result<(), Miss> {
    let Some(actual) = actual else {
        // Nothing found: Hurl's "none" fails a predicate, and passes it negated (the
        // operand is still worked out, so a variable without value is said).
        if let Some(e) = p.func.expected() {
            expected(e, vars, scratch).map_err(Miss::Operand)?;
        }
        return if p.not { Ok(()) } else { Err(Miss::False) };
    };
    match holds(&p.func, actual, vars, scratch)? {
        None => Err(Miss::Type),
        Some(ok) if ok != p.not => Ok(()),
        Some(_) => Err(Miss::False),
    }
}

/// The predicate on a value: `None` when it does not apply to the value's type.
pub(crate) fn holds(
    f: &PredicateFunc,
    v: &Value<'_>,
    vars: &mut Vars,
    scratch: &mut Vec<u8>,
) -> Result<Option<bool>, Miss> {
    let mut operand = |e: &Expected| expected(e, vars, scratch).map_err(Miss::Operand);
    Ok(match f {
        PredicateFunc::Equal(e) => Some(*v == operand(e)?),
        PredicateFunc::NotEqual(e) => Some(*v != operand(e)?),
        PredicateFunc::Greater(e) => v.compare(&operand(e)?).map(|o| o == Ordering::Greater),
        PredicateFunc::GreaterOrEqual(e) => v.compare(&operand(e)?).map(|o| o != Ordering::Less),
        PredicateFunc::Less(e) => v.compare(&operand(e)?).map(|o| o == Ordering::Less),
        PredicateFunc::LessOrEqual(e) => v.compare(&operand(e)?).map(|o| o != Ordering::Greater),
        PredicateFunc::StartsWith(e) => match (v, &operand(e)?) {
            (Value::Str(s), Value::Str(p)) => Some(s.starts_with(&**p)),
            (Value::Bytes(s), Value::Bytes(p)) => Some(s.starts_with(p)),
            _ => None,
        },
        PredicateFunc::EndsWith(e) => match (v, &operand(e)?) {
            (Value::Str(s), Value::Str(p)) => Some(s.ends_with(&**p)),
            (Value::Bytes(s), Value::Bytes(p)) => Some(s.ends_with(p)),
            _ => None,
        },
        PredicateFunc::Contains(e) => match (v, &operand(e)?) {
            (Value::Str(s), Value::Str(p)) => Some(super::contains(s, p)),
            (Value::Bytes(s), Value::Bytes(p)) => Some(p.is_empty() || s.windows(p.len()).any(|w| w == &**p)),
            (Value::List(l), x) => Some(l.contains(x)),
            _ => None,
        },
        PredicateFunc::Includes(e) => match (v, &operand(e)?) {
            (Value::List(l), x) => Some(l.contains(x)),
            _ => None,
        },
        PredicateFunc::Matches(e) => {
            let re = match e {
                Expected::Regex(r) => Cow::Borrowed(r),
                Expected::Str(t) => Cow::Owned(regex(t, vars, scratch)?),
                _ => return Ok(None),
            };
            v.as_str().map(|s| re.is_match(s))
        }
        PredicateFunc::Exists => Some(!matches!(v, Value::Nodeset(0))),
        PredicateFunc::IsEmpty => v.count().map(|n| n == 0),
        PredicateFunc::IsInteger => Some(matches!(v, Value::Int(_) | Value::BigInt(_))),
        PredicateFunc::IsFloat => Some(matches!(v, Value::Float(_))),
        PredicateFunc::IsNumber => Some(v.is_number()),
        PredicateFunc::IsBoolean => Some(matches!(v, Value::Bool(_))),
        PredicateFunc::IsString => Some(matches!(v, Value::Str(_))),
        PredicateFunc::IsCollection => {
            Some(matches!(v, Value::Bytes(_) | Value::List(_) | Value::Nodeset(_) | Value::Object(_)))
        }
        PredicateFunc::IsList => Some(matches!(v, Value::Bytes(_) | Value::List(_))),
        PredicateFunc::IsObject => Some(matches!(v, Value::Nodeset(_) | Value::Object(_))),
        PredicateFunc::IsDate => Some(matches!(v, Value::Date(_))),
        PredicateFunc::IsIsoDate => v.as_str().map(|s| chrono::DateTime::parse_from_rfc3339(s).is_ok()),
        PredicateFunc::IsIpv4 => v.as_str().map(|s| s.parse::<IpAddr>().is_ok_and(|ip| ip.is_ipv4())),
        PredicateFunc::IsIpv6 => v.as_str().map(|s| s.parse::<IpAddr>().is_ok_and(|ip| ip.is_ipv6())),
        PredicateFunc::IsUuid => v.as_str().map(is_uuid),
    })
}

/// A predicate's operand as a value.
pub(crate) fn expected(
    e: &Expected,
    vars: &mut Vars,
    scratch: &mut Vec<u8>,
) -> Result<Value<'static>, RenderError> {
    Ok(match e {
        Expected::Null => Value::Null,
        Expected::Bool(b) => Value::Bool(*b),
        Expected::Int(n) => Value::Int(*n),
        Expected::BigInt(s) => Value::BigInt(s.clone()),
        Expected::Float(f) => Value::Float(*f),
        Expected::Bytes(b) => Value::Bytes(Cow::Owned(b.to_vec())),
        Expected::Regex(r) => Value::Regex(r.clone()),
        Expected::Str(t) => Value::Str(Cow::Owned(render(t, vars, scratch)?.to_owned())),
        Expected::Var(t) => super::placeholder_value(t, vars)?,
    })
}

/// A template's text: a literal as written, else rendered into `scratch`.
pub(crate) fn render<'s>(
    t: &'s Template,
    vars: &mut Vars,
    scratch: &'s mut Vec<u8>,
) -> Result<&'s str, RenderError> {
    if let Some(s) = t.as_literal() {
        return Ok(s);
    }
    scratch.clear();
    t.render(vars, scratch)?;
    Ok(std::str::from_utf8(scratch).unwrap_or(""))
}

/// A regex written as a string with templates, compiled.
fn regex(t: &Template, vars: &mut Vars, scratch: &mut Vec<u8>) -> Result<Regex, Miss> {
    let src = render(t, vars, scratch).map_err(Miss::Operand)?;
    Regex::new(src).map_err(|e| {
        let pos = t.vars().first().map(|(_, p)| *p).unwrap_or_default();
        Miss::Operand(RenderError::expr("", pos, format!("invalid regex: {e}")))
    })
}

/// A UUID as the `uuid` crate reads one: hyphenated, 32 digits, in braces, or a URN.
fn is_uuid(s: &str) -> bool {
    let s = s.strip_prefix("urn:uuid:").unwrap_or(s);
    let s = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')).unwrap_or(s);
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    match s.len() {
        32 => hex(s, 32),
        36 => {
            let parts: Vec<&str> = s.split('-').collect();
            parts.len() == 5 && [8, 4, 4, 4, 12].iter().zip(&parts).all(|(n, p)| hex(p, *n))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids() {
        assert!(is_uuid("67e55044-10b1-426f-9247-bb680e5fe0c8"));
        assert!(is_uuid("67e5504410b1426f9247bb680e5fe0c8"));
        assert!(is_uuid("{67e55044-10b1-426f-9247-bb680e5fe0c8}"));
        assert!(!is_uuid("67e55044-10b1-426f-9247-bb680e5fe0c"));
        assert!(!is_uuid("67e55044x10b1-426f-9247-bb680e5fe0c8"));
    }
}
