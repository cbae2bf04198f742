//! The singular paths of one entry found in one pass over the answer's bytes,
//! without building the document: what the load engine checks per request.
//!
//! The pass drives `serde_json`'s own parser through the same `deserialize_any`
//! calls that building a [`Value`] makes (every string decoded and validated,
//! every number parsed, the same depth limit, trailing bytes refused), so a body
//! is JSON here exactly when `serde_json::from_slice::<Value>` accepts it. It
//! keeps only what the paths reach: an integer that fits an `i64` as itself,
//! another scalar as a [`Value`] (no allocation but a string with escapes), a
//! string without escapes borrowed from the answer, an object or array a path
//! ends on built as a [`Value`]. A repeated member name
//! keeps its last value, as `serde_json`'s map does. Paths with an index from
//! the end (`[-1]`) or a collection (`*`, `..`) are left to [`JsonPath::eval`].
//! The property tests (`tests.rs`) hold it equal to [`JsonPath::eval`] on the
//! parsed document.

use std::fmt;

use serde::Deserialize as _;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::{JsonPath, Step};

/// The most distinct paths one pass follows (one bit each).
pub const MAX: usize = 8;

/// What a path found in the answer.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Leaf<'a> {
    #[default]
    Nothing,
    /// A JSON string without escapes, borrowed from the answer.
    Str(&'a str),
    /// An integer that fits an `i64` (`serde_json` keeps it as the same number).
    Int(i64),
    Value(Value),
}

impl Leaf<'_> {
    /// Puts `new` in `slot`. The old leaf is dropped only when it owns memory: most own
    /// none, and the drop's call costs more than this test on every answer read.
    #[inline]
    pub fn put(slot: &mut Self, new: Self) {
        let old = std::mem::replace(slot, new);
        if matches!(old, Leaf::Value(Value::String(_) | Value::Array(_) | Value::Object(_))) {
            drop(old);
        } else {
            std::mem::forget(old);
        }
    }

    /// Empties every leaf of `leaves` (see [`Leaf::put`]).
    #[inline]
    pub fn clear(leaves: &mut [Self]) {
        for l in leaves {
            Leaf::put(l, Leaf::Nothing);
        }
    }
}

impl JsonPath {
    /// Whether [`Plan`] can follow it: singular, without an index from the end.
    pub fn streamable(&self) -> bool {
        self.singular && self.steps.iter().all(|s| !matches!(s, Step::Index(i) if *i < 0))
    }
}

/// The distinct paths of an entry's captures and asserts, in the order first
/// given, and where each path given finds its value: worked out once per entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    paths: Vec<JsonPath>,
    /// For the `k`th path given, its place among `paths`.
    slots: Vec<u8>,
    /// How many of the paths given are the captures' (given first).
    captures: usize,
    /// For each depth, the paths that end there (one bit each).
    ends: Vec<u32>,
    /// For each depth, each step taken there and the paths that take it: a member name is
    /// matched against the few names expected at its depth, not against every path.
    levels: Vec<Vec<(Step, u32)>>,
    /// For each depth, the member names of `levels` that a plain JSON string holds as they
    /// are written (printable ASCII without a quote or a backslash), and the paths that take
    /// them: the plain scan finds such a name in place, without reading the string first.
    keys: Vec<Vec<(Box<[u8]>, u32)>>,
    /// Whether each path is one member name (`$.id`, `$['a b']`): the plain scan then reads
    /// the document's object in one loop ([`plain`]'s `flat`).
    flat: bool,
}

