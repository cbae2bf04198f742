//! A header block that repeats the last one, answered without decoding it.
//!
//! A server sends the same octets for the same answer: nginx's h2c heads are
//! the same block for every answer of a second (`server`, `date`,
//! `content-type` and `content-length`, each a literal with incremental
//! indexing). Once such a block has been decoded without changing the dynamic
//! table (each entry it inserted pushed out an equal one, as happens when the
//! table holds nothing but copies of it), decoding it again gives the same
//! fields and again leaves the table as it is. So the decoder keeps the last
//! block's octets and, while it is decoded a second time, every field it
//! gave; if that decoding left the table unchanged, the next copies of the
//! block are answered from the fields kept, until any other block comes.

use super::Entry;
use std::collections::VecDeque;

/// Blocks longer than this are never kept, nor fields that decode to more octets than
/// `MOST_OCTETS` (indexed fields may repeat a large entry many times): a connection holds no
/// more than a few KiB here, whatever a server sends.
const LONGEST: usize = 512;
const MOST_OCTETS: usize = 8 * 1024;

/// The last block, and what its last decoding gave.
#[derive(Debug, Default)]
pub(super) struct Repeat {
    block: Vec<u8>,
    /// Every field of the last decoding of `block`, names and values one after the other.
    octets: Vec<u8>,
    /// `(name length, value length)` of each field in `octets`.
    fields: Vec<(usize, usize)>,
    /// Entries the decoding being recorded evicted, oldest first.
    pub(super) evicted: Vec<Entry>,
    /// The decoding being recorded inserted this many entries.
    pub(super) inserts: usize,
    /// The decoding being recorded may have left the table as it was (no size update, no
    /// entry larger than the table).
    pub(super) pure: bool,
    /// Decoding `block` leaves the table as it is and gives `fields`.
    fixed: bool,
    #[cfg(test)]
    pub(super) replays: usize,
    /// Tests: never keep a block (the plain decoder, to compare with).
    #[cfg(test)]
    pub(super) off: bool,
}

impl Repeat {
    /// The fields to answer `block` with, when they are known.
    pub(super) fn replay(&mut self, block: &[u8]) -> Option<impl Iterator<Item = (&[u8], &[u8])>> {
        if !self.fixed || block != self.block.as_slice() {
            return None;
        }
        #[cfg(test)]
        {
            self.replays += 1;
        }
        let mut at = 0;
        let octets = &self.octets;
        Some(self.fields.iter().map(move |&(n, v)| {
            let field = (&octets[at..at + n], &octets[at + n..at + n + v]);
            at += n + v;
            field
        }))
    }

    /// Starts a decoding of `block`; returns whether it is to be recorded (the block repeats
    /// the last one, which is not known to leave the table as it is).
    pub(super) fn start(&mut self, block: &[u8]) -> bool {
        self.fixed = false;
        self.fields.clear();
        self.octets.clear();
        self.evicted.clear();
        self.inserts = 0;
        self.pure = true;
        #[cfg(test)]
        if self.off {
            self.block.clear();
            return false;
        }
        if block.len() > LONGEST {
            self.block.clear();
            return false;
        }
        if block == self.block.as_slice() && !block.is_empty() {
            return true;
        }
        self.block.clear();
        self.block.extend_from_slice(block);
        false
    }

    /// A field of the decoding being recorded.
    pub(super) fn field(&mut self, name: &[u8], value: &[u8]) {
        if self.octets.len() + name.len() + value.len() > MOST_OCTETS {
            self.pure = false; // not kept: the block will be decoded every time
            return;
        }
        self.octets.extend_from_slice(name);
        self.octets.extend_from_slice(value);
        self.fields.push((name.len(), value.len()));
    }

    /// The recorded decoding succeeded and left `table`: is it the table it started from?
    /// Before it, the table was what follows its new entries, then what it evicted.
    pub(super) fn finish(&mut self, table: &VecDeque<Entry>) {
        let (k, l) = (self.inserts, table.len());
        self.fixed = self.pure
            && self.evicted.len() == k
            && l >= k
            && (0..l).all(|j| {
                let before = if j + k < l { &table[j + k] } else { &self.evicted[k - 1 - (j + k - l)] };
                before.name_len == table[j].name_len && before.data == table[j].data
            });
        self.evicted.clear();
    }

