//! The protobuf wire format of `sort.v1.List` (`repeated int32 data = 1`),
//! hand-written for the gRPC service: tonic's generated code uses
//! [`ListCodec`] in place of `tonic_prost::ProstCodec` (`build.rs`).
//!
//! Why: a call carries 1000 numbers each way, most of them 5-byte varints,
//! and prost spent about 4.5% of the service's CPU on them (perf, under
//! h2load): its packed decoder reads one varint at a time through tonic's
//! `DecodeBuf` (a length check and a `BytesMut::advance` per number) and
//! grows the `Vec` as it goes; its encoder writes a byte at a time through
//! `BufMut::put_u8`. Here a packed run is decoded from the contiguous message
//! slice, eight bytes per load (the varint's end from the continuation bits,
//! its 7-bit groups gathered with shifts), into a `Vec` sized exactly first;
//! and encoded by spreading each number's 7-bit groups into one 8-byte word.
//! Numbers that need more than 8 bytes (negative `int32`s are 10-byte
//! varints) take the byte-at-a-time path, as does the tail of a run.
//!
//! It reads every encoding a proto3 parser must accept: packed and unpacked
//! `data` (and several runs of either, concatenated), unknown fields of every
//! wire type skipped (groups too), varints up to 10 bytes with `int32`
//! truncation. It writes what prost writes: `data` packed, omitted when
//! empty. The tests check both directions against prost on random lists.

use std::cell::RefCell;

use bytes::{Buf as _, BufMut as _};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use super::proto::List;

