//! Sparse `L D L^T` factorisation of symmetric quasi-definite matrices
//!
//! ```text
//! K = [ H   B^T ]      H (the first `positive` rows) and G symmetric positive definite,
//!     [ B   -G  ]
//! ```
//!
//! for which a factorisation with diagonal `D` exists under **every** symmetric
//! permutation, with positive pivots on the rows of `H` and negative ones on those of `G`
//! (Vanderbei 1995). So a fill-reducing ordering is chosen from the pattern alone and no
//! pivoting is needed, as for a Cholesky factor. These are the augmented systems whose
//! Schur complement `H + B^T G^{-1} B` is a dense precision that should not be formed (LL-LVM's
//! per-point family, `specs/lllvm_scale.md` §3.4).
//!
//! The numeric factorisation is faer's supernodal `L D L^T`. Every pivot's sign is checked
//! against the one quasi-definiteness implies: in exact arithmetic it cannot differ, so a
//! wrong or vanishing pivot means the matrix is too ill-conditioned for the factorisation,
//! and is reported as such instead of a wrong solution.

use crate::pattern::AnalysedPattern;
use crate::selected_inverse::FillOrdering;
use crate::sparse::CsrMatrix;
use crate::sparse_cholesky::{
    numeric_factor, numeric_values, Numeric, SparseCholesky, PARALLEL_FACTOR_ENTRIES,
};
use crate::view::{as_faer_mut, par};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::cholesky::{supernodal::SupernodalLdltRef, LdltRef, SymbolicCholeskyRaw};
use faer::{Conj, Par};
use nalgebra::DMatrix;
use std::sync::Arc;
use unfold_core::{Error, Result};

/// The analysis of a quasi-definite pattern (ordering, elimination tree, supernodes),
/// reused for every matrix with that pattern. Cloning is cheap.
#[derive(Clone, Debug)]
pub struct QuasiDefiniteSymbolic {
    inner: Arc<Analysis>,
}

#[derive(Debug)]
struct Analysis {
    pattern: AnalysedPattern,
    positive: usize,
}

impl QuasiDefiniteSymbolic {
    /// Analyses the symmetric pattern of `a` (square; its values are not read beyond the
    /// checks), whose first `positive` rows must have positive pivots and the others
    /// negative ones, under the fill-reducing `ordering`.
    ///
    /// # Errors
    /// [`Error::Empty`], [`Error::DimensionMismatch`], [`Error::NonFinite`],
    /// [`Error::InvalidParameter`] (not symmetric, or `positive` above the dimension, and
    /// for [`FillOrdering::Dissection`] points that do not have one row per row of `a`), and
    /// [`Error::Numerical`] if the factor would hold more than 2^32 entries (32-bit indices).
    pub fn analyse(
        a: &CsrMatrix,
        positive: usize,
        ordering: FillOrdering<'_>,
        context: &str,
    ) -> Result<QuasiDefiniteSymbolic> {
        Self::try_analyse(a, positive, ordering, context)?
            .ok_or_else(|| crate::sparse_cholesky::index_overflow(context))
    }

    /// [`QuasiDefiniteSymbolic::analyse`], with `None` where the factor would hold more than
    /// 2^32 entries: for a caller that can do without the factor.
    ///
    /// # Errors
    /// As [`QuasiDefiniteSymbolic::analyse`], but for the factor's size.
    pub fn try_analyse(
        a: &CsrMatrix,
        positive: usize,
        ordering: FillOrdering<'_>,
        context: &str,
    ) -> Result<Option<QuasiDefiniteSymbolic>> {
        let n = a.nrows();
        if positive > n {
            return Err(Error::invalid(
                context,
                format!("{positive} positive rows asked of a {n} x {n} matrix"),
            ));
        }
        Ok(
            AnalysedPattern::try_new(a, ordering, context)?.map(|pattern| QuasiDefiniteSymbolic {
                inner: Arc::new(Analysis { pattern, positive }),
            }),
        )
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        self.inner.pattern.n
    }

    /// The number of values the factor stores (a measure of fill).
    pub fn factor_len(&self) -> usize {
        self.inner.pattern.symbolic.len_val()
    }

    /// The floating-point operations of a factorisation on this analysis
    /// ([`crate::sparse_cholesky::factor_flops`]).
    pub fn factor_flops(&self) -> f64 {
        crate::sparse_cholesky::factor_flops(&self.inner.pattern.symbolic)
    }

    /// The number of values in the analysed pattern's lower triangle (diagonal included).
    pub fn lower_len(&self) -> usize {
        self.inner.pattern.lower_row_idx.len()
    }

