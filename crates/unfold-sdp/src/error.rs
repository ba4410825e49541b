//! Errors of the SDP solver.

/// Everything that can stop [`crate::solve`] short of its tolerance.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The problem's sizes disagree (`C` not square, `b` of the wrong length, ...).
    #[error("the SDP is malformed: {reason}")]
    Malformed {
        /// What is wrong.
        reason: String,
    },
    /// An option is out of range.
    #[error("invalid option {name} = {value}: {requirement}")]
    InvalidOption {
        /// Name of the option.
        name: &'static str,
        /// Its value.
        value: f64,
        /// What it must satisfy.
        requirement: &'static str,
    },
    /// The iterates stalled (a step below the stall length, or an iterate that lost
    /// positive definiteness) before any of them came within `100 tol` of optimality.
    #[error("the interior-point iterates stalled: {reason}")]
    Stalled {
        /// Where, and the residuals of the last iterate.
        reason: String,
    },
    /// The Schur complement stayed singular after adding up to `1e-6` times its largest
    /// diagonal entry: the constraints are (numerically) linearly dependent.
    #[error("the Schur complement stayed singular after regularisation; the constraints are nearly linearly dependent")]
    SingularSchur,
    /// The eigenvalues giving a step length could not be computed.
    #[error("the step-length eigenvalues failed: {message}")]
    Eigen {
        /// faer's message.
        message: String,
    },
    /// The iteration limit was reached.
    #[error("no convergence in {iterations} interior-point iterations: stopped at {report}")]
    NotConverged {
        /// The limit.
        iterations: usize,
        /// The residuals of the last iterate.
        report: String,
    },
    /// The caller's progress callback asked to stop ([`crate::solve_observed`]).
    #[error("the interior-point method was stopped by its caller")]
    Stopped,
}
