//! The soft assignments `R` (32) of DDRTree, stored by rows in a tree order of the centres,
//! and the products with `R` that one iteration needs.
//!
//! Only entries within `e^-37` of their row's largest are kept (the rest change no sum at
//! double precision), so every product costs `O(nnz)` instead of `O(N K)`. The centres
//! are numbered in a depth-first order of the current tree: a point's non-zeros lie on a
//! few tree neighbourhoods of its nearest centre, i.e. on a few contiguous runs of
//! positions, and the K x K product `R^T R` becomes short dense updates of those runs.
//! Rows are processed in fixed blocks (in parallel), each with its own accumulator; the
//! blocks' results are summed in block order, so the sums do not depend on the number of
//! threads. Every output is returned in the original numbering of the centres.

use faer::Par;
use nalgebra::DMatrix;
use rayon::prelude::*;
use std::ops::Range;
use unfold_linalg::gemm::mul_with;
use unfold_linalg::simd::{self, exp, lane_sum, LANES};
use unfold_linalg::view::as_faer;

/// Assignments below `e^-37 < 1e-16` times the point's largest are set to zero: they
/// change no sum at double precision, and with a small sigma dropping them leaves `R`
/// sparse.
pub(crate) const NEGLIGIBLE_EXPONENT: f64 = -37.0;

/// Rows per block are at least this many (blocks are the unit of parallel work, and each
/// block of a product has its own accumulator).
const MIN_BLOCK_ROWS: usize = 512;
/// At most this many blocks.
const MAX_BLOCKS: usize = 16;
/// [`Assignment::products`] sums groups of consecutive blocks into this many accumulators.
const ACCUMULATORS: usize = 4;
/// Rows of `R` that update the accumulators of [`products_blocks`] together.
const GROUP: usize = 4;

/// `R^T R`, `R^T X` and `1^T R`, in the original numbering of the centres.
pub(crate) struct Products {
    pub(crate) gram: DMatrix<f64>,
    pub(crate) tr_mul: DMatrix<f64>,
    pub(crate) col_sums: Vec<f64>,
}

/// Soft assignments (32) and their part of the objective.
pub(crate) struct Assignment {
    /// The number of centres `K`.
    k: usize,
    /// The number of points `N`.
    n: usize,
    /// `order[p]`: the centre at position `p`.
    order: Vec<usize>,
    /// `position[c]`: the position of centre `c` (the inverse of `order`).
    position: Vec<usize>,
    /// Rows per block (the last block may have fewer).
    block_rows: usize,
    /// The rows of `R`, block by block.
    blocks: Vec<Block>,
    /// `sigma sum_ik r_ik log r_ik`.
    pub(crate) neg_entropy: f64,
    /// `-sigma sum_i log sum_k exp(-d_ik / sigma)`, the minimum over `R` of
    /// `sum r d + sigma sum r log r`.
    pub(crate) soft_min: f64,
}

/// Consecutive rows of `R` in compressed form, columns as positions (ascending per row).
#[derive(Default)]
struct Block {
    /// Row `i` of the block holds entries `ptr[i]..ptr[i + 1]`.
    ptr: Vec<usize>,
    pos: Vec<u32>,
    val: Vec<f64>,
    /// The point (counted from the block's first) of each stored row. Rows are stored by
    /// their first position, so that consecutive rows update nearby accumulator rows.
    point: Vec<u32>,
}

impl Block {
    fn rows(&self) -> usize {
        self.ptr.len() - 1
    }

    /// Stores the rows (given in point order) by their first position (a stable counting
    /// sort; empty rows last).
    #[cfg(test)]
    fn sort_rows(&mut self, k: usize) {
        let mut sorted = Block::default();
        self.sort_rows_into(k, &mut sorted);
        *self = sorted;
    }

    /// The rows (given in point order) stored by their first position into `sorted`
    /// (whose buffers are reused).
    fn sort_rows_into(&self, k: usize, sorted: &mut Block) {
        let rows = self.rows();
        let first = |i: usize| {
            let start = self.ptr[i];
            if start < self.ptr[i + 1] {
                self.pos[start] as usize
            } else {
                k
            }
        };
        let mut starts = vec![0usize; k + 2];
        for i in 0..rows {
            starts[first(i) + 1] += 1;
        }
        for j in 1..starts.len() {
            starts[j] += starts[j - 1];
        }
        sorted.point.clear();
        sorted.point.resize(rows, 0);
        for i in 0..rows {
            let slot = &mut starts[first(i)];
            sorted.point[*slot] = i as u32;
            *slot += 1;
        }
        sorted.ptr.clear();
        sorted.pos.clear();
        sorted.val.clear();
        sorted.ptr.push(0);
        for &i in &sorted.point {
            let (pos, val) = self.row(i as usize);
            sorted.pos.extend_from_slice(pos);
            sorted.val.extend_from_slice(val);
            sorted.ptr.push(sorted.val.len());
        }
    }

    /// Empties the block for rows in point order (keeping its buffers).
    fn clear(&mut self) {
        self.ptr.clear();
        self.ptr.push(0);
        self.pos.clear();
        self.val.clear();
        self.point.clear();
    }

    fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let range = self.ptr[i]..self.ptr[i + 1];
        (&self.pos[range.clone()], &self.val[range])
    }
}

/// `(number of blocks, rows per block)` for `n` rows.
fn blocking(n: usize) -> (usize, usize) {
    let rows = n
        .div_ceil(n.div_ceil(MIN_BLOCK_ROWS).clamp(1, MAX_BLOCKS))
        .max(1);
    (n.div_ceil(rows).max(1), rows)
}

