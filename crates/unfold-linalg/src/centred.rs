//! The centred-kernel eigenproblem shared by classical MDS, kernel PCA, Isomap and the
//! covariance embeddings of the models.
//!
//! Spec `meu_alle_drill.md` §1.2: the embedding comes from the top-q eigenpairs of the
//! doubly centred kernel `B = H K H`, `X = V Lambda^{1/2}`. A new point with kernel row
//! `k*` (against the training points) is placed by the Nyström formula
//! `x* = Lambda^{-1/2} V^T (k* - mean(k*) 1 - r + m 1)`, where `r` holds the row means of
//! `K` and `m` its grand mean; for a training point this returns its own coordinates.
//! With `K = -D/2` for squared distances `D` this is classical MDS and the projection is
//! Gower's formula (§1.1).

use crate::dense_eigen::fix_signs;
use crate::lanczos::{partial_sym_eigen, PartialEigenOptions, Which};
use crate::operator::SymOperator;
use crate::packed::PackedSym;
use crate::sparse::CsrMatrix;
use crate::sparse_cholesky::SparseCholesky;
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use unfold_core::{Error, Result};

/// The top-q eigenpairs of a doubly centred kernel matrix, with the row means needed to
/// centre new kernel rows consistently.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CentredKernel {
    /// Unit eigenvectors, n x q.
    pub vectors: DMatrix<f64>,
    /// Eigenvalues, descending, all positive.
    pub values: DVector<f64>,
    row_means: DVector<f64>,
    total_mean: f64,
}

impl CentredKernel {
    /// Takes the top `q` eigenpairs of the centred kernel `B = H K H` of a symmetric
    /// kernel `k` built by this crate (its lower triangle is used). The matrix is packed
    /// into half the memory first ([`PackedSym`]), which halves the traffic of every
    /// product; see [`CentredKernel::from_packed`]. Fails when `k` is not square or fewer
    /// than `q` eigenvalues are clearly positive.
    pub fn new(k: DMatrix<f64>, q: usize, what: &str) -> Result<Self> {
        if k.nrows() != k.ncols() {
            return Err(Error::DimensionMismatch(format!(
                "the {what} must be square, got {} x {}",
                k.nrows(),
                k.ncols()
            )));
        }
        let packed = PackedSym::from_lower(&k)?;
        drop(k);
        Self::from_packed(&packed, q, what)
    }

    /// Takes the top `q` eigenpairs of the centred kernel `B = H K H` of a packed
    /// symmetric kernel. `B` is never formed: block Lanczos applies it as `H (K (H X))`,
    /// and the row means of `K` come from its stored row sums. Fails when fewer than `q`
    /// eigenvalues are clearly positive.
    pub fn from_packed(k: &PackedSym, q: usize, what: &str) -> Result<Self> {
        let n = k.dim() as f64;
        let row_means = DVector::from_iterator(k.dim(), k.row_sums().iter().map(|s| s / n));
        // Each block product streams the whole kernel from memory; blocks as wide as the
        // product's vectors need the fewest products (see `docs/linalg.md`).
        Self::from_operator(k, row_means, PackedSym::block_width(q), q, what)
    }

    /// Takes the top `q` eigenpairs of `H P^{-1} H` for a sparse symmetric positive
    /// definite precision `P` (the covariance embedding of a random field, spec
    /// `meu_alle_drill.md` §2.6) without forming `P^{-1}`: block Lanczos applies it by
    /// solves with `P`'s sparse Cholesky factor, and the row means of `P^{-1}` come from
    /// one more solve, `P^{-1} 1 / n`.
    ///
    /// # Errors
    /// As [`SparseCholesky::new`], and as [`CentredKernel::from_packed`].
    pub fn from_sparse_precision(p: &CsrMatrix, q: usize, what: &str) -> Result<Self> {
        let chol = SparseCholesky::new(p, what)?;
        let n = chol.dim();
        let mut row_means = vec![1.0 / n as f64; n];
        chol.solve_in_place(&mut row_means);
        Self::from_operator(
            &Inverse(&chol),
            DVector::from_vec(row_means),
            q.max(2),
            q,
            what,
        )
    }

    /// The top `q` eigenpairs of `H K H` for the operator `K` whose row means are given.
    fn from_operator<O: SymOperator>(
        k: &O,
        row_means: DVector<f64>,
        block_size: usize,
        q: usize,
        what: &str,
    ) -> Result<Self> {
        let total_mean = row_means.mean();
        let opts = PartialEigenOptions {
            block_size: Some(block_size),
            // Kernel spectra are crowded (RBF on the Swiss roll: 507, 399, 377, ...), so
            // vector errors are about tol ||B|| / gap: 1e-12 costs two more products than
            // the default 1e-10 at n = 5000 and matches ARPACK run to machine precision
            // (Procrustes disparity ~1e-26 instead of ~1e-20).
            tol: 1e-12,
            ..PartialEigenOptions::default()
        };
        let eig = partial_sym_eigen(&DoublyCentred(k), q, Which::Largest, &opts)?;
        let top = eig.values[0].abs().max(f64::MIN_POSITIVE);
        if let Some(j) = eig.values.iter().position(|&v| v <= 1e-10 * top) {
            return Err(Error::DimensionTooLarge {
                dim: q,
                limit: j + 1,
                reason: format!("the centred {what} has only {j} clearly positive eigenvalues"),
            });
        }
        let mut vectors = eig.vectors;
        fix_signs(&mut vectors);
        Ok(CentredKernel {
            vectors,
            values: eig.values,
            row_means,
            total_mean,
        })
    }

