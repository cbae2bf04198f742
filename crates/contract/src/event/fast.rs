//! The fast path of [`super::parse_event`]: one pass over the bytes for the
//! bodies real clients send (an object of the four known keys, no escapes,
//! no unknown keys), without serde. It only ever *accepts*: anything it does
//! not fully understand, valid or not (escapes, unknown keys, duplicates,
//! `-0`, a bad name, malformed JSON), makes it answer `None`, and the serde
//! path decides, with its exact error messages. So the set of accepted bodies
//! and the events they give are the serde path's by construction; the property
//! tests below check that whatever this path accepts, the serde path accepts
//! identically.
//!
//! Why it exists: in `sb-dummy` under load, the serde path was about 6% of the
//! server's CPU time (`bench/event-log/bench.py dummy`, perf); this pass is a
//! fraction of that.

use std::borrow::Cow;

use super::{DEFAULT_SOURCE, DEFAULT_VALUE, Event, Field, MAX_NAME_LEN, TIMESTAMP_LIMIT, is_name_byte};

/// [`is_name_byte`] as a table: the bytes of `type` and `source`.
const NAME_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 256 {
        table[c] = is_name_byte(c as u8);
        c += 1;
    }
    table
};

// `Reader::name` relies on it: a name byte is ASCII, so a name is UTF-8.
const _: () = {
    let mut c = 128;
    while c < 256 {
        assert!(!NAME_BYTE[c], "a name byte outside ASCII");
        c += 1;
    }
};

/// The powers of ten an `f64` holds exactly: 10^0 ..= 10^22.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
    1e19, 1e20, 1e21, 1e22,
];

/// `Some(event)` when `body` is certainly a valid event of the simple shape;
/// `None` when the serde path must decide.
pub(super) fn parse(body: &[u8]) -> Option<Event<'_>> {
    let mut r = Reader { rest: body };
    r.ws();
    r.eat(b'{')?;
    let (mut kind, mut source, mut value, mut timestamp) = (None, None, None, None);
    // The keys seen, one bit per field: a second one goes to the serde path.
    let mut seen = 0u8;
    // `{}` has no `type`: the serde path says so.
    loop {
        r.ws();
        let key = r.key()?;
        r.ws();
        r.eat(b':')?;
        r.ws();
        let bit = 1 << key as u8;
        if seen & bit != 0 {
            return None;
        }
        seen |= bit;
        match key {
            Field::Type => kind = Some(r.name()?),
            Field::Source => r.nullable(Reader::name, &mut source)?,
            Field::Value => r.nullable(Reader::value, &mut value)?,
            Field::Timestamp => r.nullable(Reader::timestamp, &mut timestamp)?,
        }
        r.ws();
        match r.next()? {
            b',' => {}
            b'}' => break,
            _ => return None,
        }
    }
    r.ws();
    if !r.rest.is_empty() {
        return None;
    }
    Some(Event {
        kind: Cow::Borrowed(kind?),
        source: Cow::Borrowed(source.unwrap_or(DEFAULT_SOURCE)),
        value: value.unwrap_or(DEFAULT_VALUE),
        timestamp_ms: timestamp,
    })
}

