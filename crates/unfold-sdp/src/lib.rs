#![warn(missing_docs)]
//! A primal-dual interior-point solver for semidefinite programs in standard form,
//!
//! ```text
//! minimise <C, X>  s.t.  <A_k, X> = b_k (k = 1..m),  X PSD          (primal)
//! maximise b^T y   s.t.  Z = C - sum_k y_k A_k PSD                  (dual)
//! ```
//!
//! by infeasible path following with the HKM search direction and Mehrotra's
//! predictor-corrector ([`solve`]). The constraints come through the [`Constraints`] trait,
//! so that structured `A_k` (rank-one, sparse) need not be stored as dense matrices;
//! [`DenseConstraints`] stores them as they are. This crate knows nothing about models; MVU
//! (`unfold-models`) is its first user. See `docs/sdp.md`.
//!
//! ```
//! use nalgebra::DMatrix;
//! use unfold_sdp::{solve, DenseConstraints, SdpOptions};
//!
//! // min <C, X> s.t. tr X = 1, X PSD has the optimum lambda_min(C) = 1.
//! let c = DMatrix::from_row_slice(2, 2, &[2.0, 1.0, 1.0, 2.0]);
//! let a = DenseConstraints::new(vec![DMatrix::identity(2, 2)]).unwrap();
//! let sol = solve(&c, &a, &[1.0], &SdpOptions { tol: 1e-9, ..SdpOptions::default() }).unwrap();
//! assert!((sol.primal_objective - 1.0).abs() < 1e-7);
//! ```

mod constraints;
pub mod dense;
mod error;
mod solver;

pub use constraints::{Constraints, DenseConstraints};
pub use error::Error;
pub use solver::{solve, solve_observed, SdpOptions, SdpSolution};

#[cfg(test)]
mod tests;
