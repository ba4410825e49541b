//! Exact neighbours of points given as sparse rows ([`SparsePoints`]), without a dense
//! copy: the k nearest neighbours ([`knn_sparse`], [`knn_query_sparse`]), the closest
//! pairs that join the components of a graph ([`joining_edges_sparse`]) and the distinct
//! rows ([`distinct_rows_sparse`]).
//!
//! Products `a . b` of a block of queries with every reference point come from the
//! reference transposed: for each column, the reference points with an entry there. Each
//! query then adds `a_c b_c` over the points of its own columns only, `O(sum of the column
//! counts of its entries)` work instead of `O(n p)`. The transpose is built a slab of
//! columns at a time (a [`SLABS`]th of the entries each) and the products of a block are
//! held for about a quarter of the matrix's bytes, so the search holds about half the
//! matrix beyond it. As in the dense brute force, the products only choose candidates:
//! `|a|^2 + |b|^2 - 2 a.b` with error at most `c (|a|^2 + |b|^2)`, `c = (8m + 32) eps` for
//! rows of at most m entries; every point whose lower bound could still qualify is
//! re-measured by the exact [`sparse_sq_dist`], and the answer is chosen from exact values.
//! Each query's sums run in a fixed order, so the bits do not depend on the thread count.

use crate::brute::{nearest, Approx};
use crate::emst::{lighter, Edge};
use crate::knn::{check_query_k, into_knn, Knn};
use crate::union_find::UnionFind;
use crate::JoiningEdges;
use nalgebra::DMatrix;
use rayon::prelude::*;
use std::cmp::Ordering;
use unfold_core::{check_k, interrupt, Error, Result};
use unfold_linalg::{sparse_sq_dist, SparsePoints, SparseRow};

/// The transpose is built in this many slabs of columns, each with about as many entries.
const SLABS: usize = 4;

/// The products of a block of queries take at least this many bytes when the matrix is
/// small (a quarter of the matrix's bytes otherwise), so blocks stay efficient.
const MIN_BLOCK_BYTES: usize = 16 << 20;

/// The reference points with an entry in the columns `start..end`, column by column:
/// column `start + c` holds the points `rows[colptr[c]..colptr[c + 1]]` (ascending, 32-bit:
/// [`for_each_query_within`] refuses more points) with the values `values[...]`.
struct Slab {
    start: usize,
    end: usize,
    colptr: Vec<usize>,
    rows: Vec<u32>,
    values: Vec<f64>,
}

impl Slab {
    /// The slab of `points` on the columns `start..end`.
    fn new(points: &SparsePoints<'_>, start: usize, end: usize) -> Slab {
        let n = points.shape().0;
        let in_slab = |(cols, _): SparseRow<'_>| {
            let lo = cols.partition_point(|&c| (c as usize) < start);
            lo..lo + cols[lo..].partition_point(|&c| (c as usize) < end)
        };
        let mut colptr = vec![0usize; end - start + 1];
        for i in 0..n {
            let row = points.row(i);
            for &c in &row.0[in_slab(row)] {
                colptr[c as usize - start + 1] += 1;
            }
        }
        for c in 0..end - start {
            colptr[c + 1] += colptr[c];
        }
        let total = colptr[end - start];
        let (mut rows, mut values) = (vec![0u32; total], vec![0.0; total]);
        let mut next = colptr.clone();
        for i in 0..n {
            let row = points.row(i);
            let range = in_slab(row);
            for (&c, &v) in row.0[range.clone()].iter().zip(&row.1[range]) {
                let at = &mut next[c as usize - start];
                rows[*at] = i as u32;
                values[*at] = v;
                *at += 1;
            }
        }
        Slab {
            start,
            end,
            colptr,
            rows,
            values,
        }
    }

    /// Adds the products of the query `(cols, vals)` with every point on this slab's
    /// columns to `cross`.
    fn add_products(&self, (cols, vals): SparseRow<'_>, cross: &mut [f64]) {
        let lo = cols.partition_point(|&c| (c as usize) < self.start);
        for (&c, &v) in cols[lo..].iter().zip(&vals[lo..]) {
            let c = c as usize;
            if c >= self.end {
                break;
            }
            let range = self.colptr[c - self.start]..self.colptr[c - self.start + 1];
            for (&r, &w) in self.rows[range.clone()].iter().zip(&self.values[range]) {
                cross[r as usize] += v * w;
            }
        }
    }
}

