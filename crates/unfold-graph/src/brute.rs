//! Blocked brute-force search for high-dimensional points.
//!
//! Squared distances from a block of queries to all reference points come from one matrix
//! product on centred coordinates, `|a|^2 + |b|^2 - 2 a.b`. This form carries a rounding
//! error of at most `c (|a|^2 + |b|^2)` with `c = (8p + 32) eps` (dot product of length p,
//! the two norms, centring, and the exact formula's own rounding, with a factor 2 to
//! spare), so it only *selects candidates*: every point whose lower bound could still beat
//! the answer is re-measured with the exact [`sq_dist`], and the answer is chosen from
//! exact values. About `BLOCK_ENTRIES` products are held per block of queries, never the
//! full n x m matrix.

use crate::kdtree::Best;
use crate::rows::{sq_dist, Rows};
use faer::Par;
use nalgebra::DMatrix;
use rayon::prelude::*;
use std::collections::BinaryHeap;
use unfold_core::{interrupt, Result};
use unfold_linalg::gemm::mul_with;
use unfold_linalg::view::as_faer;

/// About this many products (2 MiB of f64) are held per block of queries, so a block stays
/// in cache; blocks run in parallel.
const BLOCK_ENTRIES: usize = 1 << 18;

/// Blocks have at least this many queries, so the matrix product stays efficient.
const MIN_BLOCK: usize = 32;

/// Points are screened this many at a time: bounds for a chunk are computed in one
/// vectorisable pass and the chunk is skipped when none can qualify.
const CHUNK: usize = 64;

/// What is known about one query: approximate squared distances to every reference point
/// with bounds. With `a_j` the centred reference points, `b` the centred query, and
/// `d_j = |a_j|^2 - 2 a_j . b + |b|^2`, the exact squared distance lies in
/// `[d_j - c (|a_j|^2 + |b|^2), d_j + c (|a_j|^2 + |b|^2)]`.
pub(crate) struct Approx<'a> {
    /// `a_j . b`.
    cross: &'a [f64],
    /// `(1 - c) |a_j|^2`.
    ref_low: &'a [f64],
    /// `(1 + c) |a_j|^2`.
    ref_high: &'a [f64],
    /// `(1 - c) |b|^2`.
    query_low: f64,
    /// `(1 + c) |b|^2`.
    query_high: f64,
}

impl<'a> Approx<'a> {
    /// The bounds for one query from its products `cross` with the reference points, the
    /// reference points' bounded squared norms and the query's squared norm, with
    /// relative error at most `c` in every squared norm and product term.
    pub(crate) fn new(
        cross: &'a [f64],
        ref_low: &'a [f64],
        ref_high: &'a [f64],
        query_norm: f64,
        c: f64,
    ) -> Self {
        Approx {
            cross,
            ref_low,
            ref_high,
            query_low: (1.0 - c) * query_norm,
            query_high: (1.0 + c) * query_norm,
        }
    }

    fn len(&self) -> usize {
        self.cross.len()
    }

    #[inline]
    fn lower(&self, j: usize) -> f64 {
        self.ref_low[j] - 2.0 * self.cross[j] + self.query_low
    }

    #[inline]
    fn upper(&self, j: usize) -> f64 {
        self.ref_high[j] - 2.0 * self.cross[j] + self.query_high
    }

    /// Calls `visit(j, bound)` for every point, in index order, whose lower bound does not
    /// exceed `bound` at the time it is reached; `visit` may lower `bound`.
    fn for_each_below(&self, bound: &mut f64, mut visit: impl FnMut(usize, &mut f64)) {
        let mut low = [0.0; CHUNK];
        for base in (0..self.len()).step_by(CHUNK) {
            let len = CHUNK.min(self.len() - base);
            let (cross, ref_low) = (
                &self.cross[base..base + len],
                &self.ref_low[base..base + len],
            );
            for t in 0..len {
                low[t] = ref_low[t] - 2.0 * cross[t] + self.query_low;
            }
            let limit = *bound;
            if !low[..len].iter().fold(false, |any, &l| any | (l <= limit)) {
                continue;
            }
            for (t, &l) in low[..len].iter().enumerate() {
                if l <= *bound {
                    visit(base + t, bound);
                }
            }
        }
    }
}

