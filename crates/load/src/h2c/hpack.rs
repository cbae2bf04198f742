//! HPACK (RFC 7541) for the load engine's h2c client.
//!
//! - [`Decoder`]: a complete decoder for the answers' header blocks: indexed
//!   fields, the three kinds of literals, integers of any prefix, raw and
//!   Huffman strings ([`super::huffman`]), the dynamic table with eviction
//!   and size updates. It keeps the dynamic table in step with the server for
//!   every block, but decodes a literal's value only when the caller asks for
//!   its name or the field enters the table, so skipping `date` or `server`
//!   costs no Huffman decoding. A value whose code is one of the last few
//!   decoded ([`Memo`]) is not decoded again: nginx indexes `server`, `date`
//!   and `content-type` in every answer, which then costs no Huffman decoding
//!   but once a second for `date`. A block that repeats the last one and is
//!   known to leave the table as it is ([`repeat`]) is not decoded at all.
//! - [`encode_request`]: a request's header block as literals without indexing
//!   (names from the static table where it has them), encoded once before the
//!   run: it needs no encoder state, so the same bytes are valid on every
//!   connection and a request costs a copy.

use std::collections::VecDeque;

use self::repeat::Repeat;
use super::huffman;

mod repeat;

/// The dynamic table size an endpoint may use before it says otherwise (§6.5.2 of RFC 9113).
pub const DEFAULT_TABLE_SIZE: usize = 4096;
/// Longest string accepted (a header block is at most 1 MiB here anyway).
const MAX_STRING: usize = 1 << 20;

/// Why a header block could not be decoded (a connection error: COMPRESSION_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HpackError {
    #[error("header block truncated")]
    Truncated,
    #[error("integer too large")]
    Overflow,
    #[error("index {0} is in neither table")]
    BadIndex(usize),
    #[error("bad Huffman string")]
    BadHuffman,
    #[error("table size update not at the start of a block, or above the limit")]
    BadSizeUpdate,
    #[error("string too long")]
    TooLong,
}

/// The static table (RFC 7541 Appendix A), index 1 first.
pub const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// One dynamic table entry: name and value in one allocation.
#[derive(Debug)]
struct Entry {
    data: Vec<u8>,
    name_len: usize,
}

impl Entry {
    fn name(&self) -> &[u8] {
        &self.data[..self.name_len]
    }
    fn value(&self) -> &[u8] {
        &self.data[self.name_len..]
    }
    /// The size the table counts (§4.1).
    fn size(&self) -> usize {
        self.data.len() + 32
    }
}

/// The dynamic table: newest first.
#[derive(Debug)]
struct Table {
    entries: VecDeque<Entry>,
    size: usize,
    max: usize,
}

impl Table {
    /// Evicts the oldest entries until the size is at most `max`; the largest
    /// evicted buffer is kept in `spare` for the next insertion, or every
    /// evicted entry in `keep` (oldest first) when there is one.
    fn evict_to(&mut self, max: usize, spare: &mut Vec<u8>, mut keep: Option<&mut Vec<Entry>>) {
        while self.size > max {
            let e = self.entries.pop_back().expect("a positive size has entries");
            self.size -= e.size();
            if let Some(keep) = keep.as_mut() {
                keep.push(e);
            } else if e.data.capacity() > spare.capacity() {
                *spare = e.data;
            }
        }
    }

    /// Adds an entry whose name and value are already in `data` (the name its
    /// first `name_len` bytes), so nothing is copied again and an entry the
    /// insertion evicts may have lent the name. `spare` receives a buffer the
    /// eviction freed, which the next insertion fills instead of allocating:
    /// a server that indexes a `date` each answer costs no allocation per answer.
    /// Returns false for an entry larger than the whole table.
    fn insert(
        &mut self,
        data: Vec<u8>,
        name_len: usize,
        spare: &mut Vec<u8>,
        keep: Option<&mut Vec<Entry>>,
    ) -> bool {
        let size = data.len() + 32;
        if size > self.max {
            // Larger than the whole table: it empties the table and is not added (§4.4).
            self.evict_to(0, spare, keep);
            return false;
        }
        self.evict_to(self.max - size, spare, keep);
        self.entries.push_front(Entry { data, name_len });
        self.size += size;
        true
    }
}

