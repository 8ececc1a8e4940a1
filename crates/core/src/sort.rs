//! The one sort the crate uses, a leaf: the JSON reader (duplicate names)
//! and RFC 8785 (member order) both sort with it.

/// Sorts `v` by `less`: heapsort, `O(n log n)` whatever the input and with
/// no allocation, in well under a tenth of the wasm that `sort_unstable_by`
/// brings (about 11 KB).
pub(crate) fn heapsort<T>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let lt = |v: &[T], a: usize, b: usize| match (v.get(a), v.get(b)) {
        (Some(x), Some(y)) => less(x, y),
        _ => false,
    };
    // Moves `v[root]` down the max-heap `v[..end]` to its place.
    let sift = |v: &mut [T], mut root: usize, end: usize| loop {
        let mut child = 2 * root + 1;
        if child >= end {
            break;
        }
        if child + 1 < end && lt(v, child, child + 1) {
            child += 1;
        }
        if !lt(v, root, child) {
            break;
        }
        v.swap(root, child);
        root = child;
    };
    for root in (0..v.len() / 2).rev() {
        sift(v, root, v.len());
    }
    for end in (1..v.len()).rev() {
        v.swap(0, end);
        sift(v, 0, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// The heapsort against the standard library's sort, on every length up
    /// to 40 and every kind of order (sorted, reversed, runs of equal keys).
    #[test]
    fn heapsort_sorts() {
        let mut seed = 7u64;
        for len in 0..40usize {
            for kind in 0..4 {
                let mut v: Vec<u64> = (0..len as u64)
                    .map(|i| {
                        seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        match kind {
                            0 => i,
                            1 => len as u64 - i,
                            2 => (seed >> 33) % 4,
                            _ => seed >> 33,
                        }
                    })
                    .collect();
                let mut want = v.clone();
                want.sort_unstable();
                heapsort(&mut v, |a, b| a < b);
                assert_eq!(v, want, "{len} {kind}");
            }
        }
    }
}
