//! A scenario's variables: how each is defined (a `[variables]` entry: a constant, an
//! `int`, `string`, `choice`, `sequence` or `expr`; a column of a `[[rows]]` data file) and
//! how they are drawn for an iteration, from the run's seed (docs/scenarios.md, "The
//! workload: a TOML file").

use toml::Spanned;

use super::scope::{self, expr_at};
use super::{Ctx, Draw, Order, RawScenario, Rows, Scenario, Variable};
use crate::error::ParseError;
use crate::expr::Expr;
use crate::template::{Kind, Vars};

impl Scenario {
    /// Sets the drawn variables and row columns for iteration `n` (the
    /// sequence number of the iteration in this process), reusing buffers.
    pub fn draw(&self, n: u64, vars: &mut Vars) {
        self.draw_by(n, vars, |vars, _, name| vars.index(name));
    }

    /// The slots in `vars` of what [`Scenario::draw`] sets (made when missing): each
    /// variable's, then each data file's columns, in order; for [`Scenario::draw_at`].
    pub fn slots(&self, vars: &mut Vars) -> Vec<usize> {
        let columns = self.rows.iter().flat_map(|r| &r.columns);
        self.variables.iter().map(|v| &v.name).chain(columns).map(|name| vars.index(name)).collect()
    }

    /// [`Scenario::draw`] into the `slots` of `vars` found once by [`Scenario::slots`]: no
    /// name looked up per iteration.
    pub fn draw_at(&self, n: u64, vars: &mut Vars, slots: &[usize]) {
        self.draw_by(n, vars, |_, k, _| slots[k]);
    }

    /// [`Scenario::draw`], the slot of the `k`th name of [`Scenario::slots`] given by `slot`.
    fn draw_by(&self, n: u64, vars: &mut Vars, mut slot: impl FnMut(&mut Vars, usize, &str) -> usize) {
        const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        for (k, v) in self.variables.iter().enumerate() {
            if matches!(v.draw, Draw::Expr(_)) {
                continue;
            }
            let at = slot(vars, k, &v.name);
            let (slot, rng) = vars.slot_and_rng_at(at);
            slot.text.clear();
            slot.kind = match &v.draw {
                Draw::Const(t, k) => {
                    slot.text.push_str(t);
                    *k
                }
                Draw::Int { lo, hi } => {
                    // The span of i64::MIN..=i64::MAX wraps to 0: any 64 bits then.
                    let span = (hi.wrapping_sub(*lo) as u64).wrapping_add(1);
                    let off = if span == 0 { rng.next_u64() } else { rng.below(span) };
                    slot.text.push_str(itoa::Buffer::new().format(lo.wrapping_add(off as i64)));
                    Kind::Integer
                }
                Draw::Sequence { start } => {
                    // Counted in 128 bits, so that it goes on past i64::MAX rather than wrap.
                    slot.text.push_str(itoa::Buffer::new().format(i128::from(*start) + i128::from(n)));
                    Kind::Integer
                }
                Draw::Choice(c) => {
                    let (t, k) = &c[rng.below(c.len() as u64) as usize];
                    slot.text.push_str(t);
                    *k
                }
                Draw::String { len } => {
                    slot.text.extend((0..*len).map(|_| char::from(ALPHABET[rng.below(36) as usize])));
                    Kind::String
                }
                Draw::Expr(_) => unreachable!("expressions are worked out below"),
            };
        }
        let mut first = self.variables.len();
        for r in &self.rows {
            let i = match r.order {
                Order::Sequence => (n % r.values.len() as u64) as usize,
                Order::Random => vars.rng.below(r.values.len() as u64) as usize,
            };
            for (c, (col, (text, kind))) in r.columns.iter().zip(&r.values[i]).enumerate() {
                let at = slot(vars, first + c, col);
                vars.set_at(at, text, *kind);
                // A data row's value: it may not write a request's host.
                vars.mark_untrusted(at);
            }
            first += r.columns.len();
        }
        // Expressions last, in the order they depend on one another (sorted at load).
        for (k, v) in self.variables.iter().enumerate() {
            let Draw::Expr(e) = &v.draw else { continue };
            let value = e.eval(&|n| vars.get(n).map(|v| v.text.as_str()));
            let at = slot(vars, k, &v.name);
            match value {
                Ok(x) => vars.set_at(at, itoa::Buffer::new().format(x), Kind::Integer),
                Err(_) => vars.unset_at(at),
            }
        }
    }

    /// Why expression variable `name` has no value with `vars` (`None`: it is not an
    /// expression, or it has one), for messages.
    pub fn why_no_value(&self, name: &str, vars: &Vars) -> Option<String> {
        let v = self.variables.iter().find(|v| v.name == name)?;
        let Draw::Expr(e) = &v.draw else { return None };
        let why = e.eval(&|n| vars.get(n).map(|v| v.text.as_str())).err()?;
        Some(format!("`{name}` = `{e}`: {why}"))
    }
}