/// Eight doubles aligned to a cache line: one AVX-512 register (two AVX2 ones).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(64))]
pub(crate) struct Lane([f64; LANES]);

impl Lane {
    /// `self += a x`, one vector operation (loads before the store, so that it vectorises).
    #[inline(always)]
    fn add_scaled(&mut self, a: f64, x: &Lane) {
        let (xv, mut yv) = (x.0, self.0);
        for l in 0..LANES {
            yv[l] += a * xv[l];
        }
        self.0 = yv;
    }

    #[inline(always)]
    fn add(&mut self, x: &Lane) {
        let (xv, mut yv) = (x.0, self.0);
        for l in 0..LANES {
            yv[l] += xv[l];
        }
        self.0 = yv;
    }
}

/// The rows of an N x p matrix, each padded with zeros to whole [`Lane`]s, for `R^T X`.
pub(crate) struct LaneRows {
    lanes: Vec<Lane>,
    /// Lanes per row.
    width: usize,
    /// Columns `p`.
    cols: usize,
}

impl LaneRows {
    /// Copies `x` by blocks of rows in parallel (within a block, column by column, so that
    /// both the reads and the writes stay in cache).
    pub(crate) fn new(x: &DMatrix<f64>) -> LaneRows {
        const ROWS: usize = 64;
        let (n, cols) = x.shape();
        let width = cols.div_ceil(LANES);
        let mut lanes = vec![Lane::default(); n * width];
        if width > 0 {
            lanes
                .par_chunks_mut(ROWS * width)
                .enumerate()
                .for_each(|(b, block)| {
                    for (j, col) in x.column_iter().enumerate() {
                        let col = &col.as_slice()[b * ROWS..];
                        for (row, &v) in block.chunks_exact_mut(width).zip(col) {
                            row[j / LANES].0[j % LANES] = v;
                        }
                    }
                });
        }
        LaneRows { lanes, width, cols }
    }

    fn rows(&self) -> usize {
        self.lanes.len().checked_div(self.width).unwrap_or(0)
    }
}

/// From this many columns of `X` on, [`Assignment::products`] takes `R^T X` block by block
/// as dense products on `X` itself ([`DataRows::Columns`]): at high dimension a dense
/// product over a block's window of centres runs many times faster per multiply-add than
/// the sparse updates, and no row-major copy of `X` is needed.
pub(crate) const DENSE_PRODUCT_COLS: usize = 96;

/// The data `X` as [`Assignment::products`] reads it: a row-major copy for the sparse
/// updates at low dimension, or `X` itself from [`DENSE_PRODUCT_COLS`] columns on.
pub(crate) enum DataRows<'a> {
    Lanes(LaneRows),
    Columns(&'a DMatrix<f64>),
}

