//! The variables of one iteration ([`Vars`]): each kept in a slot with its text buffer,
//! found by its name once and then by its place; and the one writer of what a template's
//! reference stands for ([`Hole`], [`Vars::fill`]), the generators `{{newUuid}}` and
//! `{{newDate}}` among them.

use std::io::Write as _;
use std::time::SystemTime;

use bytes::BufMut;

use stackbench_contract::rng::SplitMix64;

use super::{Escape, Kind, json_escape};

/// A variable's value: its text and what the text stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    pub text: String,
    pub kind: Kind,
}

/// Whether a variable has a value, and whence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    None,
    /// From the file or the user.
    Value,
    /// From an answer (a capture) or a data row: it may not write a request's host.
    Untrusted,
}

/// The variables of one iteration (few: a linear scan beats hashing) and the
/// generators' random source.
#[derive(Debug, Clone)]
pub struct Vars {
    slots: Vec<(Box<str>, Value, Held)>,
    pub rng: SplitMix64,
    /// Values never shown: `--secret`s and `redact` captures.
    secrets: Vec<Box<str>>,
    /// The longest value a capture may take ([`crate::files::Limits::max_capture`]).
    pub max_capture: usize,
}

impl Vars {
    pub fn new(seed: u64) -> Vars {
        Vars {
            slots: Vec::new(),
            rng: SplitMix64(seed),
            secrets: Vec::new(),
            max_capture: crate::files::DEFAULT_MAX_CAPTURE,
        }
    }

    /// Keeps `value` from being shown in any message ([`Vars::redact`]).
    pub fn add_secret(&mut self, value: &str) {
        if !value.is_empty() && !self.secrets.iter().any(|s| **s == *value) {
            self.secrets.push(value.into());
        }
    }

