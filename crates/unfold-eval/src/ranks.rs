//! Neighbour order of one point among the others, shared by every rank-based metric.
//!
//! Candidates are ordered by the key (distance, index), a strict total order, so ties in
//! distance go to the smaller row index and every result is reproducible. The point itself
//! is never its own neighbour. `dist` is one row of a distance (or squared-distance) matrix
//! with no NaN.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A neighbour `j` at distance `d`, ordered by (d, j).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Key {
    d: f64,
    j: usize,
}

impl Eq for Key {}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.d
            .partial_cmp(&other.d)
            .unwrap_or(Ordering::Equal)
            .then(self.j.cmp(&other.j))
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The `k` nearest neighbours of point `i` (itself excluded), nearest first.
///
/// One scan with a bounded max-heap of the best `k` so far: O(n log k) at worst, about
/// O(n + k log k log n) on data in random order. Requires `k < dist.len()`.
pub(crate) fn nearest(dist: &[f64], i: usize, k: usize) -> Vec<usize> {
    let mut best = BinaryHeap::with_capacity(k);
    let mut worst = f64::INFINITY;
    for (j, &d) in dist.iter().enumerate() {
        if j == i {
            continue;
        }
        if best.len() < k {
            best.push(Key { d, j });
            if best.len() == k {
                worst = best.peek().map_or(f64::INFINITY, |key: &Key| key.d);
            }
        } else if d < worst {
            // Indices arrive in increasing order, so an equal distance never beats the
            // current worst key: only a strictly smaller distance does.
            if let Some(mut top) = best.peek_mut() {
                *top = Key { d, j };
            }
            worst = best.peek().map_or(f64::INFINITY, |key| key.d);
        }
    }
    best.into_sorted_vec()
        .into_iter()
        .map(|key| key.j)
        .collect()
}

/// The ranks of `targets` among the neighbours of point `i`: 1 for the nearest other point,
/// `n - 1` for the farthest. No target may be `i` itself.
///
/// With the `m` targets sorted by key, every other point `l` precedes exactly the targets
/// from position `b(l)` = #{targets with key <= key(l)} on, so the rank of the `s`-th
/// target is `1 + #{l : b(l) <= s}`: one scan that locates each point nearer than the
/// farthest target among the sorted target distances, O(n + r log m) with `r` the largest
/// target rank.
pub(crate) fn ranks_of(dist: &[f64], i: usize, targets: &[usize]) -> Vec<usize> {
    let m = targets.len();
    let mut sorted: Vec<Key> = targets.iter().map(|&j| Key { d: dist[j], j }).collect();
    sorted.sort_unstable();
    let sorted_d: Vec<f64> = sorted.iter().map(|key| key.d).collect();
    let Some(&farthest) = sorted_d.last() else {
        return Vec::new();
    };
    // preceding[s] = #{l != i : b(l) = s}, for s < m.
    let mut preceding = vec![0usize; m];
    for (l, &d) in dist.iter().enumerate() {
        if l == i || d > farthest {
            continue;
        }
        // Targets strictly nearer than l, then those at the same distance but not after l.
        let mut b = if m <= 32 {
            sorted_d.iter().filter(|&&t| t < d).count()
        } else {
            sorted_d.partition_point(|&t| t < d)
        };
        while b < m && sorted_d[b] == d && sorted[b].j <= l {
            b += 1;
        }
        if b < m {
            preceding[b] += 1;
        }
    }
    let mut rank_at = Vec::with_capacity(m);
    let mut before = 0;
    for count in preceding {
        before += count;
        rank_at.push(1 + before);
    }
    targets
        .iter()
        .map(|&j| rank_at[sorted.partition_point(|t| *t < Key { d: dist[j], j })])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rank by counting the points with a smaller key, O(n) per target.
    fn brute_rank(dist: &[f64], i: usize, t: usize) -> usize {
        1 + (0..dist.len())
            .filter(|&l| l != i && (dist[l], l) < (dist[t], t))
            .count()
    }

    #[test]
    fn ties_go_to_the_smaller_index_and_self_is_skipped() {
        // Point 2 is the query; points 0, 3 and 4 tie at distance 1.
        let d = [1.0, 2.0, 0.0, 1.0, 1.0, 0.5];
        assert_eq!(nearest(&d, 2, 3), vec![5, 0, 3]);
        assert_eq!(nearest(&d, 2, 5), vec![5, 0, 3, 4, 1]);
        assert_eq!(ranks_of(&d, 2, &[4, 1, 5]), vec![4, 5, 1]);
        assert_eq!(ranks_of(&d, 2, &[]), Vec::<usize>::new());
    }

    #[test]
    fn agrees_with_counting_and_full_sort() {
        let n = 300;
        // Many exact ties: 23 distinct distances.
        let d: Vec<f64> = (0..n).map(|j| ((j * 37 % 23) as f64).sqrt()).collect();
        let i = 17;
        let others: Vec<usize> = (0..n).filter(|&j| j != i).collect();
        let mut by_key = others.clone();
        by_key.sort_by(|&a, &b| (d[a], a).partial_cmp(&(d[b], b)).unwrap());
        for k in [1, 5, 40, n - 1] {
            assert_eq!(nearest(&d, i, k), by_key[..k].to_vec());
        }
        assert_eq!(
            ranks_of(&d, i, &others),
            others
                .iter()
                .map(|&t| brute_rank(&d, i, t))
                .collect::<Vec<_>>()
        );
        let few = [250, 3, 99, 0, 18];
        assert_eq!(
            ranks_of(&d, i, &few),
            few.iter()
                .map(|&t| brute_rank(&d, i, t))
                .collect::<Vec<_>>()
        );
    }
}
