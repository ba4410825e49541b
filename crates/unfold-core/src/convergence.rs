//! How a fit ended: the iterations it took, whether a convergence test stopped it, and
//! the objective after each iteration. Every fitted model reports one, so that reports
//! and model selection read it the same way for every method.

use serde::{Deserialize, Serialize};

/// How a fit ended. Closed-form fits (one eigendecomposition) report
/// [`Convergence::closed_form`]: no iterations, converged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Convergence {
    /// Iterations of the optimiser or of EM (0 for a closed-form fit).
    pub iterations: usize,
    /// True when a convergence test stopped the fit (not an iteration limit or a failed
    /// line search).
    pub converged: bool,
    /// What stopped the fit: `closed_form`, the optimiser's tolerance that was met
    /// (`pgtol`, `factr`, `tolerance`), the limit that was hit (`max_iterations`,
    /// `max_evaluations`, `line_search`), or `caller` (the caller ended the fit at this
    /// iterate, [`crate::Observer::ended`]).
    pub stopped_by: String,
    /// The objective after each iteration, in the model's own sign convention (the
    /// evidence it maximises); empty for closed-form fits.
    pub trace: Vec<f64>,
}

impl Convergence {
    /// A fit computed in closed form.
    pub fn closed_form() -> Self {
        Convergence {
            iterations: 0,
            converged: true,
            stopped_by: "closed_form".to_string(),
            trace: Vec::new(),
        }
    }

    /// An iterative fit with its trace (one value per iteration).
    pub fn iterative(trace: Vec<f64>, converged: bool, stopped_by: &str) -> Self {
        Convergence {
            iterations: trace.len(),
            converged,
            stopped_by: stopped_by.to_string(),
            trace,
        }
    }
}

impl Default for Convergence {
    fn default() -> Self {
        Convergence::closed_form()
    }
}
