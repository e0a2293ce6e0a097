//! Sorting through a few monomorphic sorts. Each `sort_by_key` of another element type or key
//! closure is another copy of the standard library's stable sort (3-4 KB of wasm each: the page
//! carried 12 of them), so the engine's and the script's sorts go through these three, which
//! sort `(key, index)` pairs (or indices) and then move the elements into that order.
//!
//! Sorting `(key, original index)` pairs is a stable sort by key whatever the algorithm (no two
//! pairs are equal), so each function orders exactly as `sort_by_key` does, and traces do not
//! change.

use std::cmp::Ordering;

/// `v.sort_by_key(key)`: stable, by a number.
pub fn sort_by_u64<T>(v: &mut [T], key: impl Fn(&T) -> u64) {
    let mut pairs: Vec<(u64, usize)> = v.iter().enumerate().map(|(i, x)| (key(x), i)).collect();
    sort_u64_pairs(&mut pairs);
    permute(v, pairs.into_iter().map(|(_, i)| i).collect());
}

/// `v.sort_by_key(key)`: stable, by text (byte order, as `str`'s `Ord`).
pub fn sort_by_text<T>(v: &mut [T], key: impl for<'a> Fn(&'a T) -> &'a str) {
    let order: Vec<usize> = {
        let mut pairs: Vec<(&str, usize)> =
            v.iter().enumerate().map(|(i, x)| (key(x), i)).collect();
        sort_text_pairs(&mut pairs);
        pairs.into_iter().map(|(_, i)| i).collect()
    };
    permute(v, order);
}

/// The indices `0..n` in the stable order of `cmp` (for keys that are neither a number nor a
/// text): the index a sorted slice's first element has, then its second's, and so on.
#[inline(never)]
pub fn stable_order(n: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

#[inline(never)]
fn sort_u64_pairs(pairs: &mut [(u64, usize)]) {
    pairs.sort_unstable();
}

#[inline(never)]
fn sort_text_pairs(pairs: &mut [(&str, usize)]) {
    pairs.sort_unstable();
}

/// Puts `v[order[i]]` at `i`, following each cycle of the permutation with swaps.
fn permute<T>(v: &mut [T], mut order: Vec<usize>) {
    for start in 0..order.len() {
        let mut at = start;
        // A visited position points at itself.
        while order[at] != start && order[at] != at {
            let from = order[at];
            v.swap(at, from);
            order[at] = at;
            at = from;
        }
        order[at] = at;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each helper orders as the standard library's stable sort, equal keys included.
    #[test]
    fn orders_as_the_stable_sort() {
        let mut seed = 7u64;
        for n in [0usize, 1, 2, 3, 5, 17, 100, 1000] {
            let v: Vec<(u64, u32)> = (0..n as u32)
                .map(|i| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((seed >> 59) % 7, i)
                })
                .collect();
            let mut want = v.clone();
            want.sort_by_key(|x| x.0);
            let mut got = v.clone();
            sort_by_u64(&mut got, |x| x.0);
            assert_eq!(got, want);

            let texts: Vec<(String, u32)> = v.iter().map(|&(k, i)| (format!("k{k}"), i)).collect();
            let mut want = texts.clone();
            want.sort_by(|a, b| a.0.cmp(&b.0));
            let mut got = texts.clone();
            sort_by_text(&mut got, |x| x.0.as_str());
            assert_eq!(got, want);

            let order = stable_order(n, &|a, b| (v[b].0 % 3).cmp(&(v[a].0 % 3)));
            let mut want = v.clone();
            want.sort_by_key(|x| std::cmp::Reverse(x.0 % 3));
            assert_eq!(order.iter().map(|&i| v[i]).collect::<Vec<_>>(), want);
        }
    }
}
