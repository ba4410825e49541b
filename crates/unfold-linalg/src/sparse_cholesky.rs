//! Sparse Cholesky factorisation `P A P^T = L L^T` of a symmetric positive definite
//! [`CsrMatrix`] on faer, with an approximate minimum degree (AMD) fill-reducing ordering
//! `P` (Amestoy, Davis & Duff 1996). faer picks a simplicial or supernodal factorisation
//! from the predicted fill.

use crate::check::check_sparse_symmetric;
use crate::sparse::CsrMatrix;
use crate::view::{as_faer_mut, par};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::LltError;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, supernodal::SupernodalLltRef, LltRef, SymbolicCholesky,
    SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, Side};
use nalgebra::DMatrix;
use unfold_core::{Error, Result};

/// The sparse Cholesky factor of a symmetric positive definite sparse matrix.
#[derive(Debug)]
pub struct SparseCholesky {
    symbolic: SymbolicCholesky<usize>,
    values: Vec<f64>,
}

impl SparseCholesky {
    /// Factorises `a`, which must be square, finite, symmetric and positive definite.
    ///
    /// # Errors
    /// [`Error::Empty`], [`Error::DimensionMismatch`], [`Error::NonFinite`],
    /// [`Error::InvalidParameter`] (not symmetric), [`Error::NotPositiveDefinite`] whose
    /// `pivot` is the original (0-based) row at which elimination met a non-positive pivot,
    /// or [`Error::Numerical`] if faer runs out of memory or index range.
    pub fn new(a: &CsrMatrix, context: &str) -> Result<SparseCholesky> {
        check_sparse_symmetric(a, context)?;
        let n = a.nrows();
        // The upper triangle in CSR order is the lower triangle in CSC order (A = A^T).
        let (indptr, indices, vals) = a.parts();
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut row_idx = Vec::new();
        let mut lower_vals = Vec::new();
        col_ptr.push(0usize);
        for i in 0..n {
            for p in indptr[i]..indptr[i + 1] {
                if indices[p] >= i {
                    row_idx.push(indices[p]);
                    lower_vals.push(vals[p]);
                }
            }
            col_ptr.push(row_idx.len());
        }
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let lower = SparseColMatRef::new(sym, &lower_vals);
        let symbolic = factorize_symbolic_cholesky(
            sym,
            Side::Lower,
            SymmetricOrdering::Amd,
            Default::default(),
        )
        .map_err(|e| {
            Error::numerical(context, format!("sparse Cholesky analysis failed: {e:?}"))
        })?;
        let mut values = vec![0.0; symbolic.len_val()];
        let p = par();
        let mut mem =
            MemBuffer::new(symbolic.factorize_numeric_llt_scratch::<f64>(p, Default::default()));
        let result = symbolic.factorize_numeric_llt(
            &mut values,
            lower,
            Side::Lower,
            Default::default(),
            p,
            MemStack::new(&mut mem),
            Default::default(),
        );
        if let Err(LltError::NonPositivePivot { index }) = result {
            // faer's simplicial kernel reports a 1-based position, the supernodal one 0-based.
            let permuted = match symbolic.raw() {
                SymbolicCholeskyRaw::Simplicial(_) => index.saturating_sub(1),
                SymbolicCholeskyRaw::Supernodal(_) => index,
            };
            let row = symbolic
                .perm()
                .map_or(permuted, |perm| perm.arrays().0[permuted]);
            return Err(Error::NotPositiveDefinite {
                context: context.to_string(),
                pivot: row,
                advice: format!(
                    "elimination (in fill-reducing order) met a non-positive pivot at row {row}, \
                     so the matrix is singular or indefinite; check the parameters that build \
                     it, or add a small ridge to the diagonal"
                ),
            });
        }
        Ok(SparseCholesky { symbolic, values })
    }

    /// The dimension `n` of the factorised matrix.
    pub fn dim(&self) -> usize {
        self.symbolic.nrows()
    }

    /// Number of stored entries of `L` (a measure of fill-in).
    pub fn factor_nnz(&self) -> usize {
        self.values.len()
    }

    /// `log det A = 2 sum_i log L_ii` (the permutation does not change the determinant).
    pub fn log_det(&self) -> f64 {
        let mut sum = 0.0;
        match self.symbolic.raw() {
            SymbolicCholeskyRaw::Simplicial(s) => {
                // The diagonal entry comes first in each column of L.
                for &start in &s.col_ptr()[..s.ncols()] {
                    sum += self.values[start].ln();
                }
            }
            SymbolicCholeskyRaw::Supernodal(s) => {
                let l = SupernodalLltRef::new(s, &self.values);
                for k in 0..s.n_supernodes() {
                    let block = l.supernode(k).val();
                    for j in 0..block.ncols() {
                        sum += block[(j, j)].ln();
                    }
                }
            }
        }
        2.0 * sum
    }