/// Runs `per_query(q, approx)` for every query row and returns the results in query
/// order. Blocks of queries run in parallel, each after a check of the process's
/// interruption flag ([`unfold_core::Error::Interrupted`]). `reference` and `queries` have the same
/// number of columns.
fn for_each_query<T: Send>(
    reference: &DMatrix<f64>,
    queries: &DMatrix<f64>,
    per_query: impl Fn(usize, &Approx<'_>) -> T + Sync,
) -> Result<Vec<T>> {
    let (n, p) = reference.shape();
    let m = queries.nrows();
    let mean = reference.row_mean();
    let centred_ref = DMatrix::from_fn(n, p, |i, c| reference[(i, c)] - mean[c]);
    let c = (8.0 * p as f64 + 32.0) * f64::EPSILON;
    let ref_norms: Vec<f64> = centred_ref.row_iter().map(|r| r.norm_squared()).collect();
    let ref_low: Vec<f64> = ref_norms.iter().map(|&r| (1.0 - c) * r).collect();
    let ref_high: Vec<f64> = ref_norms.iter().map(|&r| (1.0 + c) * r).collect();
    let block = (BLOCK_ENTRIES / n.max(1)).max(MIN_BLOCK).min(m.max(1));
    let starts: Vec<usize> = (0..m).step_by(block).collect();
    let parts: Vec<Vec<T>> = starts
        .into_par_iter()
        .map(|start| {
            interrupt::check()?;
            let len = block.min(m - start);
            let centred_q = DMatrix::from_fn(len, p, |i, c| queries[(start + i, c)] - mean[c]);
            // n x len: column b holds the products with query start + b (contiguous).
            let cross = mul_with(
                as_faer(&centred_ref),
                as_faer(&centred_q).transpose(),
                Par::Seq,
            );
            Ok(cross
                .as_slice()
                .chunks(n)
                .enumerate()
                .map(|(b, col)| {
                    let query_norm = centred_q.row(b).norm_squared();
                    let approx = Approx::new(col, &ref_low, &ref_high, query_norm, c);
                    per_query(start + b, &approx)
                })
                .collect::<Vec<T>>())
        })
        .collect::<Result<_>>()?;
    Ok(parts.into_iter().flatten().collect())
}

/// For every query, its `k` nearest reference points as `(squared distance, index)`,
/// nearest first, ties by smaller index. With `exclude_self`, query `q` is the reference
/// point `q` and is skipped. Needs `k <= n` (or `k <= n - 1` with `exclude_self`).
pub(crate) fn knn(
    reference: &DMatrix<f64>,
    queries: &DMatrix<f64>,
    k: usize,
    exclude_self: bool,
) -> Result<Vec<Vec<(f64, usize)>>> {
    let ref_rows = Rows::new(reference);
    // A search of the points among themselves reads one row-major copy.
    let own_rows = (!std::ptr::eq(reference, queries)).then(|| Rows::new(queries));
    let query_rows = own_rows.as_ref().unwrap_or(&ref_rows);
    for_each_query(reference, queries, |q, approx| {
        nearest(
            approx,
            k,
            |j| exclude_self && j == q,
            |j| sq_dist(ref_rows.row(j), query_rows.row(q)),
        )
    })
}

/// The `k` reference points nearest to one query, those with `skip(j)` left out, as
/// `(squared distance, index)`, nearest first, ties by smaller index: the candidates are
/// chosen from the bounds of `approx` and re-measured by `exact(j)`, the exact squared
/// distance. Fewer than `k` if fewer points are left.
pub(crate) fn nearest(
    approx: &Approx<'_>,
    k: usize,
    skip: impl Fn(usize) -> bool,
    exact: impl Fn(usize) -> f64,
) -> Vec<(f64, usize)> {
    // One pass: a max-heap of the k smallest upper bounds (whose top bounds the true
    // k-th smallest distance from above), and every point whose lower bound does not
    // exceed the top at the time it is seen. The top only decreases, so the points
    // that can be among the k nearest are all collected; a final filter uses the final
    // top. Bounds are >= 0 (a possible -0.0 is mapped to +0.0), so their IEEE bit
    // patterns order as the numbers do.
    let mut heap: BinaryHeap<u64> = BinaryHeap::with_capacity(k + 1);
    let mut top = f64::INFINITY;
    let mut candidates = Vec::with_capacity(4 * k);
    approx.for_each_below(&mut top, |j, top| {
        if skip(j) {
            return;
        }
        candidates.push(j);
        let upper = approx.upper(j).max(0.0) + 0.0;
        if heap.len() < k {
            heap.push(upper.to_bits());
        } else if upper < *top {
            heap.pop();
            heap.push(upper.to_bits());
        }
        if heap.len() == k {
            *top = f64::from_bits(*heap.peek().expect("k >= 1 bounds are held"));
        }
    });
    let mut best = Best::new(k);
    for j in candidates {
        if approx.lower(j) <= top {
            best.offer(exact(j), j);
        }
    }
    best.into_sorted()
}

/// For every point, the other points within Euclidean distance `radius`
/// (`sqrt(d2) <= radius`) as `(squared distance, index)`, unsorted.
pub(crate) fn within(points: &DMatrix<f64>, radius: f64) -> Result<Vec<Vec<(f64, usize)>>> {
    let rows = Rows::new(points);
    // Squaring the radius may round down: widen the candidate filter by a relative 4 eps.
    let r2 = radius * radius * (1.0 + 4.0 * f64::EPSILON);
    for_each_query(points, points, |q, approx| {
        let mut found = Vec::new();
        approx.for_each_below(&mut r2.clone(), |j, _| {
            let d2 = sq_dist(rows.row(j), rows.row(q));
            if j != q && d2.sqrt() <= radius {
                found.push((d2, j));
            }
        });
        found
    })
}
