//! The `bubble-sort` data and wire format: the original experiment's own 1000 numbers, the
//! request size limit, and the one encoder/decoder of the `List` message
//! (`repeated int32 data = 1`) in the project: the load engine's checker
//! reads answers with it allocation-free, and the gRPC service
//! (`stackbench-serve`'s `bubble::codec`) decodes requests and encodes
//! answers with it in place of prost's generated code.
//!
//! Proto3 encodes `repeated int32` packed by default, but a decoder must accept
//! the unpacked form too (protobuf spec, "Packed Repeated Fields"); both are
//! read, as are unknown fields of every wire type. It is fast where a call
//! spends its bytes: 1000 numbers each way, mostly 5-byte varints, read eight
//! bytes per load and written one 8-byte word per number (on the original experiment's list
//! 0.74× prost's decoding time and 0.44× its encoding time,
//! `examples/bubble_codec.rs` in `stackbench-serve`). Its agreement with
//! prost, both ways and on arbitrary bytes, is tested there (prost is a
//! dependency of that crate, not of this one).

use std::sync::LazyLock;

/// The gRPC method path on the wire.
pub const GRPC_PATH: &str = "/sort.v1.SortService/BubbleSort";
/// Most numbers a request may carry; more is `INVALID_ARGUMENT`.
pub const MAX_LEN: usize = 10_000;
/// The original experiment's list, as shipped in `data/bubble-1000.json`.
pub const SEED_JSON: &str = include_str!("../../../data/bubble-1000.json");

/// The original experiment's 1000 distinct positive int32, in the original experiment's order.
pub static SEED: LazyLock<Vec<i32>> = LazyLock::new(|| {
    serde_json::from_str(SEED_JSON).expect("data/bubble-1000.json is a JSON array of int32")
});

/// The original experiment's list sorted ascending: the one right answer to the standard request.
pub static SEED_SORTED: LazyLock<Vec<i32>> = LazyLock::new(|| {
    let mut v = SEED.clone();
    v.sort_unstable();
    v
});

/// Appends the protobuf encoding of `List { data }` to `out`: field 1 packed,
/// nothing for an empty list (proto3: an empty repeated field is absent);
/// the bytes prost writes. Each number's 7-bit groups are spread into one
/// 8-byte word, written whole (a number needing more than 8 bytes, a
/// negative one, is written a byte at a time).
pub fn encode_list(data: &[i32], out: &mut Vec<u8>) {
    if data.is_empty() {
        return;
    }
    let payload: usize = data.iter().map(|&v| varint_len(int32_wire(v))).sum();
    out.push(0x0A); // field 1, wire type 2 (length-delimited)
    put_varint(out, payload as u64);
    let start = out.len();
    // Eight bytes of slack: a number is written as one 8-byte word.
    out.resize(start + payload + 8, 0);
    let buf = &mut out[start..];
    let mut at = 0;
    for &v in data {
        let v = int32_wire(v);
        let len = varint_len(v);
        if len == 5 {
            // The original experiment's common case: a constant mask, and the compiler drops
            // the groups above the fifth (13% faster than the general case).
            let word = spread(v & 0x7_ffff_ffff) | 0x8080_8080;
            buf[at..at + 8].copy_from_slice(&word.to_le_bytes());
        } else if len <= 8 {
            // Continuation bits on every byte but the last.
            let more = HIGH_BITS & ((1u64 << (8 * (len - 1))) - 1);
            buf[at..at + 8].copy_from_slice(&(spread(v) | more).to_le_bytes());
        } else {
            write_varint(&mut buf[at..at + len], v);
        }
        at += len;
    }
    out.truncate(start + payload);
}

/// Why bytes are not a `List` message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("truncated protobuf message")]
    Truncated,
    #[error("malformed varint in protobuf message")]
    BadVarint,
    #[error("field 1 (data) has wire type {0}, expected 0 or 2")]
    BadWireType(u8),
    #[error("unsupported wire type {0} in protobuf message")]
    UnknownWireType(u8),
    #[error("field number 0 in protobuf message")]
    ZeroField,
    #[error("field key over 32 bits in protobuf message")]
    BadKey,
    #[error("group end without its start in protobuf message")]
    UnmatchedGroupEnd,
    #[error("groups nested more than {MAX_DEPTH} deep in protobuf message")]
    TooDeep,
}

/// How deep groups may nest (prost's limit): a message of nested group
/// starts must not overflow the stack.
const MAX_DEPTH: u32 = 100;

/// Calls `each` with every element of `data` in a `List` message, in order
/// (packed and unpacked, several runs of either), skipping unknown fields of
/// every wire type (groups too); varints up to 10 bytes, `int32` truncation.
/// Accepts and refuses what prost does. Allocation-free: the checker's path.
#[allow(clippy::cast_possible_truncation)] // int32: the low 32 bits of the varint
pub fn for_each_in_list(msg: &[u8], mut each: impl FnMut(i32) -> bool) -> Result<(), DecodeError> {
    data_fields(msg, |field| match field {
        Data::One(v) => Ok(each(v as i32)),
        Data::Packed(mut run) => {
            while !run.is_empty() {
                if !each(get_varint(&mut run)? as i32) {
                    return Ok(false);
                }
            }
            Ok(true)
        }
    })
}

