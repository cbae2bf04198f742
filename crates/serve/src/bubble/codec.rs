//! The gRPC codec of `sort.v1.List`, written for the one message this
//! service speaks instead of prost's generic field loop (the generated service
//! uses it through `codec_path` in `build.rs`; the bytes are the same).
//!
//! Why: at 1000 numbers per call, decoding and encoding the varints was 3–4% of
//! the service's CPU with prost, a third of the gRPC overhead budget (the
//! benchmark asks for at least 90% of the in-process sort rate). Here a varint
//! of up to 8 bytes (every non-negative int32) is read with one 8-byte load
//! and bit arithmetic, and written with one 8-byte store; longer ones (negative
//! int32 are sign-extended to 10 bytes) take the byte-by-byte path. The
//! property tests compare both directions with prost on arbitrary messages.
//!
//! Decoding follows the protobuf encoding spec: `data` packed or unpacked (a
//! parser must accept both), several occurrences concatenated, unknown fields
//! skipped, int32 taken from the low 32 bits of the varint. A list longer than
//! [`MAX_LEN`] is counted without being stored and refused with
//! `INVALID_ARGUMENT`, so an oversized request allocates nothing big.

use bytes::{Buf as _, BufMut as _};
use stackbench_scenarios::bubble::MAX_LEN;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use super::proto::List;
use super::service::TooLong;

/// The codec of `BubbleSort` (both directions carry a `List`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ListCodec;

impl Codec for ListCodec {
    type Encode = List;
    type Decode = List;
    type Encoder = ListCodec;
    type Decoder = ListCodec;

    fn encoder(&mut self) -> ListCodec {
        ListCodec
    }

    fn decoder(&mut self) -> ListCodec {
        ListCodec
    }
}

impl Encoder for ListCodec {
    type Item = List;
    type Error = Status;

    fn encode(&mut self, item: List, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        let mut out = Vec::new();
        encode_list(&item.data, &mut out);
        buf.reserve(out.len());
        buf.put_slice(&out);
        Ok(())
    }
}

impl Decoder for ListCodec {
    type Item = List;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<List>, Status> {
        // A DecodeBuf holds exactly one message, contiguous (tonic buffers it whole).
        let msg = buf.chunk();
        let len = msg.len();
        let data = match decode_list(msg) {
            Ok(data) => data,
            Err(DecodeError::TooLong(len)) => {
                return Err(Status::invalid_argument(TooLong { len }.to_string()));
            }
            Err(DecodeError::Malformed(what)) => {
                return Err(Status::internal(format!("the request is not a sort.v1.List message: {what}")));
            }
        };
        buf.advance(len);
        Ok(Some(List { data }))
    }
}

/// Why bytes are not an acceptable `List`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    Malformed(&'static str),
    /// More than [`MAX_LEN`] numbers: how many.
    TooLong(usize),
}

/// Decodes a `List` message.
pub fn decode_list(msg: &[u8]) -> Result<Vec<i32>, DecodeError> {
    let mut data = Vec::new();
    let mut total = 0usize;
    let mut pos = 0;
    while pos < msg.len() {
        let key = read_varint(msg, &mut pos)?;
        if key > u64::from(u32::MAX) {
            return Err(DecodeError::Malformed("field key out of range"));
        }
        match (key >> 3, key & 7) {
            (1, 2) => {
                let packed = length_delimited(msg, &mut pos)?;
                // Every varint ends with exactly one byte below 0x80.
                let n = packed.iter().filter(|&&b| b < 0x80).count();
                if packed.last().is_some_and(|&b| b >= 0x80) {
                    return Err(DecodeError::Malformed("truncated varint in the packed `data` field"));
                }
                total += n;
                if total > MAX_LEN {
                    continue; // counted, not stored
                }
                data.reserve(n);
                let mut p = 0;
                while p < packed.len() {
                    data.push(read_varint(packed, &mut p)? as i32);
                }
            }
            (1, 0) => {
                let v = read_varint(msg, &mut pos)? as i32;
                total += 1;
                if total <= MAX_LEN {
                    data.push(v);
                }
            }
            (1, _) => return Err(DecodeError::Malformed("field 1 (`data`) must have wire type 0 or 2")),
            (0, _) => return Err(DecodeError::Malformed("field number 0 is invalid")),
            (_, 0) => {
                read_varint(msg, &mut pos)?;
            }
            (_, 1) => skip(msg, &mut pos, 8)?,
            (_, 2) => {
                length_delimited(msg, &mut pos)?;
            }
            (_, 5) => skip(msg, &mut pos, 4)?,
            _ => {
                return Err(DecodeError::Malformed("unsupported wire type (groups are not used by sort.v1)"));
            }
        }
    }
    if total > MAX_LEN { Err(DecodeError::TooLong(total)) } else { Ok(data) }
}

