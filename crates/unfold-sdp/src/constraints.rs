//! The linear constraint map `A(X)_k = <A_k, X>` of a semidefinite program.

use crate::dense::{inner, mul};
use crate::error::Error;
use nalgebra::{DMatrix, DVector};

/// The linear map `A: S^r -> R^m`, `A(X)_k = <A_k, X>`, with symmetric `A_k`, and what the
/// HKM direction needs of it. Implement it to exploit structure (rank-one or sparse `A_k`);
/// [`DenseConstraints`] stores the `A_k` as they are.
pub trait Constraints {
    /// Number of constraints `m`.
    fn len(&self) -> usize;

    /// Whether there are no constraints.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `A(X)`, for a symmetric `X` (r x r).
    fn apply(&self, x: &DMatrix<f64>) -> DVector<f64>;

    /// The adjoint `A^T(y) = sum_k y_k A_k` (r x r, symmetric).
    fn adjoint(&self, y: &DVector<f64>) -> DMatrix<f64>;

    /// The HKM Schur complement `M_kl = <A_k, X A_l Z^{-1}> = tr(A_k X A_l Z^{-1})` (m x m,
    /// symmetric positive definite for `X, Z` positive definite and independent `A_k`).
    fn schur(&self, x: &DMatrix<f64>, z_inv: &DMatrix<f64>) -> DMatrix<f64>;

    /// An upper bound on `||A_k||_F` over all k, for the starting point.
    fn norm_bound(&self) -> f64;
}

/// Constraints given by their matrices `A_k` (each r x r, symmetric).
#[derive(Clone, Debug)]
pub struct DenseConstraints {
    a: Vec<DMatrix<f64>>,
}

impl DenseConstraints {
    /// The constraints `<A_k, X> = b_k` for the given `A_k`, all r x r; only their
    /// symmetric parts `(A_k + A_k^T) / 2` matter, and those are what is stored.
    ///
    /// # Errors
    /// [`Error::Malformed`] when there is no matrix, or one is not square or not of the
    /// size of the first.
    pub fn new(a: Vec<DMatrix<f64>>) -> Result<Self, Error> {
        let r = a.first().map_or(0, |m| m.nrows());
        if r == 0 {
            return Err(Error::Malformed {
                reason: "give at least one non-empty constraint matrix".to_string(),
            });
        }
        if let Some((k, m)) = a.iter().enumerate().find(|(_, m)| m.shape() != (r, r)) {
            return Err(Error::Malformed {
                reason: format!(
                    "constraint matrix {k} is {} x {}, not {r} x {r}",
                    m.nrows(),
                    m.ncols()
                ),
            });
        }
        Ok(DenseConstraints {
            a: a.into_iter().map(|m| (&m + m.transpose()) * 0.5).collect(),
        })
    }

    /// The dimension r of the `A_k`.
    pub fn dim(&self) -> usize {
        self.a[0].nrows()
    }

    /// The matrices `A_k`.
    pub fn matrices(&self) -> &[DMatrix<f64>] {
        &self.a
    }
}

impl Constraints for DenseConstraints {
    fn len(&self) -> usize {
        self.a.len()
    }

    fn apply(&self, x: &DMatrix<f64>) -> DVector<f64> {
        DVector::from_iterator(self.a.len(), self.a.iter().map(|a| inner(a, x)))
    }

    fn adjoint(&self, y: &DVector<f64>) -> DMatrix<f64> {
        let r = self.dim();
        let mut s = DMatrix::zeros(r, r);
        for (a, &w) in self.a.iter().zip(y.iter()) {
            s += a * w;
        }
        s
    }

    fn schur(&self, x: &DMatrix<f64>, z_inv: &DMatrix<f64>) -> DMatrix<f64> {
        // M_kl = <A_k, X A_l Z^{-1}>, one product pair per l.
        let m = self.a.len();
        let mut out = DMatrix::zeros(m, m);
        for (l, al) in self.a.iter().enumerate() {
            let w = mul(&mul(x, false, al, false), false, z_inv, false);
            for (k, ak) in self.a.iter().enumerate() {
                out[(k, l)] = inner(ak, &w);
            }
        }
        (&out + out.transpose()) * 0.5
    }

    fn norm_bound(&self) -> f64 {
        self.a.iter().map(|a| a.norm()).fold(0.0, f64::max)
    }
}