/// The bytes not read yet. A shrinking slice rather than a slice and an
/// index: each step is a slice pattern, which checks the length once and
/// cannot panic, where `b[i]` and `b[i..]` each checked the bounds again.
/// With the one-comparison [`Reader::ws`] and names without `from_utf8`:
/// 9,789 → 9,555 instructions per request of `sb-dummy --stack hyper`
/// (`bench/event-log/instructions.py`, both builds in one run).
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn next(&mut self) -> Option<u8> {
        let (&c, tail) = self.rest.split_first()?;
        self.rest = tail;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    /// JSON's whitespace: space, tab, line feed, carriage return.
    /// The usual case, no whitespace, is one comparison: JSON's whitespace
    /// bytes are all below `!`.
    fn ws(&mut self) {
        if let [c, ..] = self.rest
            && *c > b' '
        {
            return;
        }
        while let [b' ' | b'\t' | b'\n' | b'\r', tail @ ..] = self.rest {
            self.rest = tail;
        }
    }

    /// One of the four known keys, quoted, without escapes.
    fn key(&mut self) -> Option<Field> {
        let (field, tail) = match self.rest {
            [b'"', b't', b'y', b'p', b'e', b'"', tail @ ..] => (Field::Type, tail),
            [b'"', b's', b'o', b'u', b'r', b'c', b'e', b'"', tail @ ..] => (Field::Source, tail),
            [b'"', b'v', b'a', b'l', b'u', b'e', b'"', tail @ ..] => (Field::Value, tail),
            [b'"', b't', b'i', b'm', b'e', b's', b't', b'a', b'm', b'p', b'"', tail @ ..] => {
                (Field::Timestamp, tail)
            }
            _ => return None,
        };
        self.rest = tail;
        Some(field)
    }

    /// `null` (leaves `slot` empty), or what `read` reads into `slot`.
    fn nullable<T>(&mut self, read: fn(&mut Self) -> Option<T>, slot: &mut Option<T>) -> Option<()> {
        if let [b'n', b'u', b'l', b'l', tail @ ..] = self.rest {
            self.rest = tail;
        } else {
            *slot = Some(read(self)?);
        }
        Some(())
    }

    /// A valid `type`/`source`: 1–64 characters of `[A-Za-z0-9_.:-]`, no escapes.
    #[allow(unsafe_code)]
    fn name(&mut self) -> Option<&'a str> {
        let [b'"', rest @ ..] = self.rest else { return None };
        let len = rest.iter().position(|&c| !NAME_BYTE[usize::from(c)])?;
        let (name, [b'"', tail @ ..]) = rest.split_at(len) else { return None };
        if len == 0 || len > MAX_NAME_LEN {
            return None;
        }
        self.rest = tail;
        // SAFETY: every byte of `name` is in `NAME_BYTE`, which holds only
        // ASCII bytes (a compile-time assertion beside the table), so `name`
        // is valid UTF-8. `str::from_utf8` here, twice per event, was about a
        // sixth of this parse's instructions.
        debug_assert!(name.is_ascii());
        Some(unsafe { std::str::from_utf8_unchecked(name) })
    }

    /// A JSON number (RFC 8259 §6 grammar) that is a finite `f64`.
    ///
    /// Read in the same pass as the grammar: the digits into a decimal
    /// mantissa, the fraction and exponent into a power of ten. When both are
    /// exact in an `f64` (mantissa at most 2^53, power within ±22), one
    /// multiplication or division is the correctly rounded value, the fast
    /// path `str::parse` itself takes (Clinger's); the rest goes through
    /// `str::parse`. So the value is `str::parse`'s, bit for bit (tested
    /// below), without a second scan and a UTF-8 check of the text.
    fn value(&mut self) -> Option<f64> {
        let start = self.rest;
        let negative = if let [b'-', tail @ ..] = self.rest {
            self.rest = tail;
            true
        } else {
            false
        };
        // The digits read into `mantissa`, wrapping: exact while `digits` <= 19.
        let (mut mantissa, mut digits, mut power) = (0u64, 0u32, 0i32);
        match self.rest {
            [b'0', tail @ ..] => self.rest = tail,
            [b'1'..=b'9', ..] => self.mantissa_digits(&mut mantissa, &mut digits),
            _ => return None,
        }
        if let [b'.', tail @ ..] = self.rest {
            self.rest = tail;
            let before = digits;
            self.mantissa_digits(&mut mantissa, &mut digits);
            if digits == before {
                return None;
            }
            power = -((digits - before) as i32);
        }
        if let [b'e' | b'E', tail @ ..] = self.rest {
            self.rest = tail;
            let negative_exponent = match self.rest {
                [b'-', tail @ ..] => {
                    self.rest = tail;
                    true
                }
                [b'+', tail @ ..] => {
                    self.rest = tail;
                    false
                }
                _ => false,
            };
            let [b'0'..=b'9', ..] = self.rest else { return None };
            let mut exponent = 0i32;
            while let [d @ b'0'..=b'9', tail @ ..] = self.rest {
                // Past 9,999 the value is 0, infinite or `str::parse`'s to decide.
                exponent = (exponent * 10 + i32::from(d - b'0')).min(10_000);
                self.rest = tail;
            }
            power += if negative_exponent { -exponent } else { exponent };
        }
        if digits <= 19 && mantissa <= 1 << 53 && power.unsigned_abs() <= 22 {
            let (m, scale) = (mantissa as f64, POW10[power.unsigned_abs() as usize]);
            let v = if power < 0 { m / scale } else { m * scale };
            return Some(if negative { -v } else { v });
        }
        let text = std::str::from_utf8(&start[..start.len() - self.rest.len()]).ok()?;
        text.parse::<f64>().ok().filter(|v| v.is_finite())
    }

    /// Digits into `mantissa` (wrapping past 19 of them), counted in `digits`.
    fn mantissa_digits(&mut self, mantissa: &mut u64, digits: &mut u32) {
        while let [d @ b'0'..=b'9', tail @ ..] = self.rest {
            *mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
            *digits += 1;
            self.rest = tail;
        }
    }

    /// A `timestamp`: `0` or `[1-9][0-9]*`, below 2^53 (16 digits at most).
    fn timestamp(&mut self) -> Option<u64> {
        let (start, mut t) = (self.rest.len(), 0u64);
        match self.rest {
            [b'0', tail @ ..] => self.rest = tail,
            [b'1'..=b'9', ..] => {
                // Wraps only past 19 digits, refused below.
                while let Some((eight, tail)) = eight_digits(self.rest) {
                    t = t.wrapping_mul(100_000_000).wrapping_add(eight);
                    self.rest = tail;
                }
                while let [d @ b'0'..=b'9', tail @ ..] = self.rest {
                    t = t.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                    self.rest = tail;
                }
            }
            _ => return None,
        }
        // A fraction, an exponent or a digit after a leading 0: the serde path says why.
        if let [b'.' | b'e' | b'E' | b'0'..=b'9', ..] = self.rest {
            return None;
        }
        (start - self.rest.len() <= 16 && t < TIMESTAMP_LIMIT).then_some(t)
    }
}