/// The drawn variables and the rows of data files. A variable `defined` on the command
/// line (`--variable`, a plan's `variables`) takes the place of the TOML's. Expressions
/// come last, each after those it names.
pub(super) fn data(
    cx: &Ctx<'_>,
    raw: &RawScenario,
    defined: &[&str],
) -> Result<(Vec<Variable>, Vec<Rows>), ParseError> {
    let mut variables = Vec::new();
    let mut exprs = Vec::new();
    for (name, value) in &raw.variables {
        if !crate::parse::is_var_name(name)
            || name == "base_url"
            || crate::template::GENERATORS.contains(&name.as_str())
        {
            return Err(cx.syntax(value.span(), format!("`{name}` cannot be a variable's name (a letter, then letters, digits, `_` or `-`; not base_url, newUuid or newDate)")));
        }
        if defined.contains(&name.as_str()) {
            continue;
        }
        match draw(cx, value)? {
            Draw::Expr(e) => exprs.push((name.as_str(), e, expr_at(cx, value.span()))),
            d => variables.push(Variable { name: name.clone(), draw: d }),
        }
    }
    let mut rows = Vec::new();
    for r in &raw.rows {
        let order = match r.get_ref().order.as_ref().map(|o| (o.get_ref().as_str(), o.span())) {
            None | Some(("sequence", _)) => Order::Sequence,
            Some(("random", _)) => Order::Random,
            Some((other, span)) => {
                return Err(cx.syntax(
                    span,
                    format!("unknown order {other:?}; the orders are \"sequence\" and \"random\""),
                ));
            }
        };
        let (path, data) = cx.read(&r.get_ref().file)?;
        let loaded = Rows::parse(&path, &data, order)?;
        if loaded.columns.iter().any(|c| c == "base_url") {
            return Err(cx.syntax(
                r.get_ref().file.span(),
                "a data file cannot set `base_url` (its column): a request's host comes from the file or \
                 the user (the target, --variable), never from a data row",
            ));
        }
        for col in &loaded.columns {
            if variables.iter().any(|v| &v.name == col) || rows.iter().any(|o: &Rows| o.columns.contains(col))
            {
                return Err(cx.syntax(r.get_ref().file.span(), format!("variable `{col}` is defined twice")));
            }
        }
        rows.push(loaded);
    }
    for i in scope::order_exprs(cx, raw, defined, &variables, &rows, &exprs)? {
        let (name, e, _) = &exprs[i];
        variables.push(Variable { name: (*name).to_owned(), draw: Draw::Expr(e.clone()) });
    }
    Ok((variables, rows))
}

/// A TOML scalar as a variable's text and kind.
pub(super) fn scalar(v: &toml::Value) -> Option<(String, Kind)> {
    match v {
        toml::Value::String(s) => Some((s.clone(), Kind::String)),
        toml::Value::Integer(i) => Some((i.to_string(), Kind::Integer)),
        toml::Value::Float(f) => Some((f.to_string(), Kind::Float)),
        toml::Value::Boolean(b) => Some((b.to_string(), Kind::Bool)),
        _ => None,
    }
}

/// A variable's definition: a constant, or a table with one of `int`, `string`, `choice`,
/// `sequence`, `expr`.
fn draw(cx: &Ctx<'_>, value: &Spanned<toml::Value>) -> Result<Draw, ParseError> {
    const KINDS: &str = "a constant, or a table with one of `int = [lo, hi]`, `string = LENGTH`, `choice = [values]`, `sequence = START`, `expr = \"EXPRESSION\"`";
    let bad = |msg: &str| cx.syntax(value.span(), msg.to_owned());
    if let Some((t, k)) = scalar(value.get_ref()) {
        return Ok(Draw::Const(t, k));
    }
    let toml::Value::Table(t) = value.get_ref() else {
        return Err(bad(&format!("a variable is {KINDS}")));
    };
    if t.len() != 1 {
        return Err(bad(&format!("a variable is {KINDS}: one key")));
    }
    let (key, v) = t.iter().next().expect("one key");
    Ok(match (key.as_str(), v) {
        ("int", toml::Value::Array(a)) => match a.as_slice() {
            [toml::Value::Integer(lo), toml::Value::Integer(hi)] if lo <= hi => {
                Draw::Int { lo: *lo, hi: *hi }
            }
            _ => return Err(bad("`int` is [lo, hi], two integers with lo <= hi")),
        },
        ("string", toml::Value::Integer(n)) if (1..=4096).contains(n) => Draw::String { len: *n as usize },
        ("string", _) => return Err(bad("`string` is a length from 1 to 4096")),
        ("choice", toml::Value::Array(a)) if !a.is_empty() => Draw::Choice(
            a.iter()
                .map(scalar)
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad("`choice` lists strings, numbers or booleans"))?,
        ),
        ("choice", _) => return Err(bad("`choice` is a non-empty list")),
        ("sequence", toml::Value::Integer(n)) => Draw::Sequence { start: *n },
        ("sequence", _) => return Err(bad("`sequence` is the first integer")),
        ("expr", toml::Value::String(src)) => Draw::Expr(Expr::parse(src).map_err(|e| {
            let at = expr_at(cx, value.span()) + e.offset;
            cx.syntax(at..at, format!("`expr`: {}", e.message))
        })?),
        ("expr", _) => {
            return Err(bad("`expr` is an integer expression in a string (`expr = \"min(a, b)\"`)"));
        }
        _ => return Err(bad(&format!("a variable is {KINDS}"))),
    })
}