    /// `text` with every secret value replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for s in &self.secrets {
            out = out.replace(&**s, "***");
        }
        out
    }

    /// Sets `name`, reusing its previous text buffer.
    pub fn set(&mut self, name: &str, text: &str, kind: Kind) {
        let i = self.index(name);
        self.set_at(i, text, kind);
    }

    /// Sets slot `i` ([`Vars::index`]), reusing its previous text buffer.
    pub fn set_at(&mut self, i: usize, text: &str, kind: Kind) {
        let v = self.slot_at(i);
        v.text.clear();
        v.text.push_str(text);
        v.kind = kind;
    }

    /// The value buffer of `name` to fill in place (it becomes set).
    pub fn slot(&mut self, name: &str) -> &mut Value {
        let i = self.index(name);
        self.slot_at(i)
    }

    /// The value buffer of slot `i` ([`Vars::index`], it becomes set) and the random source.
    pub fn slot_and_rng_at(&mut self, i: usize) -> (&mut Value, &mut SplitMix64) {
        self.slots[i].2 = Held::Value;
        (&mut self.slots[i].1, &mut self.rng)
    }

    /// The value of `name`, if set in this iteration.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.get_at(self.find(name)?)
    }

    /// Forgets the values of `names` (the captures), keeping their buffers.
    pub fn unset<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) {
        for name in names {
            if let Some(s) = self.slots.iter_mut().find(|(n, _, _)| **n == *name) {
                s.2 = Held::None;
            }
        }
    }

    /// The slot of `name`, made (without a value) when it has none: where a compiled
    /// template ([`crate::compiled`]) finds the variable without looking its name up.
    pub fn index(&mut self, name: &str) -> usize {
        self.find(name).unwrap_or_else(|| {
            self.slots.push((name.into(), Value { text: String::new(), kind: Kind::Null }, Held::None));
            self.slots.len() - 1
        })
    }

    /// [`Vars::index`], tried first at `hint` (the slot `name` had in the variables a
    /// compiled check was worked out with): one comparison where those variables are laid
    /// out as these, a search where they are not. The names compared in line (a compiled
    /// capture asks for its slot on every answer).
    #[inline]
    pub fn index_at(&mut self, hint: usize, name: &str) -> usize {
        match self.slots.get(hint) {
            Some((n, _, _)) if crate::bytes::same(n.as_bytes(), name.as_bytes()) => hint,
            _ => self.index(name),
        }
    }

    fn find(&self, name: &str) -> Option<usize> {
        self.slots.iter().position(|(n, _, _)| **n == *name)
    }

    /// The value in slot `i` ([`Vars::index`]), if set in this iteration.
    pub fn get_at(&self, i: usize) -> Option<&Value> {
        self.slots.get(i).filter(|s| s.2 != Held::None).map(|(_, v, _)| v)
    }

    /// The value buffer of slot `i` ([`Vars::index`]) to fill in place (it becomes set, from
    /// the file or the user).
    pub fn slot_at(&mut self, i: usize) -> &mut Value {
        let s = &mut self.slots[i];
        s.2 = Held::Value;
        &mut s.1
    }

    /// Forgets the value of slot `i`, keeping its buffer.
    pub fn unset_at(&mut self, i: usize) {
        if let Some(s) = self.slots.get_mut(i) {
            s.2 = Held::None;
        }
    }

    /// Gives slot `i` ([`Vars::index`]) again the value its buffer holds, from an answer (as
    /// [`Vars::mark_untrusted`] says), when that is `text` of `kind`: a capture that takes the
    /// same value answer after answer is not copied. Whether it did (else nothing changed).
    #[inline]
    pub fn keep_at(&mut self, i: usize, text: &str, kind: Kind) -> bool {
        match self.slots.get_mut(i) {
            Some(s) if s.1.kind == kind && crate::bytes::same(s.1.text.as_bytes(), text.as_bytes()) => {
                s.2 = Held::Untrusted;
                true
            }
            _ => false,
        }
    }

    /// Says that the value of slot `i`, if it has one, came from an answer or a data row: it
    /// may not write a request's host ([`Vars::untrusted`]).
    pub fn mark_untrusted(&mut self, i: usize) {
        if let Some(s) = self.slots.get_mut(i).filter(|s| s.2 != Held::None) {
            s.2 = Held::Untrusted;
        }
    }

    /// Whether `name` has a value from an answer (a capture) or a data row.
    pub fn untrusted(&self, name: &str) -> bool {
        self.find(name).is_some_and(|i| self.slots[i].2 == Held::Untrusted)
    }

    /// What a reference to `name`, written as `escape` says, stands for in these variables:
    /// a generator, or the variable's slot (made when it has none).
    pub fn hole(&mut self, name: &str, escape: Escape) -> Hole {
        let quoted = escape == Escape::JsonValue;
        match name {
            "newUuid" => Hole::Uuid { quoted },
            "newDate" => Hole::Date { quoted },
            _ => Hole::Var { slot: self.index(name) as u32, escape },
        }
    }

    /// Writes `name`'s value (or a generator's) into `out` as `escape` says; `Err` when it
    /// has none.
    pub(crate) fn write(&mut self, name: &str, escape: Escape, out: &mut Vec<u8>) -> Result<(), ()> {
        let hole = match name {
            "newUuid" | "newDate" => self.hole(name, escape),
            _ => Hole::Var { slot: self.find(name).ok_or(())? as u32, escape },
        };
        self.fill(hole, out).ok_or(())
    }

    /// Writes what `hole` stands for into `out`: the one writer of a template's variables,
    /// for [`Template::render`] and compiled templates alike. `None` when its variable has no
    /// value in this iteration.
    pub fn fill(&mut self, hole: Hole, out: &mut impl BufMut) -> Option<()> {
        let (slot, escape) = match hole {
            Hole::Uuid { quoted } => {
                let (hi, lo) = (self.rng.next_u64(), self.rng.next_u64());
                write_uuid(hi, lo, quoted, out);
                return Some(());
            }
            Hole::Date { quoted } => {
                let q = if quoted { "\"" } else { "" };
                let now = humantime::format_rfc3339_micros(SystemTime::now());
                write!(out.writer(), "{q}{now}{q}").expect("writing to a buffer cannot fail");
                return Some(());
            }
            Hole::Var { slot, escape } => (slot, escape),
        };
        let v = self.get_at(slot as usize)?;
        match (escape, v.kind) {
            (Escape::Plain, _)
            | (
                Escape::JsonValue,
                Kind::Integer | Kind::Float | Kind::Bool | Kind::Null | Kind::Json | Kind::Nodeset,
            ) => {
                out.put_slice(v.text.as_bytes());
            }
            (Escape::JsonString, _) => json_escape(&v.text, out),
            (Escape::JsonValue, Kind::String | Kind::Bytes | Kind::Date) => {
                out.put_u8(b'"');
                json_escape(&v.text, out);
                out.put_u8(b'"');
            }
        }
        Some(())
    }
}

