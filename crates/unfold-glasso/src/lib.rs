//! The graphical lasso of Friedman, Hastie & Tibshirani (2008, Biostatistics 9(3):432–441):
//!
//! ```text
//! maximise over Theta ≻ 0:   log det Theta - tr(S Theta) - sum_{i,j} rho_ij |Theta_ij|
//! ```
//!
//! by block coordinate descent over the columns of `W = Theta^{-1}` with an inner
//! coordinate-descent lasso (active set, covariance updates, warm starts), exact
//! block-diagonal screening, scalar or matrix penalties (infinite entries force exact zeros:
//! a support mask), a penalised or free diagonal, and convergence on the duality gap.
//! This crate knows nothing about models. See [`graphical_lasso`] and `docs/glasso.md`.

// Vector instructions come from unfold-linalg's SIMD layer; nothing here needs `unsafe`.
#![forbid(unsafe_code)]

mod block;
mod error;
mod glasso;
mod lasso;
mod options;
mod screen;
mod validate;

pub use error::Error;
pub use glasso::{graphical_lasso, graphical_lasso_observed};
pub use options::{GlassoFit, GlassoOptions, Penalty};
