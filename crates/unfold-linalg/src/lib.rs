#![warn(missing_docs)]
//! Linear algebra kernels of unfold.
//!
//! Public types are `nalgebra` matrices (column-major, like faer); heavy kernels run on
//! `faer` through zero-copy views ([`view`]). Everything here is model-agnostic.
//!
//! - [`Cholesky`] / [`SparseCholesky`]: factorisations of symmetric positive definite
//!   matrices with log-determinants, solves and inverses.
//! - [`sym_eigen`]: the full symmetric eigendecomposition.
//! - [`largest_eigenpairs`], [`smallest_eigenpairs`], [`smallest_generalized_eigenpairs`]:
//!   the few extreme eigenpairs spectral methods need, by the full decomposition for small
//!   matrices and by block Lanczos ([`partial_sym_eigen`]) otherwise.

mod check;
pub mod cholesky;
pub mod distance;
pub mod eigen;
pub mod lanczos;
pub mod operator;
pub mod sparse;
pub mod sparse_cholesky;
#[cfg(test)]
mod test_util;
pub mod view;

pub use cholesky::{log_det_spd, spd_inverse, Cholesky};
pub use distance::{pairwise_sq_dists, sq_dists_to};
pub use eigen::{
    largest_eigenpairs, largest_eigenpairs_with, smallest_eigenpairs, smallest_eigenpairs_with,
    smallest_generalized_eigenpairs, smallest_generalized_eigenpairs_with, sym_eigen, SymEigen,
    SymMatrix,
};
pub use lanczos::{partial_sym_eigen, PartialEigenOptions, Which};
pub use operator::SymOperator;
pub use sparse::CsrMatrix;
pub use sparse_cholesky::SparseCholesky;