    /// Where the entry `(i, j)` (or `(j, i)`) sits among the lower triangle's values that
    /// [`QuasiDefiniteSymbolic::factorise_lower`] takes, or `None` off the pattern. The
    /// values are in compressed columns: column `c` holds its entries on and below the
    /// diagonal by increasing row.
    ///
    /// # Panics
    /// If `i` or `j` is not below the dimension (a programming error).
    pub fn lower_slot(&self, i: usize, j: usize) -> Option<usize> {
        let an = &self.inner.pattern;
        let (row, col) = (i.max(j), i.min(j));
        let (start, end) = (
            an.lower_col_ptr[col] as usize,
            an.lower_col_ptr[col + 1] as usize,
        );
        an.lower_row_idx[start..end]
            .binary_search(&(row as u32))
            .ok()
            .map(|k| start + k)
    }

    /// The `L D L^T` factor of `a`, which must have the analysed pattern.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if the pattern differs from the analysed one or `a` is
    /// not symmetric, [`Error::NonFinite`], and [`Error::Numerical`] naming the original row
    /// whose pivot has the wrong sign or vanishes (the matrix is not quasi-definite to
    /// working precision).
    pub fn factorise(&self, a: &CsrMatrix, context: &str) -> Result<QuasiDefiniteFactor> {
        let lower = self.inner.pattern.lower_values(a, context)?;
        self.factorise_lower(&lower, context)
    }

    /// The factor of the symmetric matrix with the analysed pattern whose lower triangle
    /// has the values `lower` ([`QuasiDefiniteSymbolic::lower_slot`]): a caller that
    /// assembles its matrices on the fixed pattern fills them directly, without a CSR
    /// matrix to sort and check on every factorisation.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] for a wrong number of values, [`Error::NonFinite`], and
    /// [`Error::Numerical`] as [`QuasiDefiniteSymbolic::factorise`].
    pub fn factorise_lower(&self, lower: &[f64], context: &str) -> Result<QuasiDefiniteFactor> {
        let an = &self.inner.pattern;
        let matrix = an.lower_matrix(lower, context)?;
        let (values, failed) = numeric_values(&an.symbolic, matrix, Numeric::Ldlt)?;
        let failed = failed.is_some();
        let factor = QuasiDefiniteFactor {
            symbolic: self.clone(),
            values,
        };
        if let Some(row) = factor.wrong_pivot().or(failed.then_some(0)) {
            let block = if row < self.inner.positive {
                "positive"
            } else {
                "negative"
            };
            return Err(Error::numerical(
                context,
                format!(
                    "the matrix lost quasi-definiteness at row {row}: its pivot should be \
                     {block} (it cannot be otherwise in exact arithmetic, so the matrix is \
                     too ill-conditioned for working precision; rescale the data or its \
                     parameters)"
                ),
            ));
        }
        Ok(factor)
    }

    /// The Cholesky factor `L L^T` of the matrix with the analysed pattern whose lower
    /// triangle has the values `lower` (as [`QuasiDefiniteSymbolic::factorise_lower`]), for
    /// an analysis whose every row is positive: the matrix is then positive definite, and
    /// the same ordering and supernodes serve its Cholesky factor, whose solves
    /// [`SparseCholesky::solve_rows_in_place`] runs on right-hand sides stored by rows.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if some rows of the analysis are negative,
    /// [`Error::DimensionMismatch`] for a wrong number of values, [`Error::NonFinite`], and
    /// [`Error::NotPositiveDefinite`] naming the original row where elimination met a
    /// non-positive pivot.
    pub fn cholesky_lower(&self, lower: &[f64], context: &str) -> Result<SparseCholesky> {
        let an = &self.inner.pattern;
        if self.inner.positive < an.n {
            return Err(Error::invalid(
                context,
                format!(
                    "a Cholesky factor asked of a pattern analysed with {} negative rows",
                    an.n - self.inner.positive
                ),
            ));
        }
        let matrix = an.lower_matrix(lower, context)?;
        let values = numeric_factor(&an.symbolic, matrix, context)?;
        Ok(SparseCholesky::from_numeric(&an.symbolic, values))
    }
}

/// A numeric `L D L^T` factor on a [`QuasiDefiniteSymbolic`] analysis.
#[derive(Debug)]
pub struct QuasiDefiniteFactor {
    symbolic: QuasiDefiniteSymbolic,
    values: Vec<f64>,
}

impl QuasiDefiniteFactor {
    /// The pivots `D` in elimination order.
    fn pivots(&self) -> Vec<f64> {
        let symbolic = &self.symbolic.inner.pattern.symbolic;
        match symbolic.raw() {
            SymbolicCholeskyRaw::Supernodal(s) => {
                let factor = SupernodalLdltRef::new(s, &self.values);
                let mut d = Vec::with_capacity(self.symbolic.dim());
                for k in 0..s.n_supernodes() {
                    let node = factor.supernode(k).val();
                    d.extend((0..node.ncols()).map(|c| node[(c, c)]));
                }
                d
            }
            // Each column holds its pivot first.
            SymbolicCholeskyRaw::Simplicial(s) => s.col_ptr()[..s.ncols()]
                .iter()
                .map(|&at| self.values[at as usize])
                .collect(),
        }
    }

