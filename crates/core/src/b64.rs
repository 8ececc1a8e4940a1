//! Strict base64: every value has exactly one accepted spelling (no
//! whitespace, no stray padding, zero trailing bits), as JWS segments and
//! the `=?base64?…?=` header form require. Table-driven, one pass.

use alloc::string::String;
use alloc::vec::Vec;

const INVALID: u8 = 0xff;

// Evaluated at compile time: an out-of-range index would fail the build.
#[allow(clippy::indexing_slicing)]
const fn table(alphabet: &[u8; 64]) -> [u8; 256] {
    let mut t = [INVALID; 256];
    let mut i = 0;
    while i < 64 {
        t[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    t
}

pub(crate) struct Alphabet {
    encode: &'static [u8; 64],
    decode: [u8; 256],
    /// The symbols for 62 and 63 when the rest is `A-Z a-z 0-9`, the
    /// layout [`wide`] decodes sixteen at a time.
    #[cfg_attr(
        not(all(target_arch = "wasm32", target_feature = "simd128")),
        allow(dead_code)
    )]
    last: Option<[u8; 2]>,
    /// Natively: each symbol's value already shifted to its place in a
    /// group of four (18, 12, 6, 0 bits), [`SHIFTED_INVALID`] for a byte
    /// that is no symbol; 4 KB per alphabet, so not in the wasm builds.
    #[cfg(not(target_arch = "wasm32"))]
    shifted: [[u32; 256]; 4],
}

/// What a byte that is no symbol has in every `shifted` table: bits that
/// no group of four valid symbols sets.
#[cfg(not(target_arch = "wasm32"))]
const SHIFTED_INVALID: u32 = 0xff00_0000;

// Evaluated at compile time, as `table`.
#[cfg(not(target_arch = "wasm32"))]
#[allow(clippy::indexing_slicing)]
const fn shifted(alphabet: &[u8; 64]) -> [[u32; 256]; 4] {
    let mut t = [[SHIFTED_INVALID; 256]; 4];
    let mut place = 0;
    while place < 4 {
        let mut i = 0;
        while i < 64 {
            t[place][alphabet[i] as usize] = (i as u32) << (18 - 6 * place);
            i += 1;
        }
        place += 1;
    }
    t
}

const URL_CHARS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const STD_CHARS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BCRYPT_CHARS: &[u8; 64] = b"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

pub(crate) static URL: Alphabet = Alphabet {
    encode: URL_CHARS,
    decode: table(URL_CHARS),
    #[cfg(not(target_arch = "wasm32"))]
    shifted: shifted(URL_CHARS),
    last: Some([b'-', b'_']),
};
pub(crate) static STD: Alphabet = Alphabet {
    encode: STD_CHARS,
    decode: table(STD_CHARS),
    #[cfg(not(target_arch = "wasm32"))]
    shifted: shifted(STD_CHARS),
    last: Some([b'+', b'/']),
};

/// bcrypt's own alphabet (salts and hashes in `$2b$` strings).
pub(crate) static BCRYPT: Alphabet = Alphabet {
    encode: BCRYPT_CHARS,
    decode: table(BCRYPT_CHARS),
    #[cfg(not(target_arch = "wasm32"))]
    shifted: shifted(BCRYPT_CHARS),
    last: None,
};

/// Sixteen symbols at a time with WebAssembly SIMD (the npm and Envoy
/// builds): classified by range instead of looked up, then packed.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wide {
    use core::arch::wasm32::{
        i16x8_shl, i16x8_splat, i32x4_shl, i32x4_splat, i8x16_swizzle, u16x8_shr,
        u32x4_extract_lane, u32x4_shr, u64x2, u64x2_extract_lane, u8x16, u8x16_add, u8x16_all_true,
        u8x16_eq, u8x16_ge, u8x16_le, u8x16_splat, v128, v128_and, v128_or,
    };

    fn word(src: &[u8], at: usize) -> Option<u64> {
        Some(u64::from_le_bytes(src.get(at..at + 8)?.try_into().ok()?))
    }

    /// Decodes 16 symbols of an `A-Z a-z 0-9` alphabet whose symbols 62
    /// and 63 are `last` into 12 bytes; `None` when one is not a symbol.
    pub(super) fn decode16(src: &[u8], dst: &mut [u8], last: [u8; 2]) -> Option<()> {
        let v = u64x2(word(src, 0)?, word(src, 8)?);
        let within =
            |lo: u8, hi: u8| v128_and(u8x16_ge(v, u8x16_splat(lo)), u8x16_le(v, u8x16_splat(hi)));
        // Each class with what to add (mod 256) to get its values.
        let [c62, c63] = last;
        let classes: [(v128, u8); 5] = [
            (within(b'A', b'Z'), 0u8.wrapping_sub(b'A')),
            (within(b'a', b'z'), 26u8.wrapping_sub(b'a')),
            (within(b'0', b'9'), 52u8.wrapping_sub(b'0')),
            (u8x16_eq(v, u8x16_splat(c62)), 62u8.wrapping_sub(c62)),
            (u8x16_eq(v, u8x16_splat(c63)), 63u8.wrapping_sub(c63)),
        ];
        let (mut valid, mut offset) = (u8x16_splat(0), u8x16_splat(0));
        for (class, add) in classes {
            valid = v128_or(valid, class);
            offset = v128_or(offset, v128_and(class, u8x16_splat(add)));
        }
        if !u8x16_all_true(valid) {
            return None;
        }
        let sextets = u8x16_add(v, offset);
        // Pairs of sextets into 12 bits, pairs of those into 24.
        let even = v128_and(sextets, i16x8_splat(0x00ff));
        let twelve = v128_or(i16x8_shl(even, 6), u16x8_shr(sextets, 8));
        let low = v128_and(twelve, i32x4_splat(0xffff));
        let bits = v128_or(i32x4_shl(low, 12), u32x4_shr(twelve, 16));
        // Three bytes of each lane, most significant first.
        let order = u8x16(
            2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, 0x80, 0x80, 0x80, 0x80,
        );
        let bytes = i8x16_swizzle(bits, order);
        dst.get_mut(..8)?
            .copy_from_slice(&u64x2_extract_lane::<0>(bytes).to_le_bytes());
        dst.get_mut(8..12)?
            .copy_from_slice(&u32x4_extract_lane::<2>(bytes).to_le_bytes());
        Some(())
    }
}

