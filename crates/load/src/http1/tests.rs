//! The HTTP/1.1 reader on bytes as they arrive: whole answers cut anywhere, chunked bodies
//! and their bounds, `Content-Length` digits and `Connection` tokens; and which of a
//! connection's answers place every header.

use super::*;

/// Feeds `wire` to a decoder in pieces of `step` bytes, as reads would
/// deliver it; returns the decoded body, `None` while incomplete, or `Err`.
fn dechunk(wire: &[u8], step: usize) -> Result<Option<Vec<u8>>, ()> {
    let mut d = Dechunk::default();
    let mut buf = Vec::new();
    for piece in wire.chunks(step.max(1)) {
        buf.extend_from_slice(piece);
        let (keep, done) = d.advance(&mut buf)?;
        buf.truncate(keep);
        if done {
            return Ok(Some(buf[..d.decoded].to_vec()));
        }
    }
    Ok(None)
}

#[test]
fn chunked_bodies() {
    for step in [1, 2, 3, 7, 1000] {
        let body = dechunk(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", step);
        assert_eq!(body, Ok(Some(b"hello world".to_vec())), "step {step}");
        let trailers = dechunk(b"5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n", step);
        assert_eq!(trailers, Ok(Some(b"hello".to_vec())), "step {step}");
        assert_eq!(dechunk(b"5\r\nhel", step), Ok(None));
        assert_eq!(dechunk(b"5\r\nhello\r\n0\r\n", step), Ok(None));
        assert_eq!(dechunk(b"zz\r\n", step), Err(()));
        assert_eq!(dechunk(b"2\r\nabc\r\n", step), Err(()));
    }
}

#[test]
fn answers_are_read_however_they_arrive() {
    type Want = Result<(u16, &'static [u8]), ErrorKind>;
    let cases: [(&[u8], bool, Want); 10] = [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false, Ok((200, b"ok"))),
        (
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx",
            false,
            Ok((201, b"x")),
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
            false,
            Ok((200, b"ok")),
        ),
        (b"HTTP/1.0 200 OK\r\n\r\nuntil the end", false, Ok((200, b"until the end"))),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", true, Ok((200, b""))),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nshort", false, Ok((200, b"short"))),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort", false, Err(ErrorKind::Reset)),
        (b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", false, Err(ErrorKind::Protocol)),
        // Issue 33 #8: conflicting lengths are a protocol error (RFC 9112 §6.3); equal ones are not.
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\nokabc",
            false,
            Err(ErrorKind::Protocol),
        ),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", false, Ok((200, b"ok"))),
    ];
    for (wire, head_only, want) in cases {
        let want = want.map(|(s, b)| (s, b.to_vec()));
        for step in [1, 3, 7, wire.len()] {
            let cuts: Vec<usize> = (step..wire.len()).step_by(step).collect();
            assert_eq!(
                read_answer(wire, &cuts, head_only),
                want,
                "{:?} in pieces of {step}",
                String::from_utf8_lossy(wire)
            );
        }
    }
}

/// Regression (a chunk size of 2^64-1 made `size + 2` overflow and the
/// worker panic, and the run was reported clean): sizes past the cap are
/// a protocol error, whatever their width.
#[test]
fn huge_chunk_sizes_are_refused_without_overflow() {
    assert_eq!(dechunk(b"ffffffffffffffff\r\nxx\r\n0\r\n\r\n", 1000), Err(()));
    assert_eq!(dechunk(b"fffffffffffffffe\r\nxx\r\n", 1000), Err(()));
    assert_eq!(dechunk(format!("{:x}\r\n", MAX_ANSWER + 1).as_bytes(), 1000), Err(()));
    // Two chunks that each fit but together pass the cap.
    let half = MAX_ANSWER / 2 + 1;
    let mut wire = format!("{half:x}\r\n").into_bytes();
    wire.resize(wire.len() + half, b'a');
    wire.extend_from_slice(format!("\r\n{half:x}\r\n").as_bytes());
    assert_eq!(dechunk(&wire, wire.len()), Err(()));
}