impl<'a> DataRows<'a> {
    pub(crate) fn new(x: &'a DMatrix<f64>) -> DataRows<'a> {
        if x.ncols() >= DENSE_PRODUCT_COLS {
            DataRows::Columns(x)
        } else {
            DataRows::Lanes(LaneRows::new(x))
        }
    }
}

/// Sums equally long lane accumulators in order into the first.
fn sum_lanes_in_order(parts: Vec<Vec<Lane>>) -> Vec<Lane> {
    let mut parts = parts.into_iter();
    let mut total = parts.next().expect("at least one block");
    for part in parts {
        for (t, v) in total.iter_mut().zip(&part) {
            t.add(v);
        }
    }
    total
}

/// The smallest entry of `d` (exact, in vector lanes).
#[inline(always)]
fn min_of(d: &[f64]) -> f64 {
    let mut lanes = [f64::INFINITY; LANES];
    let mut chunks = d.chunks_exact(LANES);
    for chunk in &mut chunks {
        for l in 0..LANES {
            // (`f64::min` without its NaN handling: distances are never NaN.)
            lanes[l] = if chunk[l] < lanes[l] {
                chunk[l]
            } else {
                lanes[l]
            };
        }
    }
    let tail = chunks.remainder().iter().copied();
    lanes.into_iter().chain(tail).fold(f64::INFINITY, f64::min)
}

/// Sums equally long accumulators in order into the first.
fn sum_in_order(parts: Vec<Vec<f64>>) -> Vec<f64> {
    let mut parts = parts.into_iter();
    let mut total = parts.next().expect("at least one block");
    for part in parts {
        for (t, v) in total.iter_mut().zip(&part) {
            *t += v;
        }
    }
    total
}

/// The inverse permutation of `order`.
fn inverse(order: &[usize]) -> Vec<usize> {
    let mut position = vec![usize::MAX; order.len()];
    for (p, &c) in order.iter().enumerate() {
        position[c] = p;
    }
    assert!(
        position.iter().all(|&p| p != usize::MAX),
        "the centre order must be a permutation"
    );
    position
}

/// Depth-first preorder of the centres over the tree `edges`: each subtree is a
/// contiguous run of positions. Each component is rooted at an end of a longest path (in
/// edges; the farthest node from its smallest), and children are visited by ascending
/// subtree size (then index), the largest last. A point's non-zeros lie around its nearest
/// centre, and a centre's parent and heavy child are then near it in the order (the gaps
/// are the smaller subtrees visited in between), so most rows of `R` span few positions.
pub(crate) fn tree_order(edges: &[(usize, usize, f64)], k: usize) -> Vec<usize> {
    let mut adjacent = vec![Vec::new(); k];
    for &(a, b, _) in edges {
        adjacent[a].push(b);
        adjacent[b].push(a);
    }
    let mut parent = vec![usize::MAX; k];
    let mut placed = vec![false; k];
    let mut order = Vec::with_capacity(k);
    let (mut visit, mut stack) = (Vec::new(), Vec::new());
    let mut size = vec![1usize; k];
    for first in 0..k {
        if placed[first] {
            continue;
        }
        // The last node reached breadth-first is a farthest one.
        breadth_first(&adjacent, first, &mut parent, &mut visit);
        let root = *visit.last().expect("the component holds `first`");
        breadth_first(&adjacent, root, &mut parent, &mut visit);
        for &v in visit.iter().rev() {
            size[v] = 1 + adjacent[v]
                .iter()
                .filter(|&&u| parent[u] == v)
                .map(|&u| size[u])
                .sum::<usize>();
        }
        stack.push(root);
        while let Some(v) = stack.pop() {
            placed[v] = true;
            order.push(v);
            let mut children: Vec<usize> = adjacent[v]
                .iter()
                .copied()
                .filter(|&u| parent[u] == v)
                .collect();
            children.sort_unstable_by_key(|&u| (size[u], u));
            stack.extend(children.into_iter().rev());
        }
    }
    order
}

/// The nodes of `root`'s component in breadth-first order into `visit`, and the parent of
/// each in `parent` (`usize::MAX` at the root).
fn breadth_first(
    adjacent: &[Vec<usize>],
    root: usize,
    parent: &mut [usize],
    visit: &mut Vec<usize>,
) {
    visit.clear();
    visit.push(root);
    parent[root] = usize::MAX;
    let mut head = 0;
    while head < visit.len() {
        let v = visit[head];
        head += 1;
        for &u in &adjacent[v] {
            if u != parent[v] {
                parent[u] = v;
                visit.push(u);
            }
        }
    }
}

/// Lemma 1 (32) from `dist[(k, i)] = ||z_i - c_k||^2` (K x N), centres stored in `order`:
/// the reference the fits' [`soft_assign_reusing`] is tested against.
#[cfg(test)]
pub(crate) fn soft_assign(dist: &DMatrix<f64>, sigma: f64, order: Vec<usize>) -> Assignment {
    let (k, n) = dist.shape();
    assert_eq!(order.len(), k, "one position per centre");
    let order_ref = &order.clone();
    Assignment::build(n, order, None, |rows, block| {
        let mut d = vec![0.0; k];
        let mut rows_out = SoftmaxRows::new(k);
        for i in rows {
            let col = dist.column(i);
            for (dp, &c) in d.iter_mut().zip(order_ref) {
                *dp = col[c];
            }
            rows_out.push(&d, min_of(&d), sigma, block);
        }
        (rows_out.neg_entropy, rows_out.soft_min)
    })
}

/// Lemma 1 (32) for the rows of `z` (N x d) and centres `c` (K x d), centres stored in
/// `order`. Distances are `||z_i||^2 + ||c_k||^2 - 2 z_i . c_k` (clamped at 0), as
/// `sq_dists_to` computes them, evaluated point by point (no K x N matrix).
#[cfg(test)]
pub(crate) fn soft_assign_to(
    z: &DMatrix<f64>,
    c: &DMatrix<f64>,
    sigma: f64,
    order: Vec<usize>,
) -> Assignment {
    soft_assign_reusing(z, c, sigma, order, None)
}

/// [`soft_assign_to`], reusing the buffers of an earlier assignment `spare`.
pub(crate) fn soft_assign_reusing(
    z: &DMatrix<f64>,
    c: &DMatrix<f64>,
    sigma: f64,
    order: Vec<usize>,
    spare: Option<Assignment>,
) -> Assignment {
    assert_eq!(order.len(), c.nrows(), "one position per centre");
    let g = Geometry::new(z, c, &order);
    Assignment::build(z.nrows(), order, spare, |rows, block| {
        simd::Level::widest().run_out(
            block,
            #[inline(always)]
            |block| points_block(&g, sigma, rows.clone(), block),
        )
    })
}

/// The index of each point's nearest centre (the first on ties), from the distances of
/// [`soft_assign_to`]: the k-means labels.
pub(crate) fn nearest_centres(z: &DMatrix<f64>, c: &DMatrix<f64>) -> Vec<usize> {
    let order: Vec<usize> = (0..c.nrows()).collect();
    let g = Geometry::new(z, c, &order);
    let (nblocks, rows) = blocking(z.nrows());
    let labels: Vec<Vec<usize>> = (0..nblocks)
        .into_par_iter()
        .map(|b| {
            let rows = b * rows..((b + 1) * rows).min(z.nrows());
            simd::vectorize(
                #[inline(always)]
                || nearest_block(&g, rows.clone()),
            )
        })
        .collect();
    labels.concat()
}

/// Points and centres laid out for the distance kernel.
struct Geometry {
    /// Centres by position, coordinate by coordinate (d x K, row-major).
    cpt: Vec<f64>,
    /// Squared norms of the centres by position.
    cn: Vec<f64>,
    /// The points as columns (d x N): point `i` is contiguous.
    zt: DMatrix<f64>,
    /// Squared norms of the points.
    zn: Vec<f64>,
}

impl Geometry {
    fn new(z: &DMatrix<f64>, c: &DMatrix<f64>, order: &[usize]) -> Geometry {
        let (dim, k) = (z.ncols(), order.len());
        assert_eq!(c.ncols(), dim, "points and centres in one space");
        let cpt: Vec<f64> = (0..dim)
            .flat_map(|j| order.iter().map(move |&ci| c[(ci, j)]))
            .collect();
        let cn = (0..k)
            .map(|p| (0..dim).fold(0.0, |s, j| s + cpt[j * k + p] * cpt[j * k + p]))
            .collect();
        let zt = z.transpose();
        let zn = zt
            .column_iter()
            .map(|col| col.iter().fold(0.0, |s, v| s + v * v))
            .collect();
        Geometry { cpt, cn, zt, zn }
    }