/// How many bytes `input` decodes to without padding; `None` for a
/// length no encoding has.
pub(crate) fn decoded_len(input: &[u8]) -> Option<usize> {
    let tail = match input.len() % 4 {
        0 => 0,
        2 => 1,
        3 => 2,
        _ => return None,
    };
    Some(input.len() / 4 * 3 + tail)
}

impl Alphabet {
    fn value(&self, c: u8) -> u32 {
        u32::from(self.decode.get(usize::from(c)).copied().unwrap_or(INVALID))
    }

    /// Canonical unpadded decoding.
    pub(crate) fn decode_unpadded(&self, input: &[u8]) -> Option<Vec<u8>> {
        self.decode(input, true)
    }

    /// Unpadded decoding that ignores the unused bits of the last symbol
    /// (bcrypt salts written by some libraries set them).
    pub(crate) fn decode_unpadded_lenient(&self, input: &[u8]) -> Option<Vec<u8>> {
        self.decode(input, false)
    }

    fn decode(&self, input: &[u8], canonical: bool) -> Option<Vec<u8>> {
        let mut out = alloc::vec![0u8; decoded_len(input)?];
        self.decode_to(input, &mut out, canonical)?;
        Some(out)
    }

    /// Canonical unpadded decoding of `input` into `out`, which must be
    /// exactly [`decoded_len`] bytes long.
    pub(crate) fn decode_unpadded_to(&self, input: &[u8], out: &mut [u8]) -> Option<()> {
        self.decode_to(input, out, true)
    }

    // One copy for every caller (the wasm builds are size-bound).
    #[inline(never)]
    fn decode_to(&self, input: &[u8], out: &mut [u8], canonical: bool) -> Option<()> {
        let strict = u32::from(canonical);
        if decoded_len(input) != Some(out.len()) {
            return None;
        }
        let tail = out.len() % 3;
        // Invalid symbols have bits above the low six; checked once at the end.
        let mut seen = 0u32;
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        let (input, out) = match self.last {
            Some(last) => {
                let blocks = input.len() / 16;
                let (in16, input) = input.split_at_checked(blocks * 16)?;
                let (out12, out) = out.split_at_mut_checked(blocks * 12)?;
                for (src, dst) in in16.chunks_exact(16).zip(out12.chunks_exact_mut(12)) {
                    wide::decode16(src, dst, last)?;
                }
                (input, out)
            }
            None => (input, out),
        };
        // Natively, eight symbols into six bytes at a time through the
        // shifted tables (a token's segments are hundreds of symbols long),
        // then four into three. Not in wasm: its builds are size-bound, and
        // npm's decodes sixteen at a time above.
        #[cfg(not(target_arch = "wasm32"))]
        let (input, out) = {
            let blocks = input.len() / 8;
            let (in8, input) = input.split_at_checked(blocks * 8)?;
            let (out6, out) = out.split_at_mut_checked(blocks * 6)?;
            let [t0, t1, t2, t3] = &self.shifted;
            let at =
                |t: &[u32; 256], c: u8| t.get(usize::from(c)).copied().unwrap_or(SHIFTED_INVALID);
            let mut invalid = 0;
            for (src, dst) in in8.chunks_exact(8).zip(out6.chunks_exact_mut(6)) {
                if let (&[a, b, c, d, e, f, g, h], [_, _, _, _, _, _]) = (src, &mut *dst) {
                    let high = at(t0, a) | at(t1, b) | at(t2, c) | at(t3, d);
                    let low = at(t0, e) | at(t1, f) | at(t2, g) | at(t3, h);
                    invalid |= high | low;
                    let n = (u64::from(high) << 24) | u64::from(low);
                    let [_, _, bytes @ ..] = n.to_be_bytes();
                    dst.copy_from_slice(&bytes);
                }
            }
            // An invalid symbol's bits land above the low six.
            seen |= invalid >> 18;
            (input, out)
        };
        let mut chunks = input.chunks_exact(4);
        for (src, dst) in (&mut chunks).zip(out.chunks_exact_mut(3)) {
            if let (&[a, b, c, d], [x, y, z]) = (src, dst) {
                let (a, b, c, d) = (self.value(a), self.value(b), self.value(c), self.value(d));
                seen |= a | b | c | d;
                let n = (a << 18) | (b << 12) | (c << 6) | d;
                (*x, *y, *z) = ((n >> 16) as u8, (n >> 8) as u8, n as u8);
            }
        }
        let last = out.len() - tail;
        match (chunks.remainder(), out.get_mut(last..)) {
            ([], _) => {}
            (&[a, b], Some([x])) => {
                let (a, b) = (self.value(a), self.value(b));
                seen |= a | b | ((b & 0x0f) * strict) << 6;
                *x = ((a << 2) | (b >> 4)) as u8;
            }
            (&[a, b, c], Some([x, y])) => {
                let (a, b, c) = (self.value(a), self.value(b), self.value(c));
                seen |= a | b | c | ((c & 0x03) * strict) << 6;
                let n = (a << 18) | (b << 12) | (c << 6);
                (*x, *y) = ((n >> 16) as u8, (n >> 8) as u8);
            }
            _ => return None,
        }
        (seen <= 63).then_some(())
    }