    /// Solves `A X = B` in place for a block `x` (n x m).
    ///
    /// # Panics
    /// If `x` does not have `n` rows (a programming error).
    pub fn solve_block_in_place(&self, x: &mut DMatrix<f64>) {
        assert_eq!(
            x.nrows(),
            self.dim(),
            "SparseCholesky::solve: row count differs"
        );
        let p = par();
        let mut mem = MemBuffer::new(self.symbolic.solve_in_place_scratch::<f64>(x.ncols(), p));
        LltRef::new(&self.symbolic, &self.values).solve_in_place_with_conj(
            Conj::No,
            as_faer_mut(x),
            p,
            MemStack::new(&mut mem),
        );
    }

    /// Solves `A x = b` in place for one vector.
    ///
    /// # Panics
    /// If `x` does not have `n` entries (a programming error).
    pub fn solve_in_place(&self, x: &mut [f64]) {
        let mut m = DMatrix::from_column_slice(x.len(), 1, x);
        self.solve_block_in_place(&mut m);
        x.copy_from_slice(m.as_slice());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cholesky::Cholesky;
    use crate::test_util::{grid_laplacian, random_graph_laplacian};

    fn shifted(a: &CsrMatrix, s: f64) -> CsrMatrix {
        let mut t = Vec::new();
        for i in 0..a.nrows() {
            let (cols, vals) = a.row(i);
            t.extend(cols.iter().zip(vals).map(|(&j, &v)| (i, j, v)));
            t.push((i, i, s));
        }
        CsrMatrix::from_triplets(a.nrows(), a.ncols(), &t)
    }

    #[test]
    fn matches_dense_cholesky_on_small_and_large_grids() {
        // A small grid stays simplicial; a random graph has enough fill to go supernodal.
        for (a, supernodal) in [
            (shifted(&grid_laplacian(6, 7), 0.3), false),
            (shifted(&random_graph_laplacian(500, 4, 1), 0.3), true),
        ] {
            let n = a.nrows();
            let sc = SparseCholesky::new(&a, "grid").unwrap();
            let is_supernodal = matches!(sc.symbolic.raw(), SymbolicCholeskyRaw::Supernodal(_));
            assert_eq!(is_supernodal, supernodal);
            let d = a.to_dense();
            let dc = Cholesky::new(&d, "grid").unwrap();
            assert!((sc.log_det() - dc.log_det()).abs() < 1e-9 * dc.log_det().abs());
            let b = DMatrix::from_fn(n, 2, |i, j| ((3 * i + j) as f64).sin());
            let mut x = b.clone();
            sc.solve_block_in_place(&mut x);
            assert!((&x - dc.solve(&b)).amax() < 1e-10);
            let mut xv: Vec<f64> = b.column(0).iter().copied().collect();
            sc.solve_in_place(&mut xv);
            assert!(xv
                .iter()
                .zip(x.column(0).iter())
                .all(|(p, q)| (p - q).abs() < 1e-12));
            assert!(sc.factor_nnz() >= a.nnz() / 2);
        }
    }

    #[test]
    fn errors_name_the_failing_row() {
        let t: Vec<(usize, usize, f64)> = (0..6)
            .map(|i| (i, i, if i == 4 { -1.0 } else { 1.0 + i as f64 }))
            .collect();
        let a = CsrMatrix::from_triplets(6, 6, &t);
        match SparseCholesky::new(&a, "diag") {
            Err(Error::NotPositiveDefinite { pivot, context, .. }) => {
                assert_eq!(pivot, 4);
                assert_eq!(context, "diag");
            }
            other => panic!("unexpected {other:?}"),
        }
        // The same in a supernodal factorisation: only row 17 makes A indefinite.
        let big = shifted(&random_graph_laplacian(500, 4, 1), 0.3);
        let mut t = Vec::new();
        for i in 0..big.nrows() {
            let (cols, vals) = big.row(i);
            t.extend(cols.iter().zip(vals).map(|(&j, &v)| (i, j, v)));
        }
        t.push((17, 17, -1000.0));
        let big = CsrMatrix::from_triplets(500, 500, &t);
        match SparseCholesky::new(&big, "big") {
            Err(Error::NotPositiveDefinite { pivot, .. }) => assert_eq!(pivot, 17),
            other => panic!("unexpected {other:?}"),
        }
        // A Laplacian shifted down is indefinite: some pivot must fail.
        assert!(matches!(
            SparseCholesky::new(&shifted(&grid_laplacian(5, 5), -0.1), "L"),
            Err(Error::NotPositiveDefinite { .. })
        ));
        let asym = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 1, 1.0), (0, 1, 0.5)]);
        assert!(matches!(
            SparseCholesky::new(&asym, "x"),
            Err(Error::InvalidParameter { .. })
        ));
        let nan = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 1, f64::NAN)]);
        assert!(matches!(
            SparseCholesky::new(&nan, "x"),
            Err(Error::NonFinite { .. })
        ));
    }
}