/// A variable reference resolved against one [`Vars`]: a generator, or a variable's slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hole {
    /// `{{newUuid}}`; `quoted` in place of a JSON value.
    Uuid {
        quoted: bool,
    },
    /// `{{newDate}}`; `quoted` in place of a JSON value.
    Date {
        quoted: bool,
    },
    Var {
        slot: u32,
        escape: Escape,
    },
}

impl Hole {
    /// The length of what it writes, when that is always the same.
    pub fn fixed_len(self) -> Option<usize> {
        match self {
            Hole::Uuid { quoted } => Some(36 + 2 * usize::from(quoted)),
            Hole::Date { .. } | Hole::Var { .. } => None,
        }
    }
}

/// A version-4 UUID (RFC 9562) from 128 random bits, lower-case hex: the 32 digits made at
/// once ([`hex_digits`]), placed between the dashes, appended once.
fn write_uuid(hi: u64, lo: u64, quoted: bool, out: &mut impl BufMut) {
    let hi = (hi & !0xF000) | 0x4000; // version 4
    let lo = (lo & !(0b11 << 62)) | (0b10 << 62); // variant 10
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: SSE2, which `hex_digits` enables, is part of every x86-64 CPU (the baseline
    // this target compiles for).
    let (h, l) = unsafe { hex_digits(hi, lo) };
    #[cfg(not(target_arch = "x86_64"))]
    let (h, l) = hex_digits(hi, lo);
    let mut text = *b"\"00000000-0000-0000-0000-000000000000\"";
    text[1..9].copy_from_slice(&h[..8]);
    text[10..14].copy_from_slice(&h[8..12]);
    text[15..19].copy_from_slice(&h[12..]);
    text[20..24].copy_from_slice(&l[..4]);
    text[25..37].copy_from_slice(&l[4..]);
    // Each length a constant: a few moves, not a call to copy a length known only here.
    if quoted {
        out.put_slice(&text);
    } else {
        out.put_slice(&text[1..37]);
    }
}

/// The 16 lower-case hex digits of `hi` and of `lo`, most significant first: SSE2 (every
/// x86-64 has it) makes all 32 in a few vector operations.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn hex_digits(hi: u64, lo: u64) -> ([u8; 16], [u8; 16]) {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_and_si128, _mm_cmpgt_epi8, _mm_cvtsi128_si64, _mm_set_epi64x,
        _mm_set1_epi8, _mm_srli_epi16, _mm_unpackhi_epi8, _mm_unpackhi_epi64, _mm_unpacklo_epi8,
    };
    // Byte `j` of the text order (`hi`'s most significant first) in lane `j`.
    let v = _mm_set_epi64x(lo.swap_bytes() as i64, hi.swap_bytes() as i64);
    let nibble = _mm_set1_epi8(0x0F);
    let (high, low) = (_mm_and_si128(_mm_srli_epi16::<4>(v), nibble), _mm_and_si128(v, nibble));
    // `0`..`9`, then `a`..`f`: 0x27 more from 10 on.
    let digits = |n: __m128i| {
        let letters = _mm_and_si128(_mm_cmpgt_epi8(n, _mm_set1_epi8(9)), _mm_set1_epi8(0x27));
        _mm_add_epi8(_mm_add_epi8(n, _mm_set1_epi8(0x30)), letters)
    };
    let bytes = |x: __m128i| {
        let mut o = [0; 16];
        o[..8].copy_from_slice(&_mm_cvtsi128_si64(x).to_le_bytes());
        o[8..].copy_from_slice(&_mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)).to_le_bytes());
        o
    };
    // Each byte's high nibble, then its low one.
    (bytes(digits(_mm_unpacklo_epi8(high, low))), bytes(digits(_mm_unpackhi_epi8(high, low))))
}