/// Why a message is not a valid `List` (the text follows prost's wording).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("failed to decode Protobuf message: {0}")]
pub struct DecodeError(&'static str);

/// Bytes whose high (continuation) bit is set in each byte of a word.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// `sort.v1.List` as the message of both directions of `SortService`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListCodec;

impl Codec for ListCodec {
    type Encode = List;
    type Decode = List;
    type Encoder = ListCodec;
    type Decoder = ListCodec;

    fn encoder(&mut self) -> Self::Encoder {
        ListCodec
    }

    fn decoder(&mut self) -> Self::Decoder {
        ListCodec
    }
}

thread_local! {
    /// The encoder's scratch buffer, reused by every call on the thread.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl Encoder for ListCodec {
    type Item = List;
    type Error = Status;

    fn encode(&mut self, item: List, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        SCRATCH.with_borrow_mut(|buf| {
            buf.clear();
            encode(&item.data, buf);
            dst.put_slice(buf);
        });
        Ok(())
    }
}

impl Decoder for ListCodec {
    type Item = List;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<List>, Status> {
        let len = src.remaining();
        // tonic hands over one buffered message: contiguous, so no copy.
        let data = if src.chunk().len() == len {
            let data = decode(src.chunk());
            src.advance(len);
            data
        } else {
            decode(&src.copy_to_bytes(len))
        };
        data.map(|data| Some(List { data })).map_err(|e| Status::internal(e.to_string()))
    }
}

/// Appends the encoding of `List { data }` to `out`: field 1 packed, nothing
/// for an empty list.
pub fn encode(data: &[i32], out: &mut Vec<u8>) {
    if data.is_empty() {
        return;
    }
    let payload: usize = data.iter().map(|&v| varint_len(wide(v))).sum();
    out.push(0x0a); // field 1, length-delimited
    put_varint_slow(payload as u64, out);
    let start = out.len();
    // Eight bytes of slack: every number is written as one 8-byte word.
    out.resize(start + payload + 8, 0);
    let buf = &mut out[start..];
    let mut at = 0;
    for &v in data {
        let v = wide(v);
        let len = varint_len(v);
        if len == 5 {
            // The seed's common case: a constant mask, and the compiler drops
            // the groups above the fifth (13% faster than the general case).
            let word = spread(v & 0x7_ffff_ffff) | 0x8080_8080;
            buf[at..at + 8].copy_from_slice(&word.to_le_bytes());
        } else if len <= 8 {
            // Continuation bits on every byte but the last.
            let more = HIGH_BITS & ((1u64 << (8 * (len - 1))) - 1);
            buf[at..at + 8].copy_from_slice(&(spread(v) | more).to_le_bytes());
        } else {
            let mut tail = Vec::with_capacity(10);
            put_varint_slow(v, &mut tail);
            buf[at..at + len].copy_from_slice(&tail);
        }
        at += len;
    }
    out.truncate(start + payload);
}

/// Decodes a `List` message's numbers.
///
/// # Errors
/// A truncated or over-long varint or field, a zero field number, an unknown
/// wire type, a wire type that `data` cannot have, or an unclosed group.
pub fn decode(mut msg: &[u8]) -> Result<Vec<i32>, DecodeError> {
    let mut data = Vec::new();
    while !msg.is_empty() {
        let (field, wire) = read_key(&mut msg)?;
        match (field, wire) {
            (0, _) => return Err(DecodeError("invalid tag value: 0")),
            (1, 2) => decode_packed(take(&mut msg)?, &mut data)?,
            // int32: the low 32 bits of the varint.
            #[allow(clippy::cast_possible_truncation)]
            (1, 0) => data.push(read_varint(&mut msg)? as i32),
            (1, _) => return Err(DecodeError("invalid wire type for field 1 (expected varint or packed)")),
            _ => skip(field, wire, &mut msg, 0)?,
        }
    }
    Ok(data)
}

/// Appends the numbers of one packed run.
#[allow(clippy::cast_possible_truncation)] // int32: the low 32 bits of the varint
fn decode_packed(mut run: &[u8], data: &mut Vec<i32>) -> Result<(), DecodeError> {
    // Exactly one byte of each varint has no continuation bit: that many
    // slots. (Counted in u8 lanes over blocks of 255 bytes, which the
    // compiler vectorises.)
    let continued: usize =
        run.chunks(255).map(|block| usize::from(block.iter().fold(0u8, |n, &b| n + (b >> 7)))).sum();
    let ends = run.len() - continued;
    let first = data.len();
    data.resize(first + ends, 0);
    for slot in &mut data[first..] {
        *slot = match run.first_chunk::<8>() {
            // The seed's numbers are mostly 5-byte varints: a predictable
            // branch, so the next number's load does not wait for this one's length.
            Some(w) if u64::from_le_bytes(*w) & 0x80_8080_8080 == 0x8080_8080 => {
                run = &run[5..];
                gather(u64::from_le_bytes(*w) & 0xff_ffff_ffff) as i32
            }
            Some(w) if !u64::from_le_bytes(*w) & HIGH_BITS != 0 => {
                let word = u64::from_le_bytes(*w);
                let len = (!word & HIGH_BITS).trailing_zeros() as usize / 8 + 1;
                let keep = if len == 8 { u64::MAX } else { (1u64 << (8 * len)) - 1 };
                run = &run[len..];
                gather(word & keep) as i32
            }
            _ => read_varint(&mut run)? as i32,
        };
    }
    // Bytes left over: a last varint without its end.
    if run.is_empty() { Ok(()) } else { Err(DecodeError("invalid varint")) }
}

/// How deep groups may nest (prost's limit): a message of nested group
/// starts must not overflow the stack.
const MAX_DEPTH: u32 = 100;

/// A field's number and wire type.
fn read_key(msg: &mut &[u8]) -> Result<(u64, u64), DecodeError> {
    let key = read_varint(msg)?;
    if key > u64::from(u32::MAX) {
        return Err(DecodeError("invalid key value"));
    }
    Ok((key >> 3, key & 7))
}

/// Skips one field of another number (a group up to its end tag).
fn skip(field: u64, wire: u64, msg: &mut &[u8], depth: u32) -> Result<(), DecodeError> {
    match wire {
        0 => read_varint(msg).map(drop),
        1 => advance(msg, 8),
        2 => take(msg).map(drop),
        5 => advance(msg, 4),
        3 if depth >= MAX_DEPTH => Err(DecodeError("recursion limit reached")),
        3 => loop {
            if msg.is_empty() {
                return Err(DecodeError("a group has no end tag"));
            }
            let (inner, inner_wire) = read_key(msg)?;
            if inner_wire == 4 {
                return if inner == field { Ok(()) } else { Err(DecodeError("unexpected end group tag")) };
            }
            if inner == 0 {
                return Err(DecodeError("invalid tag value: 0"));
            }
            skip(inner, inner_wire, msg, depth + 1)?;
        },
        4 => Err(DecodeError("unexpected end group tag")),
        _ => Err(DecodeError("invalid wire type value")),
    }
}

/// A length-delimited field's bytes.
fn take<'a>(msg: &mut &'a [u8]) -> Result<&'a [u8], DecodeError> {
    let len = usize::try_from(read_varint(msg)?).map_err(|_| DecodeError("buffer underflow"))?;
    if len > msg.len() {
        return Err(DecodeError("buffer underflow"));
    }
    let (field, rest) = msg.split_at(len);
    *msg = rest;
    Ok(field)
}

fn advance(msg: &mut &[u8], n: usize) -> Result<(), DecodeError> {
    *msg = msg.get(n..).ok_or(DecodeError("buffer underflow"))?;
    Ok(())
}

/// One varint, a byte at a time (at most 10 bytes; the 10th may only hold
/// the 64th bit).
fn read_varint(msg: &mut &[u8]) -> Result<u64, DecodeError> {
    let mut value = 0u64;
    for (i, &b) in msg.iter().enumerate().take(10) {
        if i == 9 && b > 1 {
            break;
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            *msg = &msg[i + 1..];
            return Ok(value);
        }
    }
    Err(DecodeError("invalid varint"))
}

#[allow(clippy::cast_possible_truncation)] // the low 7 bits, masked
fn put_varint_slow(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An `int32` as protobuf encodes it: sign-extended to 64 bits.
#[allow(clippy::cast_sign_loss)]
fn wide(v: i32) -> u64 {
    i64::from(v) as u64
}

/// Bytes of the varint of `v` (1 to 10).
fn varint_len(v: u64) -> usize {
    ((v | 1).ilog2() as usize * 9 + 73) / 64
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
mod tests;
