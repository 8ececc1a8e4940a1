//! RFC 8785 numbers (§3.2.2.3) from a JSON number's own text, exactly and
//! without floating point: the IEEE 754 double nearest the decimal (ties to
//! even), then the fewest digits that read back as that double (the
//! closest such, ties to even), printed as ECMAScript's
//! `Number.prototype.toString` prints them. Big-integer arithmetic in place
//! of `core`'s float parsing and a table-driven formatter: a few kilobytes
//! of wasm instead of some twenty, and forwarded numbers are rare enough
//! that speed matters less.

use alloc::string::String;
use core::cmp::Ordering;

use super::big::Big;
use crate::json::Parts;

/// A value RFC 8785 cannot represent: a number out of the double range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotCanonicalizable;

impl core::fmt::Display for NotCanonicalizable {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("number out of the IEEE 754 double range")
    }
}

impl core::error::Error for NotCanonicalizable {}

/// Significant digits that decide the rounding: every double and every
/// midpoint between two doubles has at most 767, so the first 768 digits
/// and whether any nonzero digit follows them decide as all of them would.
const DIGITS_KEPT: i64 = 768;

/// `m × 2^e` for the smallest positive double.
const E_MIN: i64 = -1074;
/// The largest double is `(2^53 - 1) × 2^E_MAX`.
const E_MAX: i64 = 971;

/// Appends the canonical text of the JSON number `text` (valid JSON number
/// syntax); `Err` when it is beyond the largest double.
pub(crate) fn write_number(text: &str, out: &mut String) -> Result<(), NotCanonicalizable> {
    let parts = Parts::of(text);
    // The value is 0.D × 10^point.
    let point = if parts.exp_digits.len() > 18 {
        // An exponent of 10^18 or more outweighs any position (which the
        // text's length bounds).
        if parts.exp_negative {
            i64::MIN
        } else {
            i64::MAX
        }
    } else {
        let exp = parts
            .exp_digits
            .iter()
            .fold(0i64, |e, &d| e * 10 + i64::from(d - b'0'));
        let exp = if parts.exp_negative { -exp } else { exp };
        exp.saturating_add(parts.position)
    };
    if parts.digits.is_empty() || point < -323 {
        // Below 10^-324, under half the smallest double: zero, and -0 is
        // printed as 0.
        out.push('0');
        return Ok(());
    }
    if point > 309 {
        // At least 10^309: past the largest double.
        return Err(NotCanonicalizable);
    }
    let mut d = Big::from_u64(0);
    let mut kept: i64 = 0;
    for &digit in parts.significant() {
        if kept == DIGITS_KEPT {
            // The digits end with a nonzero one (no trailing zeros), so
            // something follows the kept ones: a last 1 stands for it.
            d.mul_add(10, 1);
            kept += 1;
            break;
        }
        d.mul_add(10, u32::from(digit - b'0'));
        kept += 1;
    }
    let (m, e) = nearest(d, point - kept).ok_or(NotCanonicalizable)?;
    if parts.negative && m != 0 {
        out.push('-');
    }
    write_double_parts(m, e, out);
    Ok(())
}

/// Appends the ECMAScript text of a finite double (-0 as 0); `Err` for an
/// infinity or NaN.
pub fn write_double(x: f64, out: &mut String) -> Result<(), NotCanonicalizable> {
    if !x.is_finite() {
        return Err(NotCanonicalizable);
    }
    let bits = x.to_bits();
    let fraction = bits & ((1 << 52) - 1);
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let (m, e) = if biased == 0 {
        (fraction, E_MIN)
    } else {
        (fraction | 1 << 52, biased - 1075)
    };
    if x.is_sign_negative() && m != 0 {
        out.push('-');
    }
    write_double_parts(m, e, out);
    Ok(())
}