/// Appends the encoding of `List { data }` (packed, as proto3 writes it).
pub fn encode_list(data: &[i32], out: &mut Vec<u8>) {
    if data.is_empty() {
        return; // proto3: an empty repeated field is not written
    }
    let payload: usize = data.iter().map(|&v| varint_len(wire(v))).sum();
    out.reserve(1 + 10 + payload + 8);
    out.push(0x0A); // field 1, wire type 2
    write_varint_slow(out, payload as u64);
    let start = out.len();
    // 8 bytes of slack so that every value can be written with one 8-byte store.
    out.resize(start + payload + 8, 0);
    let mut pos = start;
    for &v in data {
        let x = wire(v);
        if x < 1 << 56 {
            let (word, len) = spread(x);
            out[pos..pos + 8].copy_from_slice(&word.to_le_bytes());
            pos += len;
        } else {
            // Negative int32: ten bytes, sign-extended.
            let mut tmp = Vec::with_capacity(10);
            write_varint_slow(&mut tmp, x);
            out[pos..pos + tmp.len()].copy_from_slice(&tmp);
            pos += tmp.len();
        }
    }
    out.truncate(pos);
}

/// int32 on the wire: sign-extended to 64 bits.
fn wire(v: i32) -> u64 {
    i64::from(v) as u64
}

