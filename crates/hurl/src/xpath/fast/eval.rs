//! The fast path's evaluation: an expression of `fast.rs` on a `roxmltree` document, each
//! node set a vector of nodes in document order without duplicates, and every rule as
//! sxd-xpath applies it (comparisons, conversions, predicates, functions). What sxd would
//! refuse gives [`Fallback`], and sxd answers instead.
#![allow(clippy::float_cmp, reason = "XPath's `=` compares numbers exactly, as sxd does")]

use std::borrow::Cow;

use roxmltree::{Node, NodeType};

use super::{Axis, Cmp, Expr, Func, Op, Path, Test};
use crate::value::Value;

/// The fast path gives the evaluation to sxd (which gives its own error or answer).
#[derive(Debug)]
pub(in crate::xpath) struct Fallback;

type Out<T> = Result<T, Fallback>;

/// A node: a node of the tree, or its attribute `attr - 1` where `attr` is not 0. Ordered
/// as sxd orders a document: an element, then its attributes from the last to the first
/// (XPath leaves their order to the implementation), then its children.
#[derive(Clone, Copy)]
struct N<'a, 'i> {
    node: Node<'a, 'i>,
    attr: u32,
}

impl N<'_, '_> {
    fn key(&self) -> (u32, u32) {
        let attr = if self.attr == 0 { 0 } else { self.node.attributes().len() as u32 + 1 - self.attr };
        (self.node.id().get(), attr)
    }
}

enum V<'a, 'i> {
    Nodes(Vec<N<'a, 'i>>),
    Num(f64),
    Str(Cow<'a, str>),
    Bool(bool),
}

struct Cx<'a, 'i> {
    node: N<'a, 'i>,
    position: usize,
    size: usize,
}

/// `e` evaluated at the root of `doc`, each prefix index of `e` standing for `uris[index]`.
pub(in crate::xpath) fn evaluate(
    e: &Expr,
    doc: &roxmltree::Document<'_>,
    uris: &[&str],
) -> Out<Value<'static>> {
    let cx = Cx { node: N { node: doc.root(), attr: 0 }, position: 1, size: 1 };
    Ok(match eval(e, &cx, uris)? {
        V::Nodes(n) => Value::Nodeset(n.len()),
        V::Num(n) => Value::Float(n),
        V::Str(s) => Value::Str(Cow::Owned(s.into_owned())),
        V::Bool(b) => Value::Bool(b),
    })
}

fn eval<'a, 'i>(e: &Expr, cx: &Cx<'a, 'i>, uris: &[&str]) -> Out<V<'a, 'i>> {
    Ok(match e {
        Expr::Or(a, b) => V::Bool(boolean(&eval(a, cx, uris)?) || boolean(&eval(b, cx, uris)?)),
        Expr::And(a, b) => V::Bool(boolean(&eval(a, cx, uris)?) && boolean(&eval(b, cx, uris)?)),
        Expr::Equal(negated, a, b) => V::Bool(equal(&eval(a, cx, uris)?, &eval(b, cx, uris)?) != *negated),
        Expr::Compare(c, a, b) => {
            let (l, r) = (number(&eval(a, cx, uris)?), number(&eval(b, cx, uris)?));
            V::Bool(match c {
                Cmp::Lt => l < r,
                Cmp::Le => l <= r,
                Cmp::Gt => l > r,
                Cmp::Ge => l >= r,
            })
        }
        Expr::Arith(op, a, b) => {
            let (l, r) = (number(&eval(a, cx, uris)?), number(&eval(b, cx, uris)?));
            V::Num(match op {
                Op::Add => l + r,
                Op::Sub => l - r,
                Op::Mul => l * r,
                Op::Div => l / r,
                Op::Mod => l % r,
            })
        }
        Expr::Neg(a) => V::Num(-number(&eval(a, cx, uris)?)),
        Expr::Union(a, b) => {
            let (V::Nodes(mut l), V::Nodes(r)) = (eval(a, cx, uris)?, eval(b, cx, uris)?) else {
                return Err(Fallback);
            };
            l.extend(r);
            in_document_order(&mut l);
            V::Nodes(l)
        }
        Expr::Path(p) => V::Nodes(path(p, cx, uris)?),
        Expr::Literal(s) => V::Str(Cow::Owned(s.to_string())),
        Expr::Number(n) => V::Num(*n),
        Expr::Call(f, args) => call(*f, args, cx, uris)?,
    })
}

