//! The gRPC service's codec for `sort.v1.List`: tonic's generated code uses
//! [`ListCodec`] in place of `tonic_prost::ProstCodec` (`build.rs`), and it
//! encodes and decodes with the project's one `List` wire format,
//! [`stackbench_contract::bubble::encode_list`] and
//! [`decode_list`](stackbench_contract::bubble::decode_list).
//!
//! Why not prost: a call carries 1000 numbers each way, most of them 5-byte
//! varints, and prost spent about 4.5% of the service's CPU on them (perf,
//! under h2load): its packed decoder reads one varint at a time through
//! tonic's `DecodeBuf` (a length check and a `BytesMut::advance` per number)
//! and grows the `Vec` as it goes; its encoder writes a byte at a time through
//! `BufMut::put_u8`. The shared code reads the contiguous message eight bytes
//! per load and writes one 8-byte word per number. It accepts and writes what
//! prost does; the tests check that against prost.

use std::cell::RefCell;

use bytes::{Buf as _, BufMut as _};
use stackbench_contract::bubble::{decode_list, encode_list};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use super::proto::List;

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
            encode_list(&item.data, buf);
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
            let data = decode_list(src.chunk());
            src.advance(len);
            data
        } else {
            decode_list(&src.copy_to_bytes(len))
        };
        data.map(|data| Some(List { data }))
            .map_err(|e| Status::internal(format!("failed to decode Protobuf message: {e}")))
    }
}

#[cfg(test)]
mod tests;
