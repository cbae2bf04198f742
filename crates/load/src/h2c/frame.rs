//! HTTP/2 frames (RFC 9113 §4 and §6) as the load engine's client needs them:
//! the 9-octet frame header, payloads stripped of padding and priority, and
//! writers that append the client's frames to a connection's write buffer.

/// The client connection preface (§3.4), sent before the first SETTINGS.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// The frame size every endpoint accepts (we advertise no larger one).
pub const DEFAULT_MAX_FRAME: usize = 16_384;
/// The initial flow-control window of streams and connections (§6.9.2).
pub const DEFAULT_WINDOW: i64 = 65_535;
/// The largest window (§6.9.1).
pub const MAX_WINDOW: i64 = (1 << 31) - 1;
pub const HEAD_LEN: usize = 9;

pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PUSH_PROMISE: u8 = 0x5;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY_FLAG: u8 = 0x20;

pub const SETTINGS_ENABLE_PUSH: u16 = 0x2;
pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
pub const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;

pub const NO_ERROR: u32 = 0x0;
pub const PROTOCOL_ERROR: u32 = 0x1;
pub const FLOW_CONTROL_ERROR: u32 = 0x3;
pub const FRAME_SIZE_ERROR: u32 = 0x6;
pub const REFUSED_STREAM: u32 = 0x7;
pub const CANCEL: u32 = 0x8;
pub const COMPRESSION_ERROR: u32 = 0x9;

/// A frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub len: usize,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

impl Head {
    /// Parses the header at the start of `b` (`None`: fewer than 9 octets).
    pub fn parse(b: &[u8]) -> Option<Head> {
        let b: &[u8; HEAD_LEN] = b.get(..HEAD_LEN)?.try_into().ok()?;
        Some(Head {
            len: (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        })
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// A frame whose payload does not fit its type (a connection error of this code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed(pub u32);

/// The data of a DATA frame, or the rest of a HEADERS frame, without padding (§6.1).
pub fn data<'a>(head: &Head, payload: &'a [u8]) -> Result<&'a [u8], Malformed> {
    if !head.has(PADDED) {
        return Ok(payload);
    }
    let pad = usize::from(*payload.first().ok_or(Malformed(FRAME_SIZE_ERROR))?);
    if pad >= payload.len() {
        return Err(Malformed(PROTOCOL_ERROR));
    }
    Ok(&payload[1..payload.len() - pad])
}

/// The header block fragment of a HEADERS frame (padding and priority removed, §6.2).
pub fn fragment<'a>(head: &Head, payload: &'a [u8]) -> Result<&'a [u8], Malformed> {
    let mut p = data(head, payload)?;
    if head.has(PRIORITY_FLAG) {
        p = p.get(5..).ok_or(Malformed(FRAME_SIZE_ERROR))?;
    }
    Ok(p)
}

/// A big-endian 31-bit value at the start of `b` (the reserved bit dropped).
pub fn u31(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & 0x7fff_ffff
}

pub fn put_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    debug_assert!(len < 1 << 24);
    let l = (len as u32).to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind, flags]);
    out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
}