    /// `||z_i||^2 + ||c_p||^2 - 2 z_i . c_p`, clamped at 0: one entry of
    /// [`Geometry::sq_dists`], with the same operations in the same order (so the same
    /// bits).
    fn sq_dist(&self, i: usize, p: usize) -> f64 {
        let k = self.cn.len();
        let dot = self
            .zt
            .column(i)
            .iter()
            .enumerate()
            .fold(0.0, |s, (j, &zij)| s + self.cpt[j * k + p] * zij);
        (-2.0 * dot + self.cn[p] + self.zn[i]).max(0.0)
    }

    /// `d[p] = ||z_i||^2 + ||c_p||^2 - 2 z_i . c_p`, clamped at 0; returns the smallest.
    #[inline(always)]
    fn sq_dists(&self, i: usize, d: &mut [f64]) -> f64 {
        let k = self.cn.len();
        if let &[z0, z1] = self.zt.column(i).as_slice() {
            // d = 2 (the usual latent dimension): the same operations in one pass.
            let zni = self.zn[i];
            let (c0, c1) = self.cpt.split_at(k);
            for (((dp, &a), &b), &cnp) in d.iter_mut().zip(c0).zip(c1).zip(&self.cn) {
                *dp = (-2.0 * ((0.0 + a * z0) + b * z1) + cnp + zni).max(0.0);
            }
            return min_of(d);
        }
        d.fill(0.0);
        for (j, &zij) in self.zt.column(i).iter().enumerate() {
            for (dp, &cp) in d.iter_mut().zip(&self.cpt[j * k..(j + 1) * k]) {
                *dp += cp * zij;
            }
        }
        let zni = self.zn[i];
        for (dp, &cnp) in d.iter_mut().zip(&self.cn) {
            *dp = (-2.0 * *dp + cnp + zni).max(0.0);
        }
        min_of(d)
    }
}

/// The nearest centre of each point in `rows`.
#[inline(always)]
fn nearest_block(g: &Geometry, rows: Range<usize>) -> Vec<usize> {
    let mut d = vec![0.0; g.cn.len()];
    let mut labels = Vec::with_capacity(rows.len());
    for i in rows {
        let least = g.sq_dists(i, &mut d);
        // The first position holding the minimum: its chunk of eight first (a vector
        // comparison per chunk), then the position from there.
        let full = d.len() / LANES * LANES;
        let start = d[..full]
            .chunks_exact(LANES)
            .position(|ch| ch.iter().fold(false, |hit, &v| hit | (v == least)))
            .map_or(full, |c| c * LANES);
        let label = d[start..].iter().position(|&v| v == least);
        labels.push(label.map_or(0, |l| start + l));
    }
    labels
}

/// The softmax rows of the points `rows` (see [`soft_assign_to`]).
#[inline(always)]
fn points_block(g: &Geometry, sigma: f64, rows: Range<usize>, block: &mut Block) -> (f64, f64) {
    let k = g.cn.len();
    let mut d = vec![0.0; k];
    let mut rows_out = SoftmaxRows::new(k);
    for i in rows {
        let least = g.sq_dists(i, &mut d);
        rows_out.push(&d, least, sigma, block);
    }
    (rows_out.neg_entropy, rows_out.soft_min)
}

/// Appends softmax rows to a block, summing their parts of the objective.
struct SoftmaxRows {
    /// Every centre's exponent, then (compacted) those kept.
    exponents: Vec<f64>,
    /// The positions of the kept exponents.
    kept: Vec<u32>,
    neg_entropy: f64,
    soft_min: f64,
}

impl SoftmaxRows {
    fn new(k: usize) -> Self {
        // Room for a last chunk written in full.
        SoftmaxRows {
            exponents: vec![0.0; k + LANES],
            kept: vec![0; k + LANES],
            neg_entropy: 0.0,
            soft_min: 0.0,
        }
    }

    /// Appends the exponents above the cut-off of the distances `chunk` (positions from
    /// `8 c`) after the first `count` and returns the new count. Chunks without a distance
    /// below `shift + cutoff` (a necessary condition) are skipped; otherwise the chunk's
    /// exponents are computed in one vector division and appended without branches (every
    /// lane is written at `count`, which moves past those above the cut-off).
    #[inline(always)]
    fn candidates(
        &mut self,
        chunk: &[f64; LANES],
        c: usize,
        shift: f64,
        cutoff: f64,
        sigma: f64,
        count: usize,
    ) -> usize {
        if !chunk
            .iter()
            .fold(false, |hit, &dp| hit | (dp - shift < cutoff))
        {
            return count;
        }
        let x: [f64; LANES] = std::array::from_fn(|l| -(chunk[l] - shift) / sigma);
        let exponents = &mut self.exponents[count..count + LANES];
        let kept = &mut self.kept[count..count + LANES];
        let mut appended = 0;
        for (l, &xl) in x.iter().enumerate() {
            // `appended <= l < LANES`: the mask only spares the bounds checks.
            exponents[appended & (LANES - 1)] = xl;
            kept[appended & (LANES - 1)] = (c * LANES + l) as u32;
            appended += usize::from(xl > NEGLIGIBLE_EXPONENT);
        }
        count + appended
    }

