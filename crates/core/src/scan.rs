//! Eight bytes at a time: the byte searches on the hot path (string runs in
//! JSON, the dots of a token). Exact word tests, see "Bit Twiddling Hacks"
//! (haszero, hasless).

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

fn has_zero(x: u64) -> bool {
    x.wrapping_sub(ONES) & !x & HIGH != 0
}

/// Whether any of eight bytes is `"`, `\\` or below 0x20.
pub(crate) fn needs_attention(w: u64) -> bool {
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH != 0;
    control || has_zero(w ^ (ONES * u64::from(b'"'))) || has_zero(w ^ (ONES * u64::from(b'\\')))
}

/// How many leading bytes of `hay`, in whole words, pass with `stop` false.
pub(crate) fn skip_words(hay: &[u8], stop: impl Fn(u64) -> bool) -> usize {
    let mut skipped = 0;
    for chunk in hay.chunks_exact(8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        if stop(u64::from_le_bytes(word)) {
            break;
        }
        skipped += 8;
    }
    skipped
}

/// Position of the first `needle` in `hay`.
pub(crate) fn find(hay: &[u8], needle: u8) -> Option<usize> {
    let pattern = ONES * u64::from(needle);
    let skipped = skip_words(hay, |w| has_zero(w ^ pattern));
    let rest = hay.get(skipped..)?;
    rest.iter().position(|&b| b == needle).map(|i| skipped + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_tests_match_byte_tests() {
        for b in 0..=255u8 {
            for pos in 0..8 {
                let mut w = [b'a'; 8];
                w[pos] = b;
                let word = u64::from_le_bytes(w);
                let expect = b == b'"' || b == b'\\' || b < 0x20;
                assert_eq!(needs_attention(word), expect, "byte {b} at {pos}");
            }
        }
        let hay = b"abcdefghijklmnop.qrs.t";
        assert_eq!(find(hay, b'.'), Some(16));
        assert_eq!(find(b"x.", b'.'), Some(1));
        assert_eq!(find(b"abcdefgh", b'.'), None);
    }
}
