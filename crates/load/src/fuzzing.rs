//! Entry points of the fuzz targets (`fuzz/`, run by `fuzz/run.sh`), not an
//! API: each drives one parser of a hostile server's bytes over arbitrary
//! input, delivered in pieces as reads would deliver them. A parser may
//! refuse its input (a `protocol` error); it must never panic, loop or grow
//! without bound. Every crash the fuzzers found is kept as a unit test
//! beside the parser it broke.

/// The first input byte chooses the flags, the second how the rest is cut
/// into reads (every `1 + byte % 64` bytes; 0 for one read).
fn pieces(data: &[u8]) -> (u8, Vec<usize>, &[u8]) {
    let (flags, step, wire) = match data {
        [f, s, rest @ ..] => (*f, usize::from(*s), rest),
        _ => (0, 0, &[][..]),
    };
    let cuts = if step == 0 { Vec::new() } else { (1..wire.len()).step_by(1 + step % 64).collect() };
    (flags, cuts, wire)
}

/// An HTTP/1.1 answer (head, 1xx answers, every body framing).
pub fn http1_answer(data: &[u8]) {
    let (flags, cuts, wire) = pieces(data);
    if let Ok((_, body)) = crate::http1::read_answer(wire, &cuts, flags & 1 == 1) {
        assert!(body.len() <= wire.len(), "a body longer than what was sent");
    }
}

/// A server's HTTP/2 frames on a client connection with three open streams.
pub fn h2c_frames(data: &[u8]) {
    let (_, cuts, wire) = pieces(data);
    let _ = crate::h2c::conn::read_frames(wire, &cuts);
}

/// One HPACK header block, decoded twice on the same table (the dynamic
/// table carries over, as on a connection).
pub fn hpack_block(data: &[u8]) {
    let mut decoder = crate::h2c::hpack::Decoder::new(4096);
    for _ in 0..2 {
        let mut octets = 0usize;
        if decoder.decode(data, |_| true, |n, v| octets += n.len() + v.len()).is_err() {
            return;
        }
    }
}