/// An endless chunk-size line or trailer section is refused once it passes
/// the head cap, instead of being buffered up to the answer cap.
#[test]
fn endless_framing_lines_are_bounded() {
    let long = vec![b'1'; MAX_HEAD + 10];
    assert_eq!(dechunk(&long, 4096), Err(()));
    let mut trailer = b"1\r\na\r\n0\r\nX: ".to_vec();
    trailer.extend(std::iter::repeat_n(b'y', MAX_HEAD + 10));
    assert_eq!(dechunk(&trailer, 4096), Err(()));
}

#[test]
fn content_lengths() {
    assert_eq!(decimal(b"0"), Some(0));
    assert_eq!(decimal(b" 12\t"), Some(12));
    assert_eq!(decimal(b"18446744073709551615"), Some(usize::MAX));
    for bad in [&b""[..], b" ", b"+5", b"-1", b"1 2", b"0x10", b"12a", b"18446744073709551616"] {
        assert_eq!(decimal(bad), None, "{:?}", String::from_utf8_lossy(bad));
    }
}

proptest::proptest! {
    /// A Content-Length is read as the standard parser reads its digits, and nothing else.
    #[test]
    fn content_length_is_digits_only(v in "[ \t]?[0-9+a -]{0,22}[ \t]?") {
        let t = v.trim_matches([' ', '\t']);
        let want = if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) { t.parse().ok() } else { None };
        proptest::prop_assert_eq!(decimal(v.as_bytes()), want);
    }

    /// A token is found as a split on commas finds it, whatever the value's length.
    #[test]
    fn tokens_are_found_as_a_split_finds_them(v in "[ ,]{0,2}(close|Keep-Alive|x|,| )*", t in "close|keep-alive") {
        let want = v.split(',').any(|e| e.trim_matches(' ').eq_ignore_ascii_case(&t));
        proptest::prop_assert_eq!(has_token(v.as_bytes(), t.as_bytes()), want);
    }

    /// Any body, cut into any chunks, read in any pieces, decodes to itself.
    #[test]
    fn chunking_round_trips(
        body in proptest::collection::vec(proptest::num::u8::ANY, 0..600),
        cuts in proptest::collection::vec(1usize..80, 1..20),
        step in 1usize..64,
    ) {
        let mut wire = Vec::new();
        let (mut at, mut i) = (0, 0);
        while at < body.len() {
            let n = cuts[i % cuts.len()].min(body.len() - at);
            wire.extend_from_slice(format!("{n:x}\r\n").as_bytes());
            wire.extend_from_slice(&body[at..at + n]);
            wire.extend_from_slice(b"\r\n");
            at += n;
            i += 1;
        }
        wire.extend_from_slice(b"0\r\n\r\n");
        proptest::prop_assert_eq!(dechunk(&wire, step), Ok(Some(body)));
    }
}

/// A connection's answers note the marked headers only, until a look-up of another name
/// parses one again: from the next answer on, every header is placed as it is read.
#[test]
fn headers_are_placed_once_a_look_up_asks_for_a_name_not_marked() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let exchanges = async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let answer = b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nLocation: /x\r\nContent-Length: 2\r\n\r\nok";
            let mut buf = vec![0; 4096];
            for _ in 0..3 {
                // One request a read: the client sends the next only after this answer.
                assert!(s.read(&mut buf).await.unwrap() > 0);
                s.write_all(answer).await.unwrap();
            }
        });
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let mut conn = Http1Conn::with_socket(addr, Socket::Tcp(tcp));
        conn.keep_headers(true);
        let request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        let a = conn.send(Wire::Lent(request), false, true).await.unwrap();
        assert_eq!((a.headers.len(), crate::wire::Marks::set_cookie(&a)), (0, (Some(&b"a=1"[..]), None)));
        let a = conn.send(Wire::Lent(request), false, true).await.unwrap();
        assert_eq!(a.headers.len(), 0, "a marked name asks for no table");
        assert_eq!(crate::wire::header_value(&a, "location", 0), Some(&b"/x"[..]));
        let a = conn.send(Wire::Lent(request), false, true).await.unwrap();
        assert_eq!(a.headers.len(), 3, "placed after a look-up parsed the head again");
        assert_eq!(crate::wire::header_value(&a, "Location", 0), Some(&b"/x"[..]));
        assert_eq!(crate::wire::Marks::set_cookie(&a), (Some(&b"a=1"[..]), None));
        server.await.unwrap();
    };
    rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(20), exchanges).await.expect("done within 20 s");
    });
}