/// The double nearest `d × 10^e` as `(m, e2)`, its value `m × 2^e2` with
/// `m < 2^53` (`m == 0`: it rounds to zero); `None` past the largest
/// double.
#[inline(never)]
fn nearest(d: Big, e: i64) -> Option<(u64, i64)> {
    let (mut num, mut den) = (d, Big::from_u64(1));
    if e >= 0 {
        num.mul_pow10(e.unsigned_abs());
    } else {
        den.mul_pow10(e.unsigned_abs());
    }
    // Scaled so that the quotient has 55 or 56 bits: 2 or 3 bits below
    // the 53 a double keeps, and a remainder for whatever is below those.
    let scale = num.bits() as i64 - den.bits() as i64 - 55;
    if scale < 0 {
        num.shl(scale.unsigned_abs());
    } else {
        den.shl(scale.unsigned_abs());
    }
    let (q, inexact) = quotient(num, den);
    // Drop the bits a double cannot keep: those beyond 53, or beyond
    // 2^E_MIN for a subnormal.
    let drop = (i64::from(64 - q.leading_zeros()) - 53).max(E_MIN - scale);
    let Some(half) = u32::try_from(drop - 1)
        .ok()
        .and_then(|s| 1u64.checked_shl(s))
        .filter(|&h| h <= 1 << 62)
    else {
        // Less than 2^(E_MIN - 2) at most: rounds to zero.
        return Some((0, E_MIN));
    };
    let dropped = q & ((half << 1) - 1);
    let mut m = q >> (drop as u32);
    if dropped > half || (dropped == half && (inexact || m & 1 == 1)) {
        m += 1;
    }
    let mut e2 = scale + drop;
    if m == 1 << 53 {
        m = 1 << 52;
        e2 += 1;
    }
    (e2 <= E_MAX).then_some((m, e2))
}

/// `floor(num / den)` for a quotient below 2^57, and whether anything
/// remains: long division, one bit at a time.
fn quotient(mut num: Big, mut den: Big) -> (u64, bool) {
    den.shl(57);
    let mut q = 0;
    for _ in 0..57 {
        num.shl(1);
        q <<= 1;
        if num.cmp(&den) != Ordering::Less {
            num.sub(&den);
            q |= 1;
        }
    }
    (q, !num.is_zero())
}

/// Appends the ECMAScript text of the positive double `m × 2^e` (or of
/// zero, `m == 0`).
fn write_double_parts(m: u64, e: i64, out: &mut String) {
    if m == 0 {
        out.push('0');
        return;
    }
    let (digits, point) = shortest(m, e);
    format(&digits, point, out);
}

/// The shortest digits that read back as `m × 2^e` and, of those, the
/// closest (ties to the even digit), with their point: the value printed
/// is `0.DIGITS × 10^point`. Steele and White's free-format algorithm as
/// Burger and Dybvig state it, on exact integers: `r / s` is the value
/// still to print, `m_minus / s` and `m_plus / s` the distances to the
/// bounds of the interval that reads back as the double (bounds included
/// when `m` is even, as reading rounds ties to even).
#[inline(never)]
fn shortest(m: u64, e: i64) -> (String, i64) {
    let even = m & 1 == 0;
    // At a power of two the double below is half as far as the one above.
    let f = if m == 1 << 52 && e > E_MIN { 2 } else { 1 };
    let mut r = Big::from_u64(m * 2 * f);
    let mut s = Big::from_u64(2 * f);
    let mut m_plus = Big::from_u64(f);
    let mut m_minus = Big::from_u64(1);
    if e >= 0 {
        for x in [&mut r, &mut m_plus, &mut m_minus] {
            x.shl(e.unsigned_abs());
        }
    } else {
        s.shl(e.unsigned_abs());
    }
    // log10(2) from below (78913 / 2^18): at most the point, often one less.
    let log2 = i64::from(63 - m.leading_zeros()) + e;
    let mut point = (log2 * 78913) >> 18;
    if point >= 0 {
        s.mul_pow10(point.unsigned_abs());
    } else {
        for x in [&mut r, &mut m_plus, &mut m_minus] {
            x.mul_pow10(point.unsigned_abs());
        }
    }
    // The upper bound must be below 10^point (or at it, when excluded).
    while beyond(r.sum_cmp(&m_plus, &s), even) {
        s.mul_add(10, 0);
        point += 1;
    }
    let mut digits = String::new();
    loop {
        for x in [&mut r, &mut m_plus, &mut m_minus] {
            x.mul_add(10, 0);
        }
        let mut digit = b'0';
        while r.cmp(&s) != Ordering::Less {
            r.sub(&s);
            digit += 1;
        }
        let low = !beyond(r.cmp(&m_minus), !even);
        let high = beyond(r.sum_cmp(&m_plus, &s), even);
        if !low && !high {
            digits.push(char::from(digit));
            continue;
        }
        let up = if low && high {
            // Both last digits read back: the closer, or the even one.
            let mut twice = r;
            twice.shl(1);
            match twice.cmp(&s) {
                Ordering::Less => false,
                Ordering::Greater => true,
                Ordering::Equal => digit & 1 == 1,
            }
        } else {
            high
        };
        // Never past 9: the previous step left `r + m_plus` below `s`.
        digits.push(char::from(digit + u8::from(up)));
        return (digits, point);
    }
}

