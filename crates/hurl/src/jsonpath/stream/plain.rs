//! The common answer read without `serde_json`: a document of plain JSON only
//! (strings of printable ASCII without escapes, integers that `serde_json`
//! keeps as integers, `true`, `false`, `null`, objects and arrays no deeper
//! than [`DEPTH`]). On such a document every JSON parser agrees, so what the
//! paths find is what `serde_json` finds; on anything else — a float, an
//! escape, non-ASCII text, a syntax error, a path ending on an object or
//! array — it gives up and [`super::Plan::find`] runs `serde_json`'s pass,
//! which decides. Property-tested with the rest of the pass (`tests.rs`).

use serde_json::Value;

use super::{Leaf, Plan, bits};

/// Deeper documents are left to `serde_json` (whose limit is 128).
const DEPTH: usize = 32;

/// What the paths in `alive` find in `body`, into `out`; `None` when the document is not
/// plain JSON (then `out` means nothing).
pub(super) fn find<'a>(plan: &Plan, body: &'a [u8], alive: u32, out: &mut [Leaf<'a>]) -> Option<()> {
    let mut s = Scan { b: body, i: 0, plan, out };
    s.ws();
    if plan.flat && s.b.get(s.i) == Some(&b'{') {
        s.flat(alive)?;
    } else {
        s.value(0, alive)?;
    }
    s.ws();
    (s.i == s.b.len()).then_some(())
}