/// Decodes a `List` message into a vector (the service's decoder).
///
/// # Errors
/// As [`for_each_in_list`].
#[allow(clippy::cast_possible_truncation)] // int32: the low 32 bits of the varint
pub fn decode_list(msg: &[u8]) -> Result<Vec<i32>, DecodeError> {
    let mut out = Vec::new();
    data_fields(msg, |field| {
        match field {
            Data::One(v) => out.push(v as i32),
            Data::Packed(mut run) => {
                // Exactly one byte of each number has no continuation bit:
                // that many slots, filled in place (no push, no growth).
                let first = out.len();
                out.resize(first + run.len() - continuation_bytes(run), 0);
                for slot in &mut out[first..] {
                    *slot = get_varint(&mut run)? as i32;
                }
                // Bytes left over: a last number without its end.
                if !run.is_empty() {
                    return Err(DecodeError::Truncated);
                }
            }
        }
        Ok(true)
    })?;
    Ok(out)
}

/// A field 1 (`data`) of a `List` message.
enum Data<'a> {
    /// One number (unpacked).
    One(u64),
    /// A packed run of numbers.
    Packed(&'a [u8]),
}

/// Hands every `data` field of `msg` to `each`, in order, until it returns
/// `false`; skips the other fields.
fn data_fields<'a>(
    mut msg: &'a [u8],
    mut each: impl FnMut(Data<'a>) -> Result<bool, DecodeError>,
) -> Result<(), DecodeError> {
    while !msg.is_empty() {
        let more = match read_key(&mut msg)? {
            (1, 0) => each(Data::One(get_varint(&mut msg)?))?,
            (1, 2) => each(Data::Packed(take(&mut msg)?))?,
            (1, w) => return Err(DecodeError::BadWireType(w)),
            (field, wire) => {
                skip(field, wire, &mut msg, 0)?;
                true
            }
        };
        if !more {
            break;
        }
    }
    Ok(())
}

/// Bytes with the continuation bit set (counted in u8 lanes over blocks of
/// 255 bytes, which the compiler vectorises).
fn continuation_bytes(run: &[u8]) -> usize {
    run.chunks(255).map(|block| usize::from(block.iter().fold(0u8, |n, &b| n + (b >> 7)))).sum()
}

/// A field's number and wire type.
fn read_key(msg: &mut &[u8]) -> Result<(u64, u8), DecodeError> {
    let key = get_varint(msg)?;
    match key >> 3 {
        _ if key > u64::from(u32::MAX) => Err(DecodeError::BadKey),
        0 => Err(DecodeError::ZeroField),
        field => Ok((field, (key & 7) as u8)),
    }
}

/// Skips one field of another number (a group up to its end).
fn skip(field: u64, wire: u8, msg: &mut &[u8], depth: u32) -> Result<(), DecodeError> {
    match wire {
        0 => get_varint(msg).map(drop),
        1 => advance(msg, 8),
        2 => take(msg).map(drop),
        5 => advance(msg, 4),
        3 if depth >= MAX_DEPTH => Err(DecodeError::TooDeep),
        3 => loop {
            if msg.is_empty() {
                return Err(DecodeError::Truncated);
            }
            match read_key(msg)? {
                (inner, 4) if inner == field => return Ok(()),
                (_, 4) => return Err(DecodeError::UnmatchedGroupEnd),
                (inner, inner_wire) => skip(inner, inner_wire, msg, depth + 1)?,
            }
        },
        4 => Err(DecodeError::UnmatchedGroupEnd),
        w => Err(DecodeError::UnknownWireType(w)),
    }
}

/// A length-delimited field's bytes.
fn take<'a>(msg: &mut &'a [u8]) -> Result<&'a [u8], DecodeError> {
    let len = usize::try_from(get_varint(msg)?).map_err(|_| DecodeError::Truncated)?;
    if len > msg.len() {
        return Err(DecodeError::Truncated);
    }
    let (field, rest) = msg.split_at(len);
    *msg = rest;
    Ok(field)
}

fn advance(msg: &mut &[u8], n: usize) -> Result<(), DecodeError> {
    *msg = msg.get(n..).ok_or(DecodeError::Truncated)?;
    Ok(())
}

/// Bytes whose high (continuation) bit is set in each byte of a word.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// int32 on the wire: negative values are sign-extended to 64 bits.
#[allow(clippy::cast_sign_loss)]
fn int32_wire(v: i32) -> u64 {
    i64::from(v) as u64
}

/// Bytes of the varint of `v` (1 to 10).
fn varint_len(v: u64) -> usize {
    ((v | 1).ilog2() as usize * 9 + 73) / 64
}

