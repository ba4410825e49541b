//! Blocked brute-force search for high-dimensional points.
//!
//! Squared distances from a block of queries to all reference points come from one matrix
//! product (`unfold_linalg::sq_dists_to`) on centred coordinates. The product form
//! `|a|^2 + |b|^2 - 2 a.b` carries a rounding error of at most `c (|a|^2 + |b|^2)` with
//! `c = (8p + 32) eps` (dot product of length p, the two norms, centring, and the
//! exact formula's own rounding, with a factor 2 to spare), so it only
//! *selects candidates*: every point whose lower bound could still beat the answer is
//! re-measured with the exact [`sq_dist`], and the answer is chosen from exact values.
//! Only `BLOCK_ENTRIES` distances are held at a time, never the full n x m matrix.

use crate::kdtree::Best;
use crate::rows::{sq_dist, Rows};
use nalgebra::DMatrix;
use rayon::prelude::*;
use unfold_linalg::sq_dists_to;

/// The largest number of approximate distances held at once (64 MiB of f64).
const BLOCK_ENTRIES: usize = 1 << 23;

/// Approximate squared distances from one query to every reference point, with bounds.
struct Approx<'a> {
    d2: &'a [f64],
    ref_norms: &'a [f64],
    query_norm: f64,
    c: f64,
}

impl Approx<'_> {
    fn slack(&self, j: usize) -> f64 {
        self.c * (self.ref_norms[j] + self.query_norm)
    }
    fn lower(&self, j: usize) -> f64 {
        self.d2[j] - self.slack(j)
    }
    fn upper(&self, j: usize) -> f64 {
        self.d2[j] + self.slack(j)
    }
}

/// Runs `per_query(q, approx)` for every query row, in parallel, and returns the results in
/// query order. `reference` and `queries` have the same number of columns.
fn for_each_query<T: Send>(
    reference: &DMatrix<f64>,
    queries: &DMatrix<f64>,
    per_query: impl Fn(usize, &Approx<'_>) -> T + Sync,
) -> Vec<T> {
    let (n, p) = reference.shape();
    let m = queries.nrows();
    let mean = reference.row_mean();
    let centred_ref = DMatrix::from_fn(n, p, |i, c| reference[(i, c)] - mean[c]);
    let ref_norms: Vec<f64> = centred_ref.row_iter().map(|r| r.norm_squared()).collect();
    let c = (8.0 * p as f64 + 32.0) * f64::EPSILON;
    let block = (BLOCK_ENTRIES / n.max(1)).clamp(1, m.max(1));
    let mut out = Vec::with_capacity(m);
    for start in (0..m).step_by(block) {
        let len = block.min(m - start);
        let centred_q = DMatrix::from_fn(len, p, |i, c| queries[(start + i, c)] - mean[c]);
        // n x len, column b holds the distances of query start + b (contiguous).
        let d2 = sq_dists_to(&centred_ref, &centred_q);
        let part: Vec<T> = d2
            .as_slice()
            .par_chunks(n)
            .enumerate()
            .map(|(b, col)| {
                let approx = Approx {
                    d2: col,
                    ref_norms: &ref_norms,
                    query_norm: centred_q.row(b).norm_squared(),
                    c,
                };
                per_query(start + b, &approx)
            })
            .collect();
        out.extend(part);
    }
    out
}

/// For every query, its `k` nearest reference points as `(squared distance, index)`,
/// nearest first, ties by smaller index. With `exclude_self`, query `q` is the reference
/// point `q` and is skipped. Needs `k <= n` (or `k <= n - 1` with `exclude_self`).
pub(crate) fn knn(
    reference: &DMatrix<f64>,
    queries: &DMatrix<f64>,
    k: usize,
    exclude_self: bool,
) -> Vec<Vec<(f64, usize)>> {
    let ref_rows = Rows::new(reference);
    let query_rows = Rows::new(queries);
    let n = reference.nrows();
    for_each_query(reference, queries, |q, approx| {
        let skip = |j: usize| exclude_self && j == q;
        // An upper bound on the true k-th smallest squared distance.
        let mut uppers: Vec<f64> = (0..n)
            .filter(|&j| !skip(j))
            .map(|j| approx.upper(j))
            .collect();
        let (_, kth, _) = uppers.select_nth_unstable_by(k - 1, f64::total_cmp);
        let bound = *kth;
        let mut best = Best::new(k);
        for j in (0..n).filter(|&j| !skip(j) && approx.lower(j) <= bound) {
            best.offer(sq_dist(ref_rows.row(j), query_rows.row(q)), j);
        }
        best.into_sorted()
    })
}

/// For every point, the other points within Euclidean distance `radius`
/// (`sqrt(d2) <= radius`) as `(squared distance, index)`, unsorted.
pub(crate) fn within(points: &DMatrix<f64>, radius: f64) -> Vec<Vec<(f64, usize)>> {
    let rows = Rows::new(points);
    let n = points.nrows();
    // Squaring the radius may round down: widen the candidate filter by a relative 4 eps.
    let r2 = radius * radius * (1.0 + 4.0 * f64::EPSILON);
    for_each_query(points, points, |q, approx| {
        (0..n)
            .filter(|&j| j != q && approx.lower(j) <= r2)
            .filter_map(|j| {
                let d2 = sq_dist(rows.row(j), rows.row(q));
                (d2.sqrt() <= radius).then_some((d2, j))
            })
            .collect()
    })
}