/// Field `index` (1-based across both tables) as (name, value).
fn field(table: &Table, index: usize) -> Result<(&[u8], &[u8]), HpackError> {
    match index {
        0 => Err(HpackError::BadIndex(0)),
        1..=61 => {
            let (n, v) = STATIC[index - 1];
            Ok((n.as_bytes(), v.as_bytes()))
        }
        _ => table.entries.get(index - 62).map(|e| (e.name(), e.value())).ok_or(HpackError::BadIndex(index)),
    }
}

/// The HPACK decoder of one connection.
#[derive(Debug)]
pub struct Decoder {
    table: Table,
    /// The largest size the server may set (our SETTINGS_HEADER_TABLE_SIZE).
    limit: usize,
    name: Vec<u8>,
    values: Memo,
    /// A buffer an eviction freed, for the next entry ([`Table::insert`]).
    spare: Vec<u8>,
    repeat: Repeat,
}

impl Default for Decoder {
    fn default() -> Decoder {
        Decoder::new(DEFAULT_TABLE_SIZE)
    }
}

impl Decoder {
    pub fn new(limit: usize) -> Decoder {
        Decoder {
            table: Table { entries: VecDeque::new(), size: 0, max: limit },
            limit,
            name: Vec::new(),
            values: Memo::default(),
            spare: Vec::new(),
            repeat: Repeat::default(),
        }
    }

    /// The dynamic table's size as §4.1 counts it.
    #[cfg(test)]
    pub fn table_size(&self) -> usize {
        self.table.size
    }

    /// Blocks answered from [`repeat`] so far.
    #[cfg(test)]
    pub fn replays(&self) -> usize {
        self.repeat.replays
    }

    /// Decodes one complete header block. `f` gets each field whose name
    /// `wants` accepts, in order; other fields only update the table.
    pub fn decode(
        &mut self,
        block: &[u8],
        wants: impl Fn(&[u8]) -> bool,
        mut f: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        if let Some(fields) = self.repeat.replay(block) {
            for (name, value) in fields {
                if wants(name) {
                    f(name, value);
                }
            }
            return Ok(());
        }
        let record = self.repeat.start(block);
        match self.decode_block(block, wants, f, record) {
            Ok(()) => {
                if record {
                    self.repeat.finish(&self.table.entries);
                }
                Ok(())
            }
            Err(e) => {
                self.repeat.forget();
                Err(e)
            }
        }
    }

    /// [`Decoder::decode`]'s work; when `record`, every field (wanted or not) and every
    /// entry evicted go to `self.repeat` too.
    fn decode_block(
        &mut self,
        mut block: &[u8],
        wants: impl Fn(&[u8]) -> bool,
        mut f: impl FnMut(&[u8], &[u8]),
        record: bool,
    ) -> Result<(), HpackError> {
        let mut at_start = true;
        while let Some(&first) = block.first() {
            if first & 0x80 != 0 {
                // Indexed field (§6.1).
                let index = integer(&mut block, 7)?;
                let (name, value) = field(&self.table, index)?;
                if wants(name) {
                    f(name, value);
                }
                if record {
                    self.repeat.field(name, value);
                }
            } else if first & 0xe0 == 0x20 {
                // Dynamic table size update (§6.3): only before the first field.
                let size = integer(&mut block, 5)?;
                if !at_start || size > self.limit {
                    return Err(HpackError::BadSizeUpdate);
                }
                self.table.max = size;
                self.table.evict_to(size, &mut self.spare, None);
                self.repeat.pure = false;
                continue;
            } else {
                // Literal with incremental indexing (01, §6.2.1), without indexing (0000, §6.2.2)
                // or never indexed (0001, §6.2.3).
                let indexing = first & 0x40 != 0;
                let index = integer(&mut block, if indexing { 6 } else { 4 })?;
                if index == 0 {
                    self.name.clear();
                    let (huffman, raw) = string(&mut block)?;
                    put_string(huffman, raw, &mut self.name)?;
                }
                let (huffman, raw) = string(&mut block)?;
                let name = if index == 0 { &self.name[..] } else { field(&self.table, index)?.0 };
                let wanted = wants(name);
                if wanted || indexing || record {
                    let value = if huffman {
                        self.values.decode(raw).map_err(|_| HpackError::BadHuffman)?
                    } else {
                        raw
                    };
                    if wanted {
                        f(name, value);
                    }
                    if record {
                        self.repeat.field(name, value);
                    }
                    if indexing {
                        // The name may live in an entry the insertion evicts: the new entry's
                        // bytes are gathered first, into the buffer an earlier eviction left.
                        let mut data = std::mem::take(&mut self.spare);
                        data.clear();
                        data.extend_from_slice(name);
                        data.extend_from_slice(value);
                        let name_len = name.len();
                        let keep = record.then_some(&mut self.repeat.evicted);
                        if self.table.insert(data, name_len, &mut self.spare, keep) {
                            self.repeat.inserts += 1;
                        } else {
                            self.repeat.pure = false;
                        }
                    }
                }
            }
            at_start = false;
        }
        Ok(())
    }
}

