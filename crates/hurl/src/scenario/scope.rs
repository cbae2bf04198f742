//! What a template of a scenario file may name, and where: the expression
//! variables (checked against the names they use, put in the order they
//! depend on one another, a cycle refused), and the captures that
//! verification cases carry to the cases after them. An expression is worked
//! out before a flow or case runs, so it may use a capture only of a case
//! before the one that uses it (docs/scenarios.md, "Expressions").

use std::collections::HashMap;

use toml::Spanned;

use super::{Ctx, Draw, Flow, RawScenario, RawVerify, Rows, Span, Variable, VerifyCase, verify_case};
use crate::error::{ErrorKind, ParseError};
use crate::expr::Expr;

/// Checks the names of each expression (a variable, a row's column, a command-line
/// variable, or a capture of the scenario's requests: of a case before the one that uses
/// it, checked there) and returns their order: each after the expressions it names.
pub(super) fn order_exprs(
    cx: &Ctx<'_>,
    raw: &RawScenario,
    defined: &[&str],
    variables: &[Variable],
    rows: &[Rows],
    exprs: &[(&str, Expr, usize)],
) -> Result<Vec<usize>, ParseError> {
    let captured = captures_anywhere(cx, raw);
    for (_, e, at) in exprs {
        for (n, offset) in e.names() {
            let known = n == "base_url"
                || defined.contains(&n)
                || variables.iter().any(|v| v.name == n)
                || exprs.iter().any(|(x, _, _)| *x == n)
                || rows.iter().any(|r| r.columns.iter().any(|c| c == n))
                || captured.iter().any(|c| c == n);
            if !known {
                return Err(cx.err(*at + offset..*at + offset, ErrorKind::UnknownVariable(n.to_owned())));
            }
        }
    }
    // Each expression after the expressions it names (a depth-first order); a cycle is refused.
    let (mut state, mut order) = (vec![0u8; exprs.len()], Vec::new());
    for i in 0..exprs.len() {
        visit(i, exprs, &mut state, &mut order).map_err(|(j, name)| {
            let at = exprs[j].2;
            cx.syntax(
                at..at,
                format!(
                    "`{name}` depends on itself: an expression cannot name itself, directly or through others"
                ),
            )
        })?;
    }
    Ok(order)
}

/// Puts expression `i` in `order` after those it names (`state`: 0 unseen, 1 on the
/// path, 2 placed); `Err` names an expression met again on its own path.
fn visit<'e>(
    i: usize,
    exprs: &'e [(&'e str, Expr, usize)],
    state: &mut [u8],
    order: &mut Vec<usize>,
) -> Result<(), (usize, &'e str)> {
    match state[i] {
        2 => return Ok(()),
        1 => return Err((i, exprs[i].0)),
        _ => {}
    }
    state[i] = 1;
    for (n, _) in exprs[i].1.names() {
        if let Some(j) = exprs.iter().position(|(x, _, _)| *x == n) {
            visit(j, exprs, state, order)?;
        }
    }
    state[i] = 2;
    order.push(i);
    Ok(())
}

/// The byte offset in the TOML of the first character of an `expr = "..."` string
/// within the variable's table at `span` (its escapes, if any, are not counted).
pub(super) fn expr_at(cx: &Ctx<'_>, span: Span) -> usize {
    let table = &cx.text[span.clone()];
    let key = table.find("expr").unwrap_or(0);
    let quote = table[key..].find(['"', '\'']).map_or(0, |q| key + q);
    let rest = &table[quote..];
    let open = if rest.starts_with("\"\"\"") || rest.starts_with("'''") { 3 } else { 1 };
    span.start + (quote + open).min(table.len())
}