/// Where the first byte of `s` that a plain string cannot hold is: a quote, a backslash,
/// a control byte or one past printable ASCII. Eight bytes at a time: in each word, a
/// byte's high bit says it is one of those, and the lowest such bit is exact (the
/// subtractions borrow only upwards from a byte that is one).
fn stop(s: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x80 * ONES;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let mut at = 0;
    while let Some(w) = s.get(at..at + 8) {
        let w = u64::from_le_bytes(w.try_into().expect("eight bytes"));
        let low7 = w & !HIGH;
        let past_ascii = ((low7 + ONES) | w) & HIGH; // 0x7f and up
        let control = low7.wrapping_sub(0x20 * ONES) & !low7 & HIGH; // below 0x20 (or 0x80..0x9f)
        let m =
            past_ascii | control | zero(w ^ (u64::from(b'"') * ONES)) | zero(w ^ (u64::from(b'\\') * ONES));
        if m != 0 {
            return Some(at + m.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    let tail = s[at..].iter().position(|&c| !(0x20..0x7f).contains(&c) || c == b'"' || c == b'\\');
    tail.map(|p| at + p)
}

struct Scan<'s, 'a> {
    b: &'a [u8],
    i: usize,
    plan: &'s Plan,
    out: &'s mut [Leaf<'a>],
}

impl<'a> Scan<'_, 'a> {
    fn ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    /// One value at `depth`, followed by the paths in `alive`. In line: a scalar (most of
    /// the values of a member) is read where the member is; only an object or an array
    /// calls out, to [`Scan::nested`].
    #[expect(clippy::inline_always, reason = "a scalar member's value is read without a call")]
    #[inline(always)]
    fn value(&mut self, depth: usize, alive: u32) -> Option<()> {
        let ends = self.plan.ends(alive, depth);
        match *self.b.get(self.i)? {
            b'{' | b'[' if ends == 0 && depth < DEPTH => self.nested(depth, alive),
            // No path ends here: the string is read, not kept.
            b'"' if ends == 0 => self.string().map(drop),
            _ => self.scalar(ends),
        }
    }

    /// The scalar at `i`, put in the places of the paths `ends` (none: read, not kept).
    /// `None` on an object or array (a path ending on one needs the value built:
    /// `serde_json`'s pass) and on what is not plain JSON.
    #[expect(clippy::inline_always, reason = "a scalar member's value is read without a call")]
    #[inline(always)]
    fn scalar(&mut self, ends: u32) -> Option<()> {
        let leaf = match *self.b.get(self.i)? {
            b'"' => Leaf::Str(std::str::from_utf8(self.string()?).ok()?),
            b't' => self.word(b"true", Value::Bool(true))?,
            b'f' => self.word(b"false", Value::Bool(false))?,
            b'n' => self.word(b"null", Value::Null)?,
            b'-' | b'0'..=b'9' => self.integer()?,
            _ => return None,
        };
        if ends == 0 {
            return Some(());
        }
        if ends.is_power_of_two() {
            // One path ends here (the usual case): the leaf moves in.
            Leaf::put(&mut self.out[ends.trailing_zeros() as usize], leaf);
        } else {
            for i in bits(ends) {
                self.out[i] = leaf.clone();
            }
        }
        Some(())
    }

    /// The object at `i`, the document's, for a [`Plan`] whose paths are each one member
    /// name (`$.id`): what [`Scan::object`] finds there, in one loop without the descent's
    /// bookkeeping. A member a path takes ends it, so its value is read in place as a scalar
    /// (an object or an array gives up, as in [`Scan::value`]); and no leaf is emptied
    /// before it, since a repeated name's last value always takes the place.
    fn flat(&mut self, alive: u32) -> Option<()> {
        self.members(|s| s.key(0, alive), |s, next| if next == 0 { s.value(1, 0) } else { s.scalar(next) })
    }

    /// The member name at `i` (its opening quote), and the paths among `alive` that go on
    /// into its value at `depth`: a name expected there is compared where it is written; any
    /// other is read, then looked up.
    #[expect(clippy::inline_always, reason = "read in each member loop, as if written there")]
    #[inline(always)]
    fn key(&mut self, depth: usize, alive: u32) -> Option<u32> {
        if let Some((len, next)) = self.plan.key_at(alive, depth, &self.b[self.i + 1..]) {
            self.i += len + 2;
            return Some(next);
        }
        let key = self.string()?;
        Some(self.plan.named(alive, depth, key))
    }

    /// The object or array at `i` (the recursion of [`Scan::value`], out of line).
    #[inline(never)]
    fn nested(&mut self, depth: usize, alive: u32) -> Option<()> {
        if self.b[self.i] == b'{' { self.object(depth, alive) } else { self.array(depth, alive) }
    }

    fn word(&mut self, w: &[u8], v: Value) -> Option<Leaf<'a>> {
        self.b.get(self.i..)?.starts_with(w).then(|| self.i += w.len())?;
        Some(Leaf::Value(v))
    }

    /// A string of printable ASCII without escapes (the opening quote at `i`), as its bytes.
    #[inline]
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.i + 1;
        let len = stop(self.b.get(start..)?)?;
        (self.b[start + len] == b'"').then_some(())?;
        self.i = start + len + 1;
        Some(&self.b[start..start + len])
    }

    /// An integer as `serde_json` keeps it: no leading zero, no fraction or exponent,
    /// a `u64`, or a negative `i64` (`-0` is a float there). One digit followed by what
    /// cannot go on a number (most counts, flags and small ids) is read without the loop.
    #[inline]
    fn integer(&mut self) -> Option<Leaf<'a>> {
        if let Some(&[d @ b'0'..=b'9', after]) = self.b.get(self.i..self.i + 2)
            && !matches!(after, b'0'..=b'9' | b'.' | b'e' | b'E')
        {
            self.i += 1;
            return Some(Leaf::Int(i64::from(d - b'0')));
        }
        self.number()
    }

    /// [`Scan::integer`] of any length.
    fn number(&mut self) -> Option<Leaf<'a>> {
        let negative = self.b[self.i] == b'-';
        let start = self.i + usize::from(negative);
        // The digits and their value in one loop; `None` past a `u64`.
        let (mut end, mut n) = (start, 0u64);
        while let Some(&d) = self.b.get(end).filter(|d| d.is_ascii_digit()) {
            n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
            end += 1;
        }
        let digits = end - start;
        if digits == 0
            || digits > 1 && self.b[start] == b'0'
            || matches!(self.b.get(end), Some(b'.' | b'e' | b'E'))
        {
            return None;
        }
        self.i = end;
        Some(if !negative {
            i64::try_from(n).map_or_else(|_| Leaf::Value(Value::from(n)), Leaf::Int)
        } else if n == 0 || n > 1 << 63 {
            return None;
        } else {
            Leaf::Int((n as i64).wrapping_neg())
        })
    }

    fn object(&mut self, depth: usize, alive: u32) -> Option<()> {
        self.members(
            |s| {
                // Below a member no path takes, no name is looked up.
                if alive == 0 {
                    s.string()?;
                    return Some(0);
                }
                s.key(depth, alive)
            },
            |s, next| {
                for i in bits(next) {
                    // A repeated name: only its last value counts.
                    Leaf::put(&mut s.out[i], Leaf::Nothing);
                }
                s.value(depth + 1, next)
            },
        )
    }

    fn array(&mut self, depth: usize, alive: u32) -> Option<()> {
        self.elements(|s, n| {
            let next = if alive == 0 { 0 } else { s.plan.indexed(alive, depth, n) };
            s.value(depth + 1, next)
        })
    }

    /// The object at `i`: `name` reads each member's name (at its opening quote) into what
    /// `member` needs to read its value.
    #[expect(clippy::inline_always, reason = "one loop for each caller, as if written there")]
    #[inline(always)]
    fn members<K>(
        &mut self,
        mut name: impl FnMut(&mut Self) -> Option<K>,
        mut member: impl FnMut(&mut Self, K) -> Option<()>,
    ) -> Option<()> {
        self.i += 1;
        self.ws();
        if self.b.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Some(());
        }
        loop {
            self.ws();
            (self.b.get(self.i) == Some(&b'"')).then_some(())?;
            let key = name(self)?;
            self.eat(b':')?;
            self.ws();
            member(self, key)?;
            if self.next_item(b'}')? {
                return Some(());
            }
        }
    }

    /// The array at `i`: `element` reads each element, given its index.
    #[expect(clippy::inline_always, reason = "one loop for each caller, as if written there")]
    #[inline(always)]
    fn elements(&mut self, mut element: impl FnMut(&mut Self, i64) -> Option<()>) -> Option<()> {
        self.i += 1;
        self.ws();
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
            return Some(());
        }
        for n in 0.. {
            self.ws();
            element(self, n)?;
            if self.next_item(b']')? {
                return Some(());
            }
        }
        None
    }

    /// Past an item of an object or an array: `Some(false)` after a `,`, `Some(true)` after
    /// `close`, which ends it.
    #[inline]
    fn next_item(&mut self, close: u8) -> Option<bool> {
        self.ws();
        let c = *self.b.get(self.i)?;
        self.i += 1;
        match c {
            b',' => Some(false),
            c if c == close => Some(true),
            _ => None,
        }
    }
}

