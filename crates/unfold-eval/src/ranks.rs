//! Neighbour order of one point among the others, shared by every rank-based metric.
//!
//! Candidates are ordered by the pair (distance, index), a strict total order, so ties in
//! distance go to the smaller row index and every result is reproducible. The point itself
//! is never its own neighbour. `dist` is one row of a distance (or squared-distance) matrix.

use std::cmp::Ordering;

/// Whether neighbour `a` comes before neighbour `b` of the same point.
fn by_distance_then_index(dist: &[f64], a: usize, b: usize) -> Ordering {
    dist[a]
        .partial_cmp(&dist[b])
        .unwrap_or(Ordering::Equal)
        .then(a.cmp(&b))
}

/// The `k` nearest neighbours of point `i` (itself excluded), nearest first.
///
/// Partial selection: O(n + k log k). Requires `1 <= k < dist.len()`.
pub(crate) fn nearest(dist: &[f64], i: usize, k: usize) -> Vec<usize> {
    let mut others: Vec<usize> = (0..dist.len()).filter(|&j| j != i).collect();
    let cmp = |a: &usize, b: &usize| by_distance_then_index(dist, *a, *b);
    if k < others.len() {
        others.select_nth_unstable_by(k - 1, cmp);
        others.truncate(k);
    }
    others.sort_unstable_by(cmp);
    others
}

/// The ranks of `targets` among the neighbours of point `i`: 1 for the nearest other point,
/// `n - 1` for the farthest. No target may be `i` itself.
///
/// A few targets are ranked by counting the points before each one (O(n) each); many
/// targets by one full sort (O(n log n)). Both give the same ranks.
pub(crate) fn ranks_of(dist: &[f64], i: usize, targets: &[usize]) -> Vec<usize> {
    let n = dist.len();
    let log2_n = (usize::BITS - n.leading_zeros()) as usize;
    if targets.len() <= log2_n {
        ranks_by_counting(dist, i, targets)
    } else {
        ranks_by_sorting(dist, i, targets)
    }
}

fn ranks_by_counting(dist: &[f64], i: usize, targets: &[usize]) -> Vec<usize> {
    targets
        .iter()
        .map(|&t| {
            1 + (0..dist.len())
                .filter(|&l| l != i && by_distance_then_index(dist, l, t) == Ordering::Less)
                .count()
        })
        .collect()
}

fn ranks_by_sorting(dist: &[f64], i: usize, targets: &[usize]) -> Vec<usize> {
    let order = nearest(dist, i, dist.len() - 1);
    let mut rank = vec![0usize; dist.len()];
    for (r, &j) in order.iter().enumerate() {
        rank[j] = r + 1;
    }
    targets.iter().map(|&t| rank[t]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_to_the_smaller_index_and_self_is_skipped() {
        // Point 2 is the query; points 0, 3 and 4 tie at distance 1.
        let d = [1.0, 2.0, 0.0, 1.0, 1.0, 0.5];
        assert_eq!(nearest(&d, 2, 3), vec![5, 0, 3]);
        assert_eq!(nearest(&d, 2, 5), vec![5, 0, 3, 4, 1]);
        assert_eq!(ranks_of(&d, 2, &[4, 1, 5]), vec![4, 5, 1]);
    }

    #[test]
    fn counting_and_sorting_agree() {
        let n = 200;
        let d: Vec<f64> = (0..n).map(|j| ((j * 37 % 23) as f64).sqrt()).collect();
        let targets: Vec<usize> = (0..n).filter(|&j| j != 17).collect();
        assert_eq!(
            ranks_by_counting(&d, 17, &targets),
            ranks_by_sorting(&d, 17, &targets)
        );
        let mut ranks = ranks_of(&d, 17, &targets);
        ranks.sort_unstable();
        assert_eq!(ranks, (1..n).collect::<Vec<_>>());
    }
}