    /// Canonical padded decoding: a multiple of four symbols, `=` only as
    /// the one or two final symbols.
    pub(crate) fn decode_padded(&self, input: &[u8]) -> Option<Vec<u8>> {
        if input.len() % 4 != 0 {
            return None;
        }
        let body = input
            .strip_suffix(b"==")
            .or_else(|| input.strip_suffix(b"="))
            .unwrap_or(input);
        if body.len() % 4 == 1 {
            return None;
        }
        self.decode_unpadded(body)
    }

    /// Unpadded encoding, appended to `out`.
    pub(crate) fn encode_unpadded(&self, input: &[u8], out: &mut String) {
        let sym = |n: u32| char::from(self.encode.get((n & 63) as usize).copied().unwrap_or(b'A'));
        let mut chunks = input.chunks_exact(3);
        for chunk in &mut chunks {
            let &[a, b, c] = chunk else { return };
            let n = (u32::from(a) << 16) | (u32::from(b) << 8) | u32::from(c);
            out.extend([sym(n >> 18), sym(n >> 12), sym(n >> 6), sym(n)]);
        }
        match *chunks.remainder() {
            [a] => {
                let n = u32::from(a) << 16;
                out.extend([sym(n >> 18), sym(n >> 12)]);
            }
            [a, b] => {
                let n = (u32::from(a) << 16) | (u32::from(b) << 8);
                out.extend([sym(n >> 18), sym(n >> 12), sym(n >> 6)]);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_non_canonical() {
        for len in 0..40usize {
            let data: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let mut text = String::new();
            URL.encode_unpadded(&data, &mut text);
            assert_eq!(URL.decode_unpadded(text.as_bytes()), Some(data));
        }
        // Every symbol, and a stray byte at each place of a long input.
        let all: Vec<u8> = (0..=255u8).cycle().take(300).collect();
        for alphabet in [&URL, &STD] {
            let mut text = String::new();
            alphabet.encode_unpadded(&all, &mut text);
            assert_eq!(alphabet.decode_unpadded(text.as_bytes()), Some(all.clone()));
            for at in 0..text.len() {
                for bad in [b'=', b' ', b'.', 0x80, b'@', b'[', b'`', b'{'] {
                    let mut t = text.clone().into_bytes();
                    t[at] = bad;
                    assert_eq!(alphabet.decode_unpadded(&t), None, "{bad} at {at}");
                }
            }
        }
        assert_eq!(URL.decode_unpadded(b"eyI"), Some(b"{\"".to_vec()));
        assert_eq!(URL.decode_unpadded(b"eyJ"), None, "non-zero trailing bits");
        assert_eq!(URL.decode_unpadded(b"eyJ="), None, "padding");
        assert_eq!(URL.decode_unpadded(b"a+b/"), None, "standard alphabet");
        assert_eq!(URL.decode_unpadded(b"abcde"), None, "length 1 mod 4");
        assert_eq!(URL.decode_unpadded(b"ab c"), None);
        assert_eq!(STD.decode_padded(b"aGk="), Some(b"hi".to_vec()));
        assert_eq!(STD.decode_padded(b"aA=="), Some(b"h".to_vec()));
        assert_eq!(STD.decode_padded(b"aGk"), None, "padding required");
        assert_eq!(STD.decode_padded(b"aB=="), None, "trailing bits");
        assert_eq!(STD.decode_padded(b"a==="), None);
        assert_eq!(STD.decode_padded(b"aG=k"), None);
        assert_eq!(STD.decode_padded(b""), Some(Vec::new()));
    }
}