    /// What is inconsistent in a kernel read from a file, if anything: the eigenvectors
    /// must be n x q with `q` finite positive eigenvalues and `n` finite row means.
    pub fn inconsistency(&self) -> Option<String> {
        let (n, q) = self.vectors.shape();
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        if n.checked_mul(q) != Some(self.vectors.as_slice().len())
            || !finite(self.vectors.as_slice())
        {
            Some(format!(
                "its {n} x {q} eigenvectors are not all stored or not finite"
            ))
        } else if self.values.nrows() != q
            || self.values.as_slice().len() != q
            || !self
                .values
                .as_slice()
                .iter()
                .all(|&v| v.is_finite() && v > 0.0)
        {
            Some(format!(
                "it needs {q} positive eigenvalues, got {}",
                self.values.nrows()
            ))
        } else if self.row_means.nrows() != n
            || self.row_means.as_slice().len() != n
            || !finite(self.row_means.as_slice())
            || !self.total_mean.is_finite()
        {
            Some(format!(
                "it needs {n} finite row means, got {}",
                self.row_means.len()
            ))
        } else {
            None
        }
    }

    /// The embedding of the training points, `V Lambda^{1/2}` (n x q).
    pub fn coords(&self) -> DMatrix<f64> {
        let mut x = self.vectors.clone();
        for (mut col, &l) in x.column_iter_mut().zip(self.values.iter()) {
            col *= l.sqrt();
        }
        x
    }

    /// Nyström projection of new points given their uncentred kernel rows (m x n).
    pub fn project(&self, k_new: &DMatrix<f64>) -> DMatrix<f64> {
        let mut kc = k_new.clone();
        for (i, mut row) in kc.row_iter_mut().enumerate() {
            let mean = k_new.row(i).mean();
            for (j, v) in row.iter_mut().enumerate() {
                *v += self.total_mean - mean - self.row_means[j];
            }
        }
        let mut x = kc * &self.vectors;
        for (mut col, &l) in x.column_iter_mut().zip(self.values.iter()) {
            col /= l.sqrt();
        }
        x
    }
}

/// `P^{-1}` as an operator, by solves with the sparse factor of `P`.
struct Inverse<'a>(&'a SparseCholesky);

impl SymOperator for Inverse<'_> {
    fn dim(&self) -> usize {
        self.0.dim()
    }

    fn apply(&self, x: &DMatrix<f64>, y: &mut DMatrix<f64>) {
        y.copy_from(x);
        self.0.solve_block_in_place(y);
    }
}

/// `H K H` as an operator, `H = I - 11^T / n`: centre the block's columns, multiply by
/// `K`, centre again.
struct DoublyCentred<'a, O>(&'a O);

impl<O: SymOperator> SymOperator for DoublyCentred<'_, O> {
    fn dim(&self) -> usize {
        self.0.dim()
    }

    fn apply(&self, x: &DMatrix<f64>, y: &mut DMatrix<f64>) {
        let centre = |m: &mut DMatrix<f64>| {
            for mut col in m.column_iter_mut() {
                let mean = col.mean();
                col.add_scalar_mut(-mean);
            }
        };
        let mut xc = x.clone();
        centre(&mut xc);
        self.0.apply(&xc, y);
        centre(y);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::random_graph_laplacian;

    /// The sparse route (solves with `P`'s factor) gives the eigenpairs, and the Nyström
    /// centring, of the dense `H P^{-1} H`.
    #[test]
    fn sparse_precision_matches_the_dense_inverse() {
        let p = random_graph_laplacian(500, 4, 3).add_to_diagonal(1e-3);
        let dense = CentredKernel::new(p.to_dense().try_inverse().unwrap(), 3, "K").unwrap();
        let sparse = CentredKernel::from_sparse_precision(&p, 3, "K").unwrap();
        for j in 0..3 {
            let (a, b) = (dense.values[j], sparse.values[j]);
            assert!((a - b).abs() < 1e-10 * a, "value {j}: {a} vs {b}");
        }
        assert!((&dense.vectors - &sparse.vectors).amax() < 1e-8);
        assert!((&dense.row_means - &sparse.row_means).amax() < 1e-10 * dense.row_means.amax());
        assert!((dense.total_mean - sparse.total_mean).abs() < 1e-10 * dense.total_mean.abs());
        // An indefinite precision is refused.
        let bad = random_graph_laplacian(50, 3, 1).add_to_diagonal(-1.0);
        assert!(CentredKernel::from_sparse_precision(&bad, 2, "K").is_err());
    }
}
