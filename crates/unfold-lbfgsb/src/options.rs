//! Options, termination status and report of an L-BFGS-B run.

use crate::Error;

/// Options of [`crate::minimize`]. Defaults match SciPy's `L-BFGS-B`.
#[derive(Debug, Clone, PartialEq)]
pub struct LbfgsbOptions {
    /// Number of stored correction pairs (memory), `m >= 1`.
    pub m: usize,
    /// Stop when the infinity norm of the projected gradient `P(x - g) - x` is `<= pgtol`.
    pub pgtol: f64,
    /// Stop when `(f_k - f_{k+1}) / max(|f_k|, |f_{k+1}|, 1) <= factr * f64::EPSILON`.
    pub factr: f64,
    /// Maximum number of iterations (accepted steps).
    pub max_iterations: usize,
    /// Maximum number of objective evaluations, `>= 1`.
    pub max_evaluations: usize,
}

impl Default for LbfgsbOptions {
    fn default() -> Self {
        Self {
            m: 10,
            pgtol: 1e-5,
            factr: 1e7,
            max_iterations: 15000,
            max_evaluations: 15000,
        }
    }
}

impl LbfgsbOptions {
    /// Checks the option ranges.
    pub(crate) fn validate(&self) -> Result<(), Error> {
        if self.m == 0 {
            return Err(Error::InvalidOption {
                name: "m",
                value: "0".into(),
                reason: "the memory must hold at least one correction pair",
            });
        }
        if !(self.pgtol.is_finite() && self.pgtol >= 0.0) {
            return Err(Error::InvalidOption {
                name: "pgtol",
                value: self.pgtol.to_string(),
                reason: "must be finite and >= 0",
            });
        }
        if !(self.factr.is_finite() && self.factr >= 0.0) {
            return Err(Error::InvalidOption {
                name: "factr",
                value: self.factr.to_string(),
                reason: "must be finite and >= 0",
            });
        }
        if self.max_evaluations == 0 {
            return Err(Error::InvalidOption {
                name: "max_evaluations",
                value: "0".into(),
                reason: "at least one evaluation (at x0) is needed",
            });
        }
        Ok(())
    }
}

/// Why the run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Projected-gradient infinity norm `<= pgtol`.
    ConvergedPgtol,
    /// Relative reduction of `f` `<= factr * eps`.
    ConvergedFactr,
    /// `max_iterations` reached.
    MaxIterations,
    /// `max_evaluations` reached.
    MaxEvaluations,
    /// The line search failed twice in a row (once after resetting the memory).
    LineSearchFailed,
    /// The caller ended the run after an iteration ([`crate::try_minimize_until`]).
    Ended,
}

/// Result of [`crate::minimize`].
#[derive(Debug, Clone, PartialEq)]
pub struct LbfgsbReport {
    /// Best point found (always inside the box).
    pub x: Vec<f64>,
    /// Objective at `x`.
    pub f: f64,
    /// Gradient at `x`.
    pub g: Vec<f64>,
    /// Number of iterations (accepted steps).
    pub iterations: usize,
    /// The objective after each iteration (`trace.len() == iterations`).
    pub trace: Vec<f64>,
    /// Number of objective evaluations.
    pub evaluations: usize,
    /// Infinity norm of the projected gradient `P(x - g) - x` at `x`.
    pub projected_gradient_norm: f64,
    /// Why the run stopped.
    pub status: Status,
    /// True if `x0` was outside the box and was projected onto it.
    pub x0_projected: bool,
}