    /// The softmax of one point from its squared distances `d` to the centres (in position
    /// order), shifted by the smallest distance `shift` so the largest exponent is exactly 0 (spec
    /// P9); only entries above [`NEGLIGIBLE_EXPONENT`] are exponentiated and kept. The
    /// candidates are found eight at a time by a vector comparison (they lie on a few runs
    /// of positions), and `exp` and the normalisation run in vector lanes.
    #[inline(always)]
    fn push(&mut self, d: &[f64], shift: f64, sigma: f64, block: &mut Block) {
        // A necessary condition for `-(d - shift) / sigma > NEGLIGIBLE_EXPONENT`, with a
        // margin for the rounding of the division.
        let cutoff = -NEGLIGIBLE_EXPONENT * sigma * (1.0 + 1e-9);
        let mut count = 0;
        let mut chunks = d.chunks_exact(LANES);
        for (c, chunk) in (&mut chunks).enumerate() {
            let chunk = chunk.try_into().expect("whole chunks");
            count = self.candidates(chunk, c, shift, cutoff, sigma, count);
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            // Padded with infinite distances, which are never candidates.
            let mut last = [f64::INFINITY; LANES];
            last[..tail.len()].copy_from_slice(tail);
            count = self.candidates(&last, d.len() / LANES, shift, cutoff, sigma, count);
        }
        let (exponents, kept) = (&self.exponents[..count], &self.kept[..count]);
        let start = block.val.len();
        block.pos.extend_from_slice(kept);
        // Whole chunks of eight (lanes past `count` hold earlier values, whose results are
        // cut off), so that every copy has a fixed length.
        for chunk in self.exponents[..count.div_ceil(LANES) * LANES].chunks_exact(LANES) {
            let mut e = [0.0; LANES];
            for (e, &x) in e.iter_mut().zip(chunk) {
                *e = exp(x);
            }
            block.val.extend_from_slice(&e);
        }
        block.val.truncate(start + count);
        let row = &mut block.val[start..];
        let total = lane_sum(row.len(), |j| row[j]);
        let log_total = total.ln();
        for v in row.iter_mut() {
            *v /= total;
        }
        // log r_ij = -(d_ij - shift)/sigma - log total, exact when r_ij is tiny.
        let neg_entropy = lane_sum(row.len(), |j| sigma * row[j] * (exponents[j] - log_total));
        if row.contains(&0.0) {
            // Entries that underflowed in the normalisation are dropped (adding their zero
            // terms above changed nothing).
            let mut kept = start;
            for j in start..block.val.len() {
                if block.val[j] > 0.0 {
                    block.val[kept] = block.val[j];
                    block.pos[kept] = block.pos[j];
                    kept += 1;
                }
            }
            block.val.truncate(kept);
            block.pos.truncate(kept);
        }
        block.ptr.push(block.val.len());
        self.neg_entropy += neg_entropy;
        self.soft_min += shift - sigma * log_total;
    }
}

impl Assignment {
    /// The rows of `R`, with `block_of(rows)` computing the rows `rows` and their parts of
    /// `neg_entropy` and `soft_min`.
    ///
    /// The blocks' buffers are taken from `spare` (an earlier assignment) when given, and
    /// rows are first written to a per-thread scratch block: the buffers are allocated (and
    /// their pages touched for the first time) once per fit, not once per iteration.
    fn build<F>(n: usize, order: Vec<usize>, spare: Option<Assignment>, block_of: F) -> Assignment
    where
        F: Fn(Range<usize>, &mut Block) -> (f64, f64) + Sync,
    {
        thread_local! {
            static SCRATCH: std::cell::RefCell<Block> = std::cell::RefCell::new(Block::default());
        }
        let k = order.len();
        let position = inverse(&order);
        let (nblocks, block_rows) = blocking(n);
        let mut blocks = spare.map(|a| a.blocks).unwrap_or_default();
        blocks.resize_with(nblocks, Block::default);
        let parts: Vec<(f64, f64)> = blocks
            .par_iter_mut()
            .enumerate()
            .map(|(b, block)| {
                SCRATCH.with_borrow_mut(|scratch| {
                    scratch.clear();
                    let part = block_of(b * block_rows..((b + 1) * block_rows).min(n), scratch);
                    scratch.sort_rows_into(k, block);
                    part
                })
            })
            .collect();
        let neg_entropy = parts.iter().map(|p| p.0).sum();
        let soft_min = parts.iter().map(|p| p.1).sum();
        Assignment {
            k,
            n,
            order,
            position,
            block_rows,
            blocks,
            neg_entropy,
            soft_min,
        }
    }

    /// The number of stored non-zeros.
    #[cfg(test)]
    pub(crate) fn nnz(&self) -> usize {
        self.blocks.iter().map(|b| b.val.len()).sum()
    }

    /// `R^T R` (K x K, exactly symmetric), `R^T X` (K x p) for the rows of `X` (N x p) and
    /// the column sums `1^T R`, in one pass over `R` ([`products_blocks`]).
    pub(crate) fn products(&self, x: &DataRows<'_>) -> Products {
        match x {
            DataRows::Lanes(lanes) => self.sparse_products(lanes),
            DataRows::Columns(x) => {
                let empty = LaneRows {
                    lanes: Vec::new(),
                    width: 0,
                    cols: 0,
                };
                let Products { gram, col_sums, .. } = self.sparse_products_of(&empty);
                Products {
                    gram,
                    tr_mul: self.dense_tr_mul(x),
                    col_sums,
                }
            }
        }
    }

    /// [`Assignment::products`] by the sparse updates of [`products_blocks`].
    fn sparse_products(&self, x: &LaneRows) -> Products {
        assert_eq!(x.rows(), self.n, "one row of X per point");
        self.sparse_products_of(x)
    }