pub fn put_settings(out: &mut Vec<u8>, settings: &[(u16, u32)]) {
    put_head(out, settings.len() * 6, SETTINGS, 0, 0);
    for (id, value) in settings {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

pub fn put_settings_ack(out: &mut Vec<u8>) {
    put_head(out, 0, SETTINGS, ACK, 0);
}

pub fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_head(out, 4, WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

pub fn put_rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    put_head(out, 4, RST_STREAM, 0, stream);
    out.extend_from_slice(&code.to_be_bytes());
}

pub fn put_ping_ack(out: &mut Vec<u8>, payload: &[u8]) {
    put_head(out, 8, PING, ACK, 0);
    out.extend_from_slice(payload);
}

pub fn put_goaway(out: &mut Vec<u8>, last_stream: u32, code: u32) {
    put_head(out, 8, GOAWAY, 0, 0);
    out.extend_from_slice(&last_stream.to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
}

/// A header block as HEADERS and, past `max_frame`, CONTINUATION frames.
pub fn put_headers(out: &mut Vec<u8>, stream: u32, block: &[u8], end_stream: bool, max_frame: usize) {
    let mut chunks = block.chunks(max_frame.max(1));
    let first = chunks.next().unwrap_or_default();
    let rest = chunks.len();
    let mut flags = if end_stream { END_STREAM } else { 0 };
    if rest == 0 {
        flags |= END_HEADERS;
    }
    put_head(out, first.len(), HEADERS, flags, stream);
    out.extend_from_slice(first);
    for (i, c) in chunks.enumerate() {
        put_head(out, c.len(), CONTINUATION, if i + 1 == rest { END_HEADERS } else { 0 }, stream);
        out.extend_from_slice(c);
    }
}

/// Octets on the wire for a header block of `block` octets and a body of `body` octets.
pub fn request_size(block: usize, body: usize, max_frame: usize) -> u64 {
    let frames = |n: usize| n.div_ceil(max_frame).max(1);
    let mut n = block + HEAD_LEN * frames(block);
    if body > 0 {
        n += body + HEAD_LEN * frames(body);
    }
    n as u64
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn heads_round_trip() {
        let mut out = Vec::new();
        put_head(&mut out, 70_000, HEADERS, END_HEADERS | END_STREAM, 0x7fff_ffff);
        assert_eq!(out, [0x01, 0x11, 0x70, 0x01, 0x05, 0x7f, 0xff, 0xff, 0xff]);
        let h = Head::parse(&out).unwrap();
        assert_eq!(h, Head { len: 70_000, kind: HEADERS, flags: 5, stream: 0x7fff_ffff });
        assert!(h.has(END_STREAM) && !h.has(PADDED));
        assert_eq!(Head::parse(&out[..8]), None);
        // The reserved bit of the stream identifier is ignored.
        out[5] = 0xff;
        assert_eq!(Head::parse(&out).unwrap().stream, 0x7fff_ffff);
    }

    #[test]
    fn padding_and_priority_are_stripped() {
        let h = Head { len: 0, kind: DATA, flags: PADDED, stream: 1 };
        assert_eq!(data(&h, &[2, b'a', b'b', 0, 0]), Ok(&b"ab"[..]));
        assert_eq!(data(&h, &[4, b'a', 0, 0]), Err(Malformed(PROTOCOL_ERROR)));
        assert_eq!(data(&h, &[]), Err(Malformed(FRAME_SIZE_ERROR)));
        let h = Head { len: 0, kind: HEADERS, flags: PADDED | PRIORITY_FLAG, stream: 1 };
        assert_eq!(fragment(&h, &[1, 0, 0, 0, 3, 16, 0x88, 0]), Ok(&[0x88][..]));
        assert_eq!(fragment(&h, &[0, 0, 0]), Err(Malformed(FRAME_SIZE_ERROR)));
    }

    #[test]
    fn control_frames() {
        let mut out = Vec::new();
        put_settings(&mut out, &[(SETTINGS_ENABLE_PUSH, 0), (SETTINGS_INITIAL_WINDOW_SIZE, 1 << 24)]);
        assert_eq!(&out[..9], &[0, 0, 12, SETTINGS, 0, 0, 0, 0, 0]);
        assert_eq!(&out[9..], &[0, 2, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0]);
        out.clear();
        put_window_update(&mut out, 3, 1000);
        put_rst_stream(&mut out, 5, CANCEL);
        put_goaway(&mut out, 0, NO_ERROR);
        put_ping_ack(&mut out, b"12345678");
        let kinds: Vec<u8> = [0, 13, 26, 43].iter().map(|&i| Head::parse(&out[i..]).unwrap().kind).collect();
        assert_eq!(kinds, [WINDOW_UPDATE, RST_STREAM, GOAWAY, PING]);
        assert_eq!(u31(&out[9..]), 1000);
    }

    proptest! {
        #[test]
        fn header_blocks_split_into_continuations(len in 0usize..2000, max in 1usize..600, end in any::<bool>()) {
            let block: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let mut out = Vec::new();
            put_headers(&mut out, 7, &block, end, max);
            prop_assert_eq!(out.len() as u64, request_size(len, 0, max));
            let (mut at, mut joined, mut frames) = (0, Vec::new(), 0);
            while at < out.len() {
                let h = Head::parse(&out[at..]).unwrap();
                prop_assert_eq!(h.kind, if frames == 0 { HEADERS } else { CONTINUATION });
                prop_assert_eq!(h.stream, 7);
                prop_assert!(h.len <= max);
                joined.extend_from_slice(&out[at + 9..at + 9 + h.len]);
                at += 9 + h.len;
                frames += 1;
                prop_assert_eq!(h.has(END_HEADERS), at == out.len());
                if frames == 1 { prop_assert_eq!(h.has(END_STREAM), end); }
            }
            prop_assert_eq!(joined, block);
        }
    }
}
