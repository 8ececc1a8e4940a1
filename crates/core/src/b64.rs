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
}

const URL_CHARS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const STD_CHARS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BCRYPT_CHARS: &[u8; 64] = b"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

pub(crate) static URL: Alphabet = Alphabet {
    encode: URL_CHARS,
    decode: table(URL_CHARS),
};
pub(crate) static STD: Alphabet = Alphabet {
    encode: STD_CHARS,
    decode: table(STD_CHARS),
};

/// bcrypt's own alphabet (salts and hashes in `$2b$` strings).
pub(crate) static BCRYPT: Alphabet = Alphabet {
    encode: BCRYPT_CHARS,
    decode: table(BCRYPT_CHARS),
};

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