    /// [`Assignment::sparse_products`] without the check of the rows (none are read when
    /// `X` has no columns).
    fn sparse_products_of(&self, x: &LaneRows) -> Products {
        let (k, xw, rows) = (self.k, x.width, self.block_rows);
        let group = self.blocks.len().div_ceil(ACCUMULATORS);
        let parts: Vec<(Vec<Lane>, Vec<Lane>, Vec<f64>)> = self
            .blocks
            .par_chunks(group)
            .enumerate()
            .map(|(g, blocks)| {
                let x = &x.lanes[g * group * rows * xw..];
                simd::vectorize(
                    #[inline(always)]
                    || products_blocks(blocks, x, xw, rows, k),
                )
            })
            .collect();
        let (mut grams, mut rtxs, mut sums) = (Vec::new(), Vec::new(), Vec::new());
        for (gram, rtx, sum) in parts {
            grams.push(gram);
            rtxs.push(rtx);
            sums.push(sum);
        }
        let (upper, rtx, sums) = (
            sum_lanes_in_order(grams),
            sum_lanes_in_order(rtxs),
            sum_in_order(sums),
        );
        let kw = k.div_ceil(LANES);
        let position = &self.position;
        Products {
            gram: DMatrix::from_fn(k, k, |a, b| {
                let (pa, pb) = (position[a], position[b]);
                let (lo, hi) = (pa.min(pb), pa.max(pb));
                upper[lo * kw + hi / LANES].0[hi % LANES]
            }),
            tr_mul: DMatrix::from_fn(k, x.cols, |c, j| {
                rtx[position[c] * xw + j / LANES].0[j % LANES]
            }),
            col_sums: position.iter().map(|&p| sums[p]).collect(),
        }
    }

    /// `R^T X` (K x p) for `X` (N x p) block by block: each block's rows of `R` over its
    /// window of positions (the least to the largest it uses) as a dense matrix, times the
    /// block's rows of `X` in one sequential faer product; the blocks run in parallel and
    /// their results are added in block order (the same bits for any number of threads).
    fn dense_tr_mul(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        assert_eq!(x.nrows(), self.n, "one row of X per point");
        let p = x.ncols();
        let parts: Vec<Option<(usize, DMatrix<f64>)>> = self
            .blocks
            .par_iter()
            .enumerate()
            .map(|(bi, b)| {
                let start = bi * self.block_rows;
                let (lo, hi) = b
                    .pos
                    .iter()
                    .fold((u32::MAX, 0), |(lo, hi), &q| (lo.min(q), hi.max(q)));
                if b.pos.is_empty() {
                    return None;
                }
                let (lo, width) = (lo as usize, (hi - lo) as usize + 1);
                let mut r = DMatrix::zeros(b.rows(), width);
                for i in 0..b.rows() {
                    let (pos, val) = b.row(i);
                    let point = b.point[i] as usize;
                    for (&q, &v) in pos.iter().zip(val) {
                        r[(point, q as usize - lo)] = v;
                    }
                }
                let xb = as_faer(x).subrows(start, b.rows());
                Some((lo, mul_with(as_faer(&r).transpose(), xb, Par::Seq)))
            })
            .collect();
        let mut by_position = DMatrix::zeros(self.k, p);
        for (lo, part) in parts.into_iter().flatten() {
            let mut rows = by_position.rows_mut(lo, part.nrows());
            rows += part;
        }
        DMatrix::from_fn(self.k, p, |c, j| by_position[(self.position[c], j)])
    }

    /// `R G` (N x p) for `G` (K x p).
    pub(crate) fn mul(&self, g: &DMatrix<f64>) -> DMatrix<f64> {
        let p = g.ncols();
        assert_eq!(g.nrows(), self.k, "one row of G per centre");
        let gp: Vec<f64> = self
            .order
            .iter()
            .flat_map(|&c| (0..p).map(move |j| g[(c, j)]))
            .collect();
        // out^T (p x N): point i's row is the contiguous column i.
        let mut out_t = DMatrix::zeros(p, self.n);
        if p > 0 {
            out_t
                .as_mut_slice()
                .par_chunks_mut(self.block_rows * p)
                .zip(&self.blocks)
                .for_each(|(out, b)| match p {
                    1 => narrow_mul_block::<1>(b, &gp, out),
                    2 => narrow_mul_block::<2>(b, &gp, out),
                    3 => narrow_mul_block::<3>(b, &gp, out),
                    _ => {
                        for (i, &point) in b.point.iter().enumerate() {
                            let point = point as usize;
                            let (pos, val) = b.row(i);
                            for (j, o) in out[point * p..(point + 1) * p].iter_mut().enumerate() {
                                *o = pos
                                    .iter()
                                    .zip(val)
                                    .fold(0.0, |s, (&q, &v)| s + v * gp[q as usize * p + j]);
                            }
                        }
                    }
                });
        }
        out_t.transpose()
    }

    /// `sum_ik r_ik ||z_i - c_k||^2` for the points `z` (N x d) and centres `c` (K x d),
    /// each distance computed for the stored entries only, with the bits the assignments
    /// were computed from ([`Geometry::sq_dist`]; no K x N matrix).
    pub(crate) fn dot_to(&self, z: &DMatrix<f64>, c: &DMatrix<f64>) -> f64 {
        assert_eq!(z.nrows(), self.n, "one row of Z per point");
        let g = Geometry::new(z, c, &self.order);
        self.weighted_sum(|i, p| g.sq_dist(i, p))
    }

    /// `sum_ik r_ik dist[(k, i)]` for `dist` K x N.
    #[cfg(test)]
    pub(crate) fn dot(&self, dist: &DMatrix<f64>) -> f64 {
        self.weighted_sum(|i, p| dist[(self.order[p], i)])
    }

