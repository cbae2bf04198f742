//! The `bubble-sort` data and wire format: the seed's own 1000 numbers, the
//! request size limit, and a minimal encoder/decoder for the `List` message
//! (`repeated int32 data = 1`) so that checking an answer needs no allocation
//! and no generated code.
//!
//! Proto3 encodes `repeated int32` packed by default, but a decoder must accept
//! the unpacked form too (protobuf spec, "Packed Repeated Fields"); both are read.

use std::sync::LazyLock;

/// The gRPC method path on the wire.
pub const GRPC_PATH: &str = "/sort.v1.SortService/BubbleSort";
/// Most numbers a request may carry; more is `INVALID_ARGUMENT`.
pub const MAX_LEN: usize = 10_000;
/// The seed's list, as shipped in `data/bubble-1000.json`.
pub const SEED_JSON: &str = include_str!("../../../data/bubble-1000.json");

/// The seed's 1000 distinct positive int32, in the seed's order.
pub static SEED: LazyLock<Vec<i32>> = LazyLock::new(|| {
    serde_json::from_str(SEED_JSON).expect("data/bubble-1000.json is a JSON array of int32")
});

/// The seed's list sorted ascending: the one right answer to the standard request.
pub static SEED_SORTED: LazyLock<Vec<i32>> = LazyLock::new(|| {
    let mut v = SEED.clone();
    v.sort_unstable();
    v
});

/// Appends the protobuf encoding of `List { data }` (packed) to `out`.
pub fn encode_list(data: &[i32], out: &mut Vec<u8>) {
    if data.is_empty() {
        return; // proto3: an empty repeated field is absent
    }
    let payload: usize = data.iter().map(|&v| varint_len(int32_wire(v))).sum();
    out.push(0x0A); // field 1, wire type 2 (length-delimited)
    put_varint(out, payload as u64);
    for &v in data {
        put_varint(out, int32_wire(v));
    }
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
}

/// Calls `each` with every element of `data` in a `List` message, in order,
/// skipping unknown fields. Allocation-free.
pub fn for_each_in_list(mut msg: &[u8], mut each: impl FnMut(i32) -> bool) -> Result<(), DecodeError> {
    while !msg.is_empty() {
        let key = get_varint(&mut msg)?;
        let (field, wire) = (key >> 3, (key & 7) as u8);
        match (field, wire) {
            (1, 0) => {
                if !each(get_varint(&mut msg)? as i32) {
                    return Ok(());
                }
            }
            (1, 2) => {
                let len = usize::try_from(get_varint(&mut msg)?).map_err(|_| DecodeError::Truncated)?;
                let mut packed = msg.get(..len).ok_or(DecodeError::Truncated)?;
                msg = &msg[len..];
                while !packed.is_empty() {
                    if !each(get_varint(&mut packed)? as i32) {
                        return Ok(());
                    }
                }
            }
            (1, w) => return Err(DecodeError::BadWireType(w)),
            (_, 0) => {
                get_varint(&mut msg)?;
            }
            (_, 1) => msg = msg.get(8..).ok_or(DecodeError::Truncated)?,
            (_, 5) => msg = msg.get(4..).ok_or(DecodeError::Truncated)?,
            (_, 2) => {
                let len = usize::try_from(get_varint(&mut msg)?).map_err(|_| DecodeError::Truncated)?;
                msg = msg.get(len..).ok_or(DecodeError::Truncated)?;
            }
            (_, w) => return Err(DecodeError::UnknownWireType(w)),
        }
    }
    Ok(())
}

/// Decodes a `List` message into a vector (for tests and tools; the checker
/// uses [`for_each_in_list`]).
pub fn decode_list(msg: &[u8]) -> Result<Vec<i32>, DecodeError> {
    let mut out = Vec::new();
    for_each_in_list(msg, |v| {
        out.push(v);
        true
    })?;
    Ok(out)
}

/// int32 on the wire: negative values are sign-extended to 64 bits.
fn int32_wire(v: i32) -> u64 {
    i64::from(v) as u64
}

fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(buf: &mut &[u8]) -> Result<u64, DecodeError> {
    let mut v = 0u64;
    for i in 0..10 {
        let Some((&b, rest)) = buf.split_first() else {
            return Err(DecodeError::Truncated);
        };
        *buf = rest;
        v |= u64::from(b & 0x7F) << (7 * i);
        if b < 0x80 {
            return Ok(v);
        }
    }
    Err(DecodeError::BadVarint)
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