/// How many decoded values [`Memo`] keeps: more than the Huffman-coded
/// values a server typically indexes in each answer.
const MEMO_SLOTS: usize = 4;
/// Longer codes are decoded every time, into one buffer, so the memo holds
/// no more than a few hundred octets whatever a server sends.
const MEMO_LONGEST: usize = 128;

/// The last few Huffman-coded values decoded, by their code: a server sends
/// the same octets for the same value, so a repeated code is answered from
/// here. Slots are replaced in turn; one whose decoding failed is left empty.
#[derive(Debug, Default)]
struct Memo {
    slots: [(Vec<u8>, Vec<u8>); MEMO_SLOTS],
    next: usize,
    long: Vec<u8>,
}

impl Memo {
    /// The octets `code` decodes to.
    fn decode(&mut self, code: &[u8]) -> Result<&[u8], huffman::BadHuffman> {
        if code.len() > MEMO_LONGEST {
            self.long.clear();
            huffman::decode(code, &mut self.long)?;
            return Ok(&self.long);
        }
        let i = match self.slots.iter().position(|(c, _)| c.as_slice() == code) {
            // An empty slot's code is empty too, but its octets may be a failed decoding's.
            Some(i) if !code.is_empty() => i,
            _ => {
                let i = self.next;
                self.next = (i + 1) % MEMO_SLOTS;
                let (c, v) = &mut self.slots[i];
                c.clear();
                v.clear();
                huffman::decode(code, v)?;
                c.extend_from_slice(code);
                i
            }
        };
        Ok(&self.slots[i].1)
    }
}

/// Reads an integer with an `n`-bit prefix (§5.1), advancing `block`.
fn integer(block: &mut &[u8], n: u32) -> Result<usize, HpackError> {
    let mask = (1usize << n) - 1;
    let (&first, mut rest) = block.split_first().ok_or(HpackError::Truncated)?;
    let mut value = usize::from(first) & mask;
    if value == mask {
        let mut shift = 0;
        loop {
            let (&b, r) = rest.split_first().ok_or(HpackError::Truncated)?;
            rest = r;
            if shift > 28 {
                return Err(HpackError::Overflow);
            }
            value += usize::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
    }
    *block = rest;
    Ok(value)
}

/// Reads a string literal's header and octets (§5.2): (Huffman-coded, raw octets).
fn string<'a>(block: &mut &'a [u8]) -> Result<(bool, &'a [u8]), HpackError> {
    let huffman = block.first().ok_or(HpackError::Truncated)? & 0x80 != 0;
    let len = integer(block, 7)?;
    if len > MAX_STRING {
        return Err(HpackError::TooLong);
    }
    if block.len() < len {
        return Err(HpackError::Truncated);
    }
    let (raw, rest) = block.split_at(len);
    *block = rest;
    Ok((huffman, raw))
}

fn put_string(huffman: bool, raw: &[u8], out: &mut Vec<u8>) -> Result<(), HpackError> {
    if huffman {
        huffman::decode(raw, out).map_err(|_| HpackError::BadHuffman)
    } else {
        out.extend_from_slice(raw);
        Ok(())
    }
}