    /// `sum r_ip d(i, p)` over the stored entries (point `i`, centre at position `p`),
    /// blocks summed in order.
    fn weighted_sum(&self, d: impl Fn(usize, usize) -> f64 + Sync) -> f64 {
        let rows = self.block_rows;
        let parts: Vec<f64> = self
            .blocks
            .par_iter()
            .enumerate()
            .map(|(bi, b)| {
                let mut sum = 0.0;
                for (i, &point) in b.point.iter().enumerate() {
                    let point = bi * rows + point as usize;
                    let (pos, val) = b.row(i);
                    for (&q, &v) in pos.iter().zip(val) {
                        sum += v * d(point, q as usize);
                    }
                }
                sum
            })
            .collect();
        parts.iter().sum()
    }

    /// `R` as a dense N x K matrix.
    #[cfg(test)]
    pub(crate) fn to_dense(&self) -> DMatrix<f64> {
        let mut r = DMatrix::zeros(self.n, self.k);
        for (bi, b) in self.blocks.iter().enumerate() {
            for (i, &point) in b.point.iter().enumerate() {
                let (pos, val) = b.row(i);
                for (&q, &v) in pos.iter().zip(val) {
                    r[(
                        bi * self.block_rows + point as usize,
                        self.order[q as usize],
                    )] = v;
                }
            }
        }
        r
    }