pub(super) mod filter;

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// The word-wise search stops where a byte-by-byte one does, on any bytes.
        #[test]
        fn stop_is_the_first_byte_a_string_cannot_hold(s in proptest::collection::vec(
            prop_oneof![0x20u8..0x7f, Just(b'"'), Just(b'\\'), any::<u8>()], 0..40)) {
            let slow = s.iter().position(|&c| !(0x20..0x7f).contains(&c) || c == b'"' || c == b'\\');
            prop_assert_eq!(super::stop(&s), slow);
        }

        /// An integer read by the one-digit path is the one the general reading reads, and
        /// leaves the scan at the same byte, on any number-like bytes.
        #[test]
        fn one_digit_is_read_as_any_integer(s in proptest::collection::vec(
            prop_oneof![Just(b'-'), b'0'..=b'9', Just(b'.'), Just(b'e'), Just(b'E'), Just(b','), Just(b'}'), Just(b' ')], 1..6)) {
            let plan = super::super::Plan::new([], []).expect("no path");
            let (mut one, mut any) = (super::Scan { b: &s, i: 0, plan: &plan, out: &mut [] },
                                      super::Scan { b: &s, i: 0, plan: &plan, out: &mut [] });
            let (a, b) = (one.integer(), any.number());
            prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
            if a.is_some() {
                prop_assert_eq!(one.i, any.i);
            }
        }
    }
}