fn in_document_order(nodes: &mut Vec<N<'_, '_>>) {
    nodes.sort_unstable_by_key(N::key);
    nodes.dedup_by_key(|n| n.key());
}

fn path<'a, 'i>(p: &Path, cx: &Cx<'a, 'i>, uris: &[&str]) -> Out<Vec<N<'a, 'i>>> {
    let start = if p.absolute { N { node: cx.node.node.document().root(), attr: 0 } } else { cx.node };
    let mut nodes = vec![start];
    let mut steps = p.steps.iter().peekable();
    while let Some(step) = steps.next() {
        // `//name` (`descendant-or-self::node()/child::name`) is the descendants named so.
        let fused = match steps.peek() {
            Some(next)
                if step.axis == Axis::DescendantOrSelf
                    && step.test == Test::Node
                    && step.predicates.is_empty()
                    && next.axis == Axis::Child
                    && next.predicates.is_empty() =>
            {
                steps.next().map(|n| (Axis::Descendant, &n.test))
            }
            _ => None,
        };
        let (axis, test) = fused.unwrap_or((step.axis, &step.test));
        let predicates = if fused.is_some() { &[][..] } else { &step.predicates[..] };
        let mut out = Vec::new();
        for n in &nodes {
            let from = out.len();
            select(*n, axis, test, uris, &mut out);
            for pred in predicates {
                filter(pred, &mut out, from, uris)?;
            }
        }
        if nodes.len() > 1 || axis == Axis::Attribute {
            in_document_order(&mut out);
        }
        nodes = out;
        if nodes.is_empty() {
            break;
        }
    }
    Ok(nodes)
}

/// Keeps the nodes of `out[from..]` for which `pred` holds, each at its position there.
fn filter(pred: &Expr, out: &mut Vec<N<'_, '_>>, from: usize, uris: &[&str]) -> Out<()> {
    let size = out.len() - from;
    let mut kept = from;
    for i in from..out.len() {
        let cx = Cx { node: out[i], position: i - from + 1, size };
        let keep = match eval(pred, &cx, uris)? {
            V::Num(v) => cx.position == v as usize,
            v => boolean(&v),
        };
        if keep {
            out[kept] = out[i];
            kept += 1;
        }
    }
    out.truncate(kept);
    Ok(())
}

/// Appends the nodes on `axis` from `n` that pass `test`, in the axis's order.
fn select<'a, 'i>(n: N<'a, 'i>, axis: Axis, test: &Test, uris: &[&str], out: &mut Vec<N<'a, 'i>>) {
    let node = |node| N { node, attr: 0 };
    if n.attr != 0 {
        // An attribute has no children nor attributes; its parent is its element.
        match axis {
            Axis::SelfNode | Axis::DescendantOrSelf if *test == Test::Node => out.push(n),
            Axis::Parent if matches_node(n.node, test, uris) => out.push(node(n.node)),
            _ => {}
        }
        return;
    }
    match axis {
        Axis::Child => out.extend(n.node.children().filter(|c| matches_node(*c, test, uris)).map(node)),
        Axis::Descendant => {
            out.extend(n.node.descendants().skip(1).filter(|c| matches_node(*c, test, uris)).map(node));
        }
        Axis::DescendantOrSelf => {
            out.extend(n.node.descendants().filter(|c| matches_node(*c, test, uris)).map(node));
        }
        Axis::SelfNode => {
            if matches_node(n.node, test, uris) {
                out.push(n);
            }
        }
        Axis::Parent => {
            if let Some(p) = n.node.parent().filter(|p| matches_node(*p, test, uris)) {
                out.push(node(p));
            }
        }
        Axis::Attribute => {
            for (k, a) in n.node.attributes().enumerate() {
                let pass = match test {
                    Test::Node | Test::Any(None) => true,
                    Test::Any(Some(p)) => a.namespace() == Some(uris[*p]),
                    Test::Name(p, local) => a.name() == &**local && a.namespace() == p.map(|p| uris[p]),
                    Test::Text | Test::Comment => false,
                };
                if pass {
                    out.push(N { node: n.node, attr: k as u32 + 1 });
                }
            }
        }
    }
}

