//! Integers as text without `core::fmt`: its padding and `Formatter`
//! machinery cost the verifier's wasm about 1.5 KB where only digits are
//! needed (issue 32). Every integer the verifier writes goes through here.

use alloc::string::String;

/// Appends `v` in decimal. Never inlined: one copy serves every caller.
#[inline(never)]
pub fn push_u64(mut v: u64, out: &mut String) {
    // u64::MAX has 20 digits.
    let mut buf = [b'0'; 20];
    let mut start = buf.len();
    for slot in buf.iter_mut().rev() {
        *slot = b'0' + (v % 10) as u8;
        start -= 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    // ASCII digits: appended at once, not char by char.
    if let Ok(digits) = core::str::from_utf8(buf.get(start..).unwrap_or_default()) {
        out.push_str(digits);
    }
}

/// Appends `v` in decimal, with its sign.
#[inline(never)]
pub fn push_i64(v: i64, out: &mut String) {
    if v < 0 {
        out.push('-');
    }
    push_u64(v.unsigned_abs(), out);
}

/// `v` in decimal.
pub fn u64_text(v: u64) -> String {
    let mut out = String::new();
    push_u64(v, &mut out);
    out
}

/// Appends the low `width` hexadecimal digits of `v`, zero-padded, in
/// upper case when `upper`.
#[inline(never)]
pub fn push_hex(v: u32, width: u32, upper: bool, out: &mut String) {
    for place in (0..width).rev() {
        let digit =
            char::from_digit(v.checked_shr(4 * place).unwrap_or(0) & 0xf, 16).unwrap_or('0');
        out.push(if upper {
            digit.to_ascii_uppercase()
        } else {
            digit
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    #[test]
    fn decimal_and_hex_agree_with_core_fmt() {
        let mut samples = alloc::vec![
            0u64,
            1,
            9,
            10,
            99,
            100,
            4_294_967_295,
            4_294_967_296,
            u64::MAX,
            u64::MAX - 1
        ];
        let mut x: u64 = 7;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            samples.push(x >> (x % 64));
        }
        for v in samples {
            assert_eq!(u64_text(v), format!("{v}"));
            let mut signed = String::new();
            push_i64(v as i64, &mut signed);
            assert_eq!(signed, format!("{}", v as i64));
            let small = (v & 0xffff) as u32;
            let mut hex = String::new();
            push_hex(small & 0xff, 2, true, &mut hex);
            push_hex(small, 4, false, &mut hex);
            assert_eq!(hex, format!("{:02X}{:04x}", small & 0xff, small));
        }
    }
}