    /// `log |det K|`, the sum of the pivots' `log |d_i|`.
    pub fn log_abs_det(&self) -> f64 {
        self.pivots().iter().map(|d| d.abs().ln()).sum()
    }

    /// The original row of the first pivot whose sign is not the one quasi-definiteness
    /// implies (or that vanishes or is not finite).
    fn wrong_pivot(&self) -> Option<usize> {
        let an = &*self.symbolic.inner;
        let forward: Vec<usize> = match an.pattern.symbolic.perm() {
            Some(p) => p.arrays().0.iter().map(|&i| i as usize).collect(),
            None => (0..an.pattern.n).collect(),
        };
        self.pivots()
            .iter()
            .zip(forward)
            .find(|&(&d, row)| !(if row < an.positive { d > 0.0 } else { d < 0.0 }))
            .map(|(_, row)| row)
    }

    /// Solves `K X = B` in place for a block `x` (n x m).
    ///
    /// # Panics
    /// If `x` does not have `n` rows (a programming error).
    pub fn solve_in_place(&self, x: &mut DMatrix<f64>) {
        let symbolic = &self.symbolic.inner.pattern.symbolic;
        assert_eq!(
            x.nrows(),
            symbolic.nrows(),
            "QuasiDefiniteFactor::solve: row count differs"
        );
        let p = if self.values.len() < PARALLEL_FACTOR_ENTRIES {
            Par::Seq
        } else {
            par()
        };
        let factor = LdltRef::new(symbolic, &self.values);
        let mut mem = MemBuffer::new(symbolic.solve_in_place_scratch::<f64>(x.ncols(), p));
        factor.solve_in_place_with_conj(Conj::No, as_faer_mut(x), p, MemStack::new(&mut mem));
    }