/// The captures of every flow's and case's requests, read without checking them (their
/// errors are reported where they are loaded): the names an expression may use in
/// verification.
fn captures_anywhere(cx: &Ctx<'_>, raw: &RawScenario) -> Vec<String> {
    let texts = raw
        .flows
        .iter()
        .map(|f| (&f.get_ref().file, &f.get_ref().hurl))
        .chain(raw.verify.iter().map(|v| (&v.get_ref().file, &v.get_ref().hurl)));
    let mut names = Vec::new();
    for (file, hurl) in texts {
        let text = match (file, hurl) {
            (Some(f), _) => cx.read(f).map(|(_, t)| t).unwrap_or_default(),
            (None, Some(h)) => h.get_ref().clone(),
            (None, None) => continue,
        };
        if let Ok(h) = crate::parse::parse_in(cx.file, &text, Some(cx.files)) {
            names.extend(h.captures().map(|c| c.name.to_string()));
        }
    }
    names
}

/// What a template may name at one place of the file: the variables, the rows'
/// columns, the command line's variables, `base_url`, the captures `carried` from
/// earlier cases, and each expression whose names all have a value there.
pub(super) struct Scope<'a> {
    pub(super) defined: &'a [&'a str],
    pub(super) variables: &'a [Variable],
    pub(super) rows: &'a [Rows],
}

impl Scope<'_> {
    fn expr(&self, n: &str) -> Option<&Expr> {
        self.variables.iter().find(|v| v.name == n).and_then(|v| match &v.draw {
            Draw::Expr(e) => Some(e),
            _ => None,
        })
    }

    pub(super) fn has(&self, n: &str, carried: &[String]) -> bool {
        match self.expr(n) {
            Some(e) => e.names().iter().all(|(m, _)| self.has(m, carried)),
            None => {
                n == "base_url"
                    || self.defined.contains(&n)
                    || self.variables.iter().any(|v| v.name == n)
                    || self.rows.iter().any(|r| r.columns.iter().any(|c| c == n))
                    || carried.iter().any(|c| c == n)
            }
        }
    }

    /// An unknown variable that is an expression without a value there: says which name
    /// it lacks.
    pub(super) fn explain(&self, mut e: ParseError, carried: &[String]) -> ParseError {
        if let ErrorKind::UnknownVariable(n) = &e.kind
            && let Some(x) = self.expr(n)
        {
            let lacks =
                x.names().into_iter().map(|(m, _)| m).find(|m| !self.has(m, carried)).unwrap_or_default();
            e.kind = ErrorKind::Syntax(format!(
                "`{n}` = `{x}` has no value here: `{lacks}` is not a variable, and no case before this one captures it (an expression is worked out before a flow or case runs)"
            ));
        }
        e
    }
}

/// The `[[verify]]` cases, in order: each may use what the cases before it capture.
pub(super) fn cases(
    cx: &Ctx<'_>,
    raw: &[Spanned<RawVerify>],
    flows: &[Flow],
    scope: &Scope<'_>,
) -> Result<Vec<VerifyCase>, ParseError> {
    let mut carried: Vec<String> = Vec::new();
    let mut out: Vec<VerifyCase> = Vec::new();
    let flows: HashMap<&str, &Flow> = flows.iter().map(|f| (f.name.as_str(), f)).collect();
    for v in raw {
        let known = |n: &str| scope.has(n, &carried);
        let case = verify_case(cx, v, &flows, &known).map_err(|e| scope.explain(e, &carried))?;
        if case.probe {
            if out.iter().any(|c| c.probe) {
                return Err(cx.syntax(v.span(), "only one case is the `probe`"));
            }
            if case.hurl.entries.len() != 1 {
                return Err(cx.syntax(v.span(), "the `probe` case is one request"));
            }
            crate::check_variables(&case.hurl, |n| scope.has(n, &[])).map_err(|e| ParseError {
                kind: ErrorKind::Syntax(format!(
                    "the `probe` case is sent alone, so it cannot use what other cases capture ({})",
                    e.kind
                )),
                ..e
            })?;
        }
        for c in case.hurl.captures() {
            if !carried.iter().any(|k| *k == *c.name) {
                carried.push(c.name.to_string());
            }
        }
        out.push(case);
    }
    Ok(out)
}
