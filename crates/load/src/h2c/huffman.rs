//! HPACK's Huffman code (RFC 7541 §5.2 and Appendix B). The decoder walks the
//! code four bits at a time through a state table that is built at compile
//! time from the code table (nghttp2's method: a state is an inner node of
//! the code tree, and no code is shorter than five bits, so a nibble emits at
//! most one octet). It refuses EOS inside a string and padding that is longer
//! than seven bits or not made of ones (a prefix of EOS), as §5.2 requires.

/// A Huffman-coded string is malformed (EOS decoded, or bad padding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadHuffman;

/// Decodes `src` and appends the octets to `out`.
pub fn decode(src: &[u8], out: &mut Vec<u8>) -> Result<(), BadHuffman> {
    // The shortest code has five bits.
    out.reserve(src.len() * 8 / 5 + 1);
    let mut state = 0usize;
    for &byte in src {
        for nibble in [byte >> 4, byte & 0x0f] {
            let e = DECODE.next[state][usize::from(nibble)];
            if e & FAIL != 0 {
                return Err(BadHuffman);
            }
            if e & EMIT != 0 {
                out.push((e >> 8) as u8);
            }
            state = (e & 0xff) as usize;
        }
    }
    if DECODE.accept[state] { Ok(()) } else { Err(BadHuffman) }
}

/// Appends the Huffman code of `src` to `out`, padded with ones.
#[cfg(test)]
pub fn encode(src: &[u8], out: &mut Vec<u8>) {
    let mut acc: u64 = 0;
    let mut bits = 0u32;
    for &b in src {
        let len = u32::from(LENGTHS[usize::from(b)]);
        acc = (acc << len) | u64::from(CODES[usize::from(b)]);
        bits += len;
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
        acc &= (1 << bits) - 1;
    }
    if bits > 0 {
        out.push(((acc << (8 - bits)) | (0xff >> bits)) as u8);
    }
}

const LEAF: u16 = 0x8000;
const EOS: u16 = 256;
const EMIT: u32 = 1 << 16;
const FAIL: u32 = 1 << 17;

/// The nibble decoder: `next[state][nibble]` is the next state (low 8 bits),
/// the octet emitted (bits 8..16) with [`EMIT`], or [`FAIL`]; `accept[state]`
/// says whether a string may end in that state.
struct Table {
    next: [[u32; 16]; 256],
    accept: [bool; 256],
}

static DECODE: Table = build();

/// The code tree: `child[node][bit]` is an inner node's index, or `LEAF | symbol`.
/// It has exactly 256 inner nodes (257 symbols); node 0 is the root.
const fn build() -> Table {
    let mut child = [[0u16; 2]; 256];
    let mut depth = [0u8; 256];
    let mut ones = [true; 256];
    let mut nodes = 1usize;
    let mut sym = 0usize;
    while sym < 257 {
        let len = LENGTHS[sym] as u32;
        let code = CODES[sym];
        let mut node = 0usize;
        let mut i = 0;
        while i < len {
            let bit = ((code >> (len - 1 - i)) & 1) as usize;
            if i == len - 1 {
                assert!(child[node][bit] == 0, "the code is prefix-free");
                child[node][bit] = LEAF | sym as u16;
            } else {
                if child[node][bit] == 0 {
                    assert!(nodes < 256, "257 symbols make 256 inner nodes");
                    child[node][bit] = nodes as u16;
                    depth[nodes] = depth[node] + 1;
                    ones[nodes] = ones[node] && bit == 1;
                    nodes += 1;
                }
                assert!(child[node][bit] & LEAF == 0, "the code is prefix-free");
                node = child[node][bit] as usize;
            }
            i += 1;
        }
        sym += 1;
    }
    assert!(nodes == 256, "257 symbols make 256 inner nodes");

    let mut next = [[0u32; 16]; 256];
    let mut accept = [false; 256];
    let mut state = 0usize;
    while state < 256 {
        // A string may end inside a code only on at most 7 one-bits (a prefix of EOS).
        accept[state] = ones[state] && depth[state] <= 7;
        let mut nibble = 0usize;
        while nibble < 16 {
            let mut node = state;
            let mut entry = 0u32;
            let mut b = 0;
            while b < 4 {
                let c = child[node][(nibble >> (3 - b)) & 1];
                if c & LEAF != 0 {
                    let sym = c & !LEAF;
                    if sym == EOS {
                        entry |= FAIL;
                    } else {
                        entry |= EMIT | ((sym as u32) << 8);
                    }
                    node = 0;
                } else {
                    node = c as usize;
                }
                b += 1;
            }
            next[state][nibble] = entry | node as u32;
            nibble += 1;
        }
        state += 1;
    }
    Table { next, accept }
}

