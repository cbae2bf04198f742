//! The `sort.v1.List` wire format of the gRPC service (`stackbench_contract::bubble`
//! `encode_list`/`decode_list`, used by `bubble::codec`) against
//! prost's generated code, on the original experiment's 1000 numbers: decode a message into
//! a `Vec<i32>`, encode a list into a buffer (prost's `encode` needs an owned
//! `List`: the cost of that copy is measured and taken off). Interleaved
//! rounds; the minimum of each (the machine is shared: the minimum is the
//! figure least disturbed by other work).
//!
//!     taskset -c 0 cargo run --release -p stackbench-serve --example bubble_codec -- [ROUNDS]
//!
//! Output: one line, `bubble_codec decode_prost_ns=… decode_ours_ns=… encode_prost_ns=… encode_ours_ns=…`.

use std::hint::black_box;

use prost::Message as _;
use stackbench_contract::bubble::SEED;
use stackbench_contract::bubble::{decode_list, encode_list};
use stackbench_serve::proto::List;
use timing::{best_of, per_call, rounds};

mod timing;

/// Calls per timing.
const CALLS: u32 = 2000;

fn main() {
    let rounds = rounds(30);
    let seed = SEED.clone();
    let message = List { data: seed.clone() }.encode_to_vec();
    assert_eq!(decode_list(&message).expect("prost's bytes decode"), seed);
    let mut ours = Vec::new();
    encode_list(&seed, &mut ours);
    assert_eq!(ours, message, "the same bytes as prost");

    let mut out = bytes::BytesMut::with_capacity(16 * 1024);
    let mut scratch = Vec::new();
    let best = best_of(rounds, || {
        [
            per_call(CALLS, || drop(black_box(List::decode(black_box(&message[..])).expect("decodes")))),
            per_call(CALLS, || drop(black_box(decode_list(black_box(&message[..])).expect("decodes")))),
            per_call(CALLS, || drop(black_box(seed.clone()))),
            per_call(CALLS, || {
                out.clear();
                List { data: black_box(&seed).clone() }.encode(&mut out).expect("room enough");
                black_box(&out);
            }),
            // As the service's encoder does: into a scratch buffer, then into tonic's.
            per_call(CALLS, || {
                out.clear();
                scratch.clear();
                encode_list(black_box(&seed), &mut scratch);
                bytes::BufMut::put_slice(&mut out, &scratch);
                black_box(&out);
            }),
        ]
    });
    let [decode_prost, decode_ours, clone, encode_prost, encode_ours] = best;
    println!(
        "bubble_codec decode_prost_ns={decode_prost:.0} decode_ours_ns={decode_ours:.0} \
         encode_prost_ns={:.0} encode_ours_ns={encode_ours:.0} rounds={rounds}",
        encode_prost - clone
    );
}