/// The column ranges of the slabs: consecutive columns with about `nnz / SLABS` entries
/// each.
fn slab_ranges(points: &SparsePoints<'_>) -> Vec<(usize, usize)> {
    let (n, p) = points.shape();
    let mut counts = vec![0usize; p];
    for i in 0..n {
        for &c in points.row(i).0 {
            counts[c as usize] += 1;
        }
    }
    let per_slab = points.nnz().div_ceil(SLABS).max(1);
    let (mut ranges, mut start, mut held) = (Vec::new(), 0, 0);
    for (c, &count) in counts.iter().enumerate() {
        held += count;
        if held >= per_slab {
            ranges.push((start, c + 1));
            (start, held) = (c + 1, 0);
        }
    }
    if start < p {
        ranges.push((start, p));
    }
    ranges
}

/// Runs `per_query(q, approx)` for every query row and returns the results in query order
/// (module doc). Blocks of queries run one after another, the queries of a block in
/// parallel; the interruption flag is checked before every slab of every block.
fn for_each_query<T: Send>(
    reference: &SparsePoints<'_>,
    queries: &SparsePoints<'_>,
    per_query: impl Fn(usize, &Approx<'_>) -> T + Sync,
) -> Result<Vec<T>> {
    let budget = (reference.bytes() / 4).max(MIN_BLOCK_BYTES);
    for_each_query_within(reference, queries, budget, per_query)
}

/// [`for_each_query`] with the products of a block held in about `budget` bytes.
fn for_each_query_within<T: Send>(
    reference: &SparsePoints<'_>,
    queries: &SparsePoints<'_>,
    budget: usize,
    per_query: impl Fn(usize, &Approx<'_>) -> T + Sync,
) -> Result<Vec<T>> {
    let n = reference.shape().0;
    if u32::try_from(n).is_err() {
        return Err(Error::invalid(
            "sparse points",
            format!(
                "{n} points; the sparse search indexes at most {} (32-bit)",
                u32::MAX
            ),
        ));
    }
    let m = queries.shape().0;
    let terms = reference.max_row_nnz().max(queries.max_row_nnz());
    let c = (8.0 * terms as f64 + 32.0) * f64::EPSILON;
    let ref_norms = reference.sq_norms();
    let query_norms = queries.sq_norms();
    let ref_low: Vec<f64> = ref_norms.iter().map(|&r| (1.0 - c) * r).collect();
    let ref_high: Vec<f64> = ref_norms.iter().map(|&r| (1.0 + c) * r).collect();
    let block = (budget / (8 * n)).clamp(1, m);
    let ranges = slab_ranges(reference);
    let mut out = Vec::with_capacity(m);
    let mut cross = vec![0.0; block * n];
    for start in (0..m).step_by(block) {
        let len = block.min(m - start);
        let cross = &mut cross[..len * n];
        cross.fill(0.0);
        for &(lo, hi) in &ranges {
            interrupt::check()?;
            let slab = Slab::new(reference, lo, hi);
            cross
                .par_chunks_mut(n)
                .enumerate()
                .for_each(|(b, row)| slab.add_products(queries.row(start + b), row));
        }
        let found: Vec<T> = cross
            .par_chunks(n)
            .enumerate()
            .map(|(b, col)| {
                let q = start + b;
                per_query(q, &Approx::new(col, &ref_low, &ref_high, query_norms[q], c))
            })
            .collect();
        out.extend(found);
    }
    Ok(out)
}

/// The `k` nearest neighbours of every sparse row among the other rows, as [`crate::knn`]
/// gives them for the same points dense: sorted by distance, ties by smaller index, the
/// distances Euclidean.
///
/// # Errors
/// `k = 0` or `k >= n`; [`Error::Interrupted`].
pub fn knn_sparse(points: &SparsePoints<'_>, k: usize) -> Result<Knn> {
    check_k(points.shape().0, k, "k-nearest-neighbour search")?;
    let found = for_each_query(points, points, |q, approx| {
        nearest(
            approx,
            k,
            |j| j == q,
            |j| sparse_sq_dist(points.row(j), points.row(q)),
        )
    })?;
    Ok(into_knn(k, found))
}

/// The `k` nearest rows of `reference` to each row of `queries`, without self exclusion,
/// as [`crate::knn_query`] gives them for dense points.
///
/// # Errors
/// Different column counts, `k = 0` or `k > n`; [`Error::Interrupted`].
pub fn knn_query_sparse(
    reference: &SparsePoints<'_>,
    queries: &SparsePoints<'_>,
    k: usize,
) -> Result<Knn> {
    if reference.shape().1 != queries.shape().1 {
        return Err(Error::DimensionMismatch(format!(
            "query points have {} columns but the reference points have {}; both must be \
             points in the same space",
            queries.shape().1,
            reference.shape().1
        )));
    }
    check_query_k(reference.shape().0, k)?;
    let found = for_each_query(reference, queries, |q, approx| {
        nearest(
            approx,
            k,
            |_| false,
            |j| sparse_sq_dist(reference.row(j), queries.row(q)),
        )
    })?;
    Ok(into_knn(k, found))
}

/// [`crate::joining_edges`] for sparse rows: the edges `(i, j, distance)`, `i < j`, sorted,
/// of the minimum spanning tree of the components `labels` (numbered `0..count`) under
/// the distance between their closest points. Borůvka's rounds, each a search of every
/// point's nearest point in another component.
///
/// # Errors
/// Labels of another length or out of range; [`Error::Interrupted`].
pub fn joining_edges_sparse(
    points: &SparsePoints<'_>,
    labels: &[usize],
    count: usize,
) -> Result<JoiningEdges> {
    let n = points.shape().0;
    if labels.len() != n || labels.iter().any(|&c| c >= count) {
        return Err(Error::invalid(
            "labels",
            format!("need one component label below {count} for each of the {n} points"),
        ));
    }
    let mut sets = UnionFind::new(n);
    let mut first = vec![usize::MAX; count];
    for (i, &c) in labels.iter().enumerate() {
        match first[c] {
            usize::MAX => first[c] = i,
            f => {
                sets.union(f, i);
            }
        }
    }
    let mut edges = Vec::with_capacity(count.saturating_sub(1));
    while edges.len() + 1 < count {
        let label: Vec<usize> = (0..n).map(|i| sets.find(i)).collect();
        let found = for_each_query(points, points, |q, approx| {
            nearest(
                approx,
                1,
                |j| label[j] == label[q],
                |j| sparse_sq_dist(points.row(j), points.row(q)),
            )
        })?;
        let mut lightest: Vec<Option<Edge>> = vec![None; n];
        for (i, f) in found.iter().enumerate() {
            let Some(&(d2, j)) = f.first() else { continue };
            let e = (d2, i.min(j), i.max(j));
            let slot = &mut lightest[label[i]];
            if slot.is_none_or(|s| lighter(e, s)) {
                *slot = Some(e);
            }
        }
        for &(d2, i, j) in lightest.iter().flatten() {
            if sets.union(i, j) {
                edges.push((i, j, d2.sqrt()));
            }
        }
    }
    edges.sort_unstable_by_key(|&(i, j, _)| (i, j));
    Ok(edges)
}

/// [`crate::distinct_rows`] for sparse rows: rows are equal when their non-zero entries
/// are (an explicit zero, -0.0 included, counts as absent). The smallest index of each
/// distinct row, ascending, and for every row the position of its distinct row in that
/// list; `None` when every row is distinct.
pub fn distinct_rows_sparse(points: &SparsePoints<'_>) -> Option<(Vec<usize>, Vec<usize>)> {
    let n = points.shape().0;
    let entries = |i: usize| {
        let (cols, vals) = points.row(i);
        cols.iter().zip(vals).filter(|(_, &v)| v != 0.0)
    };
    let by_entries = |a: &usize, b: &usize| {
        let (mut x, mut y) = (entries(*a), entries(*b));
        loop {
            match (x.next(), y.next()) {
                (None, None) => return Ordering::Equal,
                (None, Some(_)) => return Ordering::Less,
                (Some(_), None) => return Ordering::Greater,
                (Some((ca, va)), Some((cb, vb))) => {
                    let o = ca.cmp(cb).then(va.total_cmp(vb));
                    if o.is_ne() {
                        return o;
                    }
                }
            }
        }
    };
    let mut sorted: Vec<usize> = (0..n).collect();
    sorted.par_sort_unstable_by(|a, b| by_entries(a, b).then(a.cmp(b)));
    let mut rep_of = vec![0; n];
    let mut repeated = false;
    for s in 0..n {
        let i = sorted[s];
        rep_of[i] = if s > 0 && by_entries(&sorted[s - 1], &i).is_eq() {
            repeated = true;
            rep_of[sorted[s - 1]]
        } else {
            i
        };
    }
    if !repeated {
        return None;
    }
    let first: Vec<usize> = (0..n).filter(|&i| rep_of[i] == i).collect();
    let mut position = vec![0; n];
    for (u, &r) in first.iter().enumerate() {
        position[r] = u;
    }
    Some((first, (0..n).map(|i| position[rep_of[i]]).collect()))
}

/// The points a graph is built on: dense rows or sparse rows.
#[derive(Clone, Copy, Debug)]
pub enum PointRows<'a> {
    /// An n x p matrix, one point per row.
    Dense(&'a DMatrix<f64>),
    /// Sparse rows.
    Sparse(&'a SparsePoints<'a>),
}

impl<'a> From<&'a DMatrix<f64>> for PointRows<'a> {
    fn from(y: &'a DMatrix<f64>) -> Self {
        PointRows::Dense(y)
    }
}

impl<'a> From<&'a SparsePoints<'a>> for PointRows<'a> {
    fn from(y: &'a SparsePoints<'a>) -> Self {
        PointRows::Sparse(y)
    }
}

impl PointRows<'_> {
    /// The number of points.
    pub fn n(&self) -> usize {
        match self {
            PointRows::Dense(y) => y.nrows(),
            PointRows::Sparse(y) => y.shape().0,
        }
    }

    /// The `k` nearest neighbours of every point ([`crate::knn`], [`knn_sparse`]).
    ///
    /// # Errors
    /// As those.
    pub fn knn(&self, k: usize) -> Result<Knn> {
        match self {
            PointRows::Dense(y) => crate::knn(y, k),
            PointRows::Sparse(y) => knn_sparse(y, k),
        }
    }

    /// The edges joining the components `labels` ([`crate::joining_edges`],
    /// [`joining_edges_sparse`]).
    ///
    /// # Errors
    /// As those.
    pub fn joining_edges(&self, labels: &[usize], count: usize) -> Result<JoiningEdges> {
        match self {
            PointRows::Dense(y) => crate::joining_edges(y, labels, count),
            PointRows::Sparse(y) => joining_edges_sparse(y, labels, count),
        }
    }

    /// The Euclidean distance between the points `i` and `j` of every pair, in order.
    ///
    /// # Errors
    /// Non-finite dense points.
    pub fn distances(&self, pairs: impl Iterator<Item = (usize, usize)>) -> Result<Vec<f64>> {
        Ok(match self {
            PointRows::Dense(y) => {
                unfold_core::check_points(y, "points")?;
                let rows = crate::rows::Rows::new(y);
                pairs
                    .map(|(i, j)| crate::rows::sq_dist(rows.row(i), rows.row(j)).sqrt())
                    .collect()
            }
            PointRows::Sparse(y) => pairs
                .map(|(i, j)| sparse_sq_dist(y.row(i), y.row(j)).sqrt())
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{distinct_rows, joining_edges, knn, knn_query};
    use rand::Rng;

    /// Sparse random points: about `density` of the entries non-zero, a few rows empty
    /// and a few repeated.
    fn sparse_random(n: usize, p: usize, density: f64, seed: u64) -> DMatrix<f64> {
        let mut rng = unfold_core::seeded_rng(seed);
        let mut y = DMatrix::from_fn(n, p, |_, _| {
            if rng.random::<f64>() < density {
                (rng.random::<f64>() * 8.0).floor() - 2.0
            } else {
                0.0
            }
        });
        for i in (0..n).step_by(17) {
            let from = (i * 7 + 3) % n;
            let row = y.row(from).into_owned();
            y.set_row(i, &row);
        }
        y
    }

    /// Neighbours, queries, duplicates and joining edges equal the dense search's, on
    /// points with ties (small integer values), empty rows and copies; the same bits on 1
    /// and 2 threads.
    #[test]
    fn sparse_search_equals_the_dense_one() {
        for (n, p, density, seed) in [(60, 40, 0.1, 1), (300, 500, 0.02, 2), (150, 8, 0.5, 3)] {
            let y = sparse_random(n, p, density, seed);
            let s = SparsePoints::from_dense(&y).unwrap();
            for k in [1, 5, 12] {
                let dense = knn(&y, k).unwrap();
                let sparse = knn_sparse(&s, k).unwrap();
                assert_eq!(sparse.indices, dense.indices, "n {n} k {k}");
                for (a, b) in sparse
                    .distances
                    .iter()
                    .flatten()
                    .zip(dense.distances.iter().flatten())
                {
                    assert!((a - b).abs() <= 1e-12 * (1.0 + b), "{a} {b}");
                }
            }
            let queries = sparse_random(25, p, density, seed + 10);
            let q = SparsePoints::from_dense(&queries).unwrap();
            let dense = knn_query(&y, &queries, 7).unwrap();
            let sparse = knn_query_sparse(&s, &q, 7).unwrap();
            assert_eq!(sparse.indices, dense.indices);
            assert_eq!(distinct_rows_sparse(&s), distinct_rows(&y).unwrap());
            let labels: Vec<usize> = (0..n).map(|i| (i * 31 % 7) % 4).collect();
            let a = joining_edges_sparse(&s, &labels, 4).unwrap();
            let b = joining_edges(&y, &labels, 4).unwrap();
            assert_eq!(a.len(), 3);
            let total = |e: &JoiningEdges| e.iter().map(|x| x.2).sum::<f64>();
            assert!((total(&a) - total(&b)).abs() <= 1e-12 * total(&b).max(1.0));
            let single = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            let again = single.install(|| knn_sparse(&s, 5).unwrap());
            assert_eq!(again, knn_sparse(&s, 5).unwrap());
        }
    }

    /// Several query blocks and slabs (a tiny block budget) give the same answer as one.
    #[test]
    fn blocks_and_slabs_do_not_change_the_answer() {
        let y = sparse_random(400, 300, 0.05, 7);
        let s = SparsePoints::from_dense(&y).unwrap();
        assert!(slab_ranges(&s).len() >= 3);
        // Blocks of 9 queries.
        let found = for_each_query_within(&s, &s, 9 * 8 * 400, |q, approx| {
            nearest(
                approx,
                6,
                |j| j == q,
                |j| sparse_sq_dist(s.row(j), s.row(q)),
            )
        })
        .unwrap();
        assert_eq!(into_knn(6, found).indices, knn(&y, 6).unwrap().indices);
    }

    #[test]
    fn bad_k_and_columns_are_refused() {
        let s = SparsePoints::from_dense(&sparse_random(10, 6, 0.5, 4)).unwrap();
        assert!(knn_sparse(&s, 10).is_err());
        let other = SparsePoints::from_dense(&sparse_random(3, 5, 0.5, 5)).unwrap();
        assert!(matches!(
            knn_query_sparse(&s, &other, 2),
            Err(Error::DimensionMismatch(_))
        ));
    }
}