/// Whether an ordering is past a bound: above it, or at it when the bound
/// is included.
fn beyond(o: Ordering, included: bool) -> bool {
    o == Ordering::Greater || (o == Ordering::Equal && included)
}

/// ECMAScript's `Number::toString` layout of `0.DIGITS × 10^point`: plain
/// digits from 1e-6 to below 1e21, otherwise one digit, a fraction and
/// `e+N` / `e-N`.
#[inline(never)]
fn format(digits: &str, point: i64, out: &mut String) {
    let zeros = |n: i64, out: &mut String| {
        for _ in 0..n {
            out.push('0');
        }
    };
    // `get`, not `split_at`: no panic path (and its formatting) in the wasm.
    let split = |at: i64| {
        let at = usize::try_from(at).unwrap_or(0);
        (
            digits.get(..at).unwrap_or(digits),
            digits.get(at..).unwrap_or(""),
        )
    };
    if 0 < point && point <= 21 {
        let (int, frac) = split(point);
        out.push_str(int);
        zeros(point - digits.len() as i64, out);
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
    } else if -6 < point && point <= 0 {
        out.push_str("0.");
        zeros(-point, out);
        out.push_str(digits);
    } else {
        let (first, rest) = split(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push_str(if point > 0 { "e+" } else { "e-" });
        // At most 324: three digits, no leading zeros.
        let exp = (point - 1).unsigned_abs() as u32;
        for unit in [100, 10, 1] {
            if exp >= unit || unit == 1 {
                out.push(char::from(b'0' + (exp / unit % 10) as u8));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Against the implementation this replaced, kept here as the oracle:
    //! `core`'s correctly rounded `str::parse::<f64>` and ryu-js'
    //! ECMAScript formatting.
    use super::*;
    use alloc::format;
    use alloc::string::ToString;

    fn ours(text: &str) -> Option<String> {
        let mut out = String::new();
        write_number(text, &mut out).ok().map(|()| out)
    }

    fn oracle(text: &str) -> Option<String> {
        let f: f64 = text.parse().unwrap();
        let f = if f == 0.0 { 0.0 } else { f };
        f.is_finite()
            .then(|| ryu_js::Buffer::new().format_finite(f).to_string())
    }

    #[track_caller]
    fn agree(text: &str) {
        assert_eq!(ours(text), oracle(text), "{text}");
    }

    /// splitmix64: reproducible inputs without a dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        /// A finite double: any bit pattern, or one near the ends of the range.
        fn double(&mut self) -> f64 {
            loop {
                let bits = match self.below(4) {
                    0 => self.below(1 << 54) | (self.next() & (1 << 63)),
                    1 => (0x7fe0_0000_0000_0000 + self.below(1 << 53)) | (self.next() & (1 << 63)),
                    _ => self.next(),
                };
                let x = f64::from_bits(bits);
                if x.is_finite() {
                    return x;
                }
            }
        }
    }

    /// Decimal digits (most significant first) of `m × 2^e`, and the
    /// power of ten they are scaled by: exact, by schoolbook arithmetic on
    /// digits, independent of the code under test.
    fn exact_decimal(m: u64, e: i64) -> (String, i64) {
        // Base 10^9 limbs, least significant first.
        let mut limbs = alloc::vec![
            m % 1_000_000_000,
            m / 1_000_000_000 % 1_000_000_000,
            m / 1_000_000_000_000_000_000
        ];
        let (base, mut left) = (if e >= 0 { 2u64 } else { 5 }, e.unsigned_abs());
        while left > 0 {
            let step = left.min(12);
            let k = base.pow(step as u32);
            let mut carry = 0;
            for l in limbs.iter_mut() {
                let t = *l * k + carry;
                *l = t % 1_000_000_000;
                carry = t / 1_000_000_000;
            }
            while carry > 0 {
                limbs.push(carry % 1_000_000_000);
                carry /= 1_000_000_000;
            }
            left -= step;
        }
        while limbs.len() > 1 && limbs.last() == Some(&0) {
            limbs.pop();
        }
        let mut text = limbs.last().unwrap().to_string();
        for l in limbs.iter().rev().skip(1) {
            text.push_str(&format!("{l:09}"));
        }
        (text, e.min(0))
    }

    #[test]
    fn edges() {
        for text in [
            "0",
            "-0",
            "0.0",
            "-0.0e-5",
            "0e999999999999999999999999",
            "1",
            "-1",
            "1.0",
            "10",
            "100",
            "1e21",
            "1e+21",
            "999999999999999999999",
            "1e-6",
            "1e-7",
            "0.000001",
            "0.0000001",
            "123456789012345678901234567890",
            "5e-324",
            "-5e-324",
            "4.9e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "2.5e-324",
            "2e-324",
            "1e-324",
            "1e-325",
            "-1e-400",
            "1e-400",
            "2.2250738585072011e-308",
            "2.2250738585072014e-308",
            "2.225073858507201e-308",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "-1.7976931348623159e308",
            "1e308",
            "1e309",
            "1e400",
            "-1e400",
            "9007199254740993",
            "9007199254740992",
            "9007199254740994",
            "9007199254740995",
            "0.1",
            "0.2",
            "0.3",
            "0.30000000000000004",
            "1e23",
            "8.41e21",
            "5e-7",
            "1.5e-7",
            "333333333.33333329",
            "4.50",
            "2e-3",
            "0.000000000000000000000000001",
            "1E30",
            "1e0000000000000000000000000000000000000000000005",
            "1e-0000000000000000000000000000000000000000000005",
            "1e99999999999999999999",
            "1e-99999999999999999999",
            "0.00000000000000000000000000000000000000000001e44",
            "100000000000000000000000000000000000000000e-41",
            "123.456e-2",
            "-0.5",
            "0.5e1",
        ] {
            agree(text);
        }
        // More digits than the rounding needs: the first 768 decide, then
        // whether anything nonzero follows.
        let long = format!("1.{}1e-5", "0".repeat(2000));
        agree(&long);
        agree(&format!("9{}e-1200", "9".repeat(1500)));
        let halfway = "2.4703282292062327208828439643411068618252990130716238221279284125033775363510437593264991818081799618989828234772285886546332835517796989819938739800539093906315035659515570226392290858392449105184435931802849936536152500319370457678249219365623669863658480757001585769269903706311928279558551332927834338409351978015531246597263579574622766465272827220056374006485499977096599470454020828166226237857393450736339007967761930577506740176324673600968951340535537458516661134223766678604162159680461914467291840300530057530849048765391711386591646239524912623653881879636239373280423891018672348497668235089863388587925628302755995657524455507255189313690836254779186948667994968324049705821028513185451396213837722826145437693412532098591327667236328125e-324";
        agree(halfway);
        agree(&format!("{halfway}1"));
        agree(&halfway[..halfway.len() - 6]);
        for k in -400..=400 {
            for m in [
                "1",
                "9.999999999999999",
                "9.9999999999999999",
                "4.9406564584124654",
                "2.2250738585072014",
            ] {
                agree(&format!("{m}e{k}"));
            }
        }
    }

    /// Random doubles, written shortest, exactly with more digits than
    /// needed, and rounded to fewer digits than they need.
    #[test]
    fn random_doubles() {
        let mut rng = Rng(1);
        for _ in 0..20_000 {
            let x = rng.double();
            agree(&format!("{x:e}"));
            agree(&format!("{x}"));
            agree(&format!("{x:.*e}", rng.below(40) as usize));
            agree(ryu_js::Buffer::new().format_finite(x));
        }
    }

    /// Exactly halfway between two neighbouring doubles (ties to even), and
    /// just above and below, with the long mantissas that takes.
    #[test]
    fn midpoints() {
        let mut rng = Rng(2);
        for i in 0..3_000 {
            let x = rng.double().abs();
            let bits = x.to_bits();
            let biased = (bits >> 52) as i64;
            let (m, e) = if biased == 0 {
                (bits, -1074)
            } else {
                (bits & ((1 << 52) - 1) | 1 << 52, biased - 1075)
            };
            // Every few, a midpoint near the ends of the range or at a
            // power of two.
            let (m, e) = match i % 10 {
                0 => (m & !((1 << 52) - 1), e),
                1 => (m, -1074),
                _ => (m, e),
            };
            let (digits, scale) = exact_decimal(2 * m + 1, e - 1);
            agree(&format!("{digits}e{scale}"));
            agree(&format!("{digits}1e{}", scale - 1));
            let below = &digits[..digits.len() - 1];
            if !below.is_empty() {
                agree(&format!("{below}e{}", scale + 1));
                agree(&format!("{below}9999999999e{}", scale - 9));
            }
        }
    }

    /// Long random mantissas with points and exponents all over the range.
    #[test]
    fn random_decimals() {
        let mut rng = Rng(3);
        for _ in 0..5_000 {
            let len = 1 + match rng.below(4) {
                0 => rng.below(1200),
                _ => rng.below(40),
            } as usize;
            let mut digits: String = (0..len)
                .map(|_| char::from(b'0' + rng.below(10) as u8))
                .collect();
            if rng.below(3) == 0 {
                // Runs of nines or zeros: near a rounding boundary.
                let run = if rng.below(2) == 0 { '9' } else { '0' };
                let at = rng.below(len as u64) as usize;
                digits.replace_range(at.., &run.to_string().repeat(len - at));
            }
            let sign = if rng.below(2) == 0 { "-" } else { "" };
            let int = digits.get(..1).unwrap();
            let frac = &digits[1..];
            let point = if frac.is_empty() {
                String::new()
            } else {
                format!(".{frac}")
            };
            let exp = rng.below(700) as i64 - 350;
            agree(&format!("{sign}{int}{point}e{exp}"));
            let lead = if int == "0" { "0" } else { int };
            agree(&format!("{sign}{lead}{point}E+{}", exp.abs()));
        }
    }

    /// `write_double` against ryu-js on random doubles and the range's
    /// ends.
    #[test]
    fn doubles_print_as_ecmascript() {
        let mut rng = Rng(4);
        let specials = [
            0.0,
            -0.0,
            5e-324,
            -5e-324,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            1e21,
            1e-7,
            0.0005,
            2.5,
        ];
        for x in specials
            .into_iter()
            .chain((0..20_000).map(|_| rng.double()))
        {
            let mut out = String::new();
            write_double(x, &mut out).unwrap();
            let x = if x == 0.0 { 0.0 } else { x };
            assert_eq!(out, ryu_js::Buffer::new().format_finite(x), "{x:e}");
        }
        for x in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
            assert_eq!(write_double(x, &mut String::new()), Err(NotCanonicalizable));
        }
    }
}