impl Plan {
    /// The plan of the captures' paths, then the asserts'. `None` when a path is not
    /// [`JsonPath::streamable`] or there are more than [`MAX`] distinct paths.
    pub fn new<'p>(
        captures: impl IntoIterator<Item = &'p JsonPath>,
        asserts: impl IntoIterator<Item = &'p JsonPath>,
    ) -> Option<Plan> {
        let mut plan = Plan {
            paths: Vec::new(),
            slots: Vec::new(),
            captures: 0,
            ends: Vec::new(),
            levels: Vec::new(),
            keys: Vec::new(),
            flat: false,
        };
        for p in captures {
            plan.add(p)?;
        }
        plan.captures = plan.slots.len();
        for p in asserts {
            plan.add(p)?;
        }
        plan.flat = plan.paths.iter().all(|p| matches!(*p.steps, [Step::Name(_)]));
        Some(plan)
    }

    fn add(&mut self, p: &JsonPath) -> Option<()> {
        if !p.streamable() {
            return None;
        }
        let slot = match self.index_of(p) {
            Some(i) => i,
            None if self.paths.len() < MAX => {
                let depth = p.steps.len();
                if self.ends.len() <= depth {
                    self.ends.resize(depth + 1, 0);
                }
                let bit = 1 << self.paths.len();
                self.ends[depth] |= bit;
                if self.levels.len() < depth {
                    self.levels.resize(depth, Vec::new());
                }
                for (level, step) in self.levels.iter_mut().zip(&p.steps) {
                    match level.iter_mut().find(|(s, _)| s == step) {
                        Some((_, mask)) => *mask |= bit,
                        None => level.push((step.clone(), bit)),
                    }
                }
                if self.keys.len() < depth {
                    self.keys.resize(depth, Vec::new());
                }
                for (keys, step) in self.keys.iter_mut().zip(&p.steps) {
                    let Step::Name(n) = step else { continue };
                    if !n.bytes().all(|c| (0x20..0x7f).contains(&c) && c != b'"' && c != b'\\') {
                        continue;
                    }
                    match keys.iter_mut().find(|(k, _)| **k == *n.as_bytes()) {
                        Some((_, mask)) => *mask |= bit,
                        None => keys.push((n.as_bytes().into(), bit)),
                    }
                }
                self.paths.push(p.clone());
                self.paths.len() - 1
            }
            None => return None,
        };
        self.slots.push(slot as u8);
        Some(())
    }

    /// How many distinct paths it follows (at most [`MAX`]).
    pub fn paths(&self) -> usize {
        self.paths.len()
    }

    /// Where [`Plan::find`] puts what the `k`th path given found.
    pub fn slot(&self, k: usize) -> Option<usize> {
        self.slots.get(k).map(|&s| usize::from(s))
    }

    /// Where [`Plan::find`] puts what `path` found.
    pub fn index_of(&self, path: &JsonPath) -> Option<usize> {
        self.paths.iter().position(|p| p == path)
    }

    /// Parses `body` as JSON and sets `out[i]` to what path `i` finds (the captures'
    /// paths only, unless `asserts`); `Err` when the body is not JSON (then `out`
    /// means nothing). `out` has a place for each path ([`Plan::paths`]).
    pub fn find<'a>(
        &self,
        body: &'a [u8],
        asserts: bool,
        out: &mut [Leaf<'a>],
    ) -> Result<(), serde_json::Error> {
        // The captures' paths come first: those of the first `captures` slots.
        let len = if asserts {
            self.paths.len()
        } else {
            self.slots[..self.captures].iter().max().map_or(0, |&m| usize::from(m) + 1)
        };
        let alive = (1u32 << len) - 1;
        Leaf::clear(&mut out[..len]);
        if plain::find(self, body, alive, out).is_some() {
            return Ok(());
        }
        Leaf::clear(&mut out[..len]);
        let mut de = serde_json::Deserializer::from_slice(body);
        Walk { plan: self, out, depth: 0, alive }.deserialize(&mut de)?;
        de.end()
    }

    /// The paths among `alive` that end at `depth`.
    fn ends(&self, alive: u32, depth: usize) -> u32 {
        alive & self.ends.get(depth).copied().unwrap_or(0)
    }

    fn path(&self, i: usize) -> &JsonPath {
        &self.paths[i]
    }

    /// The paths among `alive` that go on into member `key` at `depth`.
    fn named(&self, alive: u32, depth: usize, key: &[u8]) -> u32 {
        let level = self.levels.get(depth).map_or(&[][..], Vec::as_slice);
        let found =
            level.iter().find(|(s, _)| matches!(s, Step::Name(n) if crate::bytes::same(n.as_bytes(), key)));
        found.map_or(0, |(_, mask)| alive & mask)
    }

    /// The paths among `alive` that go on into the member at `depth` whose name `rest` begins
    /// with, closed by a quote, and the name's length: when it is one of the plain names
    /// expected there (`keys`), the same as [`Plan::named`] of the string read.
    #[inline]
    fn key_at(&self, alive: u32, depth: usize, rest: &[u8]) -> Option<(usize, u32)> {
        let keys = self.keys.get(depth)?;
        keys.iter().find_map(|(k, mask)| {
            let hit = rest.get(k.len()) == Some(&b'"') && crate::bytes::same(&rest[..k.len()], k);
            hit.then_some((k.len(), alive & mask))
        })
    }

    /// The paths among `alive` that go on into element `i` at `depth`.
    fn indexed(&self, alive: u32, depth: usize, i: i64) -> u32 {
        let level = self.levels.get(depth).map_or(&[][..], Vec::as_slice);
        let found = level.iter().find(|(s, _)| matches!(s, Step::Index(n) if *n == i));
        found.map_or(0, |(_, mask)| alive & mask)
    }
}