    /// [`QuasiDefiniteFactor::solve_in_place`] for a factor that is no longer needed: a
    /// solve with a large factor (of at least [`PARALLEL_FACTOR_ENTRIES`] values; LL-LVM's
    /// `K_C` at 10^5 points with 50 right-hand sides takes seconds) runs through
    /// [`unfold_core::interrupt::abandonable`], so that Ctrl-C is heard while faer solves.
    ///
    /// # Errors
    /// [`unfold_core::Error::Interrupted`] on a stop requested before a large solve is done.
    ///
    /// # Panics
    /// As [`QuasiDefiniteFactor::solve_in_place`].
    pub fn solve_abandonable(self, mut x: DMatrix<f64>) -> Result<DMatrix<f64>> {
        if self.values.len() < PARALLEL_FACTOR_ENTRIES {
            self.solve_in_place(&mut x);
            return Ok(x);
        }
        unfold_core::interrupt::abandonable(move || {
            self.solve_in_place(&mut x);
            x
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::random_matrix;

    /// A random quasi-definite matrix: H = R R^T + I (n1), G = S S^T + I (n2), B sparse.
    fn random_k(n1: usize, n2: usize, seed: u64, flip: bool) -> CsrMatrix {
        let r = random_matrix(n1, n1, seed);
        let s = random_matrix(n2, n2, seed + 1);
        let b = random_matrix(n2, n1, seed + 2);
        let mut h = &r * r.transpose() + DMatrix::identity(n1, n1);
        if flip {
            h[(3, 3)] *= -50.0;
        }
        let g = &s * s.transpose() + DMatrix::identity(n2, n2);
        let mut t = Vec::new();
        for i in 0..n1 {
            for j in 0..n1 {
                t.push((i, j, h[(i, j)]));
            }
        }
        for i in 0..n2 {
            for j in 0..n2 {
                t.push((n1 + i, n1 + j, -g[(i, j)]));
            }
            for j in 0..n1 {
                if (i + 2 * j) % 3 == 0 {
                    t.push((n1 + i, j, b[(i, j)]));
                    t.push((j, n1 + i, b[(i, j)]));
                }
            }
        }
        CsrMatrix::from_triplets(n1 + n2, n1 + n2, &t)
    }

    fn solves(k: &CsrMatrix, factor: &QuasiDefiniteFactor, m: usize, seed: u64) {
        let dense = k.to_dense();
        let b = random_matrix(k.nrows(), m, seed);
        let want = dense.clone().lu().solve(&b).unwrap();
        let mut x = b.clone();
        factor.solve_in_place(&mut x);
        let gap = (&x - &want).amax() / want.amax();
        assert!(gap < 1e-10, "relative gap {gap}");
    }

    #[test]
    fn quasi_definite_solves_match_dense_ones_under_both_orderings() {
        let k = random_k(30, 12, 1, false);
        let points = random_matrix(42, 2, 7);
        for ordering in [FillOrdering::Amd, FillOrdering::Dissection(&points)] {
            let analysis = QuasiDefiniteSymbolic::analyse(&k, 30, ordering, "K").unwrap();
            let factor = analysis.factorise(&k, "K").unwrap();
            solves(&k, &factor, 1, 3);
            solves(&k, &factor, 3, 4);
            // New values on the same pattern, also through the lower triangle's slots.
            let k2 = random_k(30, 12, 11, false);
            solves(&k2, &analysis.factorise(&k2, "K").unwrap(), 2, 5);
            let mut lower = vec![0.0; analysis.lower_len()];
            for i in 0..42 {
                let (cols, vals) = k2.row(i);
                for (&j, &v) in cols.iter().zip(vals).filter(|(&j, _)| j <= i) {
                    lower[analysis.lower_slot(i, j).unwrap()] = v;
                }
            }
            solves(&k2, &analysis.factorise_lower(&lower, "K").unwrap(), 1, 6);
            assert!(analysis.factorise_lower(&lower[1..], "K").is_err());
            // log |det K| from the pivots, against the dense LU's.
            let want = k2.to_dense().lu().determinant().abs().ln();
            let ours = analysis.factorise(&k2, "K").unwrap().log_abs_det();
            assert!((ours - want).abs() < 1e-10 * want.abs(), "{ours} vs {want}");
        }
    }

    #[test]
    fn a_matrix_that_is_not_quasi_definite_is_refused() {
        let good = random_k(30, 12, 1, false);
        let analysis = QuasiDefiniteSymbolic::analyse(&good, 30, FillOrdering::Amd, "K").unwrap();
        let bad = random_k(30, 12, 1, true);
        let err = analysis.factorise(&bad, "K").unwrap_err().to_string();
        assert!(err.contains("quasi-definiteness"), "{err}");
        // The pattern must be the analysed one, and the values finite.
        let other = random_k(20, 12, 1, false);
        assert!(analysis.factorise(&other, "K").is_err());
        let (indptr, indices, values) = good.parts();
        let mut nan = values.to_vec();
        nan[5] = f64::NAN;
        let nan =
            CsrMatrix::from_sorted_rows(42, 42, indptr.to_vec(), indices.to_vec(), nan).unwrap();
        assert!(analysis.factorise(&nan, "K").is_err());
        assert!(QuasiDefiniteSymbolic::analyse(&good, 43, FillOrdering::Amd, "K").is_err());
    }

    /// A larger sparse case: a grid Laplacian block and a coupling, solved to a small
    /// residual.
    #[test]
    fn a_sparse_grid_system_is_solved_to_a_small_residual() {
        let (side1, side2) = (40, 20);
        let (n1, n2) = (side1 * side1, side2 * side2);
        let mut t = Vec::new();
        let grid = |t: &mut Vec<(usize, usize, f64)>,
                    side: usize,
                    at: usize,
                    sign: f64,
                    shift: f64| {
            for i in 0..side {
                for j in 0..side {
                    let v = at + i * side + j;
                    t.push((v, v, sign * shift));
                    for (di, dj) in [(0, 1), (1, 0)] {
                        if i + di < side && j + dj < side {
                            let w = at + (i + di) * side + j + dj;
                            t.extend([(v, v, sign), (w, w, sign), (v, w, -sign), (w, v, -sign)]);
                        }
                    }
                }
            }
        };
        grid(&mut t, side1, 0, 1.0, 0.1);
        grid(&mut t, side2, n1, -1.0, 1.0);
        for i in 0..n2 {
            let j = (i * 4) % n1;
            t.extend([(n1 + i, j, 0.5), (j, n1 + i, 0.5)]);
        }
        let k = CsrMatrix::from_triplets(n1 + n2, n1 + n2, &t);
        let analysis = QuasiDefiniteSymbolic::analyse(&k, n1, FillOrdering::Amd, "K").unwrap();
        let factor = analysis.factorise(&k, "K").unwrap();
        let b = random_matrix(n1 + n2, 1, 3);
        let mut x = b.clone();
        factor.solve_in_place(&mut x);
        let mut kx = vec![0.0; n1 + n2];
        k.matvec(x.as_slice(), &mut kx);
        let residual = kx
            .iter()
            .zip(b.iter())
            .map(|(a, b)| (a - b).powi(2))
            .sum::<f64>()
            .sqrt()
            / b.norm();
        assert!(residual < 1e-10, "residual {residual}");
    }
}
