//! Gaussian random fields over data points: the family of Lawrence's unifying view
//! (spec `meu_alle_drill.md` §2.2).
//!
//! The n data points are the nodes of a field; the p features are independent draws of it,
//! `y_{:,j} ~ N(0, P^{-1})`, so with `Y` (n x p)
//!
//! ```text
//! log p(Y) = -(n p / 2) log 2 pi + (p / 2) log |P| - 1/2 tr(P Y Y^T).
//! ```
//!
//! A model of this family supplies the precision `P` and its derivatives
//! ([`GaussianRandomField`]); the trait provides the likelihood, its gradient and the
//! maximum-likelihood fit (through [`crate::optimise::maximise`]). Models fitted by other
//! means report the likelihood of their precision through [`FixedField`]; methods whose
//! precision is fixed up to scale (Laplacian eigenmaps, LLE) through the one-parameter
//! [`ScaledShapeField`] ([`fixed_shape_evidence`]), so every member of the family gets a
//! comparable number. The embedding comes from the
//! principal eigenvectors of the centred covariance `H P^{-1} H` ([`laplacian_embedding`],
//! [`covariance_embedding`]).
//!
//! This is the field layer shared by the families: the random fields (`grf`), the spectral
//! methods that report a field likelihood (Laplacian eigenmaps, LLE) and the
//! posterior-regularised models on a grounded field (SPL, MPME) all build on it, and it
//! imports none of them.

mod embedding;
mod fixed;
pub mod grounded;
mod likelihood;
mod precision;
pub mod reconstruction;
mod trained;

pub use embedding::*;
pub use fixed::*;
pub use likelihood::*;
pub use precision::*;
pub use trained::Trained;

/// The paper's base precision `gamma` of `L + gamma I` (MEU's default, and the base of the
/// field likelihoods of Laplacian eigenmaps and LLE).
pub const DEFAULT_GAMMA: f64 = 1e-4;

/// The help of the field models' `scaling` parameter ([`FieldScaling`]).
pub const SCALING_HELP: &str = "meu, alle, lle-pl, drill: coordinates with unit variance (the \
     author's code) or scaled by the square roots of the eigenvalues of H K H";

/// The help of the `solver` parameter of the fields with a sparse engine ([`Solver`]).
pub const SOLVER_HELP: &str = "meu, mpme: factorise the field densely (O(n^3), the reference) \
     or sparsely with selected inversion (near-linear for a manifold's kNN graph); auto is \
     sparse from 300 points";

#[cfg(test)]
mod tests;