/// The indexes of the bits set in `mask`, lowest first.
fn bits(mut mask: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let i = mask.trailing_zeros() as usize;
        mask &= mask.wrapping_sub(1);
        (i < 32).then_some(i)
    })
}

/// The value at `depth` of the paths in `alive`.
struct Walk<'w, 'a> {
    plan: &'w Plan,
    out: &'w mut [Leaf<'a>],
    depth: usize,
    alive: u32,
}

impl<'a> Walk<'_, 'a> {
    /// The paths that end here.
    fn ends(&self) -> u32 {
        self.plan.ends(self.alive, self.depth)
    }

    fn scalar(self, leaf: impl Fn() -> Leaf<'a>) {
        for i in bits(self.ends()) {
            self.out[i] = leaf();
        }
    }

    /// An object or array that a path ends on: built whole, the deeper paths walked in it.
    fn container(self, v: &Value) {
        for i in bits(self.alive) {
            let p = self.plan.path(i);
            self.out[i] = p.walk(v, self.depth).map_or(Leaf::Nothing, |f| Leaf::Value(f.clone()));
        }
    }

    /// The next value of a map or seq, followed by the paths in `alive`.
    fn child(&mut self, alive: u32) -> Walk<'_, 'a> {
        for i in bits(alive) {
            // A repeated name: only its last value counts.
            Leaf::put(&mut self.out[i], Leaf::Nothing);
        }
        Walk { plan: self.plan, out: self.out, depth: self.depth + 1, alive }
    }
}

impl<'a> DeserializeSeed<'a> for Walk<'_, 'a> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'a>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'a> Visitor<'a> for Walk<'_, 'a> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        self.scalar(|| Leaf::Value(Value::Bool(b)));
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        self.scalar(|| Leaf::Int(n));
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        self.scalar(|| i64::try_from(n).map_or_else(|_| Leaf::Value(Value::Number(n.into())), Leaf::Int));
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<(), E> {
        // As `serde_json`'s own `Value` visitor.
        self.scalar(|| Leaf::Value(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)));
        Ok(())
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'a str) -> Result<(), E> {
        self.scalar(|| Leaf::Str(s));
        Ok(())
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.scalar(|| Leaf::Value(Value::String(s.to_owned())));
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.scalar(|| Leaf::Value(Value::Null));
        Ok(())
    }

    fn visit_map<M: MapAccess<'a>>(mut self, mut map: M) -> Result<(), M::Error> {
        if self.ends() != 0 {
            let v = Value::deserialize(MapAccessDeserializer::new(map))?;
            self.container(&v);
            return Ok(());
        }
        let (plan, depth, alive) = (self.plan, self.depth, self.alive);
        while let Some(next) = map.next_key_seed(Key { plan, depth, alive })? {
            map.next_value_seed(self.child(next))?;
        }
        Ok(())
    }

    fn visit_seq<S: SeqAccess<'a>>(mut self, mut seq: S) -> Result<(), S::Error> {
        if self.ends() != 0 {
            let v = Value::deserialize(SeqAccessDeserializer::new(seq))?;
            self.container(&v);
            return Ok(());
        }
        let (plan, depth, alive) = (self.plan, self.depth, self.alive);
        for i in 0.. {
            let next = plan.indexed(alive, depth, i);
            if seq.next_element_seed(self.child(next))?.is_none() {
                break;
            }
        }
        Ok(())
    }
}

/// A member name, decoded as `serde_json` decodes a map key; yields the paths that go on into it.
struct Key<'w> {
    plan: &'w Plan,
    depth: usize,
    alive: u32,
}

impl<'a> DeserializeSeed<'a> for Key<'_> {
    type Value = u32;

    fn deserialize<D: de::Deserializer<'a>>(self, d: D) -> Result<u32, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for Key<'_> {
    type Value = u32;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<u32, E> {
        Ok(self.plan.named(self.alive, self.depth, key.as_bytes()))
    }
}

mod plain;
pub use plain::filter::{Filtered, Found};
#[cfg(test)]
pub(crate) mod tests;
