//! Short byte strings compared on every answer the load engine checks (a stored
//! `Set-Cookie`, a host, a path, a member name, a cookie's value), told
//! ASCII, and searched for a byte (a `;` in a `Content-Type`): in line, eight bytes at a time, without a call to `memcmp`, whose
//! set-up costs more than the comparison of a dozen bytes.

/// `a == b`, eight bytes at a time (four, or one, below eight).
#[inline]
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n >= 8 {
        let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("eight bytes"));
        let mut at = 0;
        while at + 8 < n {
            if word(a, at) != word(b, at) {
                return false;
            }
            at += 8;
        }
        // The last eight bytes, overlapping the word before them.
        return word(a, n - 8) == word(b, n - 8);
    }
    if n >= 4 {
        let half = |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().expect("four bytes"));
        return half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4);
    }
    a.iter().zip(b).all(|(x, y)| x == y)
}

/// `s.contains(&byte)`, eight bytes at a time from the first byte (the last eight overlapping
/// the word before them): a header value looked at on every answer (a `Content-Type` without
/// a parameter) is a dozen bytes or two, which `core`'s byte search walks one at a time.
#[inline]
pub(crate) fn has(s: &[u8], byte: u8) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let n = s.len();
    if n < 8 {
        return s.contains(&byte);
    }
    // A byte of `w` is zero where `s` holds `byte`; `(x - ONES) & !x & HIGH` is not zero
    // exactly when a byte of `x` is (a borrow reaches a byte only from a zero byte below it).
    let zero = |at: usize| {
        let x = u64::from_le_bytes(s[at..at + 8].try_into().expect("eight bytes")) ^ (u64::from(byte) * ONES);
        x.wrapping_sub(ONES) & !x & HIGH
    };
    let mut any = zero(n - 8);
    let mut at = 0;
    while at + 8 < n {
        any |= zero(at);
        at += 8;
    }
    any != 0
}

/// `s.is_ascii()`, eight bytes at a time from the first byte (the last eight overlapping the
/// word before them), without the alignment `core`'s sets up first: a header value the
/// compiled checks read on every answer is a few dozen bytes.
#[inline]
pub(crate) fn ascii(s: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let n = s.len();
    if n < 8 {
        return s.iter().all(|&b| b < 0x80);
    }
    let word = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("eight bytes"));
    let mut any = word(n - 8);
    let mut at = 0;
    while at + 8 < n {
        any |= word(at);
        at += 8;
    }
    any & HIGH == 0
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// The comparison is `==`, at every length and on every differing byte.
        #[test]
        fn same_is_eq(
            a in proptest::collection::vec(0u8..3, 0..40),
            flip in any::<proptest::sample::Index>(),
            other in proptest::collection::vec(0u8..3, 0..40),
        ) {
            prop_assert!(super::same(&a, &a));
            let mut b = a.clone();
            if !b.is_empty() {
                let i = flip.index(b.len());
                b[i] ^= 1;
            }
            prop_assert_eq!(super::same(&a, &b), a == b);
            prop_assert_eq!(super::same(&a, &other), a == other);
        }

        /// The word-wise search is `contains`, at every length, wherever the byte lies and
        /// beside bytes one above or below it (where a borrow would show).
        #[test]
        fn has_is_contains(
            a in proptest::collection::vec(0u8..=255, 0..40),
            at in any::<proptest::sample::Index>(),
            byte in prop_oneof![Just(b';'), Just(0u8), Just(0x80u8), Just(255u8), any::<u8>()],
        ) {
            let near: Vec<u8> = a.iter().map(|&b| if b % 2 == 0 { byte.wrapping_add(1) } else { byte.wrapping_sub(1) }).collect();
            prop_assert_eq!(super::has(&a, byte), a.contains(&byte));
            prop_assert!(!super::has(&near, byte));
            let mut b = near.clone();
            if !b.is_empty() {
                let i = at.index(b.len());
                b[i] = byte;
                prop_assert!(super::has(&b, byte));
            }
        }

        /// The word-wise test is `is_ascii`, at every length and wherever the one byte above
        /// ASCII lies.
        #[test]
        fn ascii_is_is_ascii(
            a in proptest::collection::vec(0u8..0x80, 0..40),
            high in any::<proptest::sample::Index>(),
            byte in 0x80u8..,
        ) {
            prop_assert!(super::ascii(&a));
            let mut b = a.clone();
            if !b.is_empty() {
                let i = high.index(b.len());
                b[i] = byte;
            }
            prop_assert_eq!(super::ascii(&b), b.is_ascii());
        }
    }
}