    /// An assignment holding the non-zeros of `r` (N x K) with the centres stored in
    /// `order` (for testing the products on arbitrary patterns).
    #[cfg(test)]
    pub(crate) fn from_dense(r: &DMatrix<f64>, order: Vec<usize>) -> Assignment {
        let (n, k) = r.shape();
        assert_eq!(order.len(), k);
        let position = inverse(&order);
        let (nblocks, block_rows) = blocking(n);
        let blocks = (0..nblocks)
            .map(|b| {
                let mut block = Block::default();
                block.ptr.push(0);
                for i in b * block_rows..((b + 1) * block_rows).min(n) {
                    for (p, &c) in order.iter().enumerate() {
                        if r[(i, c)] != 0.0 {
                            block.pos.push(p as u32);
                            block.val.push(r[(i, c)]);
                        }
                    }
                    block.ptr.push(block.val.len());
                }
                block.sort_rows(k);
                block
            })
            .collect();
        Assignment {
            k,
            n,
            order,
            position,
            block_rows,
            blocks,
            neg_entropy: 0.0,
            soft_min: 0.0,
        }
    }
}

/// The blocks' `R^T R` (the upper triangle in positions, rows of `ceil(K/8)` lanes;
/// entries left of the diagonal are not used), `R^T X` (by positions, `xw` lanes per
/// centre; `x` holds the blocks' rows of `X` one after the other, `block_rows` per
/// block) and column sums (by positions).
///
/// The stored rows of a block (ordered by their first position) are taken [`GROUP`] at
/// a time: their values are spread into dense lanes over the union of their runs of
/// lanes, and for every position `p` of the union the `GROUP` rows update the
/// accumulators at once, `acc[p] += sum_r r_rp row_r` (`row_r` is the lanes of `R`'s row
/// from `p`'s lane on, for `R^T R`, and the row of `X`, for `R^T X`): one load and
/// store of an accumulator lane per `GROUP` multiply-adds (the updates are bound by
/// those loads and stores), and zeros where a row is not in the union add nothing.
#[inline(always)]
fn products_blocks(
    blocks: &[Block],
    x: &[Lane],
    xw: usize,
    block_rows: usize,
    k: usize,
) -> (Vec<Lane>, Vec<Lane>, Vec<f64>) {
    let kw = k.div_ceil(LANES);
    let mut gram = vec![Lane::default(); k * kw];
    let mut rtx = vec![Lane::default(); k * xw];
    let mut sums = vec![0.0; k];
    // The group's rows as dense lanes (row r at r * kw), zero outside their non-zeros.
    let mut dense = vec![Lane::default(); GROUP * kw];
    // The group's rows of X, interleaved: lane j of row r at j * GROUP + r (zero for
    // missing rows of a last, smaller group).
    let mut xs = vec![Lane::default(); xw * GROUP];
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut used = vec![false; kw];
    for (bi, b) in blocks.iter().enumerate() {
        let xb = &x[bi * block_rows * xw..];
        // Empty rows are stored last.
        let filled = (0..b.rows())
            .take_while(|&i| b.ptr[i] < b.ptr[i + 1])
            .count();
        for first in (0..filled).step_by(GROUP) {
            let members = first..(first + GROUP).min(filled);
            // The rows of X are read in the order of the stored rows (scattered): the
            // next group's are requested now, while this group is computed.
            for i in (first + GROUP..first + 2 * GROUP).take_while(|&i| i < filled) {
                let point = b.point[i] as usize;
                xb[point * xw..(point + 1) * xw]
                    .iter()
                    .for_each(simd::prefetch);
            }
            xs.fill(Lane::default());
            for (r, i) in members.clone().enumerate() {
                let (pos, val) = b.row(i);
                let dr = &mut dense[r * kw..(r + 1) * kw];
                for (&p, &v) in pos.iter().zip(val) {
                    let p = p as usize;
                    dr[p / LANES].0[p % LANES] = v;
                    used[p / LANES] = true;
                }
                let point = b.point[i] as usize;
                for (j, lane) in xb[point * xw..(point + 1) * xw].iter().enumerate() {
                    xs[j * GROUP + r] = *lane;
                }
            }
            // The union's runs of lanes (the lanes of its members' runs).
            runs.clear();
            for i in members {
                for &p in b.row(i).0 {
                    let c = p as usize / LANES;
                    if used[c] {
                        used[c] = false;
                        runs.push((c, c + 1));
                    }
                }
            }
            runs.sort_unstable();
            runs.dedup_by(|next, run| {
                let merge = next.0 <= run.1;
                if merge {
                    run.1 = run.1.max(next.1);
                }
                merge
            });
            for (ri, &(s, e)) in runs.iter().enumerate() {
                for c in s..e {
                    for l in 0..LANES {
                        let mut v = [0.0; GROUP];
                        for (r, vr) in v.iter_mut().enumerate() {
                            *vr = dense[r * kw + c].0[l];
                        }
                        if v.iter().all(|&vr| vr == 0.0) {
                            continue;
                        }
                        let p = c * LANES + l;
                        let row = &mut gram[p * kw..(p + 1) * kw];
                        for (rs, re) in
                            std::iter::once((c, e)).chain(runs[ri + 1..].iter().copied())
                        {
                            for cc in rs..re {
                                let mut a = row[cc];
                                for (r, &vr) in v.iter().enumerate() {
                                    a.add_scaled(vr, &dense[r * kw + cc]);
                                }
                                row[cc] = a;
                            }
                        }
                        let acc = &mut rtx[p * xw..(p + 1) * xw];
                        for (a, x) in acc.iter_mut().zip(xs.chunks_exact(GROUP)) {
                            let mut t = *a;
                            for (&vr, xl) in v.iter().zip(x) {
                                t.add_scaled(vr, xl);
                            }
                            *a = t;
                        }
                        sums[p] = v.iter().fold(sums[p], |t, &vr| t + vr);
                    }
                }
            }
            for r in 0..GROUP {
                for &(s, e) in &runs {
                    dense[r * kw + s..r * kw + e].fill(Lane::default());
                }
            }
        }
    }
    (gram, rtx, sums)
}

/// The block's rows of `R G` for `G` with `P` columns (`g` by positions, row-major K x P)
/// into `out` (the block's points one after the other): each row's non-zeros summed in two
/// interleaved partial sums (even and odd), so that the additions do not all wait on each
/// other.
fn narrow_mul_block<const P: usize>(b: &Block, g: &[f64], out: &mut [f64]) {
    let g_of = |q: u32| -> [f64; P] { g[q as usize * P..(q as usize + 1) * P].try_into().unwrap() };
    for (i, &point) in b.point.iter().enumerate() {
        let (pos, val) = b.row(i);
        let (mut even, mut odd) = ([0.0; P], [0.0; P]);
        let (pairs, last) = (pos.len() / 2, pos.len() % 2 == 1);
        for t in 0..pairs {
            let (g0, g1) = (g_of(pos[2 * t]), g_of(pos[2 * t + 1]));
            let (v0, v1) = (val[2 * t], val[2 * t + 1]);
            for j in 0..P {
                even[j] += v0 * g0[j];
                odd[j] += v1 * g1[j];
            }
        }
        if last {
            let gl = g_of(pos[pos.len() - 1]);
            for j in 0..P {
                even[j] += val[pos.len() - 1] * gl[j];
            }
        }
        let point = point as usize;
        for (j, o) in out[point * P..(point + 1) * P].iter_mut().enumerate() {
            *o = even[j] + odd[j];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use unfold_linalg::simd::Level;

    /// Scattered points (sines of their indices).
    fn points(n: usize, d: usize, shift: usize) -> DMatrix<f64> {
        DMatrix::from_fn(n, d, |i, j| {
            (((i + shift) * 7 + j * 13) as f64 * 0.37).sin()
        })
    }

    /// One distance ([`Geometry::sq_dist`], for the objective) has the bits of its entry in
    /// the row the assignments are computed from, in the latent dimensions 2 (its own
    /// loop) and 3.
    #[test]
    fn one_distance_has_the_bits_of_its_row() {
        for dim in [2, 3] {
            let (z, c) = (points(300, dim, 0), points(40, dim, 5000));
            let order: Vec<usize> = (0..40).rev().collect();
            let g = Geometry::new(&z, &c, &order);
            let mut row = vec![0.0; 40];
            for i in 0..300 {
                g.sq_dists(i, &mut row);
                for (p, d) in row.iter().enumerate() {
                    assert_eq!(
                        g.sq_dist(i, p).to_bits(),
                        d.to_bits(),
                        "dim {dim}, {i}, {p}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_instruction_set_gives_the_same_bits() {
        // The three dispatched kernels on every instruction set the processor has, against
        // the baseline: latent dimensions 2 (its own distance loop) and 3, a sparse and a
        // dense R, more than one block.
        for (dim, sigma) in [(2, 0.05), (3, 0.05), (2, 5.0)] {
            let (z, c) = (points(1100, dim, 0), points(40, dim, 5000));
            let order: Vec<usize> = (0..40).rev().collect();
            let g = Geometry::new(&z, &c, &order);
            let x = LaneRows::new(&points(1100, 11, 99));
            let a = soft_assign_to(&z, &c, sigma, order.clone());
            let run = |level: Level| {
                let mut block = Block::default();
                block.clear();
                let part = level.run_out(
                    &mut block,
                    #[inline(always)]
                    |block| points_block(&g, sigma, 0..1100, block),
                );
                let labels = level.run(
                    #[inline(always)]
                    || nearest_block(&g, 0..1100),
                );
                let (gram, rtx, sums) = level.run(
                    #[inline(always)]
                    || products_blocks(&a.blocks, &x.lanes, x.width, a.block_rows, a.k),
                );
                let rows = (block.ptr, block.pos, block.val, part);
                (rows, labels, gram, rtx, sums)
            };
            let want = run(Level::baseline());
            for level in Level::available() {
                assert!(run(level) == want, "{level:?}, d = {dim}, sigma = {sigma}");
            }
        }
    }
}
