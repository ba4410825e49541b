//! L-BFGS-B: limited-memory quasi-Newton minimisation of a smooth function subject to
//! simple bounds `l <= x <= u` (Byrd, Lu, Nocedal & Zhu 1995, "A limited memory algorithm
//! for bound constrained optimization", SIAM J. Sci. Comput. 16(5)), with the subspace
//! projection improvement of Morales & Nocedal (2011, ACM TOMS 38(1)).
//!
//! Each iteration
//! 1. finds the generalised Cauchy point along the projected steepest-descent path with the
//!    compact limited-memory matrix `B = theta I - W M W^T`;
//! 2. minimises the quadratic model over the variables free at the Cauchy point (direct
//!    primal method, Sherman–Morrison–Woodbury) and projects the minimiser onto the box;
//! 3. runs a Moré–Thuente strong-Wolfe line search inside the box;
//! 4. updates the correction pairs (skipping pairs without positive curvature).
//!
//! See `docs/lbfgsb.md` for the stopping rules, step-length rules and the SciPy comparison.
//!
//! ```
//! use unfold_lbfgsb::{minimize, LbfgsbOptions, Status};
//! // min (x - 3)^2 + (y + 1)^2 over [0, 2] x R: optimum (2, -1).
//! let f = |x: &[f64], g: &mut [f64]| {
//!     g[0] = 2.0 * (x[0] - 3.0);
//!     g[1] = 2.0 * (x[1] + 1.0);
//!     (x[0] - 3.0).powi(2) + (x[1] + 1.0).powi(2)
//! };
//! let bounds = [(0.0, 2.0), (f64::NEG_INFINITY, f64::INFINITY)];
//! let r = minimize(f, &[0.5, 0.5], &bounds, &LbfgsbOptions::default()).unwrap();
//! assert_eq!(r.status, Status::ConvergedPgtol);
//! assert!((r.x[0] - 2.0).abs() < 1e-12 && (r.x[1] + 1.0).abs() < 1e-6);
//! ```

mod argmin_adapter;
mod bounds;
mod cauchy;
mod dense;
mod driver;
mod error;
mod linesearch;
mod memory;
mod options;
mod subspace;

pub use argmin_adapter::{LbfgsbSolver, LbfgsbState};
pub use driver::{minimize, try_minimize, try_minimize_until};
pub use error::{Error, TryMinimizeError};
pub use options::{LbfgsbOptions, LbfgsbReport, Status};