/// [`hex_digits`] elsewhere, with word operations.
#[cfg(not(target_arch = "x86_64"))]
fn hex_digits(hi: u64, lo: u64) -> ([u8; 16], [u8; 16]) {
    (hex(hi), hex(lo))
}

/// The 16 lower-case hex digits of `x`, most significant first.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn hex(x: u64) -> [u8; 16] {
    /// The eight nibbles of `x` one per byte, the most significant in the lowest byte.
    fn spread(x: u32) -> u64 {
        // Byte `j` of the text order (most significant first) to byte `2j`, ...
        let z = u64::from(x.swap_bytes());
        let z = (z | z << 16) & 0x0000_FFFF_0000_FFFF;
        let z = (z | z << 8) & 0x00FF_00FF_00FF_00FF;
        // ... then its high nibble stays there and its low one goes to byte `2j + 1`.
        ((z >> 4) & 0x000F_000F_000F_000F) | ((z & 0x000F_000F_000F_000F) << 8)
    }
    const ONES: u64 = 0x0101_0101_0101_0101;
    let digits = |n: u64| {
        // `0`..`9`, then `a`..`f`: 0x27 more from 10 on.
        let letters = ((n + 6 * ONES) >> 4) & ONES;
        (n + 0x30 * ONES + letters * 0x27).to_le_bytes()
    };
    let mut out = [0; 16];
    out[..8].copy_from_slice(&digits(spread((x >> 32) as u32)));
    out[8..].copy_from_slice(&digits(spread(x as u32)));
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::template::Kind;

    #[test]
    fn unset_forgets_values() {
        let mut vars = Vars::new(1);
        vars.set("a", "1", Kind::Integer);
        vars.unset(["a"]);
        assert!(vars.get("a").is_none());
    }

    proptest! {
        /// The table-driven UUID is the bits' straightforward hex, dashes and version set.
        #[test]
        fn uuid_is_the_bits_in_hex(hi in any::<u64>(), lo in any::<u64>(), quoted in any::<bool>()) {
            let mut out = Vec::new();
            write_uuid(hi, lo, quoted, &mut out);
            let v = (u128::from((hi & !0xF000) | 0x4000) << 64) | u128::from((lo & !(0b11 << 62)) | (0b10 << 62));
            let hex = format!("{v:032x}");
            let dashed = format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..]);
            let want = if quoted { format!("\"{dashed}\"") } else { dashed };
            prop_assert_eq!(String::from_utf8(out).unwrap(), want);
        }

        /// The digits made at once are those of the word operations, on every machine.
        #[test]
        fn hex_digits_are_the_words_digits(hi in any::<u64>(), lo in any::<u64>()) {
            #[cfg(target_arch = "x86_64")]
            #[allow(unsafe_code)]
            // SAFETY: as in `write_uuid`: every x86-64 CPU has SSE2.
            let digits = unsafe { hex_digits(hi, lo) };
            #[cfg(not(target_arch = "x86_64"))]
            let digits = hex_digits(hi, lo);
            prop_assert_eq!(digits, (hex(hi), hex(lo)));
        }

        /// A slot found from a hint is the one the search finds, whether the hint is right,
        /// another variable's slot or past the end; the variables are left as the search
        /// leaves them.
        #[test]
        fn a_hinted_slot_is_the_searched_one(names in proptest::collection::vec("[a-c]{1,2}", 0..6), name in "[a-c]{1,2}", hint in 0..8usize) {
            let mut hinted = Vars::new(1);
            for n in &names {
                hinted.index(n);
            }
            let mut searched = hinted.clone();
            prop_assert_eq!(hinted.index_at(hint, &name), searched.index(&name));
            prop_assert_eq!(hinted.slots, searched.slots);
        }
    }
}