/// Whether a node of the tree passes `test` on an axis whose principal kind is the element.
fn matches_node(n: Node<'_, '_>, test: &Test, uris: &[&str]) -> bool {
    match test {
        Test::Node => true,
        Test::Text => n.is_text(),
        Test::Comment => n.is_comment(),
        Test::Any(None) => n.is_element(),
        Test::Any(Some(p)) => n.is_element() && n.tag_name().namespace() == Some(uris[*p]),
        Test::Name(p, local) => {
            n.is_element() && {
                let name = n.tag_name();
                name.name() == &**local && name.namespace() == p.map(|p| uris[p])
            }
        }
    }
}

fn attribute<'a, 'i>(n: &N<'a, 'i>) -> Option<roxmltree::Attribute<'a, 'i>> {
    n.node.attributes().nth(n.attr as usize - 1)
}

/// A node's string-value (an element's: its descendant texts, in order).
fn string_value<'a>(n: &N<'a, '_>) -> Cow<'a, str> {
    if n.attr != 0 {
        return Cow::Borrowed(attribute(n).map_or("", |a| a.value()));
    }
    match n.node.node_type() {
        NodeType::Root | NodeType::Element => {
            let mut texts = n.node.descendants().filter(Node::is_text).filter_map(|t| t.text());
            let Some(first) = texts.next() else { return Cow::Borrowed("") };
            let Some(second) = texts.next() else { return Cow::Borrowed(first) };
            let mut s = String::with_capacity(first.len() + second.len());
            s.push_str(first);
            s.push_str(second);
            texts.for_each(|t| s.push_str(t));
            Cow::Owned(s)
        }
        NodeType::PI => Cow::Borrowed(n.node.pi().and_then(|p| p.value).unwrap_or("")),
        NodeType::Text | NodeType::Comment => Cow::Borrowed(n.node.text().unwrap_or("")),
    }
}

fn local_name<'a>(n: &N<'a, '_>) -> &'a str {
    if n.attr != 0 {
        return attribute(n).map_or("", |a| a.name());
    }
    match n.node.node_type() {
        NodeType::Element => n.node.tag_name().name(),
        NodeType::PI => n.node.pi().map_or("", |p| p.target),
        _ => "",
    }
}

fn boolean(v: &V<'_, '_>) -> bool {
    match v {
        V::Bool(b) => *b,
        V::Num(n) => *n != 0.0 && !n.is_nan(),
        V::Str(s) => !s.is_empty(),
        V::Nodes(n) => !n.is_empty(),
    }
}

/// A string as a number, as sxd reads it (Rust's `f64` syntax after trimming).
fn to_number(s: &str) -> f64 {
    s.trim().parse().unwrap_or(f64::NAN)
}

fn number(v: &V<'_, '_>) -> f64 {
    match v {
        V::Bool(b) => f64::from(u8::from(*b)),
        V::Num(n) => *n,
        V::Str(s) => to_number(s),
        V::Nodes(_) => to_number(&string(v)),
    }
}

fn string<'a>(v: &V<'a, '_>) -> Cow<'a, str> {
    match v {
        V::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
        V::Num(n) if n.is_infinite() => Cow::Borrowed(if *n < 0.0 { "-Infinity" } else { "Infinity" }),
        V::Num(n) => Cow::Owned(n.to_string()),
        V::Str(s) => s.clone(),
        V::Nodes(n) => n.first().map_or(Cow::Borrowed(""), string_value),
    }
}

