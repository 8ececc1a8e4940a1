//! Unsigned integers of any size, with only what the exact number
//! conversion needs: multiply by a small factor and add, shift left,
//! compare, add and subtract. 32-bit limbs, so every product fits in a
//! `u64` (no 128-bit arithmetic, which costs kilobytes of wasm).

use alloc::vec::Vec;
use core::cmp::Ordering;

/// Little-endian limbs with no zero limb on top (zero has none).
#[derive(Clone, Debug)]
pub(super) struct Big(Vec<u32>);

impl Big {
    pub(super) fn from_u64(v: u64) -> Big {
        let mut b = Big(Vec::from([v as u32, (v >> 32) as u32]));
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    pub(super) fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// The number of significant bits (0 for zero).
    pub(super) fn bits(&self) -> u64 {
        self.0.last().map_or(0, |top| {
            self.0.len() as u64 * 32 - u64::from(top.leading_zeros())
        })
    }

    /// `self * m + a`.
    #[inline(never)]
    pub(super) fn mul_add(&mut self, m: u32, a: u32) {
        let mut carry = u64::from(a);
        for limb in &mut self.0 {
            // At most (2^32 - 1)^2 + 2^32 - 1 < 2^64.
            let t = u64::from(*limb) * u64::from(m) + carry;
            *limb = t as u32;
            carry = t >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
        self.trim();
    }

    /// `self * 10^n`, nine digits at a time.
    #[inline(never)]
    pub(super) fn mul_pow10(&mut self, mut n: u64) {
        while n > 0 {
            let step = n.min(9);
            self.mul_add(10u32.pow(step as u32), 0);
            n -= step;
        }
    }

    /// `self * 2^n`.
    #[inline(never)]
    pub(super) fn shl(&mut self, n: u64) {
        if self.is_zero() {
            return;
        }
        let bits = (n % 32) as u32;
        if bits != 0 {
            let mut carry = 0;
            for limb in &mut self.0 {
                let t = *limb;
                *limb = (t << bits) | carry;
                carry = t >> (32 - bits);
            }
            if carry != 0 {
                self.0.push(carry);
            }
        }
        let limbs = (n / 32) as usize;
        if limbs > 0 {
            let mut shifted = Vec::with_capacity(limbs + self.0.len());
            shifted.resize(limbs, 0);
            shifted.extend_from_slice(&self.0);
            self.0 = shifted;
        }
    }

    #[inline(never)]
    pub(super) fn cmp(&self, other: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }

    /// `self + other`.
    #[inline(never)]
    pub(super) fn add(&mut self, other: &Big) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        let mut carry = 0;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let t = u64::from(*limb) + u64::from(other.0.get(i).copied().unwrap_or(0)) + carry;
            *limb = t as u32;
            carry = t >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }

    /// `self - other`, for `other <= self`.
    #[inline(never)]
    pub(super) fn sub(&mut self, other: &Big) {
        let mut borrow = 0;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let t = u64::from(*limb)
                .wrapping_sub(u64::from(other.0.get(i).copied().unwrap_or(0)))
                .wrapping_sub(borrow);
            *limb = t as u32;
            borrow = t >> 63;
        }
        self.trim();
    }

    /// `(self + other).cmp(than)`.
    #[inline(never)]
    pub(super) fn sum_cmp(&self, other: &Big, than: &Big) -> Ordering {
        let mut sum = self.clone();
        sum.add(other);
        sum.cmp(than)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big(v: u128) -> Big {
        let mut b = Big::from_u64((v >> 64) as u64);
        b.shl(64);
        b.add(&Big::from_u64(v as u64));
        b
    }

    fn value(b: &Big) -> u128 {
        b.0.iter()
            .rev()
            .fold(0, |acc, &l| (acc << 32) | u128::from(l))
    }

    /// Every operation against `u128` arithmetic, across limb boundaries.
    #[test]
    fn agrees_with_u128() {
        let samples = [
            0u128,
            1,
            9,
            0xffff_ffff,
            0x1_0000_0000,
            0xffff_ffff_ffff_ffff,
            0x1234_5678_9abc_def0_1122,
            (1 << 90) - 1,
        ];
        for &a in &samples {
            let b = big(a);
            assert_eq!(value(&b), a);
            assert_eq!(b.bits(), u64::from(128 - a.leading_zeros()));
            assert_eq!(b.is_zero(), a == 0);
            for s in [0u64, 1, 5, 31, 32, 33, 37] {
                let mut c = b.clone();
                c.shl(s);
                assert_eq!(value(&c), a << s, "{a} << {s}");
            }
            for (m, add) in [(0u32, 0u32), (0, 7), (10, 3), (u32::MAX, u32::MAX)] {
                let mut c = b.clone();
                c.mul_add(m, add);
                assert_eq!(value(&c), a * u128::from(m) + u128::from(add));
            }
            let mut c = b.clone();
            c.mul_pow10(10);
            assert_eq!(value(&c), a * 10_000_000_000);
            for &o in &samples {
                let other = big(o);
                assert_eq!(b.cmp(&other), a.cmp(&o), "{a} vs {o}");
                assert_eq!(b.sum_cmp(&other, &big(a + o)), Ordering::Equal);
                let mut s = b.clone();
                s.add(&other);
                assert_eq!(value(&s), a + o);
                if o <= a {
                    let mut d = b.clone();
                    d.sub(&other);
                    assert_eq!(value(&d), a - o, "{a} - {o}");
                }
            }
        }
    }
}
