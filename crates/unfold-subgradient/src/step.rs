//! Step-size rules of the (sub)gradient method.

use crate::{Error, Sense};

/// How the step length `a_t` of iteration `t = 1, 2, ...` is chosen.
///
/// The update is `x_{t+1} = P(x_t - a_t g_t)` for minimisation and `P(x_t + a_t g_t)` for
/// maximisation, where `g_t` is a subgradient (supergradient for concave maximisation).
/// With [`SubgradientOptions::normalized`](crate::SubgradientOptions::normalized) the
/// direction is `g_t / ||g_t||` instead of `g_t` for the first three rules.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepRule {
    /// `a_t = a0 / t`: square-summable but not summable, the `1/t` rule of SPL's
    /// Algorithm 1 (with `a0 = 1`). Converges for convex problems with bounded subgradients.
    OverT {
        /// Scale `a0 > 0`.
        a0: f64,
    },
    /// `a_t = a0 / sqrt(t)`: the minimax-optimal rule for Lipschitz convex functions
    /// (best value within `O(1/sqrt(T))` of the optimum).
    OverSqrtT {
        /// Scale `a0 > 0`.
        a0: f64,
    },
    /// `a_t = a`: converges to within `O(a G^2)` of the optimum only.
    Constant {
        /// Step `a > 0`.
        a: f64,
    },
    /// Polyak's step when the optimal value `f*` is known:
    /// `a_t = (f(x_t) - f*) / ||g_t||^2` for minimisation and `(f* - f(x_t)) / ||g_t||^2`
    /// for maximisation. The method stops with
    /// [`Status::OptimumReached`](crate::Status::OptimumReached) once `f(x_t)` attains `f*`.
    Polyak {
        /// The optimal value `f*`.
        f_star: f64,
    },
}

impl StepRule {
    /// Checks the parameters (positive, finite scales; finite `f*`).
    pub fn validate(&self) -> Result<(), Error> {
        let (name, value) = match *self {
            StepRule::OverT { a0 } | StepRule::OverSqrtT { a0 } => ("a0", a0),
            StepRule::Constant { a } => ("a", a),
            StepRule::Polyak { f_star } => {
                if !f_star.is_finite() {
                    return Err(Error::InvalidOption {
                        name: "f_star",
                        value: f_star,
                        requirement: "the optimal value of the Polyak step must be finite",
                    });
                }
                return Ok(());
            }
        };
        if !(value.is_finite() && value > 0.0) {
            return Err(Error::InvalidOption {
                name,
                value,
                requirement: "a step scale must be finite and > 0",
            });
        }
        Ok(())
    }

    /// The multiplier of the subgradient at iteration `t >= 1`, given `f(x_t)` and
    /// `||g_t||^2 > 0`. With `normalized`, the rules other than Polyak divide by `||g_t||`.
    /// Returns `None` when the Polyak gap `f(x_t) - f*` (mirrored for maximisation) is
    /// `<= 0`, that is when the optimal value has been reached.
    pub fn multiplier(
        &self,
        t: usize,
        f: f64,
        g_norm2: f64,
        sense: Sense,
        normalized: bool,
    ) -> Option<f64> {
        let t = t as f64;
        let a = match *self {
            StepRule::OverT { a0 } => a0 / t,
            StepRule::OverSqrtT { a0 } => a0 / t.sqrt(),
            StepRule::Constant { a } => a,
            StepRule::Polyak { f_star } => {
                let gap = match sense {
                    Sense::Minimise => f - f_star,
                    Sense::Maximise => f_star - f,
                };
                return (gap > 0.0).then(|| gap / g_norm2);
            }
        };
        Some(if normalized { a / g_norm2.sqrt() } else { a })
    }
}