/// `=` as sxd decides it: node sets compared by their nodes' values, else by the type of
/// the first of boolean, number and string that either side has.
fn equal(l: &V<'_, '_>, r: &V<'_, '_>) -> bool {
    match (l, r) {
        (V::Nodes(a), V::Nodes(b)) => {
            let right: Vec<Cow<'_, str>> = b.iter().map(string_value).collect();
            a.iter().any(|n| right.contains(&string_value(n)))
        }
        (V::Nodes(ns), V::Num(x)) | (V::Num(x), V::Nodes(ns)) => {
            ns.iter().any(|n| to_number(&string_value(n)) == *x)
        }
        (V::Nodes(ns), V::Str(s)) | (V::Str(s), V::Nodes(ns)) => ns.iter().any(|n| string_value(n) == *s),
        (V::Bool(_), _) | (_, V::Bool(_)) => boolean(l) == boolean(r),
        (V::Num(_), _) | (_, V::Num(_)) => number(l) == number(r),
        _ => string(l) == string(r),
    }
}

/// XPath's `round` as sxd computes it (halves toward positive infinity).
fn round(x: f64) -> f64 {
    let y = x.floor();
    if x == y {
        return x;
    }
    let z = (2.0 * x - y).floor();
    if x.is_sign_positive() ^ z.is_sign_positive() { -z } else { z }
}

fn call<'a, 'i>(f: Func, args: &[Expr], cx: &Cx<'a, 'i>, uris: &[&str]) -> Out<V<'a, 'i>> {
    let mut values = Vec::with_capacity(args.len());
    for a in args {
        values.push(eval(a, cx, uris)?);
    }
    let nodes = |i: usize| match values.get(i) {
        Some(V::Nodes(n)) => Ok(n.as_slice()),
        _ => Err(Fallback),
    };
    let text = |i: usize| values.get(i).map_or_else(|| string_value(&cx.node), string);
    let num = |i: usize| values.get(i).map_or(f64::NAN, number);
    Ok(match f {
        Func::Last => V::Num(cx.size as f64),
        Func::Position => V::Num(cx.position as f64),
        Func::Count => V::Num(nodes(0)?.len() as f64),
        Func::LocalName => V::Str(Cow::Borrowed(if values.is_empty() {
            local_name(&cx.node)
        } else {
            nodes(0)?.first().map_or("", local_name)
        })),
        Func::String => V::Str(text(0)),
        Func::Concat => V::Str(Cow::Owned(values.iter().map(string).collect())),
        Func::StartsWith => V::Bool(text(0).starts_with(&*text(1))),
        Func::Contains => V::Bool(text(0).contains(&*text(1))),
        Func::SubstringBefore | Func::SubstringAfter => {
            let (s, sep) = (text(0), text(1));
            V::Str(Cow::Owned(match s.find(&*sep) {
                Some(at) if f == Func::SubstringBefore => s[..at].to_owned(),
                Some(at) => s[at + sep.len()..].to_owned(),
                None => String::new(),
            }))
        }
        Func::StringLength => V::Num(text(0).chars().count() as f64),
        Func::NormalizeSpace => {
            let s = text(0);
            let mut out = String::with_capacity(s.len());
            for word in s.split([' ', '\t', '\r', '\n']).filter(|w| !w.is_empty()) {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(word);
            }
            V::Str(Cow::Owned(out))
        }
        Func::Boolean => V::Bool(boolean(&values[0])),
        Func::Not => V::Bool(!boolean(&values[0])),
        Func::True => V::Bool(true),
        Func::False => V::Bool(false),
        Func::Number => V::Num(if values.is_empty() { to_number(&string_value(&cx.node)) } else { num(0) }),
        Func::Sum => V::Num(nodes(0)?.iter().fold(0.0, |sum, n| sum + to_number(&string_value(n)))),
        Func::Floor => V::Num(num(0).floor()),
        Func::Ceiling => V::Num(num(0).ceil()),
        Func::Round => V::Num(round(num(0))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_takes_halves_toward_positive_infinity() {
        assert_eq!(round(2.5), 3.0);
        assert_eq!(round(-2.5), -2.0);
        assert_eq!(round(-0.4), -0.0);
        assert!(round(f64::NAN).is_nan());
    }
}
