//! Soft assignments of points to centres, and the products with them that an alternating
//! minimisation needs (DDRTree's `R`, its (32)).
//!
//! For points `z_i` (the rows of Z, N x d), centres `c_k` (the rows of C, K x d) and a
//! bandwidth `sigma > 0`, [`Assignment::from_points`] forms the row-stochastic N x K matrix
//!
//! ```text
//! r_ik = exp(-d_ik / sigma) / sum_l exp(-d_il / sigma),   d_ik = ||z_i - c_k||^2,
//! ```
//!
//! the minimiser over row-stochastic `R` of `sum r_ik d_ik + sigma sum r_ik log r_ik`, with
//! each row shifted by its smallest distance before exponentiating (so the largest exponent
//! is exactly 0), and that minimum itself ([`Assignment::soft_min`]).
//!
//! Only entries within `e^-37` of their row's largest are kept (the rest change no sum at
//! double precision), so every product costs `O(nnz)` instead of `O(N K)`. The centres
//! are stored in an order the caller gives: numbered along a tree over the centres (as
//! `unfold_graph::tree_order` numbers them), a point's non-zeros lie on a few tree
//! neighbourhoods of its nearest centre, i.e. on a few contiguous runs of positions, and
//! the K x K product `R^T R` becomes short dense updates of those runs. Rows are processed
//! in fixed blocks (in parallel), each with its own accumulator; the blocks' results are
//! summed in block order, so the sums do not depend on the number of threads. Every output
//! is returned in the original numbering of the centres. The kernels run through the SIMD
//! layer ([`crate::simd`]), with the same bits on every instruction set.
//!
//! Layout: this file holds [`Assignment`] and its construction; `rows.rs` the compressed
//! rows of a block, `softmax.rs` the distances and softmax rows (and the nearest centres),
//! `products.rs` the products with `R`.

mod products;
mod rows;
mod softmax;
#[cfg(test)]
mod tests;

pub use products::{DataRows, Products, DENSE_PRODUCT_COLS};

use crate::simd;
use nalgebra::DMatrix;
use rayon::prelude::*;
use rows::Block;
#[cfg(test)]
use softmax::{min_of, SoftmaxRows};
use softmax::{nearest_block, points_block, Geometry};
use std::ops::Range;

/// Assignments below `e^-37 < 1e-16` times the point's largest are set to zero: they
/// change no sum at double precision, and with a small sigma dropping them leaves `R`
/// sparse.
pub const NEGLIGIBLE_EXPONENT: f64 = -37.0;

/// Rows per block are at least this many (blocks are the unit of parallel work, and each
/// block of a product has its own accumulator).
const MIN_BLOCK_ROWS: usize = 512;
/// At most this many blocks.
const MAX_BLOCKS: usize = 16;

/// Soft assignments `R` (N x K) of points to centres, with their part of the objective
/// (module doc).
pub struct Assignment {
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
    neg_entropy: f64,
    /// `-sigma sum_i log sum_k exp(-d_ik / sigma)`, the minimum over `R` of
    /// `sum r d + sigma sum r log r`.
    soft_min: f64,
}

/// `(number of blocks, rows per block)` for `n` rows.
fn blocking(n: usize) -> (usize, usize) {
    let rows = n
        .div_ceil(n.div_ceil(MIN_BLOCK_ROWS).clamp(1, MAX_BLOCKS))
        .max(1);
    (n.div_ceil(rows).max(1), rows)
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

impl Assignment {
    /// The soft assignments of the rows of `z` (N x d) to the centres `c` (K x d) with
    /// bandwidth `sigma` (module doc), the centres stored in `order` (`order[p]` is the
    /// centre at position `p`). Distances are `||z_i||^2 + ||c_k||^2 - 2 z_i . c_k`
    /// (clamped at 0), as `sq_dists_to` computes them, evaluated point by point (no K x N
    /// matrix).
    ///
    /// `spare` is an earlier assignment whose buffers are reused (an alternating
    /// minimisation hands each iteration's assignments to the next): its blocks' storage
    /// is taken over, so after the first iteration no row storage is allocated (nor are
    /// its pages touched for the first time). The result does not depend on `spare`.
    ///
    /// # Panics
    /// If `order` is not a permutation of `0..K` or `z` and `c` have different numbers of
    /// columns.
    pub fn from_points(
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

    /// The assignments from `dist[(k, i)] = ||z_i - c_k||^2` (K x N), centres stored in
    /// `order`: the reference [`Assignment::from_points`] is tested against.
    #[cfg(test)]
    fn from_distances(dist: &DMatrix<f64>, sigma: f64, order: Vec<usize>) -> Assignment {
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
    fn nnz(&self) -> usize {
        self.blocks.iter().map(|b| b.val.len()).sum()
    }

    /// `sigma sum_ik r_ik log r_ik` (summed over the stored entries as they were formed).
    pub fn neg_entropy(&self) -> f64 {
        self.neg_entropy
    }

    /// `-sigma sum_i log sum_k exp(-d_ik / sigma)`, the minimum over row-stochastic `R` of
    /// `sum r_ik d_ik + sigma sum r_ik log r_ik`.
    pub fn soft_min(&self) -> f64 {
        self.soft_min
    }

    /// `R` as a dense N x K matrix (for checks on small problems).
    pub fn to_dense(&self) -> DMatrix<f64> {
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
    fn from_dense(r: &DMatrix<f64>, order: Vec<usize>) -> Assignment {
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

/// The index of each point (row of `z`, N x d) nearest centre (row of `c`, K x d), the
/// first on ties, from the distances of [`Assignment::from_points`]: k-means labels.
///
/// # Panics
/// If `z` and `c` have different numbers of columns.
pub fn nearest_centres(z: &DMatrix<f64>, c: &DMatrix<f64>) -> Vec<usize> {
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
