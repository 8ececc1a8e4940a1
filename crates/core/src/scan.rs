//! Eight bytes at a time: the byte searches on the hot path (string runs in
//! JSON, the dots of a token). Word tests from "Bit Twiddling Hacks"
//! (haszero, hasless): they flag every byte that matches and may flag
//! bytes above it (a borrow), never below, so the lowest flag is exact.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `x` below `n`, at most 128 (see the
/// module's note).
fn below(x: u64, n: u8) -> u64 {
    x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH
}

/// The high bit of each zero byte of `x`.
fn zero_bytes(x: u64) -> u64 {
    below(x, 1)
}

/// Bytes of `w` that are `"`, `\\` or below 0x20. With bit 1 flipped, `"`
/// (0x22) becomes 0x20 and the control bytes stay below it, while 0x20 and
/// 0x21 go above: one test finds both.
fn attention(w: u64) -> u64 {
    below(w ^ (ONES * 0x02), 0x21) | zero_bytes(w ^ (ONES * u64::from(b'\\')))
}

fn is_attention(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// Index of the first byte of `hay` that `byte` accepts, `hay.len()` when
/// none does; `word` flags those bytes in eight at a time.
fn first(hay: &[u8], word: impl Fn(u64) -> u64, byte: impl Fn(u8) -> bool) -> usize {
    let mut chunks = hay.chunks_exact(8);
    let mut skipped = 0;
    for chunk in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let flags = word(u64::from_le_bytes(w));
        if flags != 0 {
            return skipped + (flags.trailing_zeros() / 8) as usize;
        }
        skipped += 8;
    }
    let tail = chunks.remainder();
    skipped + tail.iter().position(|&b| byte(b)).unwrap_or(tail.len())
}

/// How many leading bytes of `hay` are none of `"`, `\\` and control
/// bytes: the run a JSON string reader skips and a writer copies as is.
pub(crate) fn plain_len(hay: &[u8]) -> usize {
    first(hay, attention, is_attention)
}

/// Position of the first `needle` in `hay`.
pub(crate) fn find(hay: &[u8], needle: u8) -> Option<usize> {
    let pattern = ONES * u64::from(needle);
    let i = first(hay, |w| zero_bytes(w ^ pattern), |b| b == needle);
    (i < hay.len()).then_some(i)
}

/// Equal byte strings, eight bytes at a time: the wasm builds' `memcmp`
/// goes byte by byte, and what is compared here (member names, values
/// written alike) is short. The last word (or half word) overlaps the one
/// before it instead of a byte loop over the rest.
pub(crate) fn equal(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| {
        s.get(at..at + 8)
            .and_then(|w| w.try_into().ok())
            .map(u64::from_ne_bytes)
    };
    let half = |s: &[u8], at: usize| {
        s.get(at..at + 4)
            .and_then(|w| w.try_into().ok())
            .map(u32::from_ne_bytes)
    };
    match n {
        0..4 => a == b,
        4..8 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        _ => {
            let mut at = 0;
            while at + 8 < n {
                if word(a, at) != word(b, at) {
                    return false;
                }
                at += 8;
            }
            word(a, n - 8) == word(b, n - 8)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_tests_find_the_first_byte_exactly() {
        // Every byte value at every position of a word, after plain bytes
        // and before bytes of every kind.
        for b in 0..=255u8 {
            for pos in 0..8 {
                for after in [b'a', b'"', 0, 0x1f, b'\\', 0xff, b'.'] {
                    let mut hay = [b'a'; 12];
                    hay[pos] = b;
                    hay[pos + 1..].fill(after);
                    let expect = hay.iter().position(|&c| is_attention(c)).unwrap_or(12);
                    assert_eq!(plain_len(&hay), expect, "{hay:?}");
                    let dot = hay.iter().position(|&c| c == b'.');
                    assert_eq!(find(&hay, b'.'), dot, "{hay:?}");
                }
            }
        }
        for (a, b) in [
            (&b""[..], &b""[..]),
            (b"abc", b"abc"),
            (b"abcdefghij", b"abcdefghij"),
        ] {
            assert!(equal(a, b));
        }
        for (a, b) in [
            (&b"abc"[..], &b"abd"[..]),
            (b"abcdefghij", b"abcdefghik"),
            (b"abcdefghij", b"bbcdefghij"),
            (b"ab", b"abc"),
        ] {
            assert!(!equal(a, b));
        }
        // Every length up to three words, a difference at every place.
        let text = b"abcdefghijklmnopqrstuvwx";
        for n in 0..=text.len() {
            assert!(equal(&text[..n], &text[..n]));
            for at in 0..n {
                let mut other = text[..n].to_vec();
                other[at] = b'#';
                assert!(!equal(&text[..n], &other), "{n} {at}");
            }
        }
        let hay = b"abcdefghijklmnop.qrs.t";
        assert_eq!(find(hay, b'.'), Some(16));
        assert_eq!(find(b"x.", b'.'), Some(1));
        assert_eq!(find(b"abcdefgh", b'.'), None);
        assert_eq!(plain_len(b"abcdefghijk"), 11);
    }
}
