//! Projected (sub)gradient ascent and descent with classical step-size rules.
//!
//! For a convex `f` (minimisation) or a concave `f` (maximisation) over a closed convex set
//! `C` with Euclidean projection `P`, the method iterates
//!
//! ```text
//! x_{t+1} = P(x_t - a_t g_t)   (descent, g_t in ∂f(x_t))
//! x_{t+1} = P(x_t + a_t g_t)   (ascent, g_t a supergradient)
//! ```
//!
//! with the step rules `a0/t` (the `1/t` rule of SPL's Algorithm 1), `a0/sqrt(t)`, constant,
//! or Polyak's `(f(x_t) - f*)/||g_t||^2` when `f*` is known (Shor 1985; Polyak 1987;
//! Boyd's lecture notes on subgradient methods). Subgradient methods are not monotone, so the
//! best iterate is tracked. Stopping: iteration limit, stalled best value, small gradient
//! mapping `||x_t - P(x_t -/+ a_t g_t)|| / a_t`.
//!
//! Use [`minimize`] / [`maximize`] directly, or [`ProjectedSubgradient`] with argmin's
//! `Executor`. This crate knows nothing about models.
//!
//! ```
//! use unfold_subgradient::{maximize, Projection, StepRule, SubgradientOptions};
//! // max min(x, y, 2 - x - y): maximiser (2/3, 2/3), value 2/3.
//! let f = |x: &[f64], g: &mut [f64]| {
//!     let v = [x[0], x[1], 2.0 - x[0] - x[1]];
//!     let k = (0..3).min_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap();
//!     let rows = [[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]];
//!     g.copy_from_slice(&rows[k]);
//!     v[k]
//! };
//! let opts = SubgradientOptions { step: StepRule::Polyak { f_star: 2.0 / 3.0 }, max_iterations: 5000, ..Default::default() };
//! let r = maximize(f, &[0.0, 0.0], &Projection::None, &opts).unwrap();
//! assert!((r.best_f - 2.0 / 3.0).abs() < 1e-8);
//! ```

mod argmin_solver;
mod error;
mod method;
mod projection;
mod step;

pub use argmin_solver::{ProjectedSubgradient, SubgradientState};
pub use error::{Error, TryOptimizeError};
pub use method::{
    maximize, minimize, optimize, try_maximize, try_maximize_until, try_optimize, Sense, Status,
    SubgradientOptions, SubgradientReport,
};
pub use projection::{Projection, ProjectionFn};
pub use step::StepRule;