/// Writes an integer with an `n`-bit prefix; `flags` fills the bits above it.
fn put_integer(out: &mut Vec<u8>, flags: u8, n: u32, mut value: usize) {
    let mask = (1usize << n) - 1;
    if value < mask {
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | mask as u8);
    value -= mask;
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Writes a raw (not Huffman-coded) string literal.
fn put_raw(out: &mut Vec<u8>, s: &[u8]) {
    put_integer(out, 0, 7, s.len());
    out.extend_from_slice(s);
}

/// Writes a literal without indexing: by static name index when there is one. A request's
/// fields after [`encode_request_into`]'s are written so (names in lower case).
pub fn put_literal(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    if let Some(i) = STATIC.iter().position(|(n, _)| n.as_bytes() == name) {
        put_integer(out, 0, 4, i + 1);
    } else {
        out.push(0);
        put_raw(out, name);
    }
    put_raw(out, value);
}

/// A request's header block: the pseudo-headers (`:scheme` is `http`, for
/// h2c), then `headers` (names in lower case, as HTTP/2 wants them). Uses
/// the static table's full entries for `GET`, `POST`, `http` and `/`, and
/// literals without indexing for the rest, so it is valid on any connection.
pub fn encode_request(method: &str, authority: &str, path: &str, headers: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    encode_request_into(&mut out, method, authority, path, headers);
    out
}

/// [`encode_request`], appended to `out` (a buffer kept between requests).
pub fn encode_request_into(
    out: &mut Vec<u8>,
    method: &str,
    authority: &str,
    path: &str,
    headers: &[(&str, &[u8])],
) {
    match method {
        "GET" => out.push(0x82),
        "POST" => out.push(0x83),
        m => put_literal(out, b":method", m.as_bytes()),
    }
    out.push(0x86); // :scheme http
    if path == "/" {
        out.push(0x84);
    } else {
        put_literal(out, b":path", path.as_bytes());
    }
    put_literal(out, b":authority", authority.as_bytes());
    for (name, value) in headers {
        put_literal(out, name.as_bytes(), value);
    }
}

/// A header block of literals without indexing (a test server's answers).
#[cfg(test)]
pub fn encode_fields(fields: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, value) in fields {
        put_literal(&mut out, name.as_bytes(), value);
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        let s: Vec<u8> = s.bytes().filter(u8::is_ascii_hexdigit).collect();
        s.chunks(2).map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap()).collect()
    }

    fn all(d: &mut Decoder, block: &[u8]) -> Result<Vec<(String, String)>, HpackError> {
        let mut v = Vec::new();
        d.decode(
            block,
            |_| true,
            |n, x| v.push((String::from_utf8_lossy(n).into_owned(), String::from_utf8_lossy(x).into_owned())),
        )?;
        Ok(v)
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
    }

    #[test]
    fn rfc7541_c3_requests_without_huffman() {
        let mut d = Decoder::default();
        let r = all(&mut d, &unhex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d")).unwrap();
        let first =
            [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com")];
        assert_eq!(r, pairs(&first));
        assert_eq!(d.table_size(), 57);
        let r = all(&mut d, &unhex("8286 84be 5808 6e6f 2d63 6163 6865")).unwrap();
        assert_eq!(r[4], pairs(&[("cache-control", "no-cache")])[0]);
        let r =
            all(&mut d, &unhex("8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65"))
                .unwrap();
        let third = [
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/index.html"),
            (":authority", "www.example.com"),
            ("custom-key", "custom-value"),
        ];
        assert_eq!(r, pairs(&third));
        assert_eq!(d.table_size(), 164);
    }

    #[test]
    fn rfc7541_c4_requests_with_huffman() {
        let mut d = Decoder::default();
        let r = all(&mut d, &unhex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff")).unwrap();
        assert_eq!(r[3], pairs(&[(":authority", "www.example.com")])[0]);
        let r = all(&mut d, &unhex("8286 84be 5886 a8eb 1064 9cbf")).unwrap();
        assert_eq!(r[4], pairs(&[("cache-control", "no-cache")])[0]);
        let r = all(&mut d, &unhex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf")).unwrap();
        assert_eq!(r[4], pairs(&[("custom-key", "custom-value")])[0]);
        assert_eq!(d.table_size(), 164);
    }

    #[test]
    fn rfc7541_c6_responses_with_huffman_and_eviction() {
        // A 256-octet table: the responses evict entries.
        let mut d = Decoder::new(256);
        let r = all(
            &mut d,
            &unhex(
                "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 \
                 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
            ),
        )
        .unwrap();
        let first = [
            (":status", "302"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ];
        assert_eq!(r, pairs(&first));
        assert_eq!(d.table_size(), 222);
        let r = all(&mut d, &unhex("4883 640e ffc1 c0bf")).unwrap();
        let second = [
            (":status", "307"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ];
        assert_eq!(r, pairs(&second));
        assert_eq!(d.table_size(), 222);
        let r = all(
            &mut d,
            &unhex(
                "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab \
                 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f \
                 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
            ),
        )
        .unwrap();
        let third = [
            (":status", "200"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
            ("location", "https://www.example.com"),
            ("content-encoding", "gzip"),
            ("set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"),
        ];
        assert_eq!(r, pairs(&third));
        assert_eq!(d.table_size(), 215);
    }

    #[test]
    fn only_wanted_fields_are_handed_over_and_the_table_stays_in_step() {
        let mut d = Decoder::new(256);
        let mut got = Vec::new();
        let block = unhex(
            "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 \
             2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
        );
        d.decode(&block, |n| n == b":status", |n, v| got.push((n.to_vec(), v.to_vec()))).unwrap();
        assert_eq!(got, [(b":status".to_vec(), b"302".to_vec())]);
        assert_eq!(d.table_size(), 222);
        got.clear();
        d.decode(
            &unhex("4883 640e ffc1 c0bf"),
            |n| n == b"location",
            |n, v| got.push((n.to_vec(), v.to_vec())),
        )
        .unwrap();
        assert_eq!(got, [(b"location".to_vec(), b"https://www.example.com".to_vec())]);
    }

    #[test]
    fn an_entry_may_take_its_name_from_the_entry_it_evicts() {
        // A 64-byte table holds one of these entries: each new one names the entry it replaces
        // (index 62), whose bytes are gone once it is evicted, and reuses its buffer.
        let mut d = Decoder::new(64);
        assert_eq!(all(&mut d, b"\x40\x03x-a\x011").unwrap(), pairs(&[("x-a", "1")]));
        assert_eq!(d.table_size(), 36);
        for value in ["22", "333", "4", "55555"] {
            let mut block = vec![0x7e, value.len() as u8];
            block.extend_from_slice(value.as_bytes());
            block.push(0xbe);
            assert_eq!(all(&mut d, &block).unwrap(), pairs(&[("x-a", value), ("x-a", value)]));
            assert_eq!(d.table_size(), 35 + value.len());
        }
        assert!(matches!(all(&mut d, b"\xbf"), Err(HpackError::BadIndex(63))));
    }

    /// A literal `date` without indexing (static name 33) whose value is Huffman-coded.
    fn huffman_date(value: &[u8]) -> Vec<u8> {
        let mut code = Vec::new();
        super::huffman::encode(value, &mut code);
        let mut block = Vec::new();
        put_integer(&mut block, 0x00, 4, 33);
        put_integer(&mut block, 0x80, 7, code.len());
        block.extend_from_slice(&code);
        block
    }

    #[test]
    fn a_repeated_huffman_value_decodes_the_same_and_a_bad_one_is_not_taken_for_it() {
        let mut d = Decoder::default();
        let one = b"Tue, 01 Dec 2026 17:00:00 GMT";
        let two = b"Tue, 01 Dec 2026 17:00:01 GMT";
        for value in [&one[..], one, two, two, one] {
            let got = all(&mut d, &huffman_date(value)).unwrap();
            assert_eq!(got, [("date".to_string(), String::from_utf8(value.to_vec()).unwrap())]);
        }
        // The code of `one` with its last octet's padding broken: refused, and the value
        // decoded before it is neither handed over nor kept as this code's octets.
        let mut bad = huffman_date(one);
        *bad.last_mut().unwrap() &= 0xf0;
        assert!(matches!(all(&mut d, &bad), Err(HpackError::BadHuffman)));
        assert!(matches!(all(&mut d, &bad), Err(HpackError::BadHuffman)));
        assert_eq!(all(&mut d, &huffman_date(one)).unwrap()[0].1.as_bytes(), one);
        // A value too long for the memo, between two that are in it.
        let long = [b'x'; 400];
        for value in [&long[..], one, &long, two, &long] {
            assert_eq!(all(&mut d, &huffman_date(value)).unwrap()[0].1.as_bytes(), value);
        }
        // The empty code decodes to the empty value, even right after a refusal.
        assert!(matches!(all(&mut d, &bad), Err(HpackError::BadHuffman)));
        assert_eq!(all(&mut d, &huffman_date(b"")).unwrap()[0].1, "");
    }

    #[test]
    fn size_updates_and_refusals() {
        let mut d = Decoder::default();
        all(&mut d, &unhex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d")).unwrap();
        assert_eq!(d.table_size(), 57);
        // A size update to 0 empties the table; then index 62 is gone.
        all(&mut d, &[0x20, 0x82]).unwrap();
        assert_eq!(d.table_size(), 0);
        assert_eq!(all(&mut d, &[0xbe]), Err(HpackError::BadIndex(62)));
        // Above our limit, or after a field: refused.
        assert_eq!(all(&mut d, &[0x3f, 0xe2, 0x1f]), Err(HpackError::BadSizeUpdate));
        assert_eq!(all(&mut d, &[0x82, 0x20]), Err(HpackError::BadSizeUpdate));
        assert_eq!(all(&mut d, &[0x80]), Err(HpackError::BadIndex(0)));
        assert_eq!(all(&mut d, &[0x41, 0x05, b'a']), Err(HpackError::Truncated));
        assert_eq!(all(&mut d, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), Err(HpackError::Overflow));
        assert_eq!(all(&mut d, &[0x41, 0x81, 0x00]), Err(HpackError::BadHuffman));
    }

    #[test]
    fn integers_round_trip_at_every_prefix() {
        for n in 1..=8 {
            for v in [0, 1, 30, 31, 127, 128, 255, 256, 1337, 16_383, 1 << 20] {
                let mut out = Vec::new();
                put_integer(&mut out, 0, n, v);
                let mut s = &out[..];
                assert_eq!(integer(&mut s, n), Ok(v), "prefix {n}, value {v}");
                assert!(s.is_empty());
            }
        }
        // RFC 7541 C.1.2: 1337 with a 5-bit prefix.
        let mut out = Vec::new();
        put_integer(&mut out, 0, 5, 1337);
        assert_eq!(out, [0x1f, 0x9a, 0x0a]);
    }

    #[test]
    fn requests_encode_to_what_the_decoder_reads() {
        let block = encode_request(
            "POST",
            "127.0.0.1:8080",
            "/sort.v1.SortService/BubbleSort",
            &[("user-agent", b"stackbench/0.1"), ("content-type", b"application/grpc"), ("te", b"trailers")],
        );
        let mut d = Decoder::default();
        let got = all(&mut d, &block).unwrap();
        let want = [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", "/sort.v1.SortService/BubbleSort"),
            (":authority", "127.0.0.1:8080"),
            ("user-agent", "stackbench/0.1"),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
        ];
        assert_eq!(got, pairs(&want));
        assert_eq!(d.table_size(), 0, "literals without indexing leave the table alone");
        let block = encode_request("DELETE", "h", "/", &[]);
        assert_eq!(all(&mut d, &block).unwrap()[0], pairs(&[(":method", "DELETE")])[0]);
    }

    proptest! {
        #[test]
        fn any_request_round_trips(
            path in "/[a-z0-9/._-]{0,300}",
            value in proptest::collection::vec(32u8..127, 0..200),
        ) {
            let block = encode_request("GET", "example:1", &path, &[("x-custom", &value)]);
            let got = all(&mut Decoder::default(), &block).unwrap();
            prop_assert_eq!(&got[2].1, &path);
            prop_assert_eq!(got[4].1.as_bytes(), &value[..]);
        }

        #[test]
        fn huffman_values_in_any_order_decode_to_themselves(
            // More values than the memo keeps, so some are evicted and decoded again.
            // Up to 100 octets: codes on both sides of MEMO_LONGEST.
            picks in proptest::collection::vec(0usize..6, 1..40),
            values in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..100), 6),
        ) {
            let mut d = Decoder::default();
            for i in picks {
                let mut got = Vec::new();
                d.decode(&huffman_date(&values[i]), |_| true, |_, v| got.push(v.to_vec())).unwrap();
                prop_assert_eq!(got, vec![values[i].clone()]);
            }
        }

        #[test]
        fn arbitrary_blocks_never_panic(block in proptest::collection::vec(any::<u8>(), 0..128)) {
            let mut d = Decoder::new(512);
            let _ = all(&mut d, &block);
            prop_assert!(d.table_size() <= 512);
        }
    }
}
