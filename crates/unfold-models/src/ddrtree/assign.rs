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

/// `exp(x)` lane by lane for `x` in `[-708, 709]` (the softmax exponents lie in
/// `(-37, 0]`), to within about one unit in the last place: `x = n ln 2 + r` with
/// `|r| <= ln(2)/2` (Cody-Waite, fdlibm's split of `ln 2`), `exp(r)` by its Taylor
/// polynomial of degree 13 (truncation below `1e-17` relative) and `2^n` by the exponent
/// bits. The same operations in every lane, so it vectorises (unlike calls to `f64::exp`).
#[inline(always)]
pub(crate) fn exp_lanes(x: [f64; LANES]) -> [f64; LANES] {
    const LOG2_E: f64 = std::f64::consts::LOG2_E;
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    // Adding and subtracting 1.5 * 2^52 rounds to the nearest integer.
    const ROUND: f64 = 6_755_399_441_055_744.0;
    const INV_FACT: [f64; 14] = [
        1.0,
        1.0,
        1.0 / 2.0,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5_040.0,
        1.0 / 40_320.0,
        1.0 / 362_880.0,
        1.0 / 3_628_800.0,
        1.0 / 39_916_800.0,
        1.0 / 479_001_600.0,
        1.0 / 6_227_020_800.0,
    ];
    let mut out = [0.0; LANES];
    for l in 0..LANES {
        let n = (x[l] * LOG2_E + ROUND) - ROUND;
        let r = (x[l] - n * LN2_HI) - n * LN2_LO;
        let mut p = INV_FACT[13];
        for c in INV_FACT[..13].iter().rev() {
            p = p * r + c;
        }
        let scale = f64::from_bits(((n as i64 + 1023) as u64) << 52);
        out[l] = p * scale;
    }
    out
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
    Assignment::build(n, order, None, |rows, block| {
        let mut d = vec![0.0; k];
        let mut rows_out = SoftmaxRows::new(k);
        for i in rows {
            let col = dist.column(i);
            for (dp, &c) in d.iter_mut().zip(order_ref) {
                *dp = col[c];
            }
            rows_out.push(&d, sigma, block);
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
        points_block(&g, sigma, rows, block)
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
    fn points_block(g: &Geometry, sigma: f64, rows: Range<usize>, block: &mut Block) -> (f64, f64) {
        let k = g.cn.len();
        let mut d = vec![0.0; k];
        let mut rows_out = SoftmaxRows::new(k);
        for i in rows {
            g.sq_dists(i, &mut d);
            rows_out.push(&d, sigma, block);
        }
        (rows_out.neg_entropy, rows_out.soft_min)
    }
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
        SoftmaxRows {
            exponents: vec![0.0; k],
            kept: vec![0; k],
            neg_entropy: 0.0,
            soft_min: 0.0,
        }
    }

    /// The softmax of one point from its squared distances `d` to the centres (in position
    /// order), shifted by the smallest distance so the largest exponent is exactly 0 (spec
    /// P9); only entries above [`NEGLIGIBLE_EXPONENT`] are exponentiated and kept. The
    /// candidates are found eight at a time by a vector comparison (they lie on a few runs
    /// of positions), and `exp` and the normalisation run in vector lanes.
    #[inline(always)]
    fn push(&mut self, d: &[f64], sigma: f64, block: &mut Block) {
        let shift = min_of(d);
        // A necessary condition for `-(d - shift) / sigma > NEGLIGIBLE_EXPONENT`, with a
        // margin for the rounding of the division.
        let cutoff = -NEGLIGIBLE_EXPONENT * sigma * (1.0 + 1e-9);
        let mut count = 0;
        for (c, chunk) in d.chunks(LANES).enumerate() {
            let mut mask = 0u32;
            for (l, &dp) in chunk.iter().enumerate() {
                mask |= u32::from(dp - shift < cutoff) << l;
            }
            while mask != 0 {
                let p = c * LANES + mask.trailing_zeros() as usize;
                mask &= mask - 1;
                let x = -(d[p] - shift) / sigma;
                if x > NEGLIGIBLE_EXPONENT {
                    self.exponents[count] = x;
                    self.kept[count] = p as u32;
                    count += 1;
                }
            }
        }
        let (exponents, kept) = (&self.exponents[..count], &self.kept[..count]);
        let start = block.val.len();
        block.pos.extend_from_slice(kept);
        for chunk in exponents.chunks(LANES) {
            let mut x = [0.0; LANES];
            x[..chunk.len()].copy_from_slice(chunk);
            block.val.extend_from_slice(&exp_lanes(x)[..chunk.len()]);
        }
        let row = &mut block.val[start..];
        let total = row.iter().fold(0.0, |t, v| t + v);
        let log_total = total.ln();
        for v in row.iter_mut() {
            *v /= total;
        }
        // log r_ij = -(d_ij - shift)/sigma - log total, exact when r_ij is tiny.
        let neg_entropy = row
            .iter()
            .zip(exponents)
            .fold(0.0, |s, (v, x)| s + sigma * v * (x - log_total));
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

    /// `R^T X` (K x p) for `X` (N x p); narrow `X` (such as `Z`) by scalar updates.
    pub(crate) fn tr_mul(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        let p = x.ncols();
        if p >= LANES {
            return self.tr_mul_rows(&LaneRows::new(x));
        }
        assert_eq!(x.nrows(), self.n, "one row of X per point");
        // X^T (p x N): point i's row is the contiguous column i.
        let xt = x.transpose();
        let xt = xt.as_slice();
        let (k, rows) = (self.k, self.block_rows);
        let parts: Vec<Vec<f64>> = self
            .blocks
            .par_iter()
            .enumerate()
            .map(|(bi, b)| {
                let x = &xt[bi * rows * p..];
                match p {
                    1 => narrow_tr_mul_block::<1>(b, x, k),
                    2 => narrow_tr_mul_block::<2>(b, x, k),
                    3 => narrow_tr_mul_block::<3>(b, x, k),
                    _ => {
                        let mut acc = vec![0.0; k * p];
                        for (i, &point) in b.point.iter().enumerate() {
                            let xi = &x[point as usize * p..(point as usize + 1) * p];
                            let (pos, val) = b.row(i);
                            for (&q, &v) in pos.iter().zip(val) {
                                let q = q as usize;
                                for (a, &xj) in acc[q * p..(q + 1) * p].iter_mut().zip(xi) {
                                    *a += v * xj;
                                }
                            }
                        }
                        acc
                    }
                }
            })
            .collect();
        let by_position = sum_in_order(parts);
        DMatrix::from_fn(k, p, |c, j| by_position[self.position[c] * p + j])
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
                    for (i, &point) in b.point.iter().enumerate() {
                        let point = point as usize;
                        let (pos, val) = b.row(i);
                        let oi = &mut out[point * p..(point + 1) * p];
                        if p <= LANES {
                            let mut acc = [0.0; LANES];
                            for (&q, &v) in pos.iter().zip(val) {
                                let gq = &gp[q as usize * p..(q as usize + 1) * p];
                                for (a, &g) in acc.iter_mut().zip(gq) {
                                    *a += v * g;
                                }
                            }
                            oi.copy_from_slice(&acc[..p]);
                        } else {
                            for (j, o) in oi.iter_mut().enumerate() {
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

    /// `sum_ik r_ik dist[(k, i)]` for `dist` K x N.
    pub(crate) fn dot(&self, dist: &DMatrix<f64>) -> f64 {
        let rows = self.block_rows;
        let parts: Vec<f64> = self
            .blocks
            .par_iter()
            .enumerate()
            .map(|(bi, b)| {
                let mut sum = 0.0;
                for (i, &point) in b.point.iter().enumerate() {
                    let col = dist.column(bi * rows + point as usize);
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

widest_simd! {
    /// The upper triangle (in positions; rows of `ceil(K/8)` lanes) of the blocks'
    /// `R^T R`: each row's outer product as aligned vector updates over the runs of lanes
    /// holding its non-zeros (entries left of the diagonal are not used).
    fn gram_blocks(blocks: &[Block], k: usize) -> Vec<Lane> {
        let width = k.div_ceil(LANES);
        let mut acc = vec![Lane::default(); k * width];
        let mut dense = vec![Lane::default(); width];
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for (b, i) in blocks.iter().flat_map(|b| (0..b.rows()).map(move |i| (b, i))) {
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
        for (i, &point) in b.point.iter().enumerate() {
            let point = point as usize;
            let xi = &x[point * width..(point + 1) * width];
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

/// The block's `R^T X` by positions (row-major K x P) for `X` with `P` columns, `x`
/// holding the block's rows one after the other.
fn narrow_tr_mul_block<const P: usize>(b: &Block, x: &[f64], k: usize) -> Vec<f64> {
    let mut acc = vec![[0.0; P]; k];
    for (i, &point) in b.point.iter().enumerate() {
        let point = point as usize;
        let xi: [f64; P] = x[point * P..(point + 1) * P].try_into().unwrap();
        let (pos, val) = b.row(i);
        for (&q, &v) in pos.iter().zip(val) {
            let a = &mut acc[q as usize];
            for j in 0..P {
                a[j] += v * xi[j];
            }
        }
    }
    acc.into_iter().flatten().collect()
}
