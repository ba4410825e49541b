//! Symmetric linear operators seen only through block products `Y = A X`: the interface of
//! the partial eigensolver.

use crate::cholesky::Cholesky;
use crate::sparse::CsrMatrix;
use crate::sparse_cholesky::SparseCholesky;
use crate::view::{as_faer, as_faer_mut, par};
use faer::linalg::matmul::matmul;
use faer::sparse::linalg::matmul::sparse_dense_matmul;
use faer::sparse::{SparseRowMatRef, SymbolicSparseRowMatRef};
use faer::{Accum, Par};
use nalgebra::DMatrix;
use rayon::prelude::*;

/// A symmetric `dim x dim` operator applied to blocks of vectors.
pub trait SymOperator: Sync {
    /// The dimension `n` of the operator.
    fn dim(&self) -> usize;
    /// `y = A x` for a block `x` of size `n x b`; `y` has the same shape and is overwritten.
    fn apply(&self, x: &DMatrix<f64>, y: &mut DMatrix<f64>);
}

impl SymOperator for DMatrix<f64> {
    fn dim(&self) -> usize {
        self.nrows()
    }

    /// A dense product on faer (parallel matrix multiply).
    fn apply(&self, x: &DMatrix<f64>, y: &mut DMatrix<f64>) {
        matmul(
            as_faer_mut(y),
            Accum::Replace,
            as_faer(self),
            as_faer(x),
            1.0,
            par(),
        );
    }
}

/// Blocks of at most this many columns take faer's sparse product ([`CsrMatrix`]'s
/// `apply`).
const FAER_COLUMNS: usize = 2;

/// Rows per task of the sparse product: a few microseconds of work, so that handing a
/// block to another thread costs less than the block itself.
const SPARSE_ROWS: usize = 2048;

impl SymOperator for CsrMatrix {
    fn dim(&self) -> usize {
        self.nrows()
    }

    /// A sparse product; each output entry is one sequential dot product over the row's
    /// stored entries, so the result does not depend on the number of threads. Blocks of
    /// one or two columns go to faer's `sparse_dense_matmul` (sequential, column by
    /// column: 2-3x faster than ours there, `bench/results/sparse_vs_faer.md`, and the same
    /// bits, as it sums each entry in the same order); wider blocks to ours, parallel over
    /// fixed blocks of rows on the transposed block (faster from 8 columns on).
    fn apply(&self, x: &DMatrix<f64>, y: &mut DMatrix<f64>) {
        let b = x.ncols();
        if b == 0 {
            return;
        }
        if b <= FAER_COLUMNS {
            let (indptr, indices, values) = self.parts();
            let symbolic = SymbolicSparseRowMatRef::new_checked(
                self.nrows(),
                self.ncols(),
                indptr,
                None,
                indices,
            );
            sparse_dense_matmul(
                as_faer_mut(y),
                Accum::Replace,
                SparseRowMatRef::new(symbolic, values),
                as_faer(x),
                1.0,
                Par::Seq,
            );
            return;
        }
        let xt = x.transpose(); // b x n: row j of x is contiguous
        let mut yt = DMatrix::<f64>::zeros(b, self.nrows());
        let rows_times = |(block, out): (usize, &mut [f64])| {
            for (r, out) in out.chunks_mut(b).enumerate() {
                let (cols, vals) = self.row(block * SPARSE_ROWS + r);
                for (&j, &v) in cols.iter().zip(vals) {
                    let xj = &xt.as_slice()[j * b..(j + 1) * b];
                    for (o, &xv) in out.iter_mut().zip(xj) {
                        *o += v * xv;
                    }
                }
            }
        };
        let out = yt.as_mut_slice();
        if self.nrows() > SPARSE_ROWS {
            out.par_chunks_mut(b * SPARSE_ROWS)
                .enumerate()
                .for_each(rows_times);
        } else {
            rows_times((0, out));
        }
        yt.transpose_to(y);
    }
}

/// A matrix together with a factorisation of `A + shift I` for shift-invert.
pub(crate) enum ShiftedFactor {
    /// Dense Cholesky of `A + shift I`.
    Dense(Cholesky),
    /// Sparse Cholesky of `A + shift I`.
    Sparse(Box<SparseCholesky>),
}

/// The operator `(A + shift I)^{-1}` applied through a Cholesky factorisation.
pub(crate) struct ShiftInvert {
    pub(crate) factor: ShiftedFactor,
}

impl SymOperator for ShiftInvert {
    fn dim(&self) -> usize {
        match &self.factor {
            ShiftedFactor::Dense(c) => c.dim(),
            ShiftedFactor::Sparse(c) => c.dim(),
        }
    }

    fn apply(&self, x: &DMatrix<f64>, y: &mut DMatrix<f64>) {
        y.copy_from(x);
        match &self.factor {
            ShiftedFactor::Dense(c) => c.solve_in_place(y),
            ShiftedFactor::Sparse(c) => c.solve_block_in_place(y),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_products_on_faer_equal_ours_to_the_bit() {
        // 5000 rows: our path splits them into parallel row blocks.
        let a = crate::test_util::random_graph_laplacian(5000, 8, 3);
        let x = DMatrix::from_fn(5000, 3, |i, j| ((i * 3 + j) as f64 * 0.37).sin());
        let mut wide = DMatrix::zeros(5000, 3);
        a.apply(&x, &mut wide); // ours (3 columns)
        for b in 1..=FAER_COLUMNS {
            let narrow_x = x.columns(0, b).into_owned();
            let mut narrow = DMatrix::zeros(5000, b);
            a.apply(&narrow_x, &mut narrow); // faer
            assert_eq!(narrow, wide.columns(0, b).into_owned(), "{b} columns");
        }
    }

    #[test]
    fn sparse_and_dense_block_products_agree() {
        let n = 30;
        let mut t = Vec::new();
        for i in 0..n {
            t.push((i, i, 2.0 + i as f64));
            t.push((i, (i * 7 + 3) % n, 0.5));
            t.push(((i * 7 + 3) % n, i, 0.5));
        }
        let a = CsrMatrix::from_triplets(n, n, &t);
        let d = a.to_dense();
        let x = DMatrix::from_fn(n, 3, |i, j| ((i * 5 + j) as f64).cos());
        let mut y1 = DMatrix::zeros(n, 3);
        let mut y2 = DMatrix::zeros(n, 3);
        a.apply(&x, &mut y1);
        d.apply(&x, &mut y2);
        let direct = &d * &x;
        assert!((&y1 - &direct).amax() < 1e-12);
        assert!((&y2 - &direct).amax() < 1e-12);
        assert_eq!(SymOperator::dim(&a), n);
    }
}
