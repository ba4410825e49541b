#![warn(missing_docs)]
// Unsafe code only in the SIMD layer (`simd`), where each use says why it is sound.
#![deny(unsafe_code)]
//! Linear algebra kernels of unfold.
//!
//! Public types are `nalgebra` matrices (column-major, like faer); heavy kernels run on
//! `faer` through zero-copy views ([`view`]). Everything here is model-agnostic.
//!
//! - [`Cholesky`] / [`SparseCholesky`]: factorisations of symmetric positive definite
//!   matrices with log-determinants, solves and inverses.
//! - [`SparseSymbolic`] / [`SparseFactor`] / [`SelectedInverse`]: a sparse factorisation
//!   whose analysis is reused across matrices with one pattern, and the entries of the
//!   inverse on the factor's pattern (selected inversion).
//! - [`QuasiDefiniteSymbolic`] / [`QuasiDefiniteFactor`]: sparse `L D L^T` of symmetric
//!   quasi-definite matrices (augmented systems), with the pivots' signs checked.
//! - [`sym_eigen`]: the full symmetric eigendecomposition.
//! - [`largest_eigenpairs`], [`smallest_eigenpairs`], [`smallest_generalized_eigenpairs`]:
//!   the few extreme eigenpairs spectral methods need, by the full decomposition for small
//!   matrices and by block Lanczos ([`partial_sym_eigen`]) otherwise.
//! - [`symmetrise`], [`fix_signs`]: the symmetric part of a matrix; a reproducible sign
//!   for eigenvectors.
//! - [`signal_rank`]: how many components of a data matrix stand above its noise (Gavish
//!   and Donoho's hard threshold for singular values).
//! - [`CentredKernel`]: the top eigenpairs of a doubly centred kernel and the Nyström
//!   projection of new points (classical MDS, kernel PCA, Isomap).
//! - [`gemm`]: dense products (`A B`, `A^T B`, `A^T A`, tall-skinny blocks) on faer.
//! - [`soft_assign`]: soft assignments of points to centres (a sparse softmax over
//!   distances, DDRTree's `R`) and the products with them (`R^T R`, `R^T X`, `R G`).
//! - [`simd`]: the one SIMD layer (runtime dispatch through `pulp` with the same bits on
//!   every path, the vectorisable [`exp`], the [`lane_sum`]).
//! - [`SparseRows`]: a data matrix's CSR arrays as given (the sparse PCA's input);
//!   [`SparsePoints`]: points as canonical sparse rows, with exact distances between rows
//!   (the neighbour methods' input).
//!
//! ```
//! use nalgebra::DMatrix;
//! use unfold_linalg::{smallest_eigenpairs, Cholesky, CsrMatrix, SymMatrix};
//!
//! // Laplacian of a path on 400 vertices: eigenvalues 2 - 2 cos(pi k / 400).
//! let n = 400;
//! let mut t = Vec::new();
//! for i in 0..n - 1 {
//!     t.extend([(i, i, 1.0), (i + 1, i + 1, 1.0), (i, i + 1, -1.0), (i + 1, i, -1.0)]);
//! }
//! let l = CsrMatrix::from_triplets(n, n, &t);
//! let e = smallest_eigenpairs(SymMatrix::Sparse(&l), 2).unwrap();
//! let exact = 2.0 - 2.0 * (std::f64::consts::PI / n as f64).cos();
//! assert!(e.values[0].abs() < 1e-12 && (e.values[1] - exact).abs() < 1e-12);
//!
//! // log det of an SPD matrix, and the error for one that is not.
//! let a = DMatrix::from_row_slice(2, 2, &[4.0, 2.0, 2.0, 3.0]);
//! assert!((Cholesky::new(&a, "A").unwrap().log_det() - 8f64.ln()).abs() < 1e-14);
//! let b = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]);
//! assert!(Cholesky::new(&b, "B").is_err());
//! ```

pub mod centred;
pub mod cg;
mod check;
pub mod cholesky;
pub mod dense;
pub mod dense_eigen;
pub mod dissection;
pub mod distance;
pub mod eigen;
pub mod gemm;
pub mod lanczos;
pub mod operator;
pub mod packed;
mod pattern;
pub mod pca;
pub mod quasi_definite;
pub mod rank;
pub mod selected_inverse;
pub mod simd;
pub mod soft_assign;
pub mod sparse;
pub mod sparse_cholesky;
pub mod sparse_points;
pub mod sparse_rows;
#[cfg(test)]
mod test_util;
pub mod view;

pub use centred::CentredKernel;
pub use cg::{conjugate_gradients, CgOptions, CgOutcome};
pub use cholesky::{log_det_spd, spd_inverse, Cholesky};
pub use dense::{column_means, dot, from_rows, symmetrise, symmetrised, zeroed};
pub use dense_eigen::fix_signs;
pub use distance::{pairwise_kernel, pairwise_sq_dists, sq_dists_to};
pub use eigen::{
    largest_eigenpairs, largest_eigenpairs_with, smallest_eigenpairs, smallest_eigenpairs_with,
    smallest_generalized_eigenpairs, smallest_generalized_eigenpairs_with, sym_eigen, SymEigen,
    SymMatrix,
};
pub use lanczos::{partial_sym_eigen, PartialEigenOptions, Which};
pub use operator::SymOperator;
pub use packed::PackedSym;
pub use pca::{
    principal_components, principal_components_of, principal_components_sparse, PcaSolver,
    PrincipalComponents,
};
pub use quasi_definite::{QuasiDefiniteFactor, QuasiDefiniteSymbolic};
pub use rank::signal_rank;
pub use selected_inverse::{FillOrdering, SelectedInverse, SparseFactor, SparseSymbolic};
pub use simd::{exp, lane_sum, vectorize};
pub use sparse::CsrMatrix;
pub use sparse_cholesky::SparseCholesky;
pub use sparse_points::{sparse_difference, sparse_dot, sparse_sq_dist, SparsePoints, SparseRow};
pub use sparse_rows::{SparseIndex, SparseRows, SparseValue};