    /// A decoding failed: nothing kept is to be trusted.
    pub(super) fn forget(&mut self) {
        self.fixed = false;
        self.block.clear();
        self.evicted.clear();
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::{Decoder, HpackError, huffman, put_integer, put_raw};

    type Fields = Vec<(Vec<u8>, Vec<u8>)>;

    /// Every field a decoder hands over for `block`, with a `wants` that takes `:status`,
    /// `content-type` and names starting with `x`.
    fn fields(d: &mut Decoder, block: &[u8]) -> Result<Fields, HpackError> {
        let mut v = Vec::new();
        d.decode(
            block,
            |n| n == b":status" || n == b"content-type" || n.first() == Some(&b'x'),
            |n, x| v.push((n.to_vec(), x.to_vec())),
        )?;
        Ok(v)
    }

    fn huffman_string(out: &mut Vec<u8>, s: &[u8]) {
        let mut code = Vec::new();
        huffman::encode(s, &mut code);
        put_integer(out, 0x80, 7, code.len());
        out.extend_from_slice(&code);
    }

    /// An nginx h2c answer head: `:status 200` indexed, then `server`, `date`, `content-type`
    /// and `content-length` as literals with incremental indexing, Huffman-coded values.
    fn nginx_head(date: &[u8]) -> Vec<u8> {
        let mut out = vec![0x88];
        for (index, value) in [(54, &b"nginx"[..]), (33, date), (31, b"application/json"), (28, b"11")] {
            put_integer(&mut out, 0x40, 6, index);
            huffman_string(&mut out, value);
        }
        out
    }

    fn want(v: &[(&str, &str)]) -> Fields {
        v.iter().map(|(n, x)| (n.as_bytes().to_vec(), x.as_bytes().to_vec())).collect()
    }

    #[test]
    fn a_repeated_nginx_head_is_answered_from_the_last_decoding_once_the_table_holds_only_it() {
        let mut d = Decoder::default();
        let mut plain = Decoder::default();
        plain.repeat.off = true;
        let expected = want(&[(":status", "200"), ("content-type", "application/json")]);
        for date in [&b"Tue, 01 Dec 2026 21:00:00 GMT"[..], b"Tue, 01 Dec 2026 21:00:01 GMT"] {
            let before = d.replays();
            let head = nginx_head(date);
            for i in 0..60 {
                assert_eq!(fields(&mut d, &head).unwrap(), expected, "answer {i}");
                assert_eq!(fields(&mut plain, &head).unwrap(), expected);
                assert_eq!(d.table_size(), plain.table_size());
            }
            // 4,096 octets hold 18 heads and a part of one (216 octets each): the old date is
            // gone after 19 heads, the 20th finds the table unchanged, and the other 40 replay.
            assert_eq!(d.replays() - before, 40);
        }
        // A block that is not the last one is decoded, and so is the last one after it.
        let other = nginx_head(b"Tue, 01 Dec 2026 21:00:02 GMT");
        let last = d.replays();
        assert_eq!(fields(&mut d, &other).unwrap(), expected);
        assert_eq!(fields(&mut d, &nginx_head(b"Tue, 01 Dec 2026 21:00:01 GMT")).unwrap(), expected);
        assert_eq!(d.replays(), last);
        assert_eq!(plain.replays(), 0);
    }

    #[test]
    fn indexed_fields_are_replayed_as_they_were_decoded() {
        // A literal with indexing, then a reference to it: the same block again refers to the
        // same entry only because the table is the same.
        let mut block = Vec::new();
        put_integer(&mut block, 0x40, 6, 0);
        put_raw(&mut block, b"x-a");
        put_raw(&mut block, b"1");
        put_integer(&mut block, 0x80, 7, 62); // the newest entry: x-a: 1
        let mut d = Decoder::new(41); // room for one entry (3 + 1 + 32 = 36 octets)
        for _ in 0..5 {
            assert_eq!(fields(&mut d, &block).unwrap(), want(&[("x-a", "1"), ("x-a", "1")]));
        }
        assert_eq!(d.replays(), 3);
        // A size update never leaves the table unchanged for certain: no replay.
        let mut sized = Vec::new();
        put_integer(&mut sized, 0x20, 5, 20);
        sized.extend_from_slice(&block);
        let r = d.replays();
        for _ in 0..3 {
            fields(&mut d, &sized).unwrap_err(); // x-a: 1 no longer fits: index 62 is gone
        }
        assert_eq!(d.replays(), r);
    }

    #[test]
    fn fields_of_many_octets_are_not_kept() {
        // 400 references to a 1,000-octet entry: 400 kB of fields from a 401-octet block.
        let mut insert = Vec::new();
        put_integer(&mut insert, 0x40, 6, 0);
        put_raw(&mut insert, b"x-big");
        put_raw(&mut insert, &[b'v'; 995]);
        let mut d = Decoder::new(4096);
        fields(&mut d, &insert).unwrap();
        let block = vec![0x80 | 0x3e; 400]; // index 62, one octet each
        for _ in 0..4 {
            assert_eq!(fields(&mut d, &block).unwrap().len(), 400);
        }
        assert_eq!(d.replays(), 0);
        assert!(d.repeat.octets.len() <= super::MOST_OCTETS);
    }

    /// One field of a generated block.
    #[derive(Debug, Clone)]
    enum Field {
        Indexed(usize),
        Literal { indexing: bool, name: Result<usize, Vec<u8>>, value: Vec<u8>, huffman: bool },
        Size(usize),
    }

    fn encode(block: &[Field]) -> Vec<u8> {
        let mut out = Vec::new();
        for f in block {
            match f {
                Field::Indexed(i) => put_integer(&mut out, 0x80, 7, *i),
                Field::Size(n) => put_integer(&mut out, 0x20, 5, *n),
                Field::Literal { indexing, name, value, huffman } => {
                    let (flags, n) = if *indexing { (0x40, 6) } else { (0, 4) };
                    match name {
                        Ok(i) => put_integer(&mut out, flags, n, *i),
                        Err(raw) => {
                            put_integer(&mut out, flags, n, 0);
                            put_raw(&mut out, raw);
                        }
                    }
                    if *huffman { huffman_string(&mut out, value) } else { put_raw(&mut out, value) }
                }
            }
        }
        out
    }

    fn field() -> impl Strategy<Value = Field> {
        let name = prop_oneof![
            (1usize..=61).prop_map(Ok),
            (62usize..68).prop_map(Ok),
            prop::sample::select(vec![&b"x-a"[..], b"x-b", b"content-type", b"y"])
                .prop_map(|n| Err(n.to_vec())),
        ];
        let value = prop::collection::vec(prop::sample::select(b"abc01 /".to_vec()), 0..12);
        prop_oneof![
            3 => (1usize..68).prop_map(Field::Indexed),
            6 => (any::<bool>(), name, value, any::<bool>())
                .prop_map(|(indexing, name, value, huffman)| Field::Literal { indexing, name, value, huffman }),
            1 => (0usize..300).prop_map(Field::Size),
        ]
    }

    proptest! {
        /// Whatever the blocks and however often they repeat, the decoder hands over what the
        /// plain decoder does, fails where it fails, and keeps the same table.
        #[test]
        fn repeats_decode_as_the_plain_decoder_does(
            limit in 40usize..400,
            pool in prop::collection::vec(prop::collection::vec(field(), 1..6), 1..4),
            picks in prop::collection::vec((0usize..4, 1usize..8), 1..30),
        ) {
            let blocks: Vec<Vec<u8>> = pool.iter().map(|b| encode(b)).collect();
            let mut d = Decoder::new(limit);
            let mut plain = Decoder::new(limit);
            plain.repeat.off = true;
            'run: for (pick, times) in picks {
                let block = &blocks[pick % blocks.len()];
                for _ in 0..times {
                    let (got, expected) = (fields(&mut d, block), fields(&mut plain, block));
                    prop_assert_eq!(&got, &expected);
                    prop_assert_eq!(d.table_size(), plain.table_size());
                    if expected.is_err() {
                        break 'run; // a connection error: the connection ends
                    }
                }
            }
        }
    }
}
