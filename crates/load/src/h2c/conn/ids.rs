//! A connection's open streams by id: which slot of its stream table each one holds.
//!
//! Looked up for every frame an answer brings and changed twice per request, so it is a
//! direct-mapped table on the id's low bits first: a client's ids are odd and grow by two, so
//! the streams open at once on a connection sit in distinct entries unless more than
//! [`ENTRIES`] are open or one outlives [`ENTRIES`] later ones; those few go to a map. A map
//! alone cost about 130 user-space instructions per request (insert, look-ups, remove).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Entries of the direct-mapped table (a power of two).
const ENTRIES: usize = 128;

/// Stream id → slot index; ids are never 0 (stream 0 is the connection's).
#[derive(Debug, Default)]
pub(super) struct Ids {
    /// `(id, index)` per entry, id 0 when free; made on the first insert.
    table: Vec<(u32, u32)>,
    /// The streams whose entry was taken when they opened.
    spill: HashMap<u32, usize, BuildHasherDefault<IdHasher>>,
}

impl Ids {
    fn entry(id: u32) -> usize {
        (id >> 1) as usize & (ENTRIES - 1)
    }

    pub(super) fn insert(&mut self, id: u32, index: usize) {
        debug_assert_ne!(id, 0, "stream 0 is the connection's");
        if self.table.is_empty() {
            self.table = vec![(0, 0); ENTRIES];
        }
        let e = &mut self.table[Ids::entry(id)];
        match u32::try_from(index) {
            Ok(i) if e.0 == 0 => *e = (id, i),
            _ => {
                self.spill.insert(id, index);
            }
        }
    }

    pub(super) fn get(&self, id: u32) -> Option<usize> {
        match self.table.get(Ids::entry(id)) {
            Some(&(at, i)) if at == id && id != 0 => Some(i as usize),
            _ if self.spill.is_empty() => None,
            _ => self.spill.get(&id).copied(),
        }
    }

    pub(super) fn remove(&mut self, id: u32) {
        match self.table.get_mut(Ids::entry(id)) {
            Some(e) if e.0 == id && id != 0 => *e = (0, 0),
            _ => {
                self.spill.remove(&id);
            }
        }
    }
}

/// Stream ids are already well spread: hash them as they are.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_was_inserted_in_the_table_and_past_it() {
        let mut ids = Ids::default();
        assert_eq!(ids.get(1), None);
        // Ids 1, 3, .. fill every entry once; the next ENTRIES share entries with them.
        let ids_open: Vec<u32> = (0..2 * ENTRIES as u32).map(|k| 2 * k + 1).collect();
        for (index, &id) in ids_open.iter().enumerate() {
            ids.insert(id, index);
        }
        assert_eq!(ids.spill.len(), ENTRIES, "the second round collides with the first");
        for (index, &id) in ids_open.iter().enumerate() {
            assert_eq!(ids.get(id), Some(index), "stream {id}");
        }
        assert_eq!(ids.get(2 * 2 * ENTRIES as u32 + 1), None, "never opened");
        // Removing a table entry leaves the spilled stream that shares it.
        ids.remove(1);
        assert_eq!(ids.get(1), None);
        assert_eq!(ids.get(2 * ENTRIES as u32 + 1), Some(ENTRIES));
        ids.remove(2 * ENTRIES as u32 + 1);
        assert_eq!(ids.get(2 * ENTRIES as u32 + 1), None);
        assert_eq!(ids.spill.len(), ENTRIES - 1);
        // The freed entry takes the next stream that maps to it.
        let next = 4 * ENTRIES as u32 + 1;
        ids.insert(next, 7);
        assert_eq!(ids.get(next), Some(7));
        assert_eq!(ids.spill.len(), ENTRIES - 1);
        assert_eq!(ids.get(0), None, "stream 0 is never a request's");
    }

    #[test]
    fn ids_of_one_stream_at_a_time_stay_in_the_table() {
        let mut ids = Ids::default();
        for k in 0..10_000u32 {
            let id = 2 * k + 1;
            ids.insert(id, 0);
            assert_eq!(ids.get(id), Some(0));
            ids.remove(id);
            assert_eq!(ids.get(id), None);
        }
        assert!(ids.spill.is_empty());
    }
}