/// The value of the eight ASCII digits `b` starts with, and the rest; `None`
/// unless its first eight bytes are all digits. Eight bytes at once, as one
/// `u64` (fast_float's method): a timestamp in milliseconds has 13 digits,
/// one step of eight and five of one instead of thirteen.
fn eight_digits(b: &[u8]) -> Option<(u64, &[u8])> {
    let (chunk, tail) = b.split_first_chunk::<8>()?;
    let v = u64::from_le_bytes(*chunk);
    // Every byte is 0x30..=0x39: its high nibble is 3, and adding 6 to its
    // low nibble does not carry into the high one.
    let high = 0xF0F0_F0F0_F0F0_F0F0;
    if (v & high) | ((v.wrapping_add(0x0606_0606_0606_0606) & high) >> 4) != 0x3333_3333_3333_3333 {
        return None;
    }
    // Digit values, then pairs (10a + b), then quadruples, then all eight:
    // the first byte is the most significant digit.
    let v = v - 0x3030_3030_3030_3030;
    let v = v * 10 + (v >> 8);
    let v = ((v & 0x0000_00FF_0000_00FF).wrapping_mul(100 + (1_000_000 << 32))
        + ((v >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32)))
        >> 32;
    Some((v, tail))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::parse_event_with_serde;
    use super::*;

    /// Whatever the fast path accepts, the serde path accepts identically.
    fn agrees(body: &[u8]) {
        if let Some(fast) = parse(body) {
            let slow = parse_event_with_serde(body);
            assert_eq!(slow.as_ref(), Ok(&fast), "{:?}", String::from_utf8_lossy(body));
            // Bit-for-bit, not just `==` (which says -0.0 == 0.0).
            assert_eq!(slow.unwrap().value.to_bits(), fast.value.to_bits());
        }
    }

    #[test]
    fn takes_the_bodies_clients_send() {
        for body in [
            r#"{"type":"page_view","source":"web","value":1.5,"timestamp":1764460800000}"#,
            r#" { "type" : "a" } "#,
            "{\n\t\"timestamp\": 0,\r\n\"type\": \"a.b:c-d_E9\", \"value\": -0.0e+5, \"source\": null}\n",
            r#"{"type":"t","value":null,"timestamp":null}"#,
            r#"{"type":"t","value":-1.7976931348623157e308,"timestamp":9007199254740991}"#,
        ] {
            assert!(parse(body.as_bytes()).is_some(), "{body}");
            agrees(body.as_bytes());
        }
        let e = parse(br#"{"type":"page_view","value":2,"timestamp":12}"#).unwrap();
        assert_eq!(
            (&*e.kind, &*e.source, e.value, e.timestamp_ms),
            ("page_view", DEFAULT_SOURCE, 2.0, Some(12))
        );
    }

    #[test]
    fn leaves_the_rest_to_the_serde_path() {
        for body in [
            "",
            "{",
            "{}",
            "[]",
            r#"{"type":"a"} x"#,
            r#"{"type":"a",}"#,
            r#"{"type":"a" "source":"b"}"#,
            r#"{"type":"a","type":"a"}"#,
            r#"{"type":"a","source":null,"source":null}"#,
            r#"{"type":"a","extra":1}"#,
            r#"{"typ\u0065":"a"}"#,
            r#"{"type":"a\u005fb"}"#,
            r#"{"type":null}"#,
            r#"{"type":""}"#,
            r#"{"type":"a b"}"#,
            r#"{"type":"a","value":01}"#,
            r#"{"type":"a","value":1.}"#,
            r#"{"type":"a","value":.5}"#,
            r#"{"type":"a","value":1e}"#,
            r#"{"type":"a","value":1e400}"#,
            r#"{"type":"a","value":"1"}"#,
            r#"{"type":"a","timestamp":-0}"#,
            r#"{"type":"a","timestamp":1.0}"#,
            r#"{"type":"a","timestamp":01}"#,
            r#"{"type":"a","timestamp":9007199254740992}"#,
            r#"{"type":"a","timestamp":12345678901234567}"#,
            r#"{"type":"a","value":nul}"#,
            "\u{feff}{\"type\":\"a\"}",
            "\x0c{\"type\":\"a\"}",
        ] {
            assert!(parse(body.as_bytes()).is_none(), "{body}");
        }
        let long = format!(r#"{{"type":"{}"}}"#, "a".repeat(MAX_NAME_LEN + 1));
        assert!(parse(long.as_bytes()).is_none());
        let longest = format!(r#"{{"type":"{}"}}"#, "a".repeat(MAX_NAME_LEN));
        assert!(parse(longest.as_bytes()).is_some());
    }

    /// Mantissas of 20 digits and more wrap in the u64 they are read into;
    /// the digit count keeps them off the fast path. These wrap to 0, 1 and
    /// 2^53, which random digits almost never hit.
    #[test]
    fn mantissas_past_u64_are_not_taken_wrapped() {
        for text in [
            "18446744073709551616",
            "18446744073709551617",
            "18455751272964292608",
            "1844674407370955161.7e1",
            "0.18446744073709551617e20",
        ] {
            let mut r = Reader { rest: text.as_bytes() };
            let fast = r.value().map(f64::to_bits);
            assert_eq!(fast, text.parse::<f64>().ok().map(f64::to_bits), "{text}");
        }
    }

    #[test]
    fn eight_digits_at_once() {
        assert_eq!(eight_digits(b"12345678x").map(|(v, t)| (v, t.len())), Some((12_345_678, 1)));
        assert_eq!(eight_digits(b"99999999").map(|(v, _)| v), Some(99_999_999));
        assert_eq!(eight_digits(b"00000000").map(|(v, _)| v), Some(0));
        // Bytes just outside the digits on each side, in each position.
        for i in 0..8 {
            for bad in [b'/', b':', b'0' + 0x80, b' ', b'\x06'] {
                let mut b = *b"12345678";
                b[i] = bad;
                assert_eq!(eight_digits(&b), None, "{b:?}");
            }
        }
        assert_eq!(eight_digits(b"1234567"), None);
    }

    /// Pieces of event bodies, valid and not, to splice at random.
    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "{",
            "}",
            ",",
            ":",
            " ",
            "\n",
            "\t",
            "\"",
            "\"type\"",
            "\"source\"",
            "\"value\"",
            "\"timestamp\"",
            "\"x\"",
            "null",
            "nul",
            "true",
            "\"a\"",
            "\"page_view\"",
            "\"a b\"",
            "\"\"",
            "\"\\u0061\"",
            "0",
            "-0",
            "1",
            "01",
            "1.5",
            "-2.25e-3",
            "1e400",
            "1E+2",
            ".5",
            "1.",
            "-",
            "9007199254740991",
            "9007199254740992",
            "[1]",
            "é",
            "\\",
        ])
    }

    /// A well-formed event with random spacing, key order and values.
    fn event_body() -> impl Strategy<Value = String> {
        let name = "[A-Za-z0-9_.:-]{1,64}";
        let ws = prop::sample::select(vec!["", " ", "\n", "\t ", "\r\n"]);
        (
            name,
            prop::option::of(prop::option::of(name)),
            prop::option::of(prop::option::of(any::<f64>().prop_filter("finite", |v| v.is_finite()))),
            prop::option::of(prop::option::of(0u64..TIMESTAMP_LIMIT)),
            any::<usize>(),
            ws,
        )
            .prop_map(|(kind, source, value, timestamp, order, ws)| {
                let quote = |s: String| format!("\"{s}\"");
                let opt = |v: Option<String>| v.unwrap_or_else(|| "null".to_owned());
                let mut fields = vec![format!("\"type\"{ws}:{ws}\"{kind}\"")];
                if let Some(s) = source {
                    fields.push(format!("\"source\":{ws}{}", opt(s.map(quote))));
                }
                if let Some(v) = value {
                    fields.push(format!("\"value\":{}", opt(v.map(|v| format!("{v:e}")))));
                }
                if let Some(t) = timestamp {
                    fields.push(format!("{ws}\"timestamp\":{}", opt(t.map(|t| t.to_string()))));
                }
                let n = fields.len();
                fields.rotate_left(order % n);
                format!("{ws}{{{}}}{ws}", fields.join(&format!(",{ws}")))
            })
    }

    proptest! {
        #[test]
        fn spliced_pieces_agree(pieces in prop::collection::vec(piece(), 0..24)) {
            agrees(pieces.concat().as_bytes());
        }

        #[test]
        fn arbitrary_bytes_agree(body in prop::collection::vec(any::<u8>(), 0..96)) {
            agrees(&body);
        }

        /// The in-pass number reading gives `str::parse`'s value, bit for bit,
        /// on both sides of its fast path (mantissas past 2^53 and u64, powers
        /// past ±22), and the serde path agrees.
        #[test]
        fn numbers_are_str_parse_bit_for_bit(
            text in "-?(0|[1-9][0-9]{0,21})(\\.[0-9]{1,22})?([eE][+-]?[0-9]{1,3})?",
        ) {
            let mut r = Reader { rest: text.as_bytes() };
            let fast = r.value();
            let std = text.parse::<f64>().ok().filter(|v| v.is_finite());
            prop_assert_eq!(fast.map(f64::to_bits), std.map(f64::to_bits), "{}", text);
            prop_assert!(fast.is_none() || r.rest.is_empty());
            agrees(format!(r#"{{"type":"a","value":{text}}}"#).as_bytes());
        }

        /// Any eight bytes: a value exactly when all are digits, and then theirs.
        #[test]
        fn eight_digits_is_the_digits_value(
            b in prop::array::uniform8(prop_oneof![b'0'..=b'9', any::<u8>()]),
        ) {
            let expected = b.iter().all(u8::is_ascii_digit)
                .then(|| b.iter().fold(0u64, |t, d| t * 10 + u64::from(d - b'0')));
            prop_assert_eq!(eight_digits(&b).map(|(v, _)| v), expected, "{:?}", b);
        }

        #[test]
        fn well_formed_events_take_the_fast_path(body in event_body()) {
            prop_assert!(parse(body.as_bytes()).is_some(), "{}", body);
            agrees(body.as_bytes());
        }
    }
}
