//! Templates compiled against one user's [`Vars`]: literal byte runs and holes.
//!
//! The load engine renders the same requests millions of times with the same
//! variables' slots, so it compiles each request once per user: literal text
//! (which may be the caller's own bytes, such as a whole HTTP/1.1 head, not
//! only a template's literals) is gathered into one buffer, and each variable
//! reference becomes a [`Hole`] that names its slot, found when compiling. A
//! render is then one copy per literal run and [`Vars::fill`] per hole, with no
//! name looked up. [`Vars::fill`] is also what [`Template::render`] writes
//! variables with, so both render the same bytes; the property tests hold
//! them equal on random templates and values.

use bytes::BufMut;

use super::{Hole, MAX_HEAD_VALUES, Template, Unwritable, Vars, unsafe_byte};
use crate::template::Part;

/// Literal runs and holes, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Compiled {
    /// Every literal byte, in order.
    text: Vec<u8>,
    /// Each hole, after the literal bytes of `text` up to its offset.
    holes: Vec<(u32, Hole)>,
}

impl Compiled {
    /// Appends literal bytes.
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        self.text.extend_from_slice(bytes);
    }

    /// Empties it, keeping its buffers (to be built again without an allocation).
    pub fn clear(&mut self) {
        self.text.clear();
        self.holes.clear();
    }

    /// Appends a hole.
    pub fn push_hole(&mut self, hole: Hole) {
        self.holes.push((self.text.len() as u32, hole));
    }

    /// Appends `t`, its variables resolved to their slots in `vars` (made when missing).
    /// `None` when it has a placeholder with filters or a function, which only
    /// [`Template::render`] evaluates.
    pub fn push_template(&mut self, t: &Template, vars: &mut Vars) -> Option<()> {
        for p in &t.parts {
            match p {
                Part::Lit(l) => self.push_bytes(l.as_bytes()),
                Part::Bytes(b) => self.push_bytes(b),
                Part::Var { name, escape, .. } => self.push_hole(vars.hole(name, *escape)),
                Part::Expr { .. } => return None,
            }
        }
        Some(())
    }

    /// Appends another compiled template.
    pub fn push_compiled(&mut self, c: &Compiled) {
        let base = self.text.len() as u32;
        self.holes.extend(c.holes.iter().map(|&(at, h)| (base + at, h)));
        self.text.extend_from_slice(&c.text);
    }

    /// Whether it has no hole (then [`Compiled::literal`] is all it writes).
    pub fn is_literal(&self) -> bool {
        self.holes.is_empty()
    }

    /// Its literal bytes (all it writes when [`Compiled::is_literal`]).
    pub fn literal(&self) -> &[u8] {
        &self.text
    }

    /// The length of what it writes, when every hole writes one length.
    pub fn fixed_len(&self) -> Option<usize> {
        self.holes.iter().try_fold(self.text.len(), |n, (_, h)| Some(n + h.fixed_len()?))
    }

    /// As [`Compiled::render`], for a request's line and headers (every variable's hole is in
    /// one of them): a value that holds a CR, LF or NUL, or that would make the values carry
    /// more than [`MAX_HEAD_VALUES`] bytes, is refused before it is written, as
    /// [`Template::render_head`] refuses it (`out` then holds a part). Literal bytes alone (a
    /// request's lines before its `Cookie` line, most often) are one copy, without a call.
    #[inline]
    pub fn render_head(&self, vars: &mut Vars, out: &mut impl BufMut) -> Result<(), Unwritable> {
        if self.holes.is_empty() {
            out.put_slice(&self.text);
            return Ok(());
        }
        self.render_holes(vars, out)
    }

    /// [`Compiled::render_head`] of a template with holes.
    #[inline(never)]
    fn render_holes(&self, vars: &mut Vars, out: &mut impl BufMut) -> Result<(), Unwritable> {
        let (mut room, mut from) = (MAX_HEAD_VALUES, 0);
        for &(at, hole) in &self.holes {
            out.put_slice(&self.text[from..at as usize]);
            if let Hole::Var { slot, .. } = hole {
                let v = vars.get_at(slot as usize).ok_or(Unwritable::NoValue)?;
                if let Some(b) = unsafe_byte(v.text.as_bytes()) {
                    return Err(Unwritable::Byte(b));
                }
                room = room.checked_sub(v.text.len()).ok_or(Unwritable::TooLong { max: MAX_HEAD_VALUES })?;
            }
            vars.fill(hole, out).ok_or(Unwritable::NoValue)?;
            from = at as usize;
        }
        out.put_slice(&self.text[from..]);
        Ok(())
    }

    /// Appends the rendering to `out` with the values of `vars` (whose slots it was compiled
    /// against); `None` when a variable it uses has no value (then `out` holds a part).
    pub fn render(&self, vars: &mut Vars, out: &mut impl BufMut) -> Option<()> {
        let mut from = 0;
        for &(at, hole) in &self.holes {
            out.put_slice(&self.text[from..at as usize]);
            vars.fill(hole, out)?;
            from = at as usize;
        }
        out.put_slice(&self.text[from..]);
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::error::Pos;
    use crate::template::{Escape, Kind};

    fn escape() -> impl Strategy<Value = Escape> {
        prop_oneof![Just(Escape::Plain), Just(Escape::JsonString), Just(Escape::JsonValue)]
    }

    fn kind() -> impl Strategy<Value = Kind> {
        prop_oneof![Just(Kind::String), Just(Kind::Integer), Just(Kind::Bool), Just(Kind::Json)]
    }

    /// A template part: literal text, or a reference to one of four variables (one
    /// without a value) or `newUuid` (`newDate` reads the clock: both write it alike
    /// through [`Vars::fill`]).
    fn part() -> impl Strategy<Value = (String, Option<(usize, Escape)>)> {
        prop_oneof![
            "[ -~é\"\\\\\n]{0,6}".prop_map(|s| (s, None)),
            (0..5usize, escape()).prop_map(|(v, e)| (String::new(), Some((v, e)))),
        ]
    }

    const NAMES: [&str; 5] = ["a", "b", "c", "unset", "newUuid"];

    proptest! {
        /// A compiled template writes what the interpreter writes, from the same random
        /// source, or fails where it fails.
        #[test]
        fn renders_what_the_interpreter_renders(
            parts in proptest::collection::vec(part(), 0..8),
            values in proptest::collection::vec(("[ -~é\"\\\\\n]{0,6}", kind()), 3),
            before in proptest::collection::vec(any::<u8>(), 0..4),
            seed in any::<u64>(),
        ) {
            let mut t = Template::default();
            for (lit, var) in &parts {
                match var {
                    None => t.push_str(lit),
                    Some((v, e)) => t.push_var(NAMES[*v], *e, Pos::default()),
                }
            }
            let mut vars = Vars::new(seed);
            for (name, (text, kind)) in NAMES.iter().zip(&values) {
                vars.set(name, text, *kind);
            }
            let mut c = Compiled::default();
            c.push_bytes(&before);
            c.push_template(&t, &mut vars).unwrap();
            let mut interpreted = before.clone();
            let (mut a, mut b) = (vars.clone(), vars.clone());
            let want = t.render(&mut a, &mut interpreted);
            let mut compiled = Vec::new();
            let got = c.render(&mut b, &mut compiled);
            prop_assert_eq!(got.is_some(), want.is_ok());
            if got.is_some() {
                prop_assert_eq!(&compiled, &interpreted);
                prop_assert_eq!(a.rng.0, b.rng.0);
                if let Some(n) = c.fixed_len() {
                    prop_assert_eq!(n, compiled.len());
                }
            }
            // Put after other bytes, it writes the same.
            let mut outer = Compiled::default();
            outer.push_bytes(b"x");
            outer.push_compiled(&c);
            let mut again = Vec::new();
            if outer.render(&mut vars.clone(), &mut again).is_some() {
                prop_assert_eq!(&again[1..], &compiled[..]);
            }
        }
    }

    #[test]
    fn a_literal_is_its_bytes() {
        let mut vars = Vars::new(1);
        let mut c = Compiled::default();
        c.push_template(&Template::literal("/x"), &mut vars).unwrap();
        assert!(c.is_literal());
        assert_eq!(c.literal(), b"/x");
        assert_eq!(c.fixed_len(), Some(2));
    }
}
