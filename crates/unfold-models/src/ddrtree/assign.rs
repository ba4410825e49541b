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

use nalgebra::DMatrix;
use rayon::prelude::*;
use std::ops::Range;

/// Assignments below `e^-37 < 1e-16` times the point's largest are set to zero: they
/// change no sum at double precision, and with a small sigma dropping them leaves `R`
/// sparse.
pub(crate) const NEGLIGIBLE_EXPONENT: f64 = -37.0;

/// Rows per block are at least this many (blocks are the unit of parallel work, and each
/// block of a product has its own accumulator).
const MIN_BLOCK_ROWS: usize = 512;
/// At most this many blocks.
const MAX_BLOCKS: usize = 16;
/// `R^T R` sums groups of consecutive blocks into this many K x K accumulators.
const ACCUMULATORS: usize = 4;

/// Defines `fn $name` that runs its body compiled for the widest vector instructions the
/// processor has (AVX-512, AVX2, else the baseline). The body is the same operations in the
/// same order (no fused multiply-adds are introduced), so the results do not depend on the
/// version that runs.
macro_rules! widest_simd {
    ($(#[$meta:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        $(#[$meta])*
        fn $name($($arg: $ty),*) -> $ret {
            #[inline(always)]
            fn body($($arg: $ty),*) -> $ret $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f")]
                fn avx512($($arg: $ty),*) -> $ret {
                    body($($arg),*)
                }
                #[target_feature(enable = "avx2")]
                fn avx2($($arg: $ty),*) -> $ret {
                    body($($arg),*)
                }
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the processor supports AVX-512F.
                    return unsafe { avx512($($arg),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the processor supports AVX2.
                    return unsafe { avx2($($arg),*) };
                }
            }
            body($($arg),*)
        }
    };
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
    /// The rows by their first position (the order in which the products visit them, so
    /// that consecutive rows update nearby accumulator rows).
    by_position: Vec<u32>,
}

impl Block {
    fn with_rows(rows: usize) -> Block {
        let mut ptr = Vec::with_capacity(rows + 1);
        ptr.push(0);
        Block {
            ptr,
            ..Block::default()
        }
    }

    fn rows(&self) -> usize {
        self.ptr.len() - 1
    }

    /// Orders the rows by their first position (a counting sort; empty rows last).
    fn sort_rows(&mut self, k: usize) {
        let first = |i: usize| {
            let start = self.ptr[i];
            if start < self.ptr[i + 1] {
                self.pos[start] as usize
            } else {
                k
            }
        };
        let mut starts = vec![0u32; k + 2];
        for i in 0..self.rows() {
            starts[first(i) + 1] += 1;
        }
        for j in 1..starts.len() {
            starts[j] += starts[j - 1];
        }
        let mut sorted = vec![0u32; self.rows()];
        for i in 0..self.rows() {
            let slot = &mut starts[first(i)];
            sorted[*slot as usize] = i as u32;
            *slot += 1;
        }
        self.by_position = sorted;
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

/// Doubles per [`Lane`].
const LANES: usize = 8;

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
    pub(crate) fn new(x: &DMatrix<f64>) -> LaneRows {
        let (n, cols) = x.shape();
        let width = cols.div_ceil(LANES);
        let mut lanes = vec![Lane::default(); n * width];
        for (j, col) in x.column_iter().enumerate() {
            for (i, &v) in col.iter().enumerate() {
                lanes[i * width + j / LANES].0[j % LANES] = v;
            }
        }
        LaneRows { lanes, width, cols }
    }

    fn rows(&self) -> usize {
        self.lanes.len().checked_div(self.width).unwrap_or(0)
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
            lanes[l] = lanes[l].min(chunk[l]);
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

/// Depth-first preorder of the centres over the tree `edges` (from centre 0, neighbours in
/// ascending order; nodes outside the tree are appended): each subtree is a contiguous run
/// of positions.
pub(crate) fn tree_order(edges: &[(usize, usize, f64)], k: usize) -> Vec<usize> {
    let mut adjacent = vec![Vec::new(); k];
    for &(a, b, _) in edges {
        adjacent[a].push(b);
        adjacent[b].push(a);
    }
    let mut seen = vec![false; k];
    let mut order = Vec::with_capacity(k);
    let mut stack = Vec::new();
    for root in 0..k {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        stack.push(root);
        while let Some(v) = stack.pop() {
            order.push(v);
            adjacent[v].sort_unstable();
            for &u in adjacent[v].iter().rev() {
                if !seen[u] {
                    seen[u] = true;
                    stack.push(u);
                }
            }
        }
    }
    order
}

/// Lemma 1 (32) from `dist[(k, i)] = ||z_i - c_k||^2` (K x N), centres stored in `order`.
pub(crate) fn soft_assign(dist: &DMatrix<f64>, sigma: f64, order: Vec<usize>) -> Assignment {
    let (k, n) = dist.shape();
    assert_eq!(order.len(), k, "one position per centre");
    let order_ref = &order.clone();
    Assignment::build(n, order, |rows| {
        let mut d = vec![0.0; k];
        let mut block = Block::with_rows(rows.len());
        let mut rows_out = SoftmaxRows::new(k);
        for i in rows {
            let col = dist.column(i);
            for (dp, &c) in d.iter_mut().zip(order_ref) {
                *dp = col[c];
            }
            rows_out.push(&d, sigma, &mut block);
        }
        (block, rows_out.neg_entropy, rows_out.soft_min)
    })
}

/// Lemma 1 (32) for the rows of `z` (N x d) and centres `c` (K x d), centres stored in
/// `order`. Distances are `||z_i||^2 + ||c_k||^2 - 2 z_i . c_k` (clamped at 0), as
/// `sq_dists_to` computes them, evaluated point by point (no K x N matrix).
pub(crate) fn soft_assign_to(
    z: &DMatrix<f64>,
    c: &DMatrix<f64>,
    sigma: f64,
    order: Vec<usize>,
) -> Assignment {
    assert_eq!(order.len(), c.nrows(), "one position per centre");
    let g = Geometry::new(z, c, &order);
    Assignment::build(z.nrows(), order, |rows| points_block(&g, sigma, rows))
}

/// The index of each point's nearest centre (the first on ties), from the distances of
/// [`soft_assign_to`]: the k-means labels.
pub(crate) fn nearest_centres(z: &DMatrix<f64>, c: &DMatrix<f64>) -> Vec<usize> {
    let order: Vec<usize> = (0..c.nrows()).collect();
    let g = Geometry::new(z, c, &order);
    let (nblocks, rows) = blocking(z.nrows());
    let labels: Vec<Vec<usize>> = (0..nblocks)
        .into_par_iter()
        .map(|b| nearest_block(&g, b * rows..((b + 1) * rows).min(z.nrows())))
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

    /// `d[p] = ||z_i||^2 + ||c_p||^2 - 2 z_i . c_p`, clamped at 0.
    #[inline(always)]
    fn sq_dists(&self, i: usize, d: &mut [f64]) {
        let k = self.cn.len();
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
    }
}

widest_simd! {
    /// The nearest centre of each point in `rows`.
    fn nearest_block(g: &Geometry, rows: Range<usize>) -> Vec<usize> {
        let mut d = vec![0.0; g.cn.len()];
        let mut labels = Vec::with_capacity(rows.len());
        for i in rows {
            g.sq_dists(i, &mut d);
            let least = min_of(&d);
            labels.push(d.iter().position(|&v| v == least).unwrap_or(0));
        }
        labels
    }
}

widest_simd! {
    /// The softmax rows of the points `rows` (see [`soft_assign_to`]).
    fn points_block(g: &Geometry, sigma: f64, rows: Range<usize>) -> (Block, f64, f64) {
        let k = g.cn.len();
        let mut d = vec![0.0; k];
        let mut block = Block::with_rows(rows.len());
        let mut rows_out = SoftmaxRows::new(k);
        for i in rows {
            g.sq_dists(i, &mut d);
            rows_out.push(&d, sigma, &mut block);
        }
        (block, rows_out.neg_entropy, rows_out.soft_min)
    }
}

/// Appends softmax rows to a block, summing their parts of the objective.
struct SoftmaxRows {
    exponents: Vec<f64>,
    neg_entropy: f64,
    soft_min: f64,
}

impl SoftmaxRows {
    fn new(k: usize) -> Self {
        SoftmaxRows {
            exponents: Vec::with_capacity(k),
            neg_entropy: 0.0,
            soft_min: 0.0,
        }
    }

    /// The softmax of one point from its squared distances `d` to the centres (in position
    /// order), shifted by the smallest distance so the largest exponent is exactly 0 (spec
    /// P9); only entries above [`NEGLIGIBLE_EXPONENT`] are exponentiated and kept.
    #[inline(always)]
    fn push(&mut self, d: &[f64], sigma: f64, block: &mut Block) {
        let shift = min_of(d);
        // A necessary condition for `-(d - shift) / sigma > NEGLIGIBLE_EXPONENT`, with a
        // margin for the rounding of the division.
        let cutoff = -NEGLIGIBLE_EXPONENT * sigma * (1.0 + 1e-9);
        let start = block.val.len();
        self.exponents.clear();
        let mut total = 0.0;
        for (p, &dp) in d.iter().enumerate() {
            if dp - shift < cutoff {
                let x = -(dp - shift) / sigma;
                if x > NEGLIGIBLE_EXPONENT {
                    let v = x.exp();
                    total += v;
                    block.pos.push(p as u32);
                    block.val.push(v);
                    self.exponents.push(x);
                }
            }
        }
        let log_total = total.ln();
        let mut kept = start;
        let mut neg_entropy = 0.0;
        for (j, &x) in (start..block.val.len()).zip(&self.exponents) {
            let v = block.val[j] / total;
            if v > 0.0 {
                // log r_ij = -(d_ij - shift)/sigma - log total, exact when r_ij is tiny.
                neg_entropy += sigma * v * (x - log_total);
                block.val[kept] = v;
                block.pos[kept] = block.pos[j];
                kept += 1;
            }
        }
        block.val.truncate(kept);
        block.pos.truncate(kept);
        block.ptr.push(kept);
        self.neg_entropy += neg_entropy;
        self.soft_min += shift - sigma * log_total;
    }
}

impl Assignment {
    /// The rows of `R`, with `block_of(rows)` computing the rows `rows` and their parts of
    /// `neg_entropy` and `soft_min`.
    fn build<F>(n: usize, order: Vec<usize>, block_of: F) -> Assignment
    where
        F: Fn(Range<usize>) -> (Block, f64, f64) + Sync,
    {
        let k = order.len();
        let position = inverse(&order);
        let (nblocks, block_rows) = blocking(n);
        let parts: Vec<(Block, f64, f64)> = (0..nblocks)
            .into_par_iter()
            .map(|b| {
                let mut part = block_of(b * block_rows..((b + 1) * block_rows).min(n));
                part.0.sort_rows(k);
                part
            })
            .collect();
        let neg_entropy = parts.iter().map(|p| p.1).sum();
        let soft_min = parts.iter().map(|p| p.2).sum();
        Assignment {
            k,
            n,
            order,
            position,
            block_rows,
            blocks: parts.into_iter().map(|p| p.0).collect(),
            neg_entropy,
            soft_min,
        }
    }

    /// The number of stored non-zeros.
    #[cfg(test)]
    pub(crate) fn nnz(&self) -> usize {
        self.blocks.iter().map(|b| b.val.len()).sum()
    }

    /// The column sums `1^T R` (the diagonal of Gamma).
    pub(crate) fn col_sums(&self) -> Vec<f64> {
        let parts: Vec<Vec<f64>> = self
            .blocks
            .par_iter()
            .map(|b| {
                let mut sums = vec![0.0; self.k];
                for (&p, &v) in b.pos.iter().zip(&b.val) {
                    sums[p as usize] += v;
                }
                sums
            })
            .collect();
        let by_position = sum_in_order(parts);
        self.position.iter().map(|&p| by_position[p]).collect()
    }

    /// `R^T R` (K x K), exactly symmetric: the upper triangle (in positions) as a sum of the
    /// rows' outer products, each as dense updates over the row's runs of positions.
    pub(crate) fn gram(&self) -> DMatrix<f64> {
        let k = self.k;
        let group = self.blocks.len().div_ceil(ACCUMULATORS);
        let parts: Vec<Vec<Lane>> = self
            .blocks
            .par_chunks(group)
            .map(|blocks| gram_blocks(blocks, k))
            .collect();
        let upper = sum_lanes_in_order(parts);
        let width = k.div_ceil(LANES);
        DMatrix::from_fn(k, k, |a, b| {
            let (pa, pb) = (self.position[a], self.position[b]);
            let (lo, hi) = (pa.min(pb), pa.max(pb));
            upper[lo * width + hi / LANES].0[hi % LANES]
        })
    }

    /// `R^T X` (K x p) from the rows of `X` (N x p).
    pub(crate) fn tr_mul_rows(&self, x: &LaneRows) -> DMatrix<f64> {
        assert_eq!(x.rows(), self.n, "one row of X per point");
        let (k, width, rows) = (self.k, x.width, self.block_rows);
        let parts: Vec<Vec<Lane>> = self
            .blocks
            .par_iter()
            .enumerate()
            .map(|(bi, b)| tr_mul_block(b, &x.lanes[bi * rows * width..], width, k))
            .collect();
        let by_position = sum_lanes_in_order(parts);
        DMatrix::from_fn(k, x.cols, |c, j| {
            by_position[self.position[c] * width + j / LANES].0[j % LANES]
        })
    }

    /// `R^T X` (K x p) for `X` (N x p).
    pub(crate) fn tr_mul(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        self.tr_mul_rows(&LaneRows::new(x))
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
                .for_each(|(out, b)| {
                    for (i, oi) in out.chunks_mut(p).enumerate() {
                        let (pos, val) = b.row(i);
                        for (&q, &v) in pos.iter().zip(val) {
                            let q = q as usize;
                            for (o, &gq) in oi.iter_mut().zip(&gp[q * p..(q + 1) * p]) {
                                *o += v * gq;
                            }
                        }
                    }
                });
        }
        out_t.transpose()
    }

    /// `sum_ik r_ik dist[(k, i)]` for `dist` K x N.
    pub(crate) fn dot(&self, dist: &DMatrix<f64>) -> f64 {
        let rows = self.block_rows;
        let parts: Vec<f64> = self
            .blocks
            .par_iter()
            .enumerate()
            .map(|(bi, b)| {
                let mut sum = 0.0;
                for i in 0..b.rows() {
                    let col = dist.column(bi * rows + i);
                    let (pos, val) = b.row(i);
                    for (&q, &v) in pos.iter().zip(val) {
                        sum += v * col[self.order[q as usize]];
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
            for i in 0..b.rows() {
                let (pos, val) = b.row(i);
                for (&q, &v) in pos.iter().zip(val) {
                    r[(bi * self.block_rows + i, self.order[q as usize])] = v;
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

widest_simd! {
    /// The upper triangle (in positions; rows of `ceil(K/8)` lanes) of the blocks'
    /// `R^T R`: each row's outer product as aligned vector updates over the runs of lanes
    /// holding its non-zeros (entries left of the diagonal are not used).
    fn gram_blocks(blocks: &[Block], k: usize) -> Vec<Lane> {
        let width = k.div_ceil(LANES);
        let mut acc = vec![Lane::default(); k * width];
        let mut dense = vec![Lane::default(); width];
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for (b, &i) in blocks.iter().flat_map(|b| b.by_position.iter().map(move |i| (b, i))) {
            let i = i as usize;
            let (pos, val) = b.row(i);
            if pos.is_empty() {
                continue;
            }
            runs.clear();
            for (&p, &v) in pos.iter().zip(val) {
                let (p, c) = (p as usize, p as usize / LANES);
                dense[c].0[p % LANES] = v;
                match runs.last_mut() {
                    Some(run) if c <= run.1 => run.1 = c + 1,
                    _ => runs.push((c, c + 1)),
                }
            }
            let mut first_run = 0;
            for (&p, &v) in pos.iter().zip(val) {
                let (p, c) = (p as usize, p as usize / LANES);
                while runs[first_run].1 <= c {
                    first_run += 1;
                }
                let row = &mut acc[p * width..(p + 1) * width];
                for &(s, e) in &runs[first_run..] {
                    for cc in s.max(c)..e {
                        row[cc].add_scaled(v, &dense[cc]);
                    }
                }
            }
            for &(s, e) in &runs {
                dense[s..e].fill(Lane::default());
            }
        }
        acc
    }
}

widest_simd! {
    /// The block's `R^T X` by positions (`width` lanes per centre), `x` holding the
    /// block's rows of `X` one after the other.
    fn tr_mul_block(b: &Block, x: &[Lane], width: usize, k: usize) -> Vec<Lane> {
        let mut acc = vec![Lane::default(); k * width];
        for &i in &b.by_position {
            let i = i as usize;
            let xi = &x[i * width..(i + 1) * width];
            let (pos, val) = b.row(i);
            for (&q, &v) in pos.iter().zip(val) {
                let q = q as usize;
                for (a, xl) in acc[q * width..(q + 1) * width].iter_mut().zip(xi) {
                    a.add_scaled(v, xl);
                }
            }
        }
        acc
    }
}