/// The code of each symbol (255 octets and EOS), right-aligned (RFC 7541 Appendix B).
#[allow(clippy::unreadable_literal)] // spelled as in the RFC's table
const CODES: [u32; 257] = [
    0x1ff8, 0x7fffd8, 0xfffffe2, 0xfffffe3, 0xfffffe4, 0xfffffe5, 0xfffffe6, 0xfffffe7, 0xfffffe8, 0xffffea,
    0x3ffffffc, 0xfffffe9, 0xfffffea, 0x3ffffffd, 0xfffffeb, 0xfffffec, 0xfffffed, 0xfffffee, 0xfffffef,
    0xffffff0, 0xffffff1, 0xffffff2, 0x3ffffffe, 0xffffff3, 0xffffff4, 0xffffff5, 0xffffff6, 0xffffff7,
    0xffffff8, 0xffffff9, 0xffffffa, 0xffffffb, 0x14, 0x3f8, 0x3f9, 0xffa, 0x1ff9, 0x15, 0xf8, 0x7fa, 0x3fa,
    0x3fb, 0xf9, 0x7fb, 0xfa, 0x16, 0x17, 0x18, 0x0, 0x1, 0x2, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
    0x5c, 0xfb, 0x7ffc, 0x20, 0xffb, 0x3fc, 0x1ffa, 0x21, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62, 0x63, 0x64,
    0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0xfc, 0x73, 0xfd,
    0x1ffb, 0x7fff0, 0x1ffc, 0x3ffc, 0x22, 0x7ffd, 0x3, 0x23, 0x4, 0x24, 0x5, 0x25, 0x26, 0x27, 0x6, 0x74,
    0x75, 0x28, 0x29, 0x2a, 0x7, 0x2b, 0x76, 0x2c, 0x8, 0x9, 0x2d, 0x77, 0x78, 0x79, 0x7a, 0x7b, 0x7ffe,
    0x7fc, 0x3ffd, 0x1ffd, 0xffffffc, 0xfffe6, 0x3fffd2, 0xfffe7, 0xfffe8, 0x3fffd3, 0x3fffd4, 0x3fffd5,
    0x7fffd9, 0x3fffd6, 0x7fffda, 0x7fffdb, 0x7fffdc, 0x7fffdd, 0x7fffde, 0xffffeb, 0x7fffdf, 0xffffec,
    0xffffed, 0x3fffd7, 0x7fffe0, 0xffffee, 0x7fffe1, 0x7fffe2, 0x7fffe3, 0x7fffe4, 0x1fffdc, 0x3fffd8,
    0x7fffe5, 0x3fffd9, 0x7fffe6, 0x7fffe7, 0xffffef, 0x3fffda, 0x1fffdd, 0xfffe9, 0x3fffdb, 0x3fffdc,
    0x7fffe8, 0x7fffe9, 0x1fffde, 0x7fffea, 0x3fffdd, 0x3fffde, 0xfffff0, 0x1fffdf, 0x3fffdf, 0x7fffeb,
    0x7fffec, 0x1fffe0, 0x1fffe1, 0x3fffe0, 0x1fffe2, 0x7fffed, 0x3fffe1, 0x7fffee, 0x7fffef, 0xfffea,
    0x3fffe2, 0x3fffe3, 0x3fffe4, 0x7ffff0, 0x3fffe5, 0x3fffe6, 0x7ffff1, 0x3ffffe0, 0x3ffffe1, 0xfffeb,
    0x7fff1, 0x3fffe7, 0x7ffff2, 0x3fffe8, 0x1ffffec, 0x3ffffe2, 0x3ffffe3, 0x3ffffe4, 0x7ffffde, 0x7ffffdf,
    0x3ffffe5, 0xfffff1, 0x1ffffed, 0x7fff2, 0x1fffe3, 0x3ffffe6, 0x7ffffe0, 0x7ffffe1, 0x3ffffe7, 0x7ffffe2,
    0xfffff2, 0x1fffe4, 0x1fffe5, 0x3ffffe8, 0x3ffffe9, 0xffffffd, 0x7ffffe3, 0x7ffffe4, 0x7ffffe5, 0xfffec,
    0xfffff3, 0xfffed, 0x1fffe6, 0x3fffe9, 0x1fffe7, 0x1fffe8, 0x7ffff3, 0x3fffea, 0x3fffeb, 0x1ffffee,
    0x1ffffef, 0xfffff4, 0xfffff5, 0x3ffffea, 0x7ffff4, 0x3ffffeb, 0x7ffffe6, 0x3ffffec, 0x3ffffed,
    0x7ffffe7, 0x7ffffe8, 0x7ffffe9, 0x7ffffea, 0x7ffffeb, 0xffffffe, 0x7ffffec, 0x7ffffed, 0x7ffffee,
    0x7ffffef, 0x7fffff0, 0x3ffffee, 0x3fffffff,
];