fn varint_len(x: u64) -> usize {
    let bits = 64 - (x | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// The varint encoding of `x < 2^56` as the little-endian bytes of a word,
/// and its length. The 7-bit groups are moved apart in three halving steps
/// (28-bit halves into 32-bit lanes, 14 into 16, 7 into 8) instead of eight
/// shifts: a few operations per number.
#[inline]
fn spread(x: u64) -> (u64, usize) {
    let len = varint_len(x);
    let x = (x & 0x00FF_FFFF_F000_0000) << 4 | (x & 0x0FFF_FFFF);
    let x = (x & 0x0FFF_C000_0FFF_C000) << 2 | (x & 0x0000_3FFF_0000_3FFF);
    let x = (x & 0x3F80_3F80_3F80_3F80) << 1 | (x & 0x007F_007F_007F_007F);
    // A continuation bit on every byte but the last.
    let continuation = 0x8080_8080_8080_8080u64 & ((1u64 << (8 * (len - 1))) - 1);
    (x | continuation, len)
}

fn write_varint_slow(out: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        out.push((x as u8) | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

/// Reads one varint at `*pos`, advancing it.
#[inline]
fn read_varint(buf: &[u8], pos: &mut usize) -> Result<u64, DecodeError> {
    if let Some(chunk) = buf.get(*pos..*pos + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let stops = !word & 0x8080_8080_8080_8080;
        if stops != 0 {
            // The first byte without a continuation bit ends the varint: keep
            // the bytes up to it (`stops ^ (stops - 1)` masks up to its top bit)
            // without their continuation bits, then close the gaps in three
            // halving steps (the inverse of `spread`).
            let len = (stops.trailing_zeros() / 8 + 1) as usize;
            let x = word & (stops ^ (stops - 1)) & 0x7F7F_7F7F_7F7F_7F7F;
            let x = (x & 0x7F00_7F00_7F00_7F00) >> 1 | (x & 0x007F_007F_007F_007F);
            let x = (x & 0x3FFF_0000_3FFF_0000) >> 2 | (x & 0x0000_3FFF_0000_3FFF);
            let x = (x & 0x0FFF_FFFF_0000_0000) >> 4 | (x & 0x0FFF_FFFF);
            *pos += len;
            return Ok(x);
        }
    }
    let mut v = 0u64;
    for k in 0..10 {
        let Some(&b) = buf.get(*pos) else {
            return Err(DecodeError::Malformed("truncated varint"));
        };
        *pos += 1;
        v |= u64::from(b & 0x7F) << (7 * k);
        if b < 0x80 {
            // The tenth byte holds bit 63 only (protobuf-go's overflow rule, as prost).
            return if k == 9 && b > 1 {
                Err(DecodeError::Malformed("varint overflows 64 bits"))
            } else {
                Ok(v)
            };
        }
    }
    Err(DecodeError::Malformed("varint longer than 10 bytes"))
}

fn length_delimited<'a>(buf: &'a [u8], pos: &mut usize) -> Result<&'a [u8], DecodeError> {
    let len = read_varint(buf, pos)?;
    let len = usize::try_from(len).map_err(|_| DecodeError::Malformed("length out of range"))?;
    let end = pos.checked_add(len).ok_or(DecodeError::Malformed("length out of range"))?;
    let field = buf.get(*pos..end).ok_or(DecodeError::Malformed("truncated length-delimited field"))?;
    *pos = end;
    Ok(field)
}

fn skip(buf: &[u8], pos: &mut usize, n: usize) -> Result<(), DecodeError> {
    if buf.len() - *pos < n {
        return Err(DecodeError::Malformed("truncated fixed-width field"));
    }
    *pos += n;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use prost::Message as _;
    use stackbench_scenarios::bubble::SEED;

    fn prost_bytes(data: &[i32]) -> Vec<u8> {
        List { data: data.to_vec() }.encode_to_vec()
    }

    #[test]
    fn the_seed_list_round_trips_like_prost() {
        let mut ours = Vec::new();
        encode_list(&SEED, &mut ours);
        assert_eq!(ours, prost_bytes(&SEED));
        assert_eq!(decode_list(&ours).unwrap(), *SEED);
    }

    #[test]
    fn varint_boundaries() {
        let edges = [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            (1 << 21) - 1,
            1 << 21,
            (1 << 28) - 1,
            1 << 28,
            i32::MAX,
            -1,
            i32::MIN,
        ];
        let mut ours = Vec::new();
        encode_list(&edges, &mut ours);
        assert_eq!(ours, prost_bytes(&edges));
        assert_eq!(decode_list(&ours).unwrap(), edges);
        let mut empty = Vec::new();
        encode_list(&[], &mut empty);
        assert!(empty.is_empty());
        assert_eq!(decode_list(&[]).unwrap(), Vec::<i32>::new());
    }

    #[test]
    fn unpacked_repeated_and_unknown_fields() {
        // data=5 unpacked, field 2 string "x", packed [1, 2], field 3 fixed32, field 4 fixed64, data=7
        let msg =
            [0x08, 5, 0x12, 1, b'x', 0x0A, 2, 1, 2, 0x1D, 0, 0, 0, 0, 0x21, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 7];
        assert_eq!(decode_list(&msg).unwrap(), [5, 1, 2, 7]);
        assert_eq!(List::decode(&msg[..]).unwrap().data, [5, 1, 2, 7]);
    }

    #[test]
    fn malformed_messages_are_refused() {
        for (msg, what) in [
            (&[0x0A, 5, 1][..], "truncated length-delimited"),
            (&[0x0A, 1, 0x80], "truncated varint in the packed"),
            (&[0x08], "truncated varint"),
            (&[0x0D, 0, 0, 0, 0], "wire type 0 or 2"),
            (&[0x1D, 0, 0], "truncated fixed-width"),
            (&[0x0B], "wire type 0 or 2"),
            (&[0x13], "groups"),
            (&[0x00], "field number 0"),
            (&[0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], "longer than 10"),
            (&[0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], "overflows 64 bits"),
            (&[0x80, 0x80, 0x80, 0x80, 0x10], "key out of range"),
        ] {
            match decode_list(msg) {
                Err(DecodeError::Malformed(m)) => assert!(m.contains(what), "{msg:?}: {m}"),
                other => panic!("{msg:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn too_many_numbers_are_counted() {
        let mut msg = Vec::new();
        encode_list(&vec![3; MAX_LEN], &mut msg);
        assert_eq!(decode_list(&msg).unwrap().len(), MAX_LEN);
        msg.extend_from_slice(&[0x08, 1, 0x0A, 2, 5, 6]);
        assert_eq!(decode_list(&msg), Err(DecodeError::TooLong(MAX_LEN + 3)));
    }

    proptest! {
        #[test]
        fn encoding_is_prosts(data in proptest::collection::vec(any::<i32>(), 0..200)) {
            let mut ours = Vec::new();
            encode_list(&data, &mut ours);
            prop_assert_eq!(&ours, &prost_bytes(&data));
            prop_assert_eq!(decode_list(&ours).unwrap(), data);
        }

        #[test]
        fn small_values_round_trip(data in proptest::collection::vec(0i32..300, 0..50)) {
            let mut ours = Vec::new();
            encode_list(&data, &mut ours);
            prop_assert_eq!(decode_list(&ours).unwrap(), data);
        }

        /// Whatever prost accepts, we decode to the same list (and whatever it
        /// refuses, we refuse too, apart from groups and field 0 which it may skip).
        #[test]
        fn decoding_agrees_with_prost(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let theirs = List::decode(&bytes[..]);
            let ours = decode_list(&bytes);
            if let Ok(ours) = &ours {
                prop_assert_eq!(ours, &theirs.expect("prost accepts what we accept").data);
            }
        }

        #[test]
        fn decoding_mixed_well_formed_messages(
            parts in proptest::collection::vec(
                (any::<bool>(), proptest::collection::vec(any::<i32>(), 0..20), any::<u32>()), 0..6)
        ) {
            let mut msg = Vec::new();
            let mut expected = Vec::new();
            for (packed, values, unknown) in parts {
                if packed {
                    let mut m = Vec::new();
                    encode_list(&values, &mut m);
                    msg.extend_from_slice(&m);
                } else {
                    for &v in &values {
                        msg.push(0x08);
                        write_varint_slow(&mut msg, wire(v));
                    }
                }
                expected.extend_from_slice(&values);
                msg.push(0x10); // field 2, varint: unknown
                write_varint_slow(&mut msg, u64::from(unknown));
            }
            prop_assert_eq!(decode_list(&msg).unwrap(), expected.clone());
            prop_assert_eq!(List::decode(&msg[..]).unwrap().data, expected);
        }
    }
}
