//! The service's `List` wire format (the contract crate's `encode_list` and
//! `decode_list`) against prost, the reference: same bytes out, same numbers
//! in, for random lists and for every encoding a proto3 parser must accept;
//! and the errors.

use proptest::prelude::*;
use prost::Message as _;

use stackbench_contract::bubble::{DecodeError, decode_list as decode, encode_list};

use super::*;

fn prost_bytes(data: &[i32]) -> Vec<u8> {
    List { data: data.to_vec() }.encode_to_vec()
}

fn prost_decode(bytes: &[u8]) -> Result<Vec<i32>, prost::DecodeError> {
    List::decode(bytes).map(|l| l.data)
}

fn ours(data: &[i32]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_list(data, &mut out);
    out
}

/// A varint, a byte at a time (the textbook loop, to build test messages).
fn put_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Numbers of every varint length: small, the original experiment's range, the edges of
/// each 7-bit group, and negatives (10 bytes).
fn number() -> impl Strategy<Value = i32> {
    prop_oneof![
        0..128i32,
        0..i32::MAX,
        (0u32..31).prop_map(|b| (1i32 << b) - 1),
        (0u32..31).prop_map(|b| 1i32 << b),
        any::<i32>(),
        i32::MIN..0,
    ]
}

proptest! {
    #[test]
    fn encodes_what_prost_encodes(data in prop::collection::vec(number(), 0..300)) {
        prop_assert_eq!(ours(&data), prost_bytes(&data));
    }

    #[test]
    fn decodes_what_prost_decodes(data in prop::collection::vec(number(), 0..300)) {
        prop_assert_eq!(decode(&prost_bytes(&data)).unwrap(), data);
    }

    /// Unpacked elements, several packed runs and unknown fields of every
    /// wire type, in any order: the numbers of field 1 in order, as prost reads them.
    #[test]
    fn reads_every_encoding_as_prost_does(parts in prop::collection::vec((0u8..7, prop::collection::vec(number(), 0..20)), 0..12)) {
        let mut msg = Vec::new();
        for (kind, nums) in &parts {
            match kind {
                0 => msg.extend(prost_bytes(nums)),
                1 => for &n in nums {
                    msg.push(0x08);
                    put_varint(i64::from(n) as u64, &mut msg);
                },
                2 => { msg.push(0x10); put_varint(nums.len() as u64 * 300, &mut msg); }
                3 => { msg.push(0x19); msg.extend([7u8; 8]); }
                4 => { msg.push(0x22); msg.push(3); msg.extend([0xffu8, 0x80, 0x01]); }
                5 => { msg.push(0x2d); msg.extend([9u8; 4]); }
                // Group 6 holding a varint, a nested group 7, and its end.
                _ => msg.extend([0x33, 0x08, 0x96, 0x01, 0x3b, 0x3c, 0x34]),
            }
        }
        prop_assert_eq!(decode(&msg).unwrap(), prost_decode(&msg).unwrap());
    }

    /// Any bytes: ours fails exactly when prost fails, and agrees otherwise.
    #[test]
    fn agrees_with_prost_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        match (decode(&bytes), prost_decode(&bytes)) {
            (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
            (Err(_), Err(_)) => {}
            (a, b) => prop_assert!(false, "ours {a:?}, prost {b:?} on {bytes:?}"),
        }
    }

    /// Truncating a valid message anywhere inside a number is an error for both.
    #[test]
    fn truncated_messages(data in prop::collection::vec(number(), 1..50), cut in any::<prop::sample::Index>()) {
        let bytes = prost_bytes(&data);
        let cut = cut.index(bytes.len());
        let short = &bytes[..cut];
        prop_assert_eq!(decode(short).is_ok(), prost_decode(short).is_ok(), "cut at {}", cut);
    }
}

#[test]
fn the_seed_list_both_ways() {
    let seed = &*stackbench_contract::bubble::SEED;
    let bytes = ours(seed);
    assert_eq!(bytes, prost_bytes(seed));
    assert_eq!(&decode(&bytes).unwrap(), seed);
}

#[test]
fn empty_list_is_an_empty_message() {
    assert!(ours(&[]).is_empty());
    assert_eq!(decode(&[]).unwrap(), Vec::<i32>::new());
}

#[test]
fn errors_say_what_is_wrong() {
    use DecodeError::*;
    let err = |b: &[u8]| decode(b).unwrap_err();
    assert_eq!(err(&[0x0a, 5, 1]), Truncated);
    assert_eq!(err(&[0x08, 0x80]), Truncated);
    assert_eq!(err(&[0x08; 1].iter().chain(&[0xff; 10]).copied().collect::<Vec<_>>()), BadVarint);
    assert_eq!(err(&[0x00]), ZeroField);
    assert_eq!(err(&[0x0d, 0, 0, 0, 0]), BadWireType(5));
    assert_eq!(err(&[0x33, 0x08, 0x01]), Truncated);
    assert_eq!(err(&[0x34]), UnmatchedGroupEnd);
    assert_eq!(err(&[0x16]), UnknownWireType(6));
    assert_eq!(err(&[0x88, 0x80, 0x80, 0x80, 0x10]), BadKey);
    let deep: Vec<u8> = std::iter::repeat_n(0x33, 200).collect();
    assert_eq!(err(&deep), TooDeep);
    assert_eq!(BadWireType(5).to_string(), "field 1 (data) has wire type 5, expected 0 or 2");
    assert_eq!(TooDeep.to_string(), "groups nested more than 100 deep in protobuf message");
}
