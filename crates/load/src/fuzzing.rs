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

/// An HTTP/1.1 answer (head, 1xx answers, every body framing), its headers placed or not
/// (the second flag bit). The values of a name the reader marks (`Set-Cookie`) and of one it
/// does not (`X-Other`), looked up as the checks look them up, must agree with a walk of the
/// placed headers, and with the same answer read the other way (the third flag bit).
pub fn http1_answer(data: &[u8]) {
    use crate::wire::{Answer, Marks, header_first_two};
    let (flags, cuts, wire) = pieces(data);
    let read = |place| {
        crate::http1::read_answer_with(wire, &cuts, flags & 1 == 1, place, |a| {
            let own = |(x, y): (Option<&[u8]>, Option<&[u8]>)| (x.map(<[u8]>::to_vec), y.map(<[u8]>::to_vec));
            let looked = [header_first_two(a, "SET-COOKIE"), header_first_two(a, "x-other")];
            assert_eq!(looked[0], Marks::set_cookie(a), "the look-up and the marks differ");
            if place {
                // Marks unknown: every name is found by a walk of the placed headers.
                let walked = Answer { marks: &Marks::NONE, ..*a };
                let walks = [header_first_two(&walked, "set-cookie"), header_first_two(&walked, "X-Other")];
                assert_eq!(looked, walks, "the look-ups and the walk differ");
                let labels = (
                    header_first_two(&walked, "content-encoding").0,
                    header_first_two(&walked, "content-type").0,
                );
                assert_eq!(Marks::body_labels(a), labels, "the marks and the walk differ");
            }
            (a.status, a.body.to_vec(), own(looked[0]), own(looked[1]), own(Marks::body_labels(a)))
        })
    };
    let placed = read(flags & 2 == 2);
    if let Ok((_, body, ..)) = &placed {
        assert!(body.len() <= wire.len(), "a body longer than what was sent");
    }
    if flags & 4 == 4 {
        assert_eq!(placed, read(flags & 2 == 0), "placing the headers changed what was read");
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