/// The length in bits of each symbol's code.
const LENGTHS: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28,
    28, 28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6,
    6, 6, 7, 8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7,
    8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7,
    15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24,
    23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23,
    23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26,
    26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20,
    21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27,
    27, 27, 26, 30,
];

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        let s: Vec<u8> = s.bytes().filter(u8::is_ascii_hexdigit).collect();
        s.chunks(2).map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap()).collect()
    }

    fn dec(src: &[u8]) -> Result<Vec<u8>, BadHuffman> {
        let mut out = Vec::new();
        decode(src, &mut out).map(|()| out)
    }

    #[test]
    fn rfc7541_examples() {
        // Appendix C.4.1 and C.6.1.
        assert_eq!(dec(&unhex("f1e3 c2e5 f23a 6ba0 ab90 f4ff")).unwrap(), b"www.example.com");
        assert_eq!(dec(&unhex("a8eb 1064 9cbf")).unwrap(), b"no-cache");
        assert_eq!(dec(&unhex("aec3 771a 4b")).unwrap(), b"private");
        assert_eq!(
            dec(&unhex("9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3")).unwrap(),
            b"https://www.example.com"
        );
        let mut e = Vec::new();
        encode(b"www.example.com", &mut e);
        assert_eq!(e, unhex("f1e3 c2e5 f23a 6ba0 ab90 f4ff"));
        assert_eq!(dec(b"").unwrap(), b"");
    }

    #[test]
    fn refuses_eos_and_bad_padding() {
        let mut good = Vec::new();
        encode(b"www.example.com", &mut good);
        let mut bad = good.clone();
        *bad.last_mut().unwrap() &= 0xfe; // padding that is not all ones
        assert_eq!(dec(&bad), Err(BadHuffman));
        assert_eq!(dec(&[0xff, 0xff, 0xff, 0xff]), Err(BadHuffman)); // EOS (30 ones)
        // '0' is 00000 (5 bits): one byte of it leaves 3 bits of padding, fine; a whole
        // byte of padding after a symbol that ends on a byte boundary is too long.
        assert_eq!(dec(&[0x07]).unwrap(), b"0");
        let mut two = Vec::new();
        encode(b"00000000", &mut two); // 40 bits: no padding
        assert_eq!(two.len(), 5);
        two.push(0xff);
        assert_eq!(dec(&two), Err(BadHuffman));
    }

    proptest! {
        #[test]
        fn round_trips(s in proptest::collection::vec(any::<u8>(), 0..200)) {
            let mut e = Vec::new();
            encode(&s, &mut e);
            prop_assert_eq!(dec(&e).unwrap(), s);
        }

        #[test]
        fn arbitrary_input_never_panics(s in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = dec(&s);
        }
    }
}