/// Writes the varint of `v` into `out`, which is exactly its length.
#[allow(clippy::cast_possible_truncation)] // the low 7 bits, masked
fn write_varint(out: &mut [u8], mut v: u64) {
    let (last, init) = out.split_last_mut().expect("a varint has at least one byte");
    for b in init {
        *b = (v as u8 & 0x7F) | 0x80;
        v >>= 7;
    }
    *last = v as u8;
}

fn put_varint(out: &mut Vec<u8>, v: u64) {
    let at = out.len();
    out.resize(at + varint_len(v), 0);
    write_varint(&mut out[at..], v);
}

/// One varint. Where eight bytes remain, one load: a predictable branch for
/// the original experiment's common 5-byte numbers (so the next load does not wait for this
/// one's length), else its end from the continuation bits; its 7-bit groups
/// gathered with shifts. Otherwise (the tail, or a number over 8 bytes) a
/// byte at a time: at most 10 bytes, the 10th holding only the 64th bit.
// Always inlined: as a call, decoding the original experiment's list took 2.95 µs instead of 2.4.
#[allow(clippy::inline_always)]
#[inline(always)]
fn get_varint(buf: &mut &[u8]) -> Result<u64, DecodeError> {
    match buf.first_chunk::<8>().map(|w| u64::from_le_bytes(*w)) {
        Some(w) if w & 0x80_8080_8080 == 0x8080_8080 => {
            *buf = &buf[5..];
            Ok(gather(w & 0xff_ffff_ffff))
        }
        Some(w) if !w & HIGH_BITS != 0 => {
            let len = (!w & HIGH_BITS).trailing_zeros() as usize / 8 + 1;
            let keep = if len == 8 { u64::MAX } else { (1u64 << (8 * len)) - 1 };
            *buf = &buf[len..];
            Ok(gather(w & keep))
        }
        _ => get_varint_bytewise(buf),
    }
}

#[cold]
#[inline(never)]
fn get_varint_bytewise(buf: &mut &[u8]) -> Result<u64, DecodeError> {
    let mut v = 0u64;
    for (i, &b) in buf.iter().enumerate().take(10) {
        if i == 9 && b > 1 {
            return Err(DecodeError::BadVarint);
        }
        v |= u64::from(b & 0x7F) << (7 * i);
        if b < 0x80 {
            *buf = &buf[i + 1..];
            return Ok(v);
        }
    }
    Err(if buf.len() < 10 { DecodeError::Truncated } else { DecodeError::BadVarint })
}

/// The 7-bit groups of `v < 2^56`, one per byte (byte `k` holds bits `7k..7k+7`).
fn spread(v: u64) -> u64 {
    (v & 0x7f)
        | ((v << 1) & 0x7f00)
        | ((v << 2) & 0x7f_0000)
        | ((v << 3) & 0x7f00_0000)
        | ((v << 4) & 0x7f_0000_0000)
        | ((v << 5) & 0x7f00_0000_0000)
        | ((v << 6) & 0x7f_0000_0000_0000)
        | ((v << 7) & 0x7f00_0000_0000_0000)
}

/// The inverse of [`spread`]: the low 7 bits of each byte, concatenated.
fn gather(w: u64) -> u64 {
    (w & 0x7f)
        | ((w >> 1) & 0x3f80)
        | ((w >> 2) & 0x1f_c000)
        | ((w >> 3) & 0xfe0_0000)
        | ((w >> 4) & 0x7_f000_0000)
        | ((w >> 5) & 0x3f8_0000_0000)
        | ((w >> 6) & 0x1_fc00_0000_0000)
        | ((w >> 7) & 0xfe_0000_0000_0000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn seed_is_the_seeds_list() {
        assert_eq!(SEED.len(), 1000);
        assert_eq!(SEED[0], 1_302_426_640);
        assert!(SEED.iter().all(|&v| v > 0));
        let mut distinct = SEED.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), 1000);
        assert!(SEED_SORTED.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn known_encoding() {
        let mut out = Vec::new();
        encode_list(&[1, 150, -1], &mut out);
        let mut expected = vec![0x0A, 13, 0x01, 0x96, 0x01];
        expected.extend([0xFF; 9]);
        expected.push(0x01);
        assert_eq!(out, expected);
    }

    #[test]
    fn unpacked_and_unknown_fields_are_read() {
        // data=5 unpacked, field 2 (string "x"), data=7 unpacked, field 3 fixed32
        let msg = [0x08, 5, 0x12, 1, b'x', 0x08, 7, 0x1D, 0, 0, 0, 0];
        assert_eq!(decode_list(&msg), Ok(vec![5, 7]));
        assert_eq!(decode_list(&[0x0A, 5, 1]), Err(DecodeError::Truncated));
        assert_eq!(decode_list(&[0x0D, 0, 0, 0, 0]), Err(DecodeError::BadWireType(5)));
    }

    proptest! {
        #[test]
        fn encode_decode_round_trips(data in proptest::collection::vec(any::<i32>(), 0..300)) {
            let mut out = Vec::new();
            encode_list(&data, &mut out);
            prop_assert_eq!(decode_list(&out).unwrap(), data);
        }
    }
}
